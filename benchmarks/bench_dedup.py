"""The near-duplicate audit: embedding efficiency and speed, int8, the audit at scale, detection.

Targets (issue: near-duplicate audit), each measured in this one run, on the same texts:

1. Compute efficiency. The embedder's useful floating-point work per second, against numpy's
   float32 matrix product (2048 x 2048, best of several, measured in the same run): at least
   0.8 of it. The work is counted from the model's shapes (layers, hidden and intermediate
   sizes read from its config.json) and the real word pieces embedded: per token and layer,
   2 x (4 h^2 + 2 h i) for the linear layers plus 4 L h for attention, where L is the padded
   length of the token's batch. Padding is not counted (nor layer norms, softmax, GELU, biases
   or pooling), so the figure is conservative; the padding share is printed. numpy's product
   is measured before each chunk of texts (see below) and after the last. Where numpy's
   OpenBLAS does not use AVX-512 on a CPU that has it (it picks its Haswell kernels on AMD Zen
   5), a second reference with OPENBLAS_CORETYPE=SkylakeX is measured and reported too.
2. Against the peer: sentence-transformers' default PyTorch path on the same model folder and
   texts (``SentenceTransformer(folder, device="cpu").encode(texts, normalize_embeddings=True)``,
   its default batch size), both warmed up first: at least 1.25x its texts per second, and every
   text's two embeddings at a cosine of at least 0.9999.
3. int8: the dynamically quantized model's texts per second and its smallest cosine against the
   float32 embeddings (reported; no target).

   Parts 1-3 embed the texts in six equal chunks and print the figures of the whole run and of
   the best chunk; targets are judged on the best chunk (like numpy's best of several), the
   figure least skewed by other processes on the machine.
4. The audit at scale: 20,000 texts audited against 5,000 (distinct texts, 2% of the first set
   planted as light edits or number changes of texts of the second). The whole audit
   (``run.audit_project`` on a fresh project with an empty embedding cache; the import of the
   questions is not counted) takes at most 1.3x the time of embedding the 25,000 texts alone
   (a fresh ``Embedder.encode``), and its process peaks under 2 GB of resident memory. Each
   runs in a fresh (spawned) child process, whose own peak RSS (VmHWM) is read there; CPU
   times are printed too, since other processes on the machine skew wall-clock times.
5. Detection on the labelled set ``benchmarks/data/dedup_set.jsonl`` (one JSON object a line:
   id, group, kind, field, source, text; kinds base, exact, light_edit, numbers, paraphrase;
   texts of one group are duplicates of each other). All texts are audited within one set at
   the default thresholds. Recall of (base, variant) pairs per kind: exact and light_edit at
   least 0.95, numbers and paraphrase at least 0.8; precision over all flagged pairs (true when
   both texts share a group) and counts by stage are reported. Then the calibration of the
   cosine threshold: 0.60..0.95 in steps of 0.01 (Jaccard fixed at 0.4), recall per kind,
   precision and F1 on a calibration half of the groups (a seeded shuffle) and on the held-out
   half; the threshold with the best F1 on the calibration half among those with a recall of
   at least 0.85 on numbers and paraphrases there, with its held-out figures. F1 uses the
   recall of all (base, variant) pairs.

Texts for parts 1-4 come from ``benchmarks/dedup_texts.py`` (physics problems of 40-150 words
with numbers, units and LaTeX, generated deterministically). The exit status is 1 when a
target is missed or could not be measured.

    python benchmarks/bench_dedup.py [--quick] [--texts 3000] [--scale 20000 5000]
                                     [--set PATH] [--calibrate] [--verbose]

``--quick`` is a smoke run (500 texts, 2,000 against 500); ``--calibrate`` runs part 5 alone.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from corpus import peak_rss  # noqa: E402
from dedup_texts import audit_sets, problems  # noqa: E402
from physgrade.dedup import audit, engine, lexical, models, pairs, run  # noqa: E402
from physgrade.dedup.texts import TextSet  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SET = ROOT / "benchmarks" / "data" / "dedup_set.jsonl"
EDIT_KINDS = ("exact", "light_edit", "numbers", "paraphrase")
RECALL_TARGETS = {"exact": 0.95, "light_edit": 0.95, "numbers": 0.8, "paraphrase": 0.8}
COMPUTE_TARGET = 0.8
PEER_TARGET = 1.25
COSINE_TARGET = 0.9999
AUDIT_TARGET = 1.3
MEMORY_TARGET = 2 << 30
CALIBRATION_RECALL = 0.85
CALIBRATION_JACCARD = 0.4
GRID = tuple(round(0.60 + 0.01 * i, 2) for i in range(36))
WARM_UP = 64
#: Parts 1-3 time the texts in this many chunks: the best chunk, like numpy's best of several
#: products, is the figure least skewed by other processes on the machine.
CHUNKS = 6


@dataclass
class Targets:
    """Each target's outcome: True met, False missed, None not measured."""

    results: list[tuple[str, bool | None]] = field(default_factory=list)

    def check(self, name: str, ok: bool | None) -> str:
        self.results.append((name, ok))
        return {True: "pass", False: "MISSED", None: "not measured"}[ok]

    def summary(self) -> bool:
        print("\ntargets:")
        for name, ok in self.results:
            print(f"   {name:<58} {({True: 'pass', False: 'MISSED', None: 'not measured'})[ok]}")
        return all(ok for _, ok in self.results)


# -- 1. compute efficiency ------------------------------------------------------------------

def numpy_gflops(n: int = 2048, repeat: int = 5) -> float:
    """numpy's float32 matrix product, best of ``repeat``, in GFLOP/s."""
    rng = np.random.default_rng(0)
    a = rng.random((n, n), dtype=np.float32)
    b = rng.random((n, n), dtype=np.float32)
    a @ b
    best = math.inf
    for _ in range(repeat):
        started = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - started)
    return 2 * n ** 3 / best / 1e9


_MATMUL = """
import time, numpy as np
rng = np.random.default_rng(0)
a = rng.random((2048, 2048), dtype=np.float32); b = a.copy(); a @ b
best = min(((time.perf_counter(), a @ b, time.perf_counter()) for _ in range(5)),
           key=lambda r: r[2] - r[0])
print(2 * 2048 ** 3 / (best[2] - best[0]) / 1e9)
"""


def blas_kernel() -> str:
    """The kernel set numpy's OpenBLAS chose for this CPU ("Haswell", "SkylakeX", ...)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "?"
    return next((str(i.get("architecture")) for i in threadpool_info()
                 if i.get("internal_api") == "openblas"), "?")


def avx512_matmul() -> float | None:
    """numpy's matmul with OpenBLAS's AVX-512 kernels forced, when the CPU has AVX-512 but
    OpenBLAS picked other kernels (it does not recognise every new CPU); else None."""
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    if " avx512f" not in flags or blas_kernel() in ("SkylakeX", "Cooperlake", "SapphireRapids"):
        return None
    done = subprocess.run([sys.executable, "-c", _MATMUL], capture_output=True, text=True,
                          env={**os.environ, "OPENBLAS_CORETYPE": "SkylakeX"}, check=False)
    try:
        return float(done.stdout.strip())
    except ValueError:
        return None


@dataclass(frozen=True)
class Shape:
    """What the floating-point work of a BERT-like encoder depends on (from its config.json)."""

    layers: int
    hidden: int
    intermediate: int

    @classmethod
    def read(cls, folder: Path) -> "Shape":
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        return cls(int(config["num_hidden_layers"]), int(config["hidden_size"]),
                   int(config["intermediate_size"]))

    @property
    def linear_per_token(self) -> int:
        """FLOPs of the linear layers per token (Q, K, V, output and the two feed-forward)."""
        h, i = self.hidden, self.intermediate
        return self.layers * 2 * (4 * h * h + 2 * h * i)

    def work(self, lengths: np.ndarray, batches: list[np.ndarray]) -> tuple[float, int, int]:
        """FLOPs of real tokens in these batches, real tokens and padded tokens."""
        flops, real, padded = 0.0, 0, 0
        for batch in batches:
            width = int(lengths[batch].max())
            tokens = int(lengths[batch].sum())
            flops += tokens * (self.linear_per_token + self.layers * 4 * width * self.hidden)
            real += tokens
            padded += width * len(batch)
        return flops, real, padded


def token_lengths(embedder: engine.Embedder, texts: list[str]) -> np.ndarray:
    """Word pieces per text, as the embedder counts them (truncated to the model's limit)."""
    return np.array([len(e.ids) for e in embedder.tokenizer.encode_batch(texts)], dtype=np.int64)


@dataclass(frozen=True)
class Timing:
    """Embeddings of all texts, encoded in equal chunks, and the seconds of each chunk."""

    vectors: np.ndarray
    seconds: list[float]
    sizes: list[int]

    @property
    def total(self) -> float:
        return sum(self.seconds)

    @property
    def rate(self) -> float:
        """Texts per second over the whole run."""
        return sum(self.sizes) / self.total

    @property
    def best_rate(self) -> float:
        """Texts per second of the fastest chunk."""
        return max(n / s for n, s in zip(self.sizes, self.seconds))

    def text(self) -> str:
        return (f"{self.total:8.2f} s {self.rate:8.1f} texts/s (best chunk "
                f"{self.best_rate:6.1f})")


def chunks(n: int) -> list[slice]:
    size = math.ceil(n / CHUNKS)
    return [slice(start, start + size) for start in range(0, n, size)]


def timed(encode: Any, texts: list[str], between: Any = None) -> Timing:
    """``encode`` over ``texts`` a chunk at a time (calling ``between()`` between chunks)."""
    parts, seconds, sizes = [], [], []
    for part in chunks(len(texts)):
        if between is not None:
            between()
        started = time.perf_counter()
        parts.append(np.asarray(encode(texts[part]), dtype=np.float32))
        seconds.append(time.perf_counter() - started)
        sizes.append(len(texts[part]))
    return Timing(np.concatenate(parts), seconds, sizes)


def measure_compute(embedder: engine.Embedder, texts: list[str], shape: Shape,
                    targets: Targets) -> Timing:
    print(f"1. compute efficiency ({len(texts):,} texts; target: at least {COMPUTE_TARGET} of "
          "numpy's float32 matmul)")
    lengths = token_lengths(embedder, texts)
    work = [shape.work(lengths[part], engine._batches(lengths[part])) for part in chunks(len(texts))]
    flops = sum(w[0] for w in work)
    real = sum(w[1] for w in work)
    padded = sum(w[2] for w in work)
    embedder.encode(texts[:WARM_UP])
    print(f"   {_load()}")
    matmul: list[float] = []
    seen = embedder.tokens_seen
    timing = timed(embedder.encode, texts, lambda: matmul.append(numpy_gflops()))
    matmul.append(numpy_gflops())
    reference = max(matmul)
    if embedder.tokens_seen - seen != real:
        print(f"   note: the embedder counted {embedder.tokens_seen - seen:,} tokens, the "
              f"benchmark {real:,}")
    whole = flops / timing.total / 1e9
    best = max(w[0] / seconds for w, seconds in zip(work, timing.seconds)) / 1e9
    print(f"   model: {shape.layers} layers, hidden {shape.hidden}, intermediate "
          f"{shape.intermediate}: {shape.linear_per_token / 1e6:.2f} MFLOP per token in the "
          "linear layers + 4 L h per token and layer for attention")
    print(f"   numpy float32 2048x2048 matmul, best of 5 before each chunk and after the last: "
          f"{min(matmul):.1f}-{reference:.1f} GFLOP/s; the best, {reference:.1f}, is the reference")
    print(f"   embedding ({embedder.provider}) in {len(timing.seconds)} chunks: {timing.text()}, "
          f"{real / timing.total:.0f} tokens/s")
    print(f"   real tokens {real:,} ({real / len(texts):.1f} a text), padded {padded:,}: "
          f"padding {100 * (1 - real / padded):.1f}% of the work, not counted (conservative)")
    verdict = targets.check("1. compute >= 0.8 x numpy matmul (best chunk)",
                            best / reference >= COMPUTE_TARGET)
    print(f"   model work {flops / 1e12:.2f} TFLOP: {whole:.1f} GFLOP/s over the whole run = "
          f"{whole / reference:.2f} of numpy's; best chunk {best:.1f} GFLOP/s = "
          f"{best / reference:.2f}: {verdict}")
    forced = avx512_matmul()
    if forced is not None:
        print(f"   numpy's OpenBLAS uses its {blas_kernel()} kernels on this CPU, which has "
              f"AVX-512; with OPENBLAS_CORETYPE=SkylakeX its matmul reaches {forced:.1f} GFLOP/s, "
              f"against which the embedder's best chunk is {best / forced:.2f} (whole run "
              f"{whole / forced:.2f}; reported, the target uses numpy as installed)")
    return timing


# -- 2. against sentence-transformers -------------------------------------------------------

def measure_peer(folder: Path, texts: list[str], ours: Timing, targets: Targets) -> None:
    print(f"2. against sentence-transformers (PyTorch, CPU; targets: at least {PEER_TARGET}x its "
          f"speed, every cosine at least {COSINE_TARGET})")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import torch
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        logging.getLogger("sentence_transformers").setLevel(logging.ERROR)
        model = SentenceTransformer(str(folder), device="cpu")
        model.encode(texts[:WARM_UP], normalize_embeddings=True)
        print(f"   {_load()}")
        peer = timed(lambda part: model.encode(part, normalize_embeddings=True), texts)
    cosines = np.sum(ours.vectors * peer.vectors, axis=1)
    print(f"   sentence-transformers {peer.text()} (torch {torch.__version__}, "
          f"{torch.get_num_threads()} threads, batch size 32)")
    print(f"   physgrade (part 1)    {ours.text()}")
    ratio = ours.best_rate / peer.best_rate
    verdict = targets.check("2. speed >= 1.25 x sentence-transformers (best chunk)",
                            ratio >= PEER_TARGET)
    print(f"   speed ratio {ours.rate / peer.rate:.2f}x over the whole run, {ratio:.2f}x best "
          f"chunk against best chunk: {verdict}")
    verdict = targets.check("2. every cosine >= 0.9999", bool(cosines.min() >= COSINE_TARGET))
    print(f"   cosine between the two embeddings of each text: min {cosines.min():.6f}, mean "
          f"{cosines.mean():.6f}: {verdict}")


# -- 3. int8 --------------------------------------------------------------------------------

def measure_int8(texts: list[str], ours: Timing) -> None:
    print("3. int8 (dynamic quantization of the weights; reported, no target)")
    started = time.perf_counter()
    files = models.resolve(quantize=True)
    prepared = time.perf_counter() - started
    embedder = engine.Embedder(files)
    embedder.encode(texts[:WARM_UP])
    print(f"   {_load()}")
    int8 = timed(embedder.encode, texts)
    cosines = np.sum(ours.vectors * int8.vectors, axis=1)
    print(f"   {files.name} (resolved in {prepared:.1f} s): {int8.text()}: "
          f"{int8.rate / ours.rate:.2f}x the float32 model's speed over the whole run, "
          f"{int8.best_rate / ours.best_rate:.2f}x best chunk against best chunk")
    print(f"   cosine against float32: min {cosines.min():.4f}, 1st percentile "
          f"{np.percentile(cosines, 1):.4f}, mean {cosines.mean():.4f}")


# -- 4. the audit at scale (in child processes) ---------------------------------------------

def _cpu() -> float:
    """CPU seconds of this process so far (all threads, user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def child_embed(texts: list[str]) -> dict[str, Any]:
    """In a fresh process: a fresh Embedder encodes all texts (construction not timed)."""
    embedder = engine.Embedder(models.resolve())
    cpu, started = _cpu(), time.perf_counter()
    embedder.encode(texts)
    return {"seconds": time.perf_counter() - started, "cpu": _cpu() - cpu,
            "tokens": embedder.tokens_seen, "peak_rss": peak_rss()}


def child_audit(project_path: str, source: str, ids_b: list[str], texts_b: list[str],
                planted: list[tuple[str, str, str]]) -> dict[str, Any]:
    """In a fresh process: the whole audit of the project against the other set, timed as one;
    the embedding, the comparison and the saving are timed apart through thin wrappers."""
    from physgrade.project import Project

    project = Project.open(project_path)
    embedder = engine.Embedder(models.resolve())
    before = peak_rss()
    parts: Counter[str] = Counter()

    def timed(name: str, function: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                parts[name] += time.perf_counter() - started
        return wrapper

    embedder.encode = timed("embedding", embedder.encode)  # type: ignore[method-assign]
    run.compare = timed("stages 1 and 2", run.compare)
    pairs.save = timed("saving pairs", pairs.save)
    cpu, started = _cpu(), time.perf_counter()
    result = run.audit_project(project, embedder, against=TextSet(source, ids_b, texts_b))
    seconds = time.perf_counter() - started
    cpu = _cpu() - cpu
    found = {(p.a, p.b): p.stages for p in result.result.pairs}
    recovered = Counter(kind for a, b, kind in planted if (a, b) in found)
    stages = Counter(found.values())
    project.close()
    return {"seconds": seconds, "cpu": cpu, "parts": dict(parts), "pairs": len(found),
            "stages": {"+".join(map(str, k)): v for k, v in stages.items()},
            "planted_found": dict(recovered), "planted": dict(Counter(k for _, _, k in planted)),
            "summary": result.result.summary.text(), "peak_rss": peak_rss(),
            "rss_before": before, "tokens": embedder.tokens_seen}


def _load() -> str:
    """The machine's load, printed with each timed part: other processes skew the timings."""
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(counts.items()))


def in_child(function: Any, *args: Any) -> dict[str, Any]:
    with ProcessPoolExecutor(max_workers=1, mp_context=get_context("spawn")) as pool:
        return pool.submit(function, *args).result()


def measure_scale(n_a: int, n_b: int, targets: Targets) -> None:
    from physgrade.importer import import_file
    from physgrade.project import Project

    print(f"4. the audit at scale: {n_a:,} texts against {n_b:,} (targets: at most "
          f"{AUDIT_TARGET}x the embedding alone, peak RSS under {MEMORY_TARGET >> 30} GB)")
    ids_a, texts_a, ids_b, texts_b, planted = audit_sets(n_a, n_b)
    words = [len(t.split()) for t in texts_a + texts_b]
    print(f"   texts: {min(words)}-{max(words)} words, {np.mean(words):.0f} on average; "
          f"{len(planted)} planted near-duplicates ({_counts(Counter(k for _, _, k in planted))})")
    with tempfile.TemporaryDirectory(prefix="bench-dedup-") as folder:
        questions = Path(folder) / "questions.jsonl"
        with questions.open("w", encoding="utf-8") as out:
            for qid, text in zip(ids_a, texts_a):
                out.write(json.dumps({"id": qid, "question": text}) + "\n")
        path = Path(folder) / "bench.physgrade"
        project = Project.create(path)
        started = time.perf_counter()
        import_file(project, questions, "questions")
        imported = time.perf_counter() - started
        project.close()
        print(f"   import of the {n_a:,} questions (not counted): {imported:.1f} s")
        print(f"   {_load()}")
        alone = in_child(child_embed, texts_a + texts_b)
        print(f"   embedding alone: {alone['seconds']:8.1f} s   "
              f"{(n_a + n_b) / alone['seconds']:8.1f} texts/s   {alone['tokens']:,} tokens; "
              f"CPU time {alone['cpu']:.1f} s; peak RSS {alone['peak_rss'] / 2**20:,.0f} MiB")
        print(f"   {_load()}")
        whole = in_child(child_audit, str(path), "bench-5k.jsonl", ids_b, texts_b, planted)
        print(f"   {_load()}")
    ratio = whole["seconds"] / alone["seconds"]
    rest = whole["seconds"] - sum(whole["parts"].values())
    breakdown = ", ".join(f"{name} {value:.1f} s" for name, value in whole["parts"].items())
    print(f"   whole audit:     {whole['seconds']:8.1f} s   ({breakdown}, the rest {rest:.1f} s: "
          f"hashing, cache look-ups and writes); CPU time {whole['cpu']:.1f} s")
    verdict = targets.check("4. audit <= 1.3 x embedding alone", ratio <= AUDIT_TARGET)
    own = whole["parts"].get("embedding", 0.0)
    print(f"   ratio {ratio:.2f}x the embedding alone: {verdict}; in CPU time "
          f"{whole['cpu'] / alone['cpu']:.2f}x; the whole audit against its own embedding time "
          f"{whole['seconds'] / own:.2f}x (these two are less sensitive to other processes)")
    print(f"   peak RSS of the audit process {whole['peak_rss'] / 2**20:,.0f} MiB "
          f"({whole['rss_before'] / 2**20:,.0f} MiB with the model loaded, before the audit): "
          f"{targets.check('4. audit peak RSS < 2 GB', whole['peak_rss'] < MEMORY_TARGET)}")
    found = whole["planted_found"]
    print(f"   pairs flagged: {whole['pairs']:,} (by stage: "
          f"{', '.join(f'{k} {v:,}' for k, v in sorted(whole['stages'].items()))}); planted "
          f"found: {', '.join(f'{k} {found.get(k, 0)}/{n}' for k, n in sorted(whole['planted'].items()))}")
    print(f"   {whole['summary']}")
    if whole["tokens"] != alone["tokens"]:
        print(f"   note: the audit embedded {whole['tokens']:,} tokens, the embedding alone "
              f"{alone['tokens']:,}")


# -- 5. detection and calibration on the labelled set ---------------------------------------

@dataclass(frozen=True)
class Item:
    id: str
    group: str
    kind: str
    field: str
    source: str
    text: str


def load_set(path: Path) -> list[Item]:
    items, seen = [], set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        record = json.loads(line)
        try:
            item = Item(str(record["id"]), str(record["group"]), str(record["kind"]),
                        str(record.get("field", "")), str(record.get("source", "")),
                        str(record["text"]))
        except KeyError as exc:
            raise SystemExit(f"{path}:{number}: no {exc.args[0]!r} field") from None
        if item.kind not in ("base", *EDIT_KINDS):
            raise SystemExit(f"{path}:{number}: unknown kind {item.kind!r}")
        if item.id in seen:
            raise SystemExit(f"{path}:{number}: id {item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    return items


@dataclass(frozen=True)
class Positive:
    base: str
    variant: str
    kind: str
    jaccard: float
    cosine: float

    def flagged(self, jaccard: float, cosine: float) -> bool:
        return self.jaccard >= jaccard or self.cosine >= cosine


def positives(items: list[Item], vectors: dict[str, np.ndarray]) -> tuple[list[Positive], int]:
    """The (base, variant) pairs with both scores; and the groups with variants but no base."""
    groups: dict[str, list[Item]] = defaultdict(list)
    for item in items:
        groups[item.group].append(item)
    shingles = {item.id: lexical.shingles(item.text) for item in items}
    out, baseless = [], 0
    for members in groups.values():
        bases = [m for m in members if m.kind == "base"]
        variants = [m for m in members if m.kind != "base"]
        if variants and not bases:
            baseless += 1
        for base in bases:
            for variant in variants:
                out.append(Positive(base.id, variant.id, variant.kind,
                                    lexical.jaccard(shingles[base.id], shingles[variant.id]),
                                    float(vectors[base.id] @ vectors[variant.id])))
    return out, baseless


def audit_within(items: list[Item], vectors: dict[str, np.ndarray],
                 thresholds: audit.Thresholds) -> list[audit.Pair]:
    textset = TextSet("", [i.id for i in items], [i.text for i in items])
    stacked = np.stack([vectors[i.id] for i in items])
    return audit.compare(textset, stacked, None, None, thresholds).pairs


@dataclass(frozen=True)
class Figures:
    recall: dict[str, float]
    overall: float
    precision: float
    f1: float
    flagged: int


def figures(found: list[audit.Pair], truth: list[Positive], group: dict[str, str],
            jaccard: float, cosine: float) -> Figures:
    flagged = [p for p in found if p.jaccard >= jaccard or p.cosine >= cosine]
    true = sum(group[p.a] == group[p.b] for p in flagged)
    precision = true / len(flagged) if flagged else math.nan
    recall = {}
    for kind in EDIT_KINDS:
        of_kind = [p for p in truth if p.kind == kind]
        recall[kind] = (sum(p.flagged(jaccard, cosine) for p in of_kind) / len(of_kind)
                        if of_kind else math.nan)
    overall = sum(p.flagged(jaccard, cosine) for p in truth) / len(truth) if truth else math.nan
    f1 = (2 * precision * overall / (precision + overall)
          if flagged and truth and precision + overall > 0 else 0.0)
    return Figures(recall, overall, precision, f1, len(flagged))


def _rate(value: float) -> str:
    return "    -" if math.isnan(value) else f"{value:5.3f}"


def measure_detection(path: Path, embedder: engine.Embedder, seed: int, verbose: bool,
                      targets: Targets) -> None:
    print(f"5. detection on the labelled set {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    if not path.is_file():
        print("   the file does not exist: not measured")
        for kind in EDIT_KINDS:
            targets.check(f"5. recall {kind} >= {RECALL_TARGETS[kind]}", None)
        return
    items = load_set(path)
    kinds = Counter(i.kind for i in items)
    group = {i.id: i.group for i in items}
    print(f"   {len(items):,} texts in {len(set(group.values())):,} groups: "
          f"{', '.join(f'{k} {kinds[k]}' for k in ('base', *EDIT_KINDS))}; fields "
          f"{dict(Counter(i.field for i in items))}")
    started = time.perf_counter()
    vectors = dict(zip((i.id for i in items), embedder.encode([i.text for i in items])))
    embedded = time.perf_counter() - started
    truth, baseless = positives(items, vectors)
    if baseless:
        print(f"   note: {baseless} groups have variants but no base; their pairs are not counted")
    defaults = audit.Thresholds()
    started = time.perf_counter()
    found = audit_within(items, vectors, defaults)
    compared = time.perf_counter() - started
    at_default = figures(found, truth, group, defaults.jaccard, defaults.cosine)
    print(f"   embedded in {embedded:.1f} s, compared in {compared:.2f} s; default thresholds: "
          f"Jaccard {defaults.jaccard}, cosine {defaults.cosine}")
    print("   kind          pairs  recall  target    cosine min / median   Jaccard median")
    for kind in EDIT_KINDS:
        of_kind = [p for p in truth if p.kind == kind]
        recall = at_default.recall[kind]
        verdict = targets.check(f"5. recall {kind} >= {RECALL_TARGETS[kind]}",
                                None if not of_kind else recall >= RECALL_TARGETS[kind])
        cosines = [p.cosine for p in of_kind] or [math.nan]
        jaccards = [p.jaccard for p in of_kind] or [math.nan]
        print(f"   {kind:<12} {len(of_kind):>6}  {_rate(recall)}  {RECALL_TARGETS[kind]:>5}  "
              f"{min(cosines):8.3f} / {np.median(cosines):.3f}  {np.median(jaccards):14.3f}   "
              f"{verdict}")
    true = sum(group[p.a] == group[p.b] for p in found)
    print(f"   flagged pairs {len(found):,}, of which {true:,} within a group: precision "
          f"{_rate(at_default.precision)}")
    for stages in ((1,), (2,), (1, 2)):
        of_stage = [p for p in found if p.stages == stages]
        name = {(1,): "word 5-grams only", (2,): "embeddings only", (1, 2): "both"}[stages]
        true = sum(group[p.a] == group[p.b] for p in of_stage)
        print(f"     by {name:<18} {len(of_stage):>6,}  ({true:,} true)")
    if verbose:
        flagged = {frozenset((p.a, p.b)) for p in found}
        for p in truth:
            if frozenset((p.base, p.variant)) not in flagged:
                print(f"     missed {p.kind:<10} {p.base} ~ {p.variant}: cosine {p.cosine:.3f}, "
                      f"Jaccard {p.jaccard:.3f}")
        for p in found:
            if group[p.a] != group[p.b]:
                print(f"     false  {p.a} ~ {p.b}: cosine {p.cosine:.3f}, Jaccard {p.jaccard:.3f}")
    calibrate(items, vectors, seed)


def calibrate(items: list[Item], vectors: dict[str, np.ndarray], seed: int) -> None:
    groups = sorted({i.group for i in items})
    random.Random(seed).shuffle(groups)
    calibration = set(groups[:len(groups) // 2])
    halves = {"calibration": [i for i in items if i.group in calibration],
              "held-out": [i for i in items if i.group not in calibration]}
    group = {i.id: i.group for i in items}
    lowest = audit.Thresholds(CALIBRATION_JACCARD, GRID[0])
    table: dict[str, dict[float, Figures]] = {}
    for name, half in halves.items():
        found = audit_within(half, vectors, lowest)
        truth, _ = positives(half, vectors)
        table[name] = {t: figures(found, truth, group, CALIBRATION_JACCARD, t) for t in GRID}
    print(f"   calibration of the cosine threshold (Jaccard {CALIBRATION_JACCARD}; groups split by "
          f"a shuffle with seed {seed}: {len(halves['calibration'])} texts in "
          f"{len(calibration)} groups to calibrate, {len(halves['held-out'])} held out)")
    head = "exact light numbr para  all   prec  F1   "
    print(f"    cosine | calibration: {head}| held-out: {head}")
    for t in GRID:
        cells = []
        for name in halves:
            f = table[name][t]
            cells.append(" ".join(_rate(f.recall[k]) for k in EDIT_KINDS) + f" {_rate(f.overall)} "
                         f"{_rate(f.precision)} {_rate(f.f1)}")
        print(f"     {t:.2f}  |              {cells[0]} |           {cells[1]}")
    eligible = [t for t in GRID if all(table["calibration"][t].recall[k] >= CALIBRATION_RECALL
                                       for k in ("numbers", "paraphrase"))]
    if not eligible:
        print(f"   no threshold reaches a recall of {CALIBRATION_RECALL} on both numbers and "
              "paraphrases on the calibration half")
        return
    best = max(eligible, key=lambda t: (table["calibration"][t].f1, t))
    tied = [t for t in eligible if table["calibration"][t].f1 == table["calibration"][best].f1]
    if len(tied) > 1:
        print(f"   the best F1 on the calibration half is reached from {min(tied):.2f} to "
              f"{max(tied):.2f}; the highest of these is taken")
    for name in halves:
        f = table[name][best]
        print(f"   best cosine threshold {best:.2f} ({name}): recall "
              f"{', '.join(f'{k} {_rate(f.recall[k])}' for k in EDIT_KINDS)}, all {_rate(f.overall)}; "
              f"precision {_rate(f.precision)}, F1 {_rate(f.f1)}, {f.flagged} pairs flagged")
    print(f"   (the default is {audit.DEFAULT_COSINE})")


# -- main -----------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: 500 texts, 2,000 audited against 500")
    parser.add_argument("--texts", type=int, help="texts for parts 1-3 (default 3,000)")
    parser.add_argument("--scale", type=int, nargs=2, metavar=("AUDITED", "AGAINST"),
                        help="texts of part 4 (default 20,000 against 5,000)")
    parser.add_argument("--set", type=Path, default=DEFAULT_SET, help="the labelled set of part 5")
    parser.add_argument("--calibrate", action="store_true",
                        help="only part 5: detection and calibration on the labelled set")
    parser.add_argument("--seed", type=int, default=7, help="of the calibration split")
    parser.add_argument("--verbose", action="store_true",
                        help="list the missed and falsely flagged pairs of part 5")
    args = parser.parse_args()
    n_texts = args.texts or (500 if args.quick else 3000)
    n_a, n_b = args.scale or ((2000, 500) if args.quick else (20000, 5000))

    targets = Targets()
    started = time.perf_counter()
    files = models.resolve()
    embedder = engine.Embedder(files)
    print(f"model {files.name} ({files.onnx}), provider {embedder.provider}, "
          f"{os.cpu_count()} CPUs; {time.perf_counter() - started:.1f} s to load")
    if not args.calibrate:
        texts = problems(n_texts, seed=1)
        shape = Shape.read(files.tokenizer.parent)
        timing = measure_compute(embedder, texts, shape, targets)
        measure_peer(files.tokenizer.parent, texts, timing, targets)
        measure_int8(texts, timing)
        measure_scale(n_a, n_b, targets)
    measure_detection(args.set, embedder, args.seed, args.verbose, targets)
    print(f"\ntotal time {time.perf_counter() - started:.0f} s; {_load()}")
    sys.exit(0 if targets.summary() else 1)


if __name__ == "__main__":
    main()
