"""The figures of Bloom's taxonomy annotation: agreement on labels and the labels' distribution.

:func:`read_labels` reads a project's labels and questions once (never writes); these
functions narrow them to a report's filter in memory, so that a filter change reads nothing, and
return plain dataclasses that the report turns into its tables
(:func:`physgrade.report.bloom_labels.bloom_section`):

- :func:`comparisons`: per dimension (cognitive level, knowledge type), every model against
  every person and against the final label ("human against model"), and every pair of people
  ("human against human"): n, percent agreement, Cohen's kappa and Gwet's AC1 (each with its
  95% interval), and the confusion matrix, rows the first rater and columns the second, in
  vocabulary order;
- :func:`distribution` and :func:`cognitive_by_topic`: the final labels (``questions.bloom_*``,
  see :mod:`physgrade.annotation.adjudication`) over the levels and types, and the levels
  within each topic, with counts and shares.

A pair of labels counts on a dimension when both raters gave that dimension. Statistics come
from :mod:`physgrade.stats`; nothing is re-implemented here. Labels are nominal: the
coefficients are unweighted.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from typing import Mapping

import numpy as np

from physgrade.facets import by_question
from physgrade.project import Project
from physgrade.raters import HUMAN, rater_label
from physgrade.selection import QUESTION_FACETS, ResponseFilter
from physgrade.stats.agreement import cohen_kappa, gwet_ac1, percent_agreement
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import confusion_matrix
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE, TOPICS, in_vocabulary_order

#: The two dimensions of the revised taxonomy, with their vocabularies, in report order.
DIMENSIONS: dict[str, tuple[str, ...]] = {"cognitive": BLOOM_COGNITIVE,
                                          "knowledge": BLOOM_KNOWLEDGE}
DIMENSION_TITLES = {"cognitive": "Cognitive level", "knowledge": "Knowledge type"}
#: How the final label is named as a rater.
FINAL = "final label"
#: The kinds of comparison, in report order.
HUMAN_MODEL, HUMAN_HUMAN = "human against model", "human against human"
NO_TOPIC = "(no topic)"


# -- results ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Comparison:
    """Two raters' labels of the same questions on one dimension. ``first`` is the reference
    (a person or the final label; the rows of ``matrix``), ``second`` the other rater."""

    kind: str                       # HUMAN_MODEL or HUMAN_HUMAN
    dimension: str                  # "cognitive" or "knowledge"
    first: str
    second: str
    n: int                          # questions both labelled on this dimension
    agreement: Estimate             # percent agreement (a share)
    kappa: Estimate                 # Cohen's kappa, unweighted
    ac1: Estimate                   # Gwet's AC1
    categories: tuple[str, ...]     # the vocabulary, in order
    matrix: np.ndarray              # counts, rows first rater, columns second rater


@dataclass(frozen=True, slots=True)
class Share:
    """How many final labels fall in ``label`` (within ``group``: a topic, or "" for all)."""

    group: str
    label: str
    count: int
    share: Estimate                 # of the group's labelled questions, Wilson interval


# -- reading ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Label:
    """One annotator's Bloom label of one question (a dimension not given is None)."""

    annotator: str                  # the rater label
    kind: str                       # the annotator's rater kind: a person (HUMAN) or a model
    question_id: str
    cognitive: str | None
    knowledge: str | None


@dataclass(frozen=True, slots=True)
class Question:
    """A question's facets, by which a report's filter narrows (see :data:`_FACETS`), and its
    final label with where that comes from (the view ``bloom_final``)."""

    topic: str | None
    kind: str
    bloom_cognitive: str | None     # the final cognitive level
    bloom_knowledge: str | None     # the final knowledge type
    source: str                     # "adjudicated", "consensus" or "imported"
    #: its values of the declared facets (:func:`physgrade.facets.by_question`)
    fields: Mapping[str, str | None] = field(default_factory=dict, compare=False)


@dataclass(frozen=True, slots=True)
class Labels:
    """A project's Bloom labels and questions read whole (:func:`read_labels`), so that a
    report's filter narrows them in memory and a filter change reads nothing."""

    labels: tuple[Label, ...]
    questions: dict[str, Question]  # every question, by id


def read_labels(project: Project) -> Labels:
    """Every Bloom label and every question's facets and final label, unfiltered."""
    labels = tuple(
        Label(rater_label(name, version), kind, qid, cognitive, knowledge)
        for name, version, kind, qid, cognitive, knowledge in project.conn.execute(
            "SELECT r.name, r.prompt_version, r.kind, b.question_id, b.cognitive, b.knowledge "
            "FROM bloom_labels b JOIN raters r ON r.id = b.annotator_id JOIN questions q ON "
            "q.id = b.question_id"))
    origins = dict(project.conn.execute("SELECT question_id, source FROM bloom_final"))
    fields = by_question(project)
    return Labels(labels, {
        qid: Question(topic, kind, cognitive, knowledge, origins[qid], fields.get(qid, {}))
        for qid, topic, kind, cognitive, knowledge in project.conn.execute(
            "SELECT id, topic, kind, bloom_cognitive, bloom_knowledge FROM questions")})


def has_labels(labels: Labels) -> bool:
    """Whether anyone (a person or a model) has given a Bloom label, or an adjudicator decided
    one."""
    return bool(labels.labels) or any(q.source == "adjudicated" for q in labels.questions.values())




def _questions(labels: Labels, report_filter: ResponseFilter) -> dict[str, Question]:
    """The questions within the filter's facets (facets combine with AND, values with OR)."""
    return {qid: question for qid, question in labels.questions.items()
            if report_filter.admits(question, QUESTION_FACETS)}


def labels_by_annotator(labels: Labels, report_filter: ResponseFilter
            ) -> tuple[dict[str, dict[str, tuple[str | None, str | None]]], list[str], list[str]]:
    """Every annotator's labels by question, the people's names and the models' labels."""
    questions = _questions(labels, report_filter)
    by_annotator: dict[str, dict[str, tuple[str | None, str | None]]] = defaultdict(dict)
    people, models = set(), set()
    for label in labels.labels:
        if label.question_id not in questions:
            continue
        if label.kind == HUMAN:
            if report_filter.graders and label.annotator not in report_filter.graders:
                continue
            people.add(label.annotator)
        else:
            if report_filter.judges and label.annotator not in report_filter.judges:
                continue
            models.add(label.annotator)
        by_annotator[label.annotator][label.question_id] = (label.cognitive, label.knowledge)
    return by_annotator, sorted(people), sorted(models)


# -- agreement ----------------------------------------------------------------------------------


def compare(kind: str, dimension: str, first: str, second: str,
            pairs: list[tuple[str, str]]) -> Comparison:
    """The agreement of two raters' labels ``pairs`` (first, second) on one dimension."""
    vocabulary = DIMENSIONS[dimension]
    codes = range(len(vocabulary))
    ratings = np.array([[vocabulary.index(a), vocabulary.index(b)] for a, b in pairs],
                       dtype=float).reshape(-1, 2)
    return Comparison(kind, dimension, first, second, len(ratings),
                      percent_agreement(ratings, codes) if len(ratings) else
                      Estimate.unavailable(0, "no question labelled by both"),
                      cohen_kappa(ratings, None, codes), gwet_ac1(ratings, codes) if len(
                          ratings) else Estimate.unavailable(0, "no question labelled by both"),
                      vocabulary, confusion_matrix(ratings[:, 0], ratings[:, 1], codes))


def _pairs(first: dict[str, tuple[str | None, str | None]],
           second: dict[str, tuple[str | None, str | None]], axis: int
           ) -> list[tuple[str, str]]:
    """The (first, second) values of the questions both labelled on dimension ``axis``, by id;
    values outside the vocabulary (a project edited by hand) are left out."""
    vocabulary = DIMENSIONS[tuple(DIMENSIONS)[axis]]
    out = []
    for qid in sorted(set(first) & set(second)):
        a, b = first[qid][axis], second[qid][axis]
        if a in vocabulary and b in vocabulary:
            out.append((a, b))
    return out


def comparisons(labels: Labels, report_filter: ResponseFilter = ResponseFilter()
                ) -> list[Comparison]:
    """Every model against every person and the final label, then every pair of people, per
    dimension (see the module's doc). Pairs of raters with no question in common are left
    out."""
    by_annotator, people, models = labels_by_annotator(labels, report_filter)
    finals = {qid: (q.bloom_cognitive, q.bloom_knowledge)
              for qid, q in _questions(labels, report_filter).items()}
    wanted: list[tuple[str, str, str]] = [
        (HUMAN_MODEL, reference, model) for model in models for reference in people + [FINAL]]
    wanted += [(HUMAN_HUMAN, a, b) for a, b in combinations(people, 2)]
    out = []
    for axis, dimension in enumerate(DIMENSIONS):
        for kind, first, second in wanted:
            pairs = _pairs(finals if first == FINAL else by_annotator[first],
                           by_annotator[second], axis)
            if pairs:
                out.append(compare(kind, dimension, first, second, pairs))
    return out


# -- distributions ------------------------------------------------------------------------------


def distribution(labels: Labels, dimension: str,
                 report_filter: ResponseFilter = ResponseFilter()) -> list[Share]:
    """The final labels over one dimension's vocabulary (every term, in order; unknown
    spellings last), as counts and shares of the questions with a final label on it."""
    attribute = f"bloom_{dimension}"
    counts = Counter(getattr(q, attribute) for q in _questions(labels, report_filter).values()
                     if getattr(q, attribute) is not None)
    return _shares("", counts, DIMENSIONS[dimension])


def cognitive_by_topic(labels: Labels, report_filter: ResponseFilter = ResponseFilter()
                       ) -> list[Share]:
    """The final cognitive levels within each topic (topics in vocabulary order)."""
    counts: dict[str, Counter] = defaultdict(Counter)
    for q in _questions(labels, report_filter).values():
        if q.bloom_cognitive is not None:
            counts[q.topic or NO_TOPIC][q.bloom_cognitive] += 1
    out = []
    for topic in in_vocabulary_order(counts, TOPICS):
        out += _shares(topic, counts[topic], BLOOM_COGNITIVE)
    return out


def _shares(group: str, counts: Counter, vocabulary: tuple[str, ...]) -> list[Share]:
    n = sum(counts.values())
    terms = list(vocabulary) + sorted(set(counts) - set(vocabulary))
    return [Share(group, term, counts[term], proportion(counts[term], n)) for term in terms]


def sources(labels: Labels, report_filter: ResponseFilter = ResponseFilter()) -> dict[str, int]:
    """How many final labels are adjudicated, the people's consensus, or imported."""
    found = Counter(q.source for q in _questions(labels, report_filter).values())
    return {name: found[name] for name in ("adjudicated", "consensus", "imported")}
