"""Bloom annotation sessions: queues, the final-label rule, adjudication, figures and reports.

Every test works on a real project file. Agreement figures are checked against values worked
out here by hand from the textbook formulas (docs: ../shared/reference/agreement.md):
percent agreement p_o = sum of the diagonal / n; Cohen's kappa = (p_o - p_e) / (1 - p_e) with
p_e = sum_k p_k. * p_.k; Gwet's AC1 = (p_o - p_e) / (1 - p_e) with
p_e = sum_k pi_k (1 - pi_k) / (K - 1), pi_k = (p_k. + p_.k) / 2, K the categories of the scale.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import insert_questions, older_schema, question, write_jsonl
from physgrade.annotation import adjudication, session
from physgrade.annotation.figures import (
    FINAL,
    HUMAN_HUMAN,
    HUMAN_MODEL,
    Labels,
    cognitive_by_topic,
    comparisons,
    distribution,
    has_labels,
    read_labels,
    sources,
)
from physgrade.annotation.labels import bloom_adjudication, set_bloom_final, set_bloom_label
from physgrade.annotation.session import BloomItem, Label
from physgrade.changes import Changes, RecordKind
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project, ProjectError
from physgrade.report.bloom_labels import bloom_section
from physgrade.report.build import build_report
from physgrade.report.options import ReportOptions
from physgrade.report.writers import write_report
from physgrade.rubric import ScoreError
from physgrade.selection import ResponseFilter
from physgrade.taxonomy import BLOOM_COGNITIVE, BLOOM_KNOWLEDGE

# Eight questions, all imported as Apply / Procedural; q-1..q-4 Mechanics, q-5..q-8 Optics.
IDS = [f"q-{i}" for i in range(1, 9)]
ANA_COG = ["Remember", "Understand", "Apply", "Apply", "Analyze", "Apply", "Understand", "Remember"]
BEN_COG = ["Remember", "Understand", "Apply", "Analyze", "Analyze", "Apply", "Apply", "Remember"]
ANA_KNOW = ["Factual", "Conceptual", "Procedural", "Procedural", "Conceptual", "Procedural",
            "Conceptual", "Factual"]
BEN_KNOW = ["Factual", "Conceptual", "Procedural", "Procedural", "Procedural", "Procedural",
            "Conceptual", "Factual"]
SAGE_COG = ["Remember", "Apply", "Apply", "Analyze", "Analyze", "Apply", "Understand", "Understand"]
SAGE_KNOW = ["Factual", "Conceptual", "Procedural", "Conceptual", "Conceptual", "Procedural",
             "Conceptual", "Factual"]


def _question_records() -> list[dict]:
    records = [question(qid, topic="Mechanics" if i < 4 else "Optics")
               for i, qid in enumerate(IDS)]
    records[7]["options"] = {"A": "1 m", "B": "2 m"}
    records[7]["answer"] = "B"
    records[7]["answer_type"] = "MC"
    records[7]["unit"] = None
    return records


def _questions(tmp_path: Path, project: Project) -> None:
    import_file(project, write_jsonl(tmp_path / "questions.jsonl", _question_records()),
                "questions")


def _bloom_records(annotator: str, kind: str, cognitive: list[str], knowledge: list[str],
                   **extra: object) -> list[dict]:
    return [{"question_id": qid, "annotator": annotator, "annotator_kind": kind,
             "cognitive": c, "knowledge": k, **extra}
            for qid, c, k in zip(IDS, cognitive, knowledge)]


@pytest.fixture
def labelled(project: Project, tmp_path: Path) -> Project:
    """Eight questions labelled by two people (ana, ben) and one model (sage)."""
    _questions(tmp_path, project)
    records = (_bloom_records("ana", "human", ANA_COG, ANA_KNOW)
               + _bloom_records("ben", "human", BEN_COG, BEN_KNOW)
               + _bloom_records("sage", "model", SAGE_COG, SAGE_KNOW, rationale="it applies"))
    import_file(project, write_jsonl(tmp_path / "bloom.jsonl", records), "bloom")
    return project


@pytest.fixture
def labels(labelled: Project) -> Labels:
    return read_labels(labelled)


def final(project: Project, qid: str) -> tuple[str | None, str | None]:
    return project.conn.execute("SELECT bloom_cognitive, bloom_knowledge FROM questions "
                                "WHERE id = ?", (qid,)).fetchone()


# -- agreement figures, by hand ---------------------------------------------------------------


def by_hand(first: list[str], second: list[str], vocabulary: tuple[str, ...]
            ) -> tuple[float, float, float]:
    """Percent agreement, Cohen's kappa and Gwet's AC1 of two raters, from the formulas."""
    n, k = len(first), len(vocabulary)
    p_o = sum(a == b for a, b in zip(first, second)) / n
    rows = {c: first.count(c) / n for c in vocabulary}
    columns = {c: second.count(c) / n for c in vocabulary}
    p_e_kappa = sum(rows[c] * columns[c] for c in vocabulary)
    pi = {c: (rows[c] + columns[c]) / 2 for c in vocabulary}
    p_e_ac1 = sum(pi[c] * (1 - pi[c]) for c in vocabulary) / (k - 1)
    return p_o, (p_o - p_e_kappa) / (1 - p_e_kappa), (p_o - p_e_ac1) / (1 - p_e_ac1)


def test_hand_computation_of_the_small_table() -> None:
    # The cognitive table of ana (rows) and ben (columns), worked on paper: 6 of 8 agree;
    # margins ana R2 U2 A3 An1, ben R2 U1 A3 An2 -> p_e = (4 + 2 + 9 + 2) / 64 = 17/64;
    # pi = R .25 U .1875 A .375 An .1875 -> p_e(AC1) = (0.1875 + 2 * 0.15234375 + 0.234375) / 5.
    p_o, kappa, ac1 = by_hand(ANA_COG, BEN_COG, BLOOM_COGNITIVE)
    assert p_o == 0.75
    assert kappa == pytest.approx((0.75 - 17 / 64) / (1 - 17 / 64))
    p_e = (0.1875 + 2 * 0.15234375 + 0.234375) / 5
    assert ac1 == pytest.approx((0.75 - p_e) / (1 - p_e))


@pytest.mark.parametrize("dimension, first, second, vocabulary", [
    ("cognitive", ANA_COG, BEN_COG, BLOOM_COGNITIVE),
    ("knowledge", ANA_KNOW, BEN_KNOW, BLOOM_KNOWLEDGE)])
def test_human_against_human(labels: Labels, dimension: str, first: list[str],
                             second: list[str], vocabulary: tuple[str, ...]) -> None:
    found = [c for c in comparisons(labels) if c.kind == HUMAN_HUMAN and c.dimension == dimension]
    assert [(c.first, c.second) for c in found] == [("ana", "ben")]
    c = found[0]
    p_o, kappa, ac1 = by_hand(first, second, vocabulary)
    assert c.n == 8 and c.agreement.n == 8 and c.kappa.n == 8
    assert c.agreement.value == pytest.approx(p_o)
    assert c.kappa.value == pytest.approx(kappa)
    assert c.ac1.value == pytest.approx(ac1)
    for estimate in (c.agreement, c.kappa, c.ac1):
        low, high = estimate.ci95
        assert low <= estimate.value <= high
    # The confusion matrix: rows ana, columns ben, both in vocabulary order.
    assert c.categories == vocabulary
    assert c.matrix.shape == (len(vocabulary), len(vocabulary))
    for i, row_label in enumerate(vocabulary):
        for j, column_label in enumerate(vocabulary):
            expected = sum(a == row_label and b == column_label for a, b in zip(first, second))
            assert c.matrix[i, j] == expected


def test_confusion_matrix_orientation(labels: Labels) -> None:
    c = next(c for c in comparisons(labels)
             if c.kind == HUMAN_HUMAN and c.dimension == "cognitive")
    apply, analyze = BLOOM_COGNITIVE.index("Apply"), BLOOM_COGNITIVE.index("Analyze")
    understand = BLOOM_COGNITIVE.index("Understand")
    assert c.matrix[apply, analyze] == 1        # q-4: ana Apply, ben Analyze
    assert c.matrix[analyze, apply] == 0
    assert c.matrix[understand, apply] == 1     # q-7: ana Understand, ben Apply
    assert c.matrix.sum() == 8 and c.matrix.trace() == 6


def test_human_against_model_and_final(labelled: Project, labels: Labels) -> None:
    found = {(c.dimension, c.first, c.second): c for c in comparisons(labels)
             if c.kind == HUMAN_MODEL}
    assert set(found) == {(d, first, "sage") for d in ("cognitive", "knowledge")
                          for first in ("ana", "ben", FINAL)}
    c = found[("cognitive", "ben", "sage")]
    p_o, kappa, ac1 = by_hand(BEN_COG, SAGE_COG, BLOOM_COGNITIVE)
    assert (c.agreement.value, c.kappa.value, c.ac1.value) == pytest.approx((p_o, kappa, ac1))
    # The final label: consensus where ana and ben agree on both dimensions (q-1, 2, 3, 6, 8),
    # else the imported Apply / Procedural (q-4, 5, 7).
    finals = [final(labelled, qid)[0] for qid in IDS]
    assert finals == ["Remember", "Understand", "Apply", "Apply", "Apply", "Apply", "Apply",
                      "Remember"]
    c = found[("cognitive", FINAL, "sage")]
    p_o, kappa, ac1 = by_hand(finals, SAGE_COG, BLOOM_COGNITIVE)
    assert (c.n, c.agreement.value, c.kappa.value, c.ac1.value) == pytest.approx(
        (8, p_o, kappa, ac1))


def test_distribution_tables(labels: Labels) -> None:
    cognitive = {s.label: (s.count, s.share.value) for s in distribution(labels, "cognitive")}
    assert list(cognitive) == list(BLOOM_COGNITIVE)
    assert cognitive["Apply"] == (5, 5 / 8) and cognitive["Remember"] == (2, 2 / 8)
    assert cognitive["Create"] == (0, 0.0)
    knowledge = {s.label: s.count for s in distribution(labels, "knowledge")}
    # consensus q-1 F, q-2 C, q-3 P, q-6 P, q-8 F; imported P for q-4, 5, 7
    assert knowledge == {"Factual": 2, "Conceptual": 1, "Procedural": 5, "Metacognitive": 0}
    by_topic = {(s.group, s.label): (s.count, s.share.value) for s in cognitive_by_topic(labels)}
    assert by_topic[("Mechanics", "Apply")] == (2, 0.5)
    assert by_topic[("Mechanics", "Remember")] == (1, 0.25)
    assert by_topic[("Optics", "Apply")] == (3, 0.75)
    assert by_topic[("Optics", "Remember")] == (1, 0.25)
    narrowed = distribution(labels, "cognitive", ResponseFilter(topics=frozenset({"Optics"})))
    assert sum(s.count for s in narrowed) == 4


def test_a_filter_narrows_the_labels_read_without_reading_again(labelled: Project) -> None:
    labels = read_labels(labelled)
    labelled.close()  # from here on, any query would fail: a filter change reads nothing

    def compared(report_filter: ResponseFilter) -> set[tuple[str, str, str, int]]:
        return {(c.dimension, c.first, c.second, c.n)
                for c in comparisons(labels, report_filter) if c.dimension == "cognitive"}

    assert sources(labels) == {"adjudicated": 0, "consensus": 5, "imported": 3}
    # Optics (q-5..q-8): ana and ben agree on q-6 and q-8 only.
    optics = ResponseFilter(topics=frozenset({"Optics"}))
    assert sources(labels, optics) == {"adjudicated": 0, "consensus": 2, "imported": 2}
    assert ("cognitive", "ana", "ben", 4) in compared(optics)
    # Facets combine with AND: Mechanics questions whose final level is Apply are q-3 and q-4.
    mechanics_apply = ResponseFilter(topics=frozenset({"Mechanics"}), bloom=frozenset({"Apply"}))
    assert sum(s.count for s in distribution(labels, "cognitive", mechanics_apply)) == 2
    assert ("cognitive", "ana", "ben", 2) in compared(mechanics_apply)
    # Values combine with OR.
    both = ResponseFilter(topics=frozenset({"Mechanics", "Optics"}))
    assert compared(both) == compared(ResponseFilter())
    # Graders narrow the people, judges the models.
    assert compared(ResponseFilter(graders=frozenset({"ana"}))) == {
        ("cognitive", "ana", "sage", 8), ("cognitive", FINAL, "sage", 8)}
    assert compared(ResponseFilter(judges=frozenset({"nobody"}))) == {
        ("cognitive", "ana", "ben", 8)}
    conceptual = ResponseFilter(kinds=frozenset({"conceptual"}))   # every question is a problem
    assert comparisons(labels, conceptual) == []
    assert sources(labels, conceptual) == {"adjudicated": 0, "consensus": 0, "imported": 0}
    section = bloom_section(labels, 5, optics)
    assert section is not None
    assert [row[:2] for row in next(t for t in section.tables
                                    if t.name == "bloom_final_sources").rows] == [
        ("adjudicated", 0), ("consensus", 2), ("imported", 2)]


# -- sessions ------------------------------------------------------------------------------------


def test_queue_filters(project: Project, tmp_path: Path) -> None:
    _questions(tmp_path, project)
    assert session.queue(project, "ana") == IDS
    assert session.queue(project, "ana", "all", "Optics") == IDS[4:]
    set_bloom_label(project, "q-1", "ana", "Apply", "Procedural")
    set_bloom_label(project, "q-5", "ana", "Remember", None)       # half a label: still to do
    set_bloom_label(project, "q-2", "sage", "Apply", "Factual", kind="llm", prompt_version="v1")
    assert session.queue(project, "ana") == [q for q in IDS if q != "q-1"]
    assert session.queue(project, "ana", "unlabelled", "Mechanics") == ["q-2", "q-3", "q-4"]
    assert session.queue(project, "ben") == IDS
    assert session.labelled_count(project, "ana") == 1
    assert session.labelled_count(project, "nobody") == 0
    assert session.queue(project, "ana", "all") == IDS
    assert session.queue(project, "ana", "disagreements") == []
    set_bloom_label(project, "q-1", "ben", "Apply", "Conceptual")   # differs on knowledge only
    set_bloom_label(project, "q-5", "ben", "Analyze", "Factual")    # ana's is incomplete
    set_bloom_label(project, "q-6", "ben", "Apply", "Procedural")
    set_bloom_label(project, "q-6", "ana", "Apply", "Procedural")   # agree
    assert session.queue(project, "ana", "disagreements") == ["q-1"]
    assert session.queue(project, "ben", "disagreements", "Optics") == []
    set_bloom_label(project, "q-6", "cleo", "Understand", "Procedural")
    assert session.queue(project, "cleo", "disagreements") == ["q-1", "q-6"]
    with pytest.raises(ValueError, match="unlabelled"):
        session.queue(project, "ana", "mine")


def test_lists_and_item(labelled: Project) -> None:
    assert session.annotators(labelled) == ["ana", "ben"]
    assert session.suggesters(labelled) == ["sage"]
    set_bloom_label(labelled, "q-1", "sage", "Create", "Metacognitive", kind="llm",
                             prompt_version="bloom-v2", extra={"rationale": "designs"})
    assert session.suggesters(labelled) == ["sage", "sage [bloom-v2]"]
    assert session.topics(labelled) == ["Mechanics", "Optics"]

    got = session.item(labelled, "q-1", "ana", "sage [bloom-v2]")
    assert isinstance(got, BloomItem)
    assert (got.kind, got.topic, got.options) == ("problem", "Mechanics", None)
    assert got.question.startswith("A cyclist")
    assert got.mine == Label("Remember", "Factual")
    assert got.others == {"ben": Label("Remember", "Factual")}
    assert got.suggestion == Label("Create", "Metacognitive")
    assert got.suggestion_rationale == "designs"
    assert got.final == Label("Remember", "Factual") and not got.adjudicated

    got = session.item(labelled, "q-8", "cleo", "sage")
    assert got.mine is None and set(got.others) == {"ana", "ben"}
    assert got.options == {"A": "1 m", "B": "2 m"}
    assert got.suggestion == Label("Understand", "Factual")
    assert got.suggestion_rationale == "it applies"   # kept from the import's extra field
    assert session.item(labelled, "q-8", "ana", None).suggestion is None
    with pytest.raises(ValueError):
        session.item(labelled, "q-8", "ana", "nobody [v9]")
    with pytest.raises(ValueError):
        session.item(labelled, "q-99", "ana", None)


# -- the final label ----------------------------------------------------------------------------


def test_final_label_rule(project: Project, tmp_path: Path) -> None:
    _questions(tmp_path, project)
    path = project.path
    # A model's label never changes the final label.
    set_bloom_label(project, "q-1", "sage", "Create", "Factual", kind="llm", prompt_version="v1")
    assert final(project, "q-1") == ("Apply", "Procedural")
    assert adjudication.source(project, "q-1") == "imported"
    # One person: their complete label is the consensus; a half label is not.
    set_bloom_label(project, "q-1", "ana", "Remember", None)
    assert final(project, "q-1") == ("Apply", "Procedural")
    set_bloom_label(project, "q-1", "ana", "Remember", "Factual")
    assert final(project, "q-1") == ("Remember", "Factual")
    assert adjudication.source(project, "q-1") == "consensus"
    # Two people who agree.
    set_bloom_label(project, "q-1", "ben", "Remember", "Factual")
    assert final(project, "q-1") == ("Remember", "Factual")
    # They disagree: the imported label comes back (it was kept when first replaced).
    set_bloom_label(project, "q-1", "ben", "Understand", "Factual")
    assert final(project, "q-1") == ("Apply", "Procedural")
    assert adjudication.imported_label(project, "q-1") == ("Apply", "Procedural")
    assert adjudication.source(project, "q-1") == "imported"
    assert session.queue(project, "ana", "disagreements") == ["q-1"]
    # Adjudication wins and takes the question out of the disagreements queue.
    set_bloom_final(project, "q-1", "Understand", "Conceptual", "dora")
    assert final(project, "q-1") == ("Understand", "Conceptual")
    assert session.queue(project, "ana", "disagreements") == []
    set_bloom_label(project, "q-1", "ana", "Understand", "Factual")   # people agree now...
    assert final(project, "q-1") == ("Understand", "Conceptual")     # ...the decision stands
    project.close()

    with Project.open(path) as reopened:
        assert final(reopened, "q-1") == ("Understand", "Conceptual")
        assert session.item(reopened, "q-1", "ana", None).adjudicated
        assert bloom_adjudication(reopened, "q-1")[:3] == ("Understand", "Conceptual", "dora")
        # Withdrawing the decision: back to the people's consensus.
        set_bloom_final(reopened, "q-1", None, None, "dora")
        assert bloom_adjudication(reopened, "q-1") is None
        assert final(reopened, "q-1") == ("Understand", "Factual")
        # Untouched questions keep their imported label, and nothing was kept for them.
        assert final(reopened, "q-2") == ("Apply", "Procedural")
        kept = reopened.conn.execute("SELECT question_id FROM bloom_imported").fetchall()
        assert kept == [("q-1",)]


def test_import_of_human_labels_applies_the_rule(labelled: Project) -> None:
    assert final(labelled, "q-1") == ("Remember", "Factual")      # consensus
    assert final(labelled, "q-4") == ("Apply", "Procedural")      # disagreement: imported
    assert session.queue(labelled, "ana", "disagreements") == ["q-4", "q-5", "q-7"]


def test_refresh_repairs_a_hand_edit(labelled: Project) -> None:
    labelled.conn.execute("UPDATE questions SET bloom_cognitive = 'Create' WHERE id IN "
                          "('q-1', 'q-4')")
    with labelled.transaction():
        changed = adjudication.refresh(labelled, ["q-1", "q-4", "q-missing", "q-1"])
    assert changed == Changes.of(RecordKind.BLOOM, questions=["q-1", "q-4", "q-missing"])
    assert final(labelled, "q-1") == ("Remember", "Factual")
    # q-4's imported label was kept when the edit replaced it, so it comes back too.
    assert final(labelled, "q-4") == ("Apply", "Procedural")
    assert adjudication.imported_label(labelled, "q-4") == ("Apply", "Procedural")


def test_set_bloom_final_refuses(labelled: Project) -> None:
    with pytest.raises(ScoreError):
        set_bloom_final(labelled, "q-4", "Applying!", "Procedural", "dora")
    with pytest.raises(ScoreError):
        set_bloom_final(labelled, "q-4", "Apply", "Skills", "dora")
    with pytest.raises(ScoreError):
        set_bloom_final(labelled, "q-4", "Apply", None, "dora")
    with pytest.raises(ProjectError):
        set_bloom_final(labelled, "q-4", "Apply", "Procedural", " ")
    with pytest.raises(ProjectError):
        set_bloom_final(labelled, "q-99", "Apply", "Procedural", "dora")
    assert labelled.conn.execute("SELECT count(*) FROM bloom_adjudications").fetchone()[0] == 0


def test_migration_from_schema_5(tmp_path: Path) -> None:
    old = older_schema(tmp_path / "schema5", 5)
    path = tmp_path / "old.physgrade"
    with Project.create(path, old) as project:
        assert project.schema_version == 5
        insert_questions(project, _question_records())
        records = (_bloom_records("ana", "human", ANA_COG, ANA_KNOW)
                   + _bloom_records("ben", "human", BEN_COG, BEN_KNOW))
        import_file(project, write_jsonl(tmp_path / "bloom.jsonl", records), "bloom")
        assert final(project, "q-1") == ("Apply", "Procedural")   # no rule before version 6
    with Project.open(path) as project:
        assert project.schema_version >= 6
        assert final(project, "q-1") == ("Remember", "Factual")    # consensus applied
        assert final(project, "q-4") == ("Apply", "Procedural")    # disagreement: imported
        assert adjudication.imported_label(project, "q-1") == ("Apply", "Procedural")
        set_bloom_final(project, "q-4", "Analyze", "Procedural", "dora")
        assert final(project, "q-4") == ("Analyze", "Procedural")


# -- the report ---------------------------------------------------------------------------------


def test_section_only_with_labels(project: Project, tmp_path: Path) -> None:
    _questions(tmp_path, project)
    assert not has_labels(read_labels(project))
    assert bloom_section(read_labels(project), 5) is None
    set_bloom_label(project, "q-1", "ana", "Apply", "Procedural")
    section = bloom_section(read_labels(project), 5)
    assert section is not None and section.title == "5. Bloom's taxonomy labels"
    assert next(t for t in section.tables if t.name == "bloom_agreement").rows == []


def test_an_adjudication_alone_makes_the_section(project: Project, tmp_path: Path) -> None:
    _questions(tmp_path, project)
    set_bloom_final(project, "q-4", "Analyze", "Procedural", "dora")
    labels = read_labels(project)
    assert has_labels(labels)
    assert sources(labels) == {"adjudicated": 1, "consensus": 0, "imported": 7}
    assert bloom_section(labels, 5) is not None


def test_report_json_has_the_bloom_section(labelled: Project, tmp_path: Path) -> None:
    report = build_report(labelled, ReportOptions(resamples=50))
    titles = [s.title for s in report.sections]
    assert "5. Bloom's taxonomy labels" in titles
    assert titles.index("5. Bloom's taxonomy labels") == 4   # after the four comparisons
    write_report(report, tmp_path / "out", ["json"])
    data = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    section = next(s for s in data["sections"] if s["title"] == "5. Bloom's taxonomy labels")
    tables = {t["name"]: t for t in section["tables"]}
    assert {"bloom_agreement", "bloom_confusion", "bloom_final_cognitive",
            "bloom_final_knowledge", "bloom_cognitive_by_topic"} <= set(tables)
    agreement = tables["bloom_agreement"]
    row = next(dict(zip(agreement["columns"], r)) for r in agreement["rows"]
               if r[:4] == [HUMAN_HUMAN, "Cognitive level", "ana", "ben"])
    p_o, kappa, ac1 = by_hand(ANA_COG, BEN_COG, BLOOM_COGNITIVE)
    assert row["n"] == 8
    assert row["Percent agreement"]["value"] == pytest.approx(p_o)
    assert row["Cohen's kappa"]["value"] == pytest.approx(kappa)
    assert row["Gwet AC1"]["value"] == pytest.approx(ac1)


def test_bloom_report_command(labelled: Project, tmp_path: Path) -> None:
    out = tmp_path / "bloom-report"
    assert main(["bloom-report", str(labelled.path), "--out", str(out),
                 "--format", "json,csv"]) == 0
    data = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert [s["title"] for s in data["sections"]] == ["1. Bloom's taxonomy labels"]
    assert data["settings"]["final_labels"] == {"adjudicated": 0, "consensus": 5, "imported": 3}
    assert (out / "csv" / "bloom_agreement.csv").is_file()
    assert not (out / "report.html").exists()
    assert main(["bloom-report", str(labelled.path), "--out", str(tmp_path / "optics"),
                 "--filter", "topic=Optics"]) == 0
    assert (tmp_path / "optics" / "report.html").is_file()


def test_bloom_report_command_without_labels(project: Project, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _questions(tmp_path, project)
    assert main(["bloom-report", str(project.path), "--out", str(tmp_path / "none")]) == 1
    assert "nobody has given a Bloom label" in capsys.readouterr().err


def test_label_writes_say_what_they_changed(project: Project, tmp_path: Path) -> None:
    _questions(tmp_path, project)
    on_q1 = Changes.of(RecordKind.BLOOM, questions=["q-1"])
    made = Changes.of(RecordKind.BLOOM, RecordKind.RATERS, questions=["q-1"])
    assert set_bloom_label(project, "q-1", "ana", "Apply", None) == made
    assert set_bloom_label(project, "q-1", "ana", "Apply", "Procedural") == on_q1
    assert set_bloom_label(project, "q-1", "sage", "Apply", "Factual", kind="llm",
                           prompt_version="v1") == made
    assert set_bloom_final(project, "q-1", "Analyze", "Conceptual", "dora") == on_q1
    assert set_bloom_final(project, "q-1", None, None, "dora") == on_q1
