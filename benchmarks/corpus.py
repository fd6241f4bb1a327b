"""A synthetic corpus at the study's real size, for benchmarks and load tests.

Texts follow the solution template (with the variations real models produce, and some that
ignore it) and have the real lengths: responses of 2-3 KB. Deterministic for a given seed.
"""

from __future__ import annotations

import json
import random
import resource
from pathlib import Path

TOPICS = ("Introduction", "Mechanics", "Electricity & Magnetism", "Thermodynamics",
          "Waves & Acoustics", "Optics", "Modern Physics")
COGNITIVE = ("Remember", "Understand", "Apply", "Analyze", "Evaluate", "Create")
KNOWLEDGE = ("Factual", "Conceptual", "Procedural", "Metacognitive")
MODELS = tuple(f"model-{i:02d}" for i in range(10))

_FILLER = ("The quantity follows from the relation between the given values, and the units are "
           "checked at each stage so that the result stays consistent with the physical setup. ")


def _step(n: int, rng: random.Random, style: int) -> str:
    a, b = rng.uniform(1, 50), rng.uniform(1, 50)
    label = ("Step {n}:", "### Step {n}", "**Step {n}.**")[style].format(n=n)
    return (f"{label}\nReasoning: {_FILLER * rng.randint(1, 2)}\n"
            f"General Formula: $F = m a$ and $v^2 = v_0^2 + 2 a s$\n"
            f"Substitution: $F = {a:.2f} \\times {b:.2f}$\n"
            f"Calculation: $F = {a * b:.3f}$ N\nResult: $F \\approx {a * b:.1f}$ N\n")


def solution(rng: random.Random, target_bytes: int, style: int = 0) -> str:
    """A template solution of about ``target_bytes``; style 0 plain, 1 markdown, 2 bold."""
    head = ("Problem Formulation:\n", "## Problem Formulation\n", "**Problem Formulation**\n")
    text = (head[style] + f"Given: m = {rng.uniform(1, 9):.1f} kg, a = {rng.uniform(1, 9):.1f} "
            "m/s^2\nFind: the net force\nApproach: Newton's second law\nAssumptions: no "
            "friction\n" + ("Step-by-step Detailed Solution:\n", "## Step-by-step Solution\n",
                            "**Step-by-step Detailed Solution**\n")[style])
    steps = []
    n = 1
    while len(text) + sum(map(len, steps)) < target_bytes - 80:
        steps.append(_step(n, rng, style))
        n += 1
    return text + "".join(steps) + f"Final Answer: {rng.uniform(1, 99):.2f} N\n"


def prose(rng: random.Random, target_bytes: int) -> str:
    """A response that ignores the template (graded holistically)."""
    text = "Let us think about this problem. "
    while len(text) < target_bytes:
        text += _FILLER
    return text + f"So the force is about {rng.uniform(1, 99):.1f} N."


def write_corpus(folder: Path, n_questions: int = 6000, n_responses: int = 58000,
                 seed: int = 7) -> tuple[Path, Path]:
    """Write questions.jsonl and responses.jsonl into ``folder``; returns their paths."""
    rng = random.Random(seed)
    folder.mkdir(parents=True, exist_ok=True)
    questions, responses = folder / "questions.jsonl", folder / "responses.jsonl"
    with questions.open("w", encoding="utf-8") as out:
        for i in range(n_questions):
            conceptual = i % 6 == 0
            record = {
                "id": f"q-{i:05d}", "kind": "conceptual" if conceptual else "problem",
                "topic": TOPICS[i % len(TOPICS)],
                "question": f"A body of mass {rng.uniform(1, 9):.1f} kg is pushed ... " * 3,
                "options": {"A": "It speeds up", "B": "It slows down", "C": "Neither",
                            "D": "Both"} if conceptual else None,
                "answer": "A" if conceptual else f"{rng.uniform(1, 99):.2f} N",
                "answer_type": "MC" if conceptual else "NV",
                "unit": None if conceptual else "N",
                "reference_solution": solution(rng, 1500),
                "bloom_cognitive": COGNITIVE[i % 6], "bloom_knowledge": KNOWLEDGE[i % 4],
                "variant_of": None, "region": None, "source_page": i // 40}
            out.write(json.dumps(record) + "\n")
    with responses.open("w", encoding="utf-8") as out:
        for j in range(n_responses):
            size = rng.randint(2000, 3000)
            text = prose(rng, size) if j % 7 == 0 else solution(rng, size, style=j % 3)
            record = {"id": f"r-{j:06d}", "question_id": f"q-{j % n_questions:05d}",
                      "model": MODELS[j % len(MODELS)], "response": text}
            out.write(json.dumps(record) + "\n")
    return questions, responses


def _status(field: str) -> int | None:
    """A field of this process's /proc status, in bytes (None off Linux)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def rss() -> int:
    """This process's resident set size now, in bytes (Linux; 0 elsewhere)."""
    return _status("VmRSS") or 0


def peak_rss() -> int:
    """This process's peak resident set size in bytes.

    VmHWM, of the process's own memory map: ``ru_maxrss`` would not do in a spawned child,
    since Linux carries it over the exec from the forked copy of the parent."""
    return _status("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
