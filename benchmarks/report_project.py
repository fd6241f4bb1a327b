"""A synthetic study project at any size, for measuring and checking the project report.

Builds 6,000 questions (2,700 of them contextual variants of 900 base questions) and any
number of responses from 10 models, each scored on every criterion by two language-model
judges, with two people grading the same 10% of the responses. Scores are drawn from a seed,
so that judges lean lenient and people mostly agree: the same arguments give the same project.

``benchmarks/bench_report.py`` times the report on it, and the report's golden test
(``tests/report_golden.py``, ``tests/test_report_golden.py``) checks the report's numbers on it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from physgrade.project import Project
from physgrade.raters import HUMAN, LLM, rater_id
from physgrade.rubric import CONCEPTUAL, PREFS
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE, REGIONS, TOPICS

STAMP = "2026-11-01T00:00:00Z"
N_QUESTIONS, N_BASES_WITH_VARIANTS, N_MODELS = 6000, 900, 10


def build(path: Path, n_responses: int, seed: int = 11) -> None:
    """The project, written directly into its tables: importing files would take longer than
    the report it serves."""
    rng = np.random.default_rng(seed)
    n_variants = N_BASES_WITH_VARIANTS * len(REGIONS)
    n_base = N_QUESTIONS - n_variants
    questions = []
    for i in range(N_QUESTIONS):
        conceptual = i < n_base and i % 6 == 0
        base = None if i < n_base else (i - n_base) // len(REGIONS)
        questions.append((f"q-{i:05d}", "conceptual" if conceptual else "problem",
                          TOPICS[(base if base is not None else i) % len(TOPICS)],
                          f"Question {i}", '{"A": "a", "B": "b"}' if conceptual else None,
                          BLOOM_COGNITIVE[i % 6], BLOOM_KNOWLEDGE[i % 4],
                          None if base is None else f"q-{base:05d}",
                          None if base is None else REGIONS[(i - n_base) % len(REGIONS)]))
    responses = [(f"r-{j:06d}", questions[j % N_QUESTIONS][0], f"model-{j // N_QUESTIONS:02d}"
                  if n_responses > N_QUESTIONS else f"model-{j % N_MODELS:02d}",
                  f"Response {j}", int(j % 7 != 0)) for j in range(n_responses)]
    with Project.create(path) as project, project.transaction():
        conn = project.conn
        conn.executemany("INSERT INTO questions (id, kind, topic, question, options, "
                         "bloom_cognitive, bloom_knowledge, variant_of, region) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", questions)
        conn.executemany("INSERT INTO responses (id, question_id, model, response, compliant) "
                         "VALUES (?, ?, ?, ?, ?)", responses)
        judges = [rater_id(project, name, LLM, "v1") for name in ("judge-a", "judge-b")]
        people = [rater_id(project, name, HUMAN) for name in ("expert-1", "expert-2")]
        kinds = {q[0]: q[1] for q in questions}
        graded = set(rng.choice(n_responses, n_responses // 10, replace=False).tolist())
        score_rows, assessment_rows = [], []
        for j, (rid, qid, model, _, _) in enumerate(responses):
            rubric = CONCEPTUAL if kinds[qid] == "conceptual" else PREFS
            skill = 0.55 + 0.04 * int(model[-2:])  # stronger models make fewer errors
            truth = {c.key: (c.maximum if rng.random() < skill + 0.3
                             else int(rng.integers(0, c.maximum))) for c in rubric.criteria}
            raters = [(judge, 0.35 + 0.2 * k) for k, judge in enumerate(judges)]
            raters += [(person, 0.05) for person in people] if j in graded else []
            for rater, noise in raters:
                for c in rubric.criteria:
                    value = truth[c.key]
                    if rng.random() < noise:  # judges mostly forgive errors: lenient
                        value = c.maximum if rater in judges and rng.random() < 0.8 else \
                            int(rng.integers(0, c.maximum + 1))
                    score_rows.append((rater, rid, rubric.key, c.key, value, STAMP))
                assessment_rows.append((rater, rid, rubric.key, STAMP))
        conn.executemany("INSERT INTO scores (rater_id, response_id, rubric, criterion, value, "
                         "updated_at) VALUES (?, ?, ?, ?, ?, ?)", score_rows)
        conn.executemany("INSERT INTO assessments (rater_id, response_id, rubric, assessed_at) "
                         "VALUES (?, ?, ?, ?)", assessment_rows)
