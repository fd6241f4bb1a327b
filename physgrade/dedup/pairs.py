"""Candidate pairs kept in the project: saved by an audit, labelled by a judge, decided by people.

A new audit of the same source updates its pairs' scores and stages. A pair it no longer flags
is dropped unless a judge labelled it or a reviewer decided it: that work is never thrown away.
Clusters group the project's own questions linked by pairs nobody rejected.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from physgrade.changes import Changes, RecordKind
from physgrade.dedup.texts import WITHIN, question_text
from physgrade.images import CheckedImage, images_of
from physgrade.project import Project, ProjectError, now_iso

if TYPE_CHECKING:  # the audit brings numpy; reading pairs needs none
    from physgrade.dedup.audit import Result

LABELS = ("close_duplicate", "same_topic")
#: A reviewer's decision on a pair: a duplicate indeed, or not one.
CONFIRMED, REJECTED = "confirmed", "rejected"
DECISIONS = (CONFIRMED, REJECTED)
#: The decision filter of the pairs that wait for a reviewer: undecided, and not a pair the
#: project declares related already (a question and its variant are meant to be alike).
TO_REVIEW = "to review"
CSV_FIELDS = ("a", "b", "source", "jaccard", "cosine", "figure_distance", "same_image", "stages",
              "label", "label_model", "decision", "decided_by", "declared_variant", "cluster",
              "a_text", "b_text")


@dataclass(frozen=True, slots=True)
class StoredPair:
    id: int
    source: str
    a: str
    b: str
    a_text: str
    b_text: str
    jaccard: float
    cosine: float
    stages: tuple[int, ...]
    label: str | None
    label_model: str | None
    label_rationale: str | None
    decision: str | None
    decided_by: str | None
    #: Both questions are the project's and it declares them variants: one of the other, or
    #: both of one base question (``variant_of``).
    declared_variant: bool = False
    #: The fewest bits apart of any two of the questions' figures (None: either has none), and
    #: whether they show one image byte for byte (the figure stage).
    figure_distance: int | None = None
    same_image: bool = False


def pair_figures(project: Project,
                 pair: StoredPair) -> tuple[list[CheckedImage], list[CheckedImage]]:
    """The statement figures of both questions of ``pair``, to be read side by side (a question
    of another set shows none: only its text is kept)."""
    return (images_of(project.conn, "question", pair.a),
            images_of(project.conn, "question", pair.b) if pair.source == WITHIN else [])


def save(project: Project, result: "Result", source: str, texts_b: dict[str, str] | None,
         model: str, provider: str) -> int:
    """Store one audit and its pairs in one transaction; returns the audit's id.

    ``texts_b`` holds the other set's texts (None within the project), kept with each pair.
    """
    now = now_iso()
    with project.transaction():
        conn = project.conn
        conn.executemany(
            "INSERT INTO duplicate_pairs (source, a, b, b_text, jaccard, cosine, "
            "figure_distance, same_image, stages, found_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (source, a, b) DO UPDATE SET b_text = excluded.b_text, "
            "jaccard = excluded.jaccard, cosine = excluded.cosine, "
            "figure_distance = excluded.figure_distance, same_image = excluded.same_image, "
            "stages = excluded.stages, found_at = excluded.found_at",
            [(source, p.a, p.b, None if texts_b is None else texts_b[p.b], p.jaccard, p.cosine,
              None if p.figure is None else p.figure.distance,
              p.figure is not None and p.figure.same_image, json.dumps(list(p.stages)), now)
             for p in result.pairs])
        conn.execute("DELETE FROM duplicate_pairs WHERE source = ? AND found_at != ? AND "
                     "label IS NULL AND decision IS NULL", (source, now))
        audit_id = conn.execute(
            "INSERT INTO duplicate_audits (source, model, provider, jaccard, cosine, figure_bits, "
            "n_a, n_b, pairs, summary, ran_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (source, model, provider, result.thresholds.jaccard, result.thresholds.cosine,
             result.thresholds.figure, result.n_a, result.n_b, len(result.pairs),
             json.dumps(result.summary.as_json()), now)).lastrowid
        assert audit_id is not None  # an INSERT sets it
        return audit_id


def set_duplicate_decision(project: Project, pair_id: int, reviewer: str,
                           decision: str | None) -> Changes:
    """Record a reviewer's decision on a candidate pair (one of :data:`DECISIONS`; None
    withdraws it), committed at once."""
    if decision is not None and decision not in DECISIONS:
        raise ProjectError(f"a duplicate decision is {' or '.join(map(repr, DECISIONS))}, not "
                           f"{decision!r}")
    if not reviewer.strip():
        raise ProjectError("a decision needs a reviewer's name")
    with project.transaction():
        row = project.conn.execute("SELECT source, a, b FROM duplicate_pairs WHERE id = ?",
                                   (pair_id,)).fetchone()
        if row is None:
            raise ProjectError(f"no candidate pair {pair_id}")
        project.conn.execute(
            "UPDATE duplicate_pairs SET decision = ?, decided_by = ?, decided_at = ? WHERE id = ?",
            (decision, reviewer if decision else None, now_iso() if decision else None, pair_id))
    source, a, b = row
    return Changes.of(RecordKind.PAIRS, questions=[a, b] if source == WITHIN else [a])


def labels(project: Project, source: str,
           pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """The judge labels stored for some pairs of ``source``."""
    wanted = set(pairs)
    return {(a, b): label for a, b, label in project.conn.execute(
        "SELECT a, b, label FROM duplicate_pairs WHERE source = ? AND label IS NOT NULL",
        (source,)) if (a, b) in wanted}


def stored_pairs(project: Project, source: str | None = None, stage: int | None = None,
                 label: str | None = None, decision: str | None = None) -> list[StoredPair]:
    """Pairs by descending cosine, narrowed by source, a stage that flagged them, a judge label
    (``"none"``: unlabelled) and a decision (``"none"``: undecided; :data:`TO_REVIEW`:
    undecided and no declared variant)."""
    terms: list[str] = ["1"]
    params: list[str | int] = []
    to_review = decision == TO_REVIEW
    if to_review:
        decision = "none"
    if source is not None:
        terms.append("p.source = ?")
        params.append(source)
    if stage is not None:
        terms.append("EXISTS (SELECT 1 FROM json_each(p.stages) WHERE value = ?)")
        params.append(stage)
    for column, value in (("label", label), ("decision", decision)):
        if value == "none":
            terms.append(f"p.{column} IS NULL")
        elif value is not None:
            terms.append(f"p.{column} = ?")
            params.append(value)
    rows = project.conn.execute(
        "SELECT p.id, p.source, p.a, p.b, qa.question, qa.options, "
        "coalesce(p.b_text, qb.question), qb.options, p.jaccard, p.cosine, p.stages, p.label, "
        "p.label_model, p.label_rationale, p.decision, p.decided_by, qb.id IS NOT NULL, "
        "qa.variant_of, qb.variant_of, p.figure_distance, p.same_image FROM duplicate_pairs p "
        "JOIN questions qa ON qa.id = p.a "
        "LEFT JOIN questions qb ON qb.id = p.b AND p.b_text IS NULL "
        f"WHERE {' AND '.join(terms)} ORDER BY p.cosine DESC, p.jaccard DESC, p.id", params)
    found = [StoredPair(pid, src, a, b, _text(a_text, a_options), _text(b_text or "", b_options),
                        jac, cos, tuple(json.loads(stages)), lab, lab_model, rationale, dec, by,
                        src == WITHIN and b_is_ours and _variants(a, b, a_base, b_base),
                        figure, bool(same))
             for (pid, src, a, b, a_text, a_options, b_text, b_options, jac, cos, stages, lab,
                  lab_model, rationale, dec, by, b_is_ours, a_base, b_base, figure, same) in rows]
    return [p for p in found if not p.declared_variant] if to_review else found


def _variants(a: str, b: str, a_base: str | None, b_base: str | None) -> bool:
    """Whether the questions ``a`` and ``b`` (of variant bases ``a_base``, ``b_base``) are
    declared variants: one of the other, or both of one base."""
    return a_base == b or b_base == a or (a_base is not None and a_base == b_base)


def _text(question: str, options: str | None) -> str:
    return question_text(question, json.loads(options) if options else None)


def sources(project: Project) -> list[str]:
    """The sources audited so far (with or without pairs found), the project itself ('')
    first."""
    return [row[0] for row in project.conn.execute(
        "SELECT source FROM (SELECT source FROM duplicate_audits UNION "
        "SELECT source FROM duplicate_pairs) ORDER BY source != '', source")]


def last_audit(project: Project, source: str) -> dict[str, Any] | None:
    """The latest audit of ``source``: its settings, model, provider and summary figures (the
    JSON of :class:`~physgrade.dedup.audit.Summary`)."""
    row = project.conn.execute(
        "SELECT model, provider, jaccard, cosine, figure_bits, n_a, n_b, pairs, summary, ran_at "
        "FROM duplicate_audits WHERE source = ? ORDER BY id DESC LIMIT 1", (source,)).fetchone()
    if row is None:
        return None
    keys = ("model", "provider", "jaccard", "cosine", "figure_bits", "n_a", "n_b", "pairs",
            "summary", "ran_at")
    found = dict(zip(keys, row))
    found["summary"] = json.loads(found["summary"] or "{}")
    return found


def clusters(project: Project) -> list[list[str]]:
    """Groups of the project's questions linked by within-project pairs not rejected, largest
    first; each group's ids sorted."""
    parent: dict[str, str] = {}

    def root(item: str) -> str:
        parent.setdefault(item, item)
        while parent[item] != item:
            parent[item] = parent[parent[item]]
            item = parent[item]
        return item

    for a, b in project.conn.execute(
            "SELECT a, b FROM duplicate_pairs WHERE source = ? AND "
            "(decision IS NULL OR decision != ?)", (WITHIN, REJECTED)):
        parent[root(a)] = root(b)
    groups: dict[str, list[str]] = {}
    for item in parent:
        groups.setdefault(root(item), []).append(item)
    return sorted((sorted(group) for group in groups.values()), key=lambda g: (-len(g), g[0]))


def cluster_of(groups: list[list[str]]) -> dict[str, int]:
    """Each clustered question's cluster number (1 = the largest)."""
    return {item: n for n, group in enumerate(groups, 1) for item in group}


def write_csv(project: Project, path: str | Path, pairs: list[StoredPair]) -> None:
    """The pairs as CSV, with their cluster number (within the project) and both texts."""
    numbers = cluster_of(clusters(project))
    with Path(path).open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CSV_FIELDS)
        for p in pairs:
            writer.writerow([p.a, p.b, p.source or "(within)", f"{p.jaccard:.4f}",
                             f"{p.cosine:.4f}",
                             "" if p.figure_distance is None else p.figure_distance,
                             "yes" if p.same_image else "", "+".join(map(str, p.stages)),
                             p.label or "",
                             p.label_model or "", p.decision or "", p.decided_by or "",
                             "yes" if p.declared_variant else "",
                             numbers.get(p.a, "") if p.source == WITHIN else "", p.a_text,
                             p.b_text])
