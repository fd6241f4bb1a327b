"""The BERT graph written from safetensors without torch (physgrade.dedup.bert_onnx), on the
bundled all-MiniLM-L6-v2: its embeddings against sentence-transformers' own PyTorch encoding, the
default path resolved and embedded in a process that never loads torch, and the configurations
it refuses."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from itertools import cycle, islice
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file, save_file

from conftest import ROOT
from physgrade.dedup import bert_onnx
from physgrade.dedup.engine import Embedder
from physgrade.dedup.models import ModelError, ModelFiles, resolve
from test_dedup import PARAPHRASE, SHARED_PREAMBLE

#: 300 words: well past the model's 256 word pieces, so truncated.
LONG = " ".join(islice(cycle("the pendulum of length L swings through a small angle theta".split()),
                       300))
TEXTS = [
    "", "x", "Wave " * 3, *PARAPHRASE, *SHARED_PREAMBLE,
    r"A capacitor $C = 2\,\mu F$ holds $Q = 10\,\mu C$. Find the voltage $V = Q/C$.",
    r"Evaluate $\int_0^\infty e^{-\alpha x^2}\,dx = \frac{1}{2}\sqrt{\pi/\alpha}$.",
    r"\begin{equation} \nabla \times \mathbf{B} = \mu_0 \mathbf{J} + \mu_0 \varepsilon_0 "
    r"\frac{\partial \mathbf{E}}{\partial t} \end{equation}",
    "Ein Ball fällt 20 m tief. Wie schnell ist er unten?",
    "Энергия фотона E = hν; найдите длину волны для 2 эВ.",
    "A block of mass 2 kg slides down a frictionless incline of 30°. What is its acceleration?",
    "The Schrödinger equation for a particle in a 1-D box of width L: E_n = n²π²ħ²/(2mL²).",
    "ohm ohm ohm ohm",
    "   leading and trailing spaces   ",
    "What is the half-life of carbon-14? Answer: 5730 years.",
    LONG,
    "Two charges of 1 uC are 1 m apart; the force between them is 8.99e-3 N.",
]
#: Both sides compute in float32 with different kernels and summation orders (ONNX Runtime's
#: fused operators, PyTorch's BLAS, which differ by CPU): about 1e-6 apart in practice. 1e-4
#: leaves room for that and is still far below what one wrong operation in a layer gives.
TOLERANCE = 1e-4


@pytest.fixture(scope="session")
def exported(tmp_path_factory) -> ModelFiles:
    """The default model unpacked and written to ONNX in an empty cache (the one export here)."""
    return resolve(cache=tmp_path_factory.mktemp("bert-cache"))


def test_the_written_graph_embeds_as_sentence_transformers_does_in_pytorch(exported):
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(exported.tokenizer.parent), device="cpu",
                                    local_files_only=True)
    expected = reference.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    embedder = Embedder(exported)
    assert len(embedder.tokenizer.encode(LONG).ids) == exported.max_length == 256  # truncated
    got = embedder.encode(TEXTS)
    assert got.shape == expected.shape == (len(TEXTS), 384)
    assert np.abs(got - expected).max() < TOLERANCE
    assert (got * expected).sum(axis=1).min() > 0.9999
    assert [i.name for i in embedder.session.get_inputs()] == list(bert_onnx.INPUTS)
    assert [o.name for o in embedder.session.get_outputs()] == [bert_onnx.OUTPUT]


def test_weights_named_with_a_bert_prefix_give_the_same_graph(exported, tmp_path):
    source = exported.tokenizer.parent
    prefixed = tmp_path / "prefixed-minilm"
    prefixed.mkdir()
    for item in source.iterdir():
        if item.name not in ("onnx", "model.safetensors"):
            (prefixed / item.name).symlink_to(item, target_is_directory=item.is_dir())
    weights = load_file(str(source / "model.safetensors"))
    save_file({f"bert.{name}": tensor for name, tensor in weights.items()},
              str(prefixed / "model.safetensors"))
    files = resolve(prefixed, cache=tmp_path / "cache")
    assert np.abs(Embedder(files).encode(TEXTS) - Embedder(exported).encode(TEXTS)).max() < 1e-6


def test_the_default_path_resolves_and_embeds_without_loading_torch(tmp_path):
    script = """
import json, sys
from pathlib import Path
from physgrade.dedup.engine import Embedder
from physgrade.dedup.models import resolve
heard = []
vectors = Embedder(resolve(cache=Path(sys.argv[1]), notify=heard.append)).encode(["F = ma", ""])
print(json.dumps({"heard": heard, "shape": list(vectors.shape),
                  "loaded": [m for m in ("torch", "transformers", "sentence_transformers")
                             if m in sys.modules]}))
"""
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["heard"][-1] == "exporting all-MiniLM-L6-v2 to ONNX (once)"  # it did export
    assert result["shape"] == [2, 384]
    assert result["loaded"] == []


def _bert_folder(exported: ModelFiles, folder: Path, **config: str) -> Path:
    """A copy of the default model's folder (weights linked) with ``config`` in its config.json."""
    source = exported.tokenizer.parent
    folder.mkdir()
    for item in source.iterdir():
        if item.name not in ("onnx", "config.json"):
            (folder / item.name).symlink_to(item, target_is_directory=item.is_dir())
    settings = json.loads((source / "config.json").read_text(encoding="utf-8"))
    (folder / "config.json").write_text(json.dumps(settings | config), encoding="utf-8")
    return folder


def test_what_the_graph_does_not_do_is_refused_naming_the_file_and_field(exported, tmp_path):
    roberta = _bert_folder(exported, tmp_path / "roberta", model_type="roberta")
    with pytest.raises(ModelError, match=re.escape(
            f"{roberta / 'config.json'}: model_type 'roberta' is not supported")):
        bert_onnx.graph(roberta)
    assert not bert_onnx.is_bert(roberta)  # so resolve hands it to sentence-transformers

    relu = _bert_folder(exported, tmp_path / "relu", hidden_act="relu")
    cache = tmp_path / "cache"
    with pytest.raises(ModelError, match=re.escape(
            f"{relu / 'config.json'}: hidden_act 'relu' is not supported")):
        resolve(relu, cache=cache)
    assert not cache.exists() or not any(cache.rglob("*.onnx"))  # nothing half-exported


def test_other_architectures_without_sentence_transformers_ask_for_the_export_extra(
        exported, tmp_path, monkeypatch):
    roberta = _bert_folder(exported, tmp_path / "roberta", model_type="roberta")
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # as if not installed
    with pytest.raises(ModelError, match=re.escape(f"{roberta}: only BERT models are exported "
                                                   "without PyTorch; install physgrade[export]")):
        resolve(roberta, cache=tmp_path / "cache")
