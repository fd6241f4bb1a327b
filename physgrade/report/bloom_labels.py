"""The report's section on Bloom labels, built from what :mod:`physgrade.annotation.figures`
computes (agreement on labels, the final labels' distribution): the report depends on annotation,
never the other way round."""

from __future__ import annotations

from functools import partial

import numpy as np

from physgrade.annotation.figures import (
    DIMENSION_TITLES,
    DIMENSIONS,
    Labels,
    Share,
    cognitive_by_topic,
    comparisons,
    distribution,
    has_labels,
    sources,
)
from physgrade.report.model import Cell, Figure, Section, Table
from physgrade.selection import ResponseFilter


def bloom_section(labels: Labels, number: int,
                  report_filter: ResponseFilter = ResponseFilter()) -> Section | None:
    """The report's section on Bloom labels, numbered ``number``; None when nobody (person or
    model) has labelled anything. The filter's question facets (topics, kinds, Bloom level)
    narrow the questions, its graders and judges the people and models compared."""
    if not has_labels(labels):
        return None
    found = comparisons(labels, report_filter)
    agreement_rows: list[tuple[Cell, ...]] = []
    confusion_rows: list[tuple[Cell, ...]] = []
    for c in found:
        agreement_rows.append((c.kind, DIMENSION_TITLES[c.dimension], c.first, c.second, c.n,
                               c.agreement, c.kappa, c.ac1))
        for (i, j), count in np.ndenumerate(c.matrix):
            confusion_rows.append((DIMENSION_TITLES[c.dimension], c.first, c.second,
                                   c.categories[i], c.categories[j], int(count)))
    tables = [
        Table("bloom_agreement", "Agreement on Bloom labels",
              ("Comparison", "Dimension", "First rater", "Second rater", "n",
               "Percent agreement", "Cohen's kappa", "Gwet AC1"), agreement_rows,
              "Unweighted (the labels are nominal), on the questions both raters labelled on "
              "the dimension. Values with their 95% confidence interval.",
              frozenset({"Percent agreement"})),
        Table("bloom_confusion", "Confusion matrices of Bloom labels (long form)",
              ("Dimension", "First rater", "Second rater", "First label", "Second label",
               "Questions"), confusion_rows,
              "One row per cell, in vocabulary order: how many questions the first rater "
              "labelled as the first label and the second rater as the second.")]
    for dimension in DIMENSIONS:
        rows: list[tuple[Cell, ...]] = [(s.label, s.count, s.share)
                                        for s in distribution(labels, dimension, report_filter)]
        tables.append(Table(f"bloom_final_{dimension}", f"Final labels by "
                            f"{DIMENSION_TITLES[dimension].lower()}",
                            (DIMENSION_TITLES[dimension], "Questions", "Share"), rows,
                            "Shares of the questions with a final label on this dimension, "
                            "with their Wilson interval.", frozenset({"Share"})))
    by_topic = cognitive_by_topic(labels, report_filter)
    tables.append(Table("bloom_cognitive_by_topic", "Final cognitive level by topic",
                        ("Topic", "Cognitive level", "Questions", "Share of topic"),
                        [(s.group, s.label, s.count, s.share) for s in by_topic],
                        "Shares of the topic's questions with a final cognitive level.",
                        frozenset({"Share of topic"})))
    origin = sources(labels, report_filter)
    tables.append(Table("bloom_final_sources", "Where the final labels come from",
                        ("Source", "Questions"), [(name, count) for name, count in origin.items()],
                        "Adjudicated: decided by an adjudicator; consensus: every person who "
                        "labelled the question completely gave the same label; imported: the "
                        "label the question came with."))
    figures = _figures(by_topic)
    intro = ("Bloom's taxonomy labels of the questions, on its two dimensions (cognitive level "
             "and knowledge type). Each model's labels are compared with each person's and with "
             "the final label, and people with each other: percent agreement, Cohen's kappa "
             "and Gwet's AC1, which stays meaningful when one level dominates. The confusion "
             "matrices have the first rater (a person, or the final label) in rows. The final "
             "label of a question is the adjudicated one if there is one, else the label every "
             "person agrees on, else the label it was imported with; the distributions count "
             "final labels.")
    if not found:
        intro += " No two raters have labelled the same question yet, so nothing is compared."
    return Section(f"{number}. Bloom's taxonomy labels", intro, tables, figures,
                   f"{number}. Bloom labels")


def _figures(by_topic: list[Share]) -> list[Figure]:
    from physgrade.report import plots  # matplotlib, only when a report is drawn

    topics = list(dict.fromkeys(s.group for s in by_topic))
    if not topics:
        return []
    levels = list(dict.fromkeys(s.label for s in by_topic))
    values = np.full((len(topics), len(levels)), np.nan)
    for s in by_topic:
        if s.share.value is not None:
            values[topics.index(s.group), levels.index(s.label)] = s.share.value
    title = "Final cognitive level by topic (% of the topic's questions)"
    return [Figure("bloom_cognitive_by_topic", title,
                   partial(plots.heatmap, topics, levels, values, title),
                   "Each row adds up to 100%: the share of the topic's questions at each "
                   "cognitive level.", "bloom_cognitive_by_topic")]
