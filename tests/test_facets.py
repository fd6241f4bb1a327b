"""Facets declared on imported question fields: declared by an import, counted, filtered by in
reports, the queue and SQL, and stratified by; a benchmark's own topic kept as given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import PREFS_FULL, question, response, write_jsonl
from physgrade import facets, question_fields
from physgrade.cli import main
from physgrade.estimation import sample
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.queue import QueueFilter, field_values, load_queue
from physgrade.selection import NONE, ResponseFilter

NATIVE = {"scale": "physics-r1", "value": 3}
#: (id, language, difficulty, native difficulty): 2 in English, 3 in Estonian, 1 without one.
QUESTIONS = [("q-1", "en", "easy", NATIVE), ("q-2", "en", "hard", None),
             ("q-3", "et", "easy", NATIVE), ("q-4", "et", "hard", NATIVE),
             ("q-5", "et", "hard", None), ("q-6", None, None, None)]
MODELS = ("orbit-7b", "quark-lm-3")


def _records() -> list[dict]:
    records = []
    for qid, language, difficulty, native in QUESTIONS:
        fields = {"language": language, "difficulty": difficulty, "subject": "Relativity"}
        if native:
            fields["native_difficulty"] = native
        records.append(question(qid, **{k: v for k, v in fields.items() if v is not None}))
    return records


@pytest.fixture
def study(project: Project, tmp_path: Path) -> Project:
    """Six questions with language, difficulty, native difficulty and subject; two responses
    each (one per model): 4 responses in English, 6 in Estonian, 2 without a language."""
    import_file(project, write_jsonl(tmp_path / "q.jsonl", _records()), "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(f"r-{qid}-{model}", qid, model) for qid, *_ in QUESTIONS for model in MODELS]),
        "responses")
    return project


def test_an_import_declares_the_built_in_fields_its_records_carry(study: Project) -> None:
    assert facets.declared(study) == ("language", "difficulty", "native_difficulty",
                                      "answer_type", "subject")
    counts = {v.value: (v.questions, v.responses) for v in facets.values(study, "language")}
    assert counts == {"en": (2, 4), "et": (3, 6), NONE: (1, 2)}
    native = {v.value: v.questions for v in facets.values(study, "native_difficulty")}
    assert native == {"physics-r1: 3": 3, NONE: 3}
    assert [v.value for v in facets.values(study, "language")][-1] == NONE  # missing last
    assert facets.choices(study)["language"] == ["en", "et", NONE]


def test_the_sql_label_is_the_label_a_page_shows(project: Project) -> None:
    samples = [NATIVE, {"scale": "x", "value": 2.5}, "  et ", True, False, None, 7, 2.5,
               [1, "a"], {"b": 1, "a": [2]}, "", {"scale": "a", "value": None}, "Füüsika"]
    conn = project.conn
    for n, value in enumerate(samples):
        conn.execute("INSERT INTO questions (id, kind, question, extra) VALUES (?, 'problem', "
                     "'?', ?)", (f"q{n}", json.dumps({"f": value}, ensure_ascii=False,
                                                     sort_keys=True)))
    found = dict(conn.execute(f"SELECT id, {question_fields.text_sql('f')} FROM questions q"))
    assert found == {f"q{n}": question_fields.as_text(value) for n, value in enumerate(samples)}
    assert question_fields.values(project, "f") == found


def test_a_report_covers_only_the_filtered_facet(study: Project) -> None:
    from physgrade.report.build import build_report
    from physgrade.report.options import ReportOptions

    estonian = facets.parse_filter(study, ["language=et"])
    report = build_report(study, ReportOptions(filter=estonian, resamples=10))
    assert report.settings["responses"] == 6
    assert report.settings["filter"] == {"language": ["et"]}
    both = facets.parse_filter(study, ["language=et", "native_difficulty=physics-r1: 3",
                                       "model=orbit-7b"])
    assert build_report(study, ReportOptions(filter=both, resamples=10)).settings[
        "responses"] == 2  # q-3 and q-4, one model
    unlabelled = facets.parse_filter(study, [f"language={NONE}"])
    assert build_report(study, ReportOptions(filter=unlabelled, resamples=10)).settings[
        "responses"] == 2


def test_sql_filters_and_the_queue_take_declared_facets(study: Project) -> None:
    def matched(terms: list[str]) -> int:
        where, params = facets.parse_filter(study, terms).where()
        return study.conn.execute(f"SELECT count(*) FROM responses r JOIN questions q ON "
                                  f"q.id = r.question_id WHERE {where}", params).fetchone()[0]

    assert matched(["language=et"]) == 6
    assert matched(["language=en,et", "difficulty=hard"]) == 6
    assert matched([f"language={NONE}"]) == 2
    with pytest.raises(ValueError, match="colour"):
        facets.parse_filter(study, ["colour=red"])

    items = load_queue(study, "ana")
    estonian = QueueFilter(fields=(("language", frozenset({"et"})),))
    assert sum(estonian.matches(item) for item in items) == 6
    assert QueueFilter.from_json(estonian.to_json()) == estonian
    assert field_values(items)["language"] == ["en", "et", NONE]
    assert ResponseFilter().with_fields({"language": ["et"], "subject": []}).fields == (
        ("language", frozenset({"et"})),)


def test_samples_are_stratified_by_a_declared_facet(study: Project) -> None:
    assert sample.stratum_sizes(study, ["language"]) == {"en": 4, "et": 6, NONE: 2}
    drawn = sample.draw(study, "by language", 6, seed=3, strata=["language", "model"])
    strata = {s.name: (s.drawn, s.population) for s in sample.by_stratum(study, drawn)}
    assert sum(drawn for drawn, _ in strata.values()) == 6
    assert set(strata) == {f"{language} / {model}" for language in ("en", "et", NONE)
                           for model in MODELS}
    with pytest.raises(ValueError, match="colour"):
        sample.stratum_sizes(study, ["colour"])


def test_a_facet_no_record_carries_imports_nothing(project: Project, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    path = write_jsonl(tmp_path / "q.jsonl", _records())
    db = str(project.path)
    assert main(["import", db, str(path), "--kind", "questions", "--facet", "language,colour"]) != 0
    assert "colour" in capsys.readouterr().err
    assert main(["import", db, str(path), "--kind", "questions", "--facet", "topic"]) != 0
    assert "every project" in capsys.readouterr().err
    with Project.open(project.path) as reopened:
        assert reopened.conn.execute("SELECT count(*) FROM questions").fetchone()[0] == 0
        assert facets.declared(reopened) == ()
    assert main(["import", db, str(path), "--kind", "questions", "--facet", "region"]) != 0
    capsys.readouterr()  # region: a field no record of the file carries (all null)


def test_declaring_listing_and_undeclaring_from_the_command_line(
        study: Project, capsys: pytest.CaptureFixture[str]) -> None:
    db = str(study.path)
    assert main(["facets", db, "--undeclare", "difficulty,answer_type", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["facets"]
    assert list(listed) == ["language", "native_difficulty", "subject"]
    assert listed["language"][0] == {"value": "en", "questions": 2, "responses": 4}
    assert main(["facets", db, "--declare", "unit"]) == 0
    assert "m/s" in capsys.readouterr().out
    assert main(["facets", db, "--declare", "colour"]) != 0
    assert "colour" in capsys.readouterr().err


def test_a_benchmarks_own_topic_is_kept_as_given(project: Project, tmp_path: Path) -> None:
    subjects = [{"id": "u-1", "question": "Why?", "subject": "Relativity"},
                {"id": "u-2", "question": "How?", "subject": "Optics"}]
    import_file(project, write_jsonl(tmp_path / "u.jsonl", subjects), "questions",
                {"subject": "topic"})
    assert question_fields.values(project, "topic") == {"u-1": "Modern Physics", "u-2": "Optics"}
    assert question_fields.values(project, "subject") == {"u-1": "Relativity", "u-2": "Optics"}
    assert "subject" in facets.declared(project)
    own = [{"id": "t-1", "question": "What?", "topic": "Relativity"},
           {"id": "t-2", "question": "Where?", "topic": "Mechanics"}]
    import_file(project, write_jsonl(tmp_path / "t.jsonl", own), "questions")
    topics = question_fields.values(project, "topic")
    assert (topics["t-1"], topics["t-2"]) == ("Modern Physics", "Mechanics")
    given = question_fields.values(project, question_fields.SOURCE_TOPIC)
    assert (given["t-1"], given["t-2"]) == ("Relativity", "Mechanics")
    assert question_fields.SOURCE_TOPIC in facets.declared(project)
    counts = {v.value: v.questions for v in facets.values(project, question_fields.SOURCE_TOPIC)}
    assert counts == {"Relativity": 2, "Optics": 1, "Mechanics": 1}
    assert question_fields.values(project, "topic")["u-1"] == "Modern Physics"


def test_a_declared_facet_reaches_the_score_store(study: Project) -> None:
    from physgrade.scoring.store import ScoreStore
    from physgrade.scoring.tables import select

    store = ScoreStore.read(study)
    assert store.responses["native_difficulty"].value_counts().to_dict() == {"physics-r1: 3": 6}
    chosen = select(store, facets.parse_filter(study, ["difficulty=easy"]))
    assert sorted(chosen.responses["question_id"].unique()) == ["q-1", "q-3"]


def test_a_settings_change_rereads_the_store() -> None:
    from physgrade.changes import Changes, RecordKind
    from physgrade.scoring.cache import REREAD

    assert Changes.of(RecordKind.SETTINGS).touches(*REREAD)


def test_names_that_are_no_field_are_refused(study: Project) -> None:
    with pytest.raises(ValueError, match="every project"):
        facets.declare(study, ["kind"])
    with pytest.raises(ValueError, match="not a field name"):
        facets.declare(study, ["it's"])
    with pytest.raises(ValueError, match="not a declared facet"):
        facets.undeclare(study, ["unit"])


def test_assignments_are_stratified_by_a_declared_facet(study: Project,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from physgrade.team import assign

    planned = assign.plan(study, ["ana", "ben"], 0, seed=1, strata=["language"])
    assert planned.facets == ("model", "topic", "language")
    by_language = planned.by_facet("language")
    totals = {value: sum(counts.get(value, 0) for counts in by_language.values())
              for value in ("en", "et", NONE)}
    assert totals == {"en": 4, "et": 6, NONE: 2}
    assert planned.counts() == {"ana": 6, "ben": 6}
    with pytest.raises(ValueError, match="colour"):
        assign.plan(study, ["ana"], 0, strata=["colour"])
    assert main(["assign", str(study.path), "--graders", "ana,ben", "--overlap", "0",
                 "--seed", "1", "--strata", "language", "--filter", "language=et",
                 "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert "6 responses to 2 graders" in printed and "et" in printed


def test_the_queue_bar_offers_the_declared_facets(qtbot, study: Project) -> None:
    from physgrade.queue import facet_values
    from physgrade_ui.queue_view import QueuePanel

    panel = QueuePanel()
    qtbot.addWidget(panel)
    items = load_queue(study, "ana")
    chosen = QueueFilter(fields=(("language", frozenset({"et"})),))
    panel.set_choices(facet_values(items), chosen, field_values(items))
    buttons = panel.declared.buttons
    assert list(buttons) == list(facets.declared(study))
    assert buttons["native_difficulty"].title == "Native difficulty"
    assert panel.facet_filter() == chosen  # the stored filter shows in the bar
    with qtbot.waitSignal(panel.filter_changed):
        next(a for a in buttons["difficulty"].menu().actions() if a.data() == "hard").setChecked(True)
    narrowed = panel.facet_filter()
    panel.model.set_items(items, narrowed)
    assert panel.model.rowCount() == 4  # q-4 and q-5, both models
    panel.clear_filters()
    assert panel.facet_filter() == QueueFilter()


def test_the_questions_page_filters_by_a_declared_facet(qtbot, study: Project) -> None:
    from physgrade.queries import question_rows
    from physgrade_ui.questions import QuestionFilter, QuestionTableModel

    model = QuestionTableModel()
    proxy = QuestionFilter()
    proxy.setSourceModel(model)
    model.set_rows(question_rows(study))
    proxy.narrow(facets.by_question(study), {"language": frozenset({"et", NONE})})
    assert sorted(proxy.index(row, 0).data() for row in range(proxy.rowCount())) == [
        "q-3", "q-4", "q-5", "q-6"]


def test_bloom_labels_and_judge_reviews_are_narrowed_by_a_declared_facet(
        study: Project, tmp_path: Path) -> None:
    from physgrade.annotation.figures import labels_by_annotator, read_labels
    from physgrade.validation.figures import read_reviews, within_filter

    import_file(study, write_jsonl(tmp_path / "b.jsonl", [
        {"question_id": qid, "annotator": "ana", "annotator_kind": "human", "cognitive": "Apply",
         "knowledge": "Procedural"} for qid in ("q-1", "q-3", "q-4")]), "bloom")
    estonian = facets.parse_filter(study, ["language=et"])
    by_annotator, _, _ = labels_by_annotator(read_labels(study), estonian)
    assert sorted(by_annotator["ana"]) == ["q-3", "q-4"]

    reviewed = [f"r-{qid}-orbit-7b" for qid in ("q-1", "q-2", "q-3")]
    import_file(study, write_jsonl(tmp_path / "v.jsonl", [
        {"response_id": rid, "judge": "arbiter", "scores": PREFS_FULL} for rid in reviewed]),
        "verdicts")
    import_file(study, write_jsonl(tmp_path / "jr.jsonl", [
        {"response_id": rid, "judge": "arbiter", "reviewer": "expert-1", "criteria": {"ANS": 2},
         "verdict": "correct"} for rid in reviewed]), "judge_reviews")
    reviews = read_reviews(study)
    assert [r.response_id for r in within_filter(reviews.verdicts, estonian)] == [reviewed[2]]
    assert len(within_filter(reviews.criteria, ResponseFilter())) == 3


def test_the_reports_bar_offers_the_declared_facets(qtbot, window) -> None:
    from datetime import datetime, timezone

    from physgrade.report.model import Report
    from physgrade_ui.reports import summary_text

    window.reports_action.trigger()
    page = window.reports
    buttons = page.declared.buttons
    assert list(buttons) == ["answer_type"]  # the demo's questions carry one built-in facet
    assert [a.data() for a in buttons["answer_type"].menu().actions()] == ["EQ", "MC", "NV", "TF"]
    next(a for a in buttons["answer_type"].menu().actions() if a.data() == "MC").setChecked(True)
    assert page.options().filter.fields == (("answer_type", frozenset({"MC"})),)
    settings = {"responses": 3, "judges": [], "graders": [], "analyses_rater": None,
                "filter": page.options().filter.describe(),
                "created_at": datetime.now(timezone.utc).isoformat()}
    assert "Answer type: MC" in summary_text(Report("r", settings, []))
