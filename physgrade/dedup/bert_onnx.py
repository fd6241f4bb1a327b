"""The ONNX graph of a BERT encoder written straight from its ``model.safetensors``, without torch.

The graph is Hugging Face's ``BertModel`` without its pooler: word, position and token-type
embeddings and a LayerNorm, then per layer multi-head self-attention with the additive padding
mask, a dense output with residual and LayerNorm, and a feed-forward block (dense, exact erf
GELU, dense) with residual and LayerNorm. It takes ``input_ids``, ``attention_mask`` and
``token_type_ids`` (int64, batch by sequence) and gives ``last_hidden_state`` (batch by sequence
by hidden size), as sentence-transformers' ONNX export does, so the engine treats both alike.
Dropout is left out: it does nothing at inference.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file

from physgrade.dedup.model_config import ModelError, read_json

OPSET = 17  # the first with LayerNormalization
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT = "last_hidden_state"


def is_bert(folder: Path) -> bool:
    """Whether ``folder`` holds a BERT whose graph this module writes (else another exporter)."""
    return (folder / "model.safetensors").is_file() and \
        read_json(folder / "config.json").get("model_type") == "bert"


def graph(folder: Path) -> onnx.ModelProto:
    """The encoder of the BERT in ``folder`` (its config.json and model.safetensors)."""
    config = _checked_config(folder / "config.json")
    weights = folder / "model.safetensors"
    return _graph(config, _weights(weights), weights)


def save(model: onnx.ModelProto, target: Path) -> None:
    """Write ``model`` as one ONNX file (BERTs up to bert-large fit protobuf's 2 GB)."""
    onnx.save_model(model, str(target))


def _checked_config(path: Path) -> dict:
    """The config, refused naming the field when it asks for something the graph does not do."""
    config = read_json(path)
    # What the graph does, and what a config that does not say means (BertConfig's defaults).
    supported = (("model_type", "bert", None), ("hidden_act", "gelu", "gelu"),
                 ("position_embedding_type", "absolute", "absolute"))
    for field, value, default in supported:
        if config.get(field, default) != value:
            raise ModelError(f"{path}: {field} {config.get(field)!r} is not supported "
                             f"(only {value!r} is exported without torch)")
    for field in ("hidden_size", "num_attention_heads", "num_hidden_layers", "layer_norm_eps",
                  "max_position_embeddings"):
        if field not in config:
            raise ModelError(f"{path}: {field} is missing")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise ModelError(f"{path}: hidden_size {config['hidden_size']} is not a multiple of "
                         f"num_attention_heads {config['num_attention_heads']}")
    return config


def _weights(path: Path) -> dict[str, np.ndarray]:
    """The tensors by their ``BertModel`` names (a ``bert.`` prefix, as in task models, dropped)."""
    try:
        tensors = load_file(str(path))
    except (OSError, ValueError) as exc:
        raise ModelError(f"{path}: cannot be read ({exc})") from exc
    return {name.removeprefix("bert."): tensor for name, tensor in tensors.items()}


class _Builder:
    """Nodes and float32 initializers of one graph, with names made unique by a counter."""

    def __init__(self, weights: dict[str, np.ndarray], source: Path) -> None:
        self.weights = weights
        self.source = source
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self.count = 0

    def constant(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(self, name: str, transpose: bool = False) -> str:
        """A float32 tensor of the checkpoint (a Linear's weight transposed for MatMul)."""
        if name not in self.weights:
            raise ModelError(f"{self.source}: the tensor {name} is missing")
        value = self.weights[name].astype(np.float32)
        return self.constant(name, value.T if transpose else value)

    def node(self, op: str, inputs: list[str], **attributes: Any) -> str:
        self.count += 1
        output = f"{op.lower()}_{self.count}"
        self.nodes.append(helper.make_node(op, inputs, [output], **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        product = self.node("MatMul", [x, self.weight(f"{prefix}.weight", transpose=True)])
        return self.node("Add", [product, self.weight(f"{prefix}.bias")])

    def heads(self, x: str, prefix: str, split: str, order: list[int]) -> str:
        """A projection of ``x`` cut into heads: (batch, sequence, hidden) to 4-D in ``order``."""
        return self.node("Transpose", [self.node("Reshape", [self.linear(x, prefix), split])],
                         perm=order)

    def layer_norm(self, x: str, prefix: str, epsilon: float) -> str:
        return self.node("LayerNormalization",
                         [x, self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")],
                         axis=-1, epsilon=epsilon)


def _graph(config: dict, weights: dict[str, np.ndarray], source: Path) -> onnx.ModelProto:
    hidden, heads = int(config["hidden_size"]), int(config["num_attention_heads"])
    epsilon = float(config["layer_norm_eps"])
    build = _Builder(weights, source)
    split_heads = build.constant("split_heads", np.array([0, 0, heads, hidden // heads], np.int64))
    merge_heads = build.constant("merge_heads", np.array([0, 0, hidden], np.int64))
    scale = build.constant("scale", np.array(1 / math.sqrt(hidden // heads), np.float32))
    one = build.constant("one", np.array(1, np.float32))
    half = build.constant("half", np.array(0.5, np.float32))
    root_two = build.constant("root_two", np.array(math.sqrt(2), np.float32))

    # Embeddings. Positions are sliced from 0..max_position_embeddings as BertModel does (the
    # pattern ONNX Runtime's embedding fusion knows; a Range of the length trips that fusion).
    every_position = np.arange(int(config["max_position_embeddings"]), dtype=np.int64)[None]
    positions = build.node("Slice", [
        build.constant("position_ids", every_position), build.constant("zero", np.zeros(1, np.int64)),
        build.node("Shape", ["input_ids"], start=1, end=2),
        build.constant("sequence_axis", np.ones(1, np.int64))])
    summed = build.node("Add", [
        build.node("Gather", [build.weight("embeddings.word_embeddings.weight"), "input_ids"]),
        build.node("Gather", [build.weight("embeddings.position_embeddings.weight"), positions])])
    summed = build.node("Add", [summed, build.node(
        "Gather", [build.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"])])
    x = build.layer_norm(summed, "embeddings.LayerNorm", epsilon)

    # Padding: 0 where attended, the most negative float32 where masked (as BertModel adds).
    mask = build.node("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    mask = build.node("Unsqueeze", [mask, build.constant("mask_axes", np.array([1, 2], np.int64))])
    masked = build.node("Sub", [one, mask])
    additive = build.node("Mul", [masked, build.constant(
        "most_negative", np.array(np.finfo(np.float32).min, np.float32))])

    for index in range(int(config["num_hidden_layers"])):
        prefix = f"encoder.layer.{index}"
        attention = f"{prefix}.attention.self"
        query = build.heads(x, f"{attention}.query", split_heads, [0, 2, 1, 3])  # b, h, s, size
        key = build.heads(x, f"{attention}.key", split_heads, [0, 2, 3, 1])      # b, h, size, s
        value = build.heads(x, f"{attention}.value", split_heads, [0, 2, 1, 3])
        scores = build.node("Mul", [build.node("MatMul", [query, key]), scale])
        probabilities = build.node("Softmax", [build.node("Add", [scores, additive])], axis=-1)
        context = build.node("Transpose", [build.node("MatMul", [probabilities, value])],
                             perm=[0, 2, 1, 3])
        context = build.node("Reshape", [context, merge_heads])
        attended = build.node("Add", [build.linear(context, f"{prefix}.attention.output.dense"), x])
        x = build.layer_norm(attended, f"{prefix}.attention.output.LayerNorm", epsilon)

        inner = build.linear(x, f"{prefix}.intermediate.dense")  # GELU: x/2 (1 + erf(x/√2))
        gate = build.node("Add", [build.node("Erf", [build.node("Div", [inner, root_two])]), one])
        activated = build.node("Mul", [build.node("Mul", [inner, half]), gate])
        out = build.node("Add", [build.linear(activated, f"{prefix}.output.dense"), x])
        x = build.layer_norm(out, f"{prefix}.output.LayerNorm", epsilon)
    build.nodes.append(helper.make_node("Identity", [x], [OUTPUT]))

    axes = ["batch", "sequence"]
    graph = helper.make_graph(
        build.nodes, "bert",
        [helper.make_tensor_value_info(name, TensorProto.INT64, axes) for name in INPUTS],
        [helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, [*axes, hidden])],
        build.initializers)
    opsets = [helper.make_opsetid("", OPSET)]
    # The oldest IR version that carries the opset: the onnx package's own default is often newer
    # than the installed ONNX Runtime reads.
    model = helper.make_model(graph, opset_imports=opsets,
                              ir_version=helper.find_min_ir_version_for(opsets),
                              producer_name="physgrade.dedup.bert_onnx")
    onnx.checker.check_model(model)
    return model
