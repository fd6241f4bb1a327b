"""Sentence embeddings with ONNX Runtime: tokenize, batch by length, run, pool, normalise.

The engine needs no PyTorch: the fast tokenizer, numpy and an ONNX Runtime session do all the
work. Texts are sorted by length and cut into batches of similar length under a budget of
padded tokens, so little work goes into padding. The execution providers are always named: the
first accelerator that this build of ONNX Runtime carries and this machine can drive (CUDA with
an NVIDIA driver; CoreML on macOS; DirectML on Windows with onnxruntime-directml), then the CPU.

ONNX Runtime is only ever imported through :func:`~physgrade.dedup.onnx_runtime.runtime`, which
switches its telemetry off.
"""

from __future__ import annotations

import ctypes.util
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Sequence

import numpy as np

from physgrade.dedup.models import ModelFiles
from physgrade.dedup.onnx_runtime import runtime
from physgrade.tasks import Task

if TYPE_CHECKING:
    from onnxruntime import InferenceSession

CUDA = "CUDAExecutionProvider"
COREML = "CoreMLExecutionProvider"
DIRECTML = "DmlExecutionProvider"
CPU = "CPUExecutionProvider"
#: Tried in this order before the CPU. TensorRT, though onnxruntime-gpu lists it, is left out:
#: it compiles an engine per input shape, minutes of work for batches of varying length.
ACCELERATORS = (CUDA, COREML, DIRECTML)
#: Padded tokens per batch: small enough to stay in cache, large enough to keep both cores busy.
TOKEN_BUDGET = 1024
MAX_BATCH = 64
#: Texts tokenized at once.
SLICE = 4096


def default_providers() -> list[str]:
    """The first of :data:`ACCELERATORS` that this ONNX Runtime offers and this machine can
    drive, then the CPU (which runs what the accelerator cannot); else the CPU alone.

    CUDA is offered by onnxruntime-gpu whether or not there is a GPU, or its provider library (a
    bundle leaves it out): asking for both first keeps ONNX Runtime from logging a failed CUDA
    start on every machine that cannot run it.
    """
    onnxruntime = runtime()
    available = onnxruntime.get_available_providers()
    for provider in ACCELERATORS:
        if provider in available and (provider != CUDA or can_run_cuda(onnxruntime)):
            return [provider, CPU]
    return [CPU]


def can_run_cuda(onnxruntime: ModuleType) -> bool:
    """Whether NVIDIA's driver is installed (libcuda on Linux, nvcuda.dll on Windows) and this
    ONNX Runtime has its CUDA provider library."""
    capi = Path(onnxruntime.__file__ or ".").parent / "capi"
    return (any(ctypes.util.find_library(name) for name in ("cuda", "nvcuda"))
            and any(capi.glob("*onnxruntime_providers_cuda.*")))


class Embedder:
    """One model loaded for embedding; :attr:`provider` says where it runs."""

    def __init__(self, model: ModelFiles, providers: Sequence[str] | None = None,
                 threads: int = 0) -> None:
        from tokenizers import Tokenizer

        onnxruntime = runtime()
        self.model = model
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0: one per physical core
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        self.session: InferenceSession = onnxruntime.InferenceSession(
            str(model.onnx), options, providers=list(providers or default_providers()))
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(model.tokenizer))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(model.max_length)
        self.tokens_seen = 0  # word pieces embedded, padding excluded (for throughput figures)

    @property
    def provider(self) -> str:
        """The execution provider the session runs on (the first that started)."""
        return self.session.get_providers()[0]

    @property
    def dimension(self) -> int:
        return int(self.session.get_outputs()[0].shape[-1])

    def encode(self, texts: Sequence[str], task: Task | None = None) -> np.ndarray:
        """L2-normalised float32 embeddings, one row per text, in the order given."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), SLICE):
            # Tokenizer output takes ~200 bytes a token: hold one slice of it at a time.
            encodings = self.tokenizer.encode_batch(list(texts[start:start + SLICE]))
            lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64,
                                  count=len(encodings))
            done = start
            for batch in _batches(lengths):
                out[start + batch] = self._run(encodings, batch, lengths)
                done += len(batch)
                if task is not None:
                    task.report(done, len(texts), "embedding")
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        np.divide(out, norms, out=out, where=norms > 0)
        return out

    def _run(self, encodings: list, batch: np.ndarray, lengths: np.ndarray) -> np.ndarray:
        """The pooled (not yet normalised) embeddings of one batch."""
        ids = np.zeros((len(batch), int(lengths[batch].max())), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, index in enumerate(batch):
            piece = encodings[index].ids
            ids[row, :len(piece)] = piece
            mask[row, :len(piece)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        self.tokens_seen += int(lengths[batch].sum())
        return _pool(self.session.run(None, feed)[0], mask, self.model.pooling)


def _batches(lengths: np.ndarray) -> list[np.ndarray]:
    """Indices of texts in batches of similar length, each within the padded-token budget."""
    order = np.argsort(lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        end = start + 1
        while (end < len(order) and end - start < MAX_BATCH
               and (end - start + 1) * lengths[order[end]] <= TOKEN_BUDGET):
            end += 1
        batches.append(order[start:end])
        start = end
    return batches


def _pool(hidden: np.ndarray, mask: np.ndarray, mode: str) -> np.ndarray:
    if hidden.ndim == 2:  # the graph pools by itself
        return hidden
    if mode == "cls":
        return hidden[:, 0]
    if mode == "max":
        return np.where(mask[:, :, None] > 0, hidden, -np.inf).max(axis=1)
    weights = mask[:, :, None].astype(hidden.dtype)
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
