"""The blind audit of LLM judges: stratified samples, blind names, review sessions, the write
path of reviews, the schema upgrade and the review-sample command. Real project files."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import PREFS_FULL, insert_questions, older_schema, question, response, write_jsonl
from physgrade.changes import Changes, RecordKind
from physgrade.formats import ImportErrors
from physgrade.importer import import_file
from physgrade.project import Project, ProjectError, migrations
from physgrade.raters import rater_id
from physgrade.rubric import ScoreError
from physgrade.validation import blind, reviews, sampling, session
from physgrade.validation.reviews import set_review_agreement, set_review_verdict

LARGE, MINI = "arbiter-large [prefs-v1]", "arbiter-mini [prefs-v1]"
TOPICS = ("Mechanics", "Optics", "Thermodynamics")
MODELS = ("orbit-7b", "quark-lm-3")


def build(tmp_path: Path) -> Path:
    """Three topics × two Bloom states (Apply, none) × two models, 4 questions each: 48
    responses. Judge j1 [v1] judged all of them; judge j2 all but r-Mechanics-Apply-0-orbit-7b,
    and its verdict on r-Optics-Apply-0-orbit-7b failed."""
    questions, responses, verdicts = [], [], []
    for topic in TOPICS:
        for bloom in ("Apply", None):
            for n in range(4):
                qid = f"q-{topic}-{bloom}-{n}"
                questions.append(question(qid, topic=topic, bloom_cognitive=bloom,
                                          bloom_knowledge=None))
                for model in MODELS:
                    rid = f"r-{topic}-{bloom}-{n}-{model}"
                    responses.append(response(rid, qid, model))
                    verdicts.append({"response_id": rid, "judge": "j1", "prompt_version": "v1",
                                     "scores": PREFS_FULL, "notes": f"j1 on {rid}",
                                     "rationale": {"ANS": "the value and unit are right"}})
                    if rid != "r-Mechanics-Apply-0-orbit-7b":
                        verdicts.append({"response_id": rid, "judge": "j2",
                                         "scores": PREFS_FULL})
    path = tmp_path / "audit.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", questions), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", responses), "responses")
        import_file(project, write_jsonl(tmp_path / "v.jsonl", verdicts), "verdicts")
        project.conn.execute("UPDATE assessments SET status = 'failed' WHERE response_id = ? "
                             "AND rater_id = (SELECT id FROM raters WHERE name = 'j2')",
                             ("r-Optics-Apply-0-orbit-7b",))
    return path


@pytest.fixture
def audit(tmp_path: Path) -> Project:
    with Project.open(build(tmp_path)) as project:
        yield project


# -- sampling ---------------------------------------------------------------------------------

def test_a_sample_without_a_name_gets_the_first_free_sample_n(audit):
    assert sampling.next_name(audit) == "sample 1"
    sampling.draw(audit, "sample 2", ["j1 [v1]"], per_stratum=1, seed=1)
    assert sampling.next_name(audit) == "sample 3"  # "sample 2" is taken
    sampling.draw(audit, sampling.next_name(audit), ["j1 [v1]"], per_stratum=1, seed=2)
    assert {s.name for s in sampling.samples(audit)} == {"sample 2", "sample 3"}
    assert sampling.next_name(audit) == "sample 4"


def test_only_responses_every_judge_judged_are_sampled(audit):
    both = sampling.draw(audit, "both", ["j1 [v1]", "j2"], per_stratum=100, seed=1)
    ids = sampling.items(audit, both.id)
    assert len(ids) == both.n_items == 46
    assert "r-Mechanics-Apply-0-orbit-7b" not in ids  # j2 never judged it
    assert "r-Optics-Apply-0-orbit-7b" not in ids  # j2's verdict failed
    alone = sampling.draw(audit, "alone", ["j1 [v1]"], per_stratum=100, seed=1)
    assert alone.n_items == 48 and alone.judges == ("j1 [v1]",)
    assert both.judges == ("j1 [v1]", "j2") and both.strata == ("topic", "bloom", "model")
    for seed in range(10):
        drawn = sampling.draw(audit, f"small {seed}", ["j2", "j1 [v1]"], per_stratum=1, seed=seed,
                              strata=("topic",))
        assert "r-Mechanics-Apply-0-orbit-7b" not in sampling.items(audit, drawn.id)


def test_each_stratum_gives_per_stratum_responses_or_all_it_has(audit):
    drawn = sampling.draw(audit, "s", ["j1 [v1]", "j2"], per_stratum=3, seed=7)
    assert len(drawn.strata_counts) == 3 * 2 * 2
    assert drawn.strata_counts["Mechanics / Apply / orbit-7b"] == 3
    assert drawn.strata_counts["Optics / (none) / quark-lm-3"] == 3
    assert drawn.n_items == 36
    rows = audit.conn.execute("SELECT i.stratum, q.topic, coalesce(q.bloom_cognitive, '(none)'), "
                              "r.model FROM review_sample_items i JOIN responses r ON r.id = "
                              "i.response_id JOIN questions q ON q.id = r.question_id "
                              "WHERE i.sample_id = ?", (drawn.id,)).fetchall()
    assert all(stratum == " / ".join(facets) for stratum, *facets in rows)
    # A stratum smaller than per_stratum is taken whole: Mechanics/Apply/orbit-7b has 3 eligible.
    whole = sampling.draw(audit, "whole", ["j1 [v1]", "j2"], per_stratum=4, seed=7)
    assert whole.strata_counts["Mechanics / Apply / orbit-7b"] == 3
    assert whole.strata_counts["Mechanics / Apply / quark-lm-3"] == 4
    by_model = sampling.draw(audit, "by model", ["j1 [v1]"], per_stratum=5, seed=7,
                             strata=["model"])
    assert by_model.strata_counts == {"orbit-7b": 5, "quark-lm-3": 5}
    simple = sampling.draw(audit, "simple", ["j1 [v1]"], per_stratum=5, seed=7, strata=())
    assert simple.strata_counts == {"(all)": 5}


def test_the_same_seed_gives_the_same_sample_and_another_seed_another(audit, tmp_path):
    first = sampling.items(audit, sampling.draw(audit, "a", ["j1 [v1]", "j2"], 1, seed=3).id)
    again = sampling.items(audit, sampling.draw(audit, "b", ["j2", "j1 [v1]"], 1, seed=3).id)
    other = sampling.items(audit, sampling.draw(audit, "c", ["j1 [v1]", "j2"], 1, seed=4).id)
    assert first == again and first != other
    # Another copy of the same data gives the same sample too.
    copy = tmp_path / "copy"
    copy.mkdir()
    with Project.open(build(copy)) as elsewhere:
        drawn = sampling.draw(elsewhere, "a", ["j1 [v1]", "j2"], 1, seed=3)
        assert sampling.items(elsewhere, drawn.id) == first


def test_bad_draws_are_refused_and_store_nothing(audit):
    sampling.draw(audit, "taken", ["j1 [v1]"], 2, seed=0)
    with pytest.raises(ValueError, match="already a sample named 'taken'"):
        sampling.draw(audit, "taken", ["j1 [v1]"], 2, seed=1)
    with pytest.raises(ValueError, match=r"no judge 'j1', 'nobody \[x\]'.*j1 \[v1\], j2"):
        sampling.draw(audit, "new", ["j1", "nobody [x]", "j2"], 2, seed=0)
    with pytest.raises(ValueError, match="at least 1 response per stratum"):
        sampling.draw(audit, "new", ["j1 [v1]"], 0, seed=0)
    with pytest.raises(ValueError, match="cannot stratify over 'region'"):
        sampling.draw(audit, "new", ["j1 [v1]"], 2, seed=0, strata=("topic", "region"))
    with pytest.raises(ValueError, match="at least one judge"):
        sampling.draw(audit, "new", [], 2, seed=0)
    rater_id(audit, "expert-1", "human")
    with pytest.raises(ValueError, match="'expert-1' is a person"):
        sampling.draw(audit, "new", ["expert-1"], 2, seed=0)
    assert [s.name for s in sampling.samples(audit)] == ["taken"]
    assert audit.conn.execute("SELECT count(DISTINCT sample_id) FROM review_sample_items"
                              ).fetchone() == (1,)
    with pytest.raises(ProjectError, match="no review sample 99"):
        sampling.items(audit, 99)


def test_samples_are_listed_after_reopening(audit):
    drawn = sampling.draw(audit, "kept", ["j1 [v1]", "j2"], 2, seed=5)
    assert drawn.changes == Changes.of(RecordKind.SAMPLES, responses=sampling.items(audit, drawn.id))
    with Project.open(audit.path) as reopened:
        [listed] = sampling.samples(reopened)
        assert listed == drawn and not listed.changes
        assert sampling.items(reopened, drawn.id) == sampling.items(audit, drawn.id)


# -- blind names ------------------------------------------------------------------------------

def test_aliases_are_letters_given_once_and_never_changed(audit):
    assert [blind.letters(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "A", "B", "Z", "AA", "AB", "AZ", "BA", "ZZ", "AAA"]
    drawn = sampling.draw(audit, "s", ["j1 [v1]", "j2"], 2, seed=0)
    names = blind.aliases(audit, drawn.judge_ids)
    assert sorted(names.values()) == ["Judge A", "Judge B"]
    j3 = rater_id(audit, "j3", "llm", "v2")
    assert blind.aliases(audit, [j3, *drawn.judge_ids]) == {j3: "Judge C", **names}
    with Project.open(audit.path) as reopened:
        assert blind.aliases(reopened, drawn.judge_ids) == names
        assert blind.aliases(reopened, [j3]) == {j3: "Judge C"}
    person = rater_id(audit, "expert-1", "human")
    with pytest.raises(ProjectError, match="a person, not a judge"):
        blind.aliases(audit, [person])
    with pytest.raises(ProjectError, match="no rater with id 999"):
        blind.aliases(audit, [999])


def test_aliases_are_given_at_random(tmp_path):
    """Which judge becomes "Judge A" does not follow the order they were named in."""
    seen = set()
    for attempt in range(40):
        with Project.create(tmp_path / f"p{attempt}.physgrade") as project:
            first, second = rater_id(project, "j1", "llm"), rater_id(project, "j2", "llm")
            seen.add(blind.aliases(project, [first, second])[first])
        if len(seen) == 2:
            break
    assert seen == {"Judge A", "Judge B"}


# -- one reviewer's session --------------------------------------------------------------------

def test_the_queue_is_every_verdict_in_a_stable_order_of_each_reviewer(audit):
    drawn = sampling.draw(audit, "s", ["j1 [v1]", "j2"], 2, seed=0)
    mine = session.queue(audit, drawn.id, "expert-1")
    assert len(mine) == 2 * drawn.n_items
    assert {(i.response_id, i.judge_id) for i in mine} == {
        (rid, judge) for rid in sampling.items(audit, drawn.id) for judge in drawn.judge_ids}
    theirs = session.queue(audit, drawn.id, "expert-2")
    assert sorted(mine, key=str) == sorted(theirs, key=str) and mine != theirs
    with Project.open(audit.path) as reopened:
        assert session.queue(reopened, drawn.id, "expert-1") == mine
    # Nothing in an item names the judge: only its blind name.
    names = blind.aliases(audit, drawn.judge_ids)
    assert {item.alias for item in mine} == set(names.values())
    text = repr(mine) + repr(session.verdict_view(audit, mine[0], "expert-1"))
    assert "j1" not in text and "j2" not in text and "v1" not in text


def test_progress_counts_verdicts_labelled_with_every_criterion(audit):
    drawn = sampling.draw(audit, "s", ["j1 [v1]", "j2"], 1, seed=0, strata=("model",))
    items = session.queue(audit, drawn.id, "expert-1")
    assert session.progress(audit, drawn.id, "expert-1") == (0, 4)
    assert session.next_open(items, audit, "expert-1") == 0
    first = items[0]
    for criterion in list(PREFS_FULL)[:-1]:
        set_review_agreement(audit, "expert-1", first.judge_id, first.response_id, criterion, 2)
    set_review_verdict(audit, "expert-1", first.judge_id, first.response_id, "correct")
    assert session.progress(audit, drawn.id, "expert-1") == (0, 4)  # ANS is missing
    set_review_agreement(audit, "expert-1", first.judge_id, first.response_id, "ANS", 2)
    assert session.progress(audit, drawn.id, "expert-1") == (1, 4)
    assert session.next_open(items, audit, "expert-1") == 1
    assert session.progress(audit, drawn.id, "expert-2") == (0, 4)
    # Agreements without the verdict's label are not done either.
    second = items[1]
    for criterion in PREFS_FULL:
        set_review_agreement(audit, "expert-1", second.judge_id, second.response_id, criterion, 0)
    assert session.progress(audit, drawn.id, "expert-1") == (1, 4)
    set_review_verdict(audit, "expert-1", second.judge_id, second.response_id, "lenient")
    assert session.progress(audit, drawn.id, "expert-1") == (2, 4)
    assert session.next_open(items, audit, "expert-1") == 2
    set_review_verdict(audit, "expert-1", first.judge_id, first.response_id, None)
    assert session.next_open(items, audit, "expert-1") == 0
    for item in items:
        for criterion in PREFS_FULL:
            set_review_agreement(audit, "expert-1", item.judge_id, item.response_id, criterion, 2)
        set_review_verdict(audit, "expert-1", item.judge_id, item.response_id, "strict")
    assert session.progress(audit, drawn.id, "expert-1") == (4, 4)
    assert session.next_open(items, audit, "expert-1") is None


def test_the_verdict_view_shows_the_judges_work_and_the_reviewers(audit):
    drawn = sampling.draw(audit, "s", ["j1 [v1]"], 1, seed=0, strata=())
    [item] = session.queue(audit, drawn.id, "expert-1")
    view = session.verdict_view(audit, item, "expert-1")
    assert view.alias == "Judge A" and view.rubric.key == "prefs" and not view.multiple_choice
    assert view.scores == PREFS_FULL and list(view.scores) == list(view.rubric.keys)
    assert view.rationale == {"ANS": "the value and unit are right"}
    assert view.comment == f"j1 on {item.response_id}"
    assert view.agreements == {} and view.verdict is None and not view.done
    set_review_agreement(audit, "expert-1", item.judge_id, item.response_id, "CAL", 0)
    set_review_verdict(audit, "expert-1", item.judge_id, item.response_id, "strict")
    view = session.verdict_view(audit, item, "expert-1")
    assert view.agreements == {"CAL": 0} and view.verdict == "strict"
    assert session.verdict_view(audit, item, "expert-2").agreements == {}


def test_the_demo_project_can_be_audited(demo):
    with Project.open(demo) as project:
        drawn = sampling.draw(project, "demo", [LARGE, MINI], 1, seed=0)
        assert drawn.n_items == len(drawn.strata_counts)
        total = session.progress(project, drawn.id, "expert-1")[1]
        assert total == 2 * drawn.n_items
        view = session.verdict_view(project, session.queue(project, drawn.id, "expert-1")[0],
                                    "expert-1")
        assert set(view.scores) == set(view.rubric.keys)


# -- the write path ---------------------------------------------------------------------------

def test_review_writes_validate_and_commit_at_once(audit):
    judge = rater_id(audit, "j1", "llm", "v1")
    rid = "r-Mechanics-Apply-1-orbit-7b"
    set_review_agreement(audit, "expert-1", judge, rid, "COR", 1)
    set_review_agreement(audit, "expert-1", judge, rid, "COR", 2)
    set_review_agreement(audit, "expert-1", judge, rid, "ANS", 0)
    set_review_verdict(audit, "expert-1", judge, rid, "lenient")
    with Project.open(audit.path) as other:
        assert other.conn.execute(
            "SELECT c.criterion, c.agreement FROM judge_review_criteria c JOIN raters p ON "
            "p.id = c.reviewer_id WHERE p.name = 'expert-1' AND p.kind = 'human' "
            "ORDER BY criterion").fetchall() == [("ANS", 0), ("COR", 2)]
        assert other.conn.execute("SELECT verdict FROM judge_reviews").fetchall() == [
            ("lenient",)]
    set_review_agreement(audit, "expert-1", judge, rid, "ANS", None)
    set_review_verdict(audit, "expert-1", judge, rid, None)
    with Project.open(audit.path) as other:
        assert other.conn.execute("SELECT criterion FROM judge_review_criteria").fetchall() == [
            ("COR",)]
        assert other.conn.execute("SELECT verdict FROM judge_reviews").fetchall() == [(None,)]

    with pytest.raises(ScoreError, match="2 \\(full\\), 1 \\(partial\\) or 0"):
        set_review_agreement(audit, "expert-1", judge, rid, "COR", 3)
    with pytest.raises(ScoreError, match="not True"):
        set_review_agreement(audit, "expert-1", judge, rid, "COR", True)
    with pytest.raises(ScoreError, match="not 1.5"):
        set_review_agreement(audit, "expert-1", judge, rid, "COR", 1.5)
    with pytest.raises(ScoreError, match="'EXE' is not a criterion of the P-REFS rubric"):
        set_review_agreement(audit, "expert-1", judge, rid, "EXE", 2)
    with pytest.raises(ProjectError, match="'correct', 'lenient' or 'strict', not 'fine'"):
        set_review_verdict(audit, "expert-1", judge, rid, "fine")
    with pytest.raises(ProjectError, match="no response 'r-nope'"):
        set_review_verdict(audit, "expert-1", judge, "r-nope", "correct")
    with pytest.raises(ProjectError, match="gave no verdict on 'r-Mechanics-Apply-0-orbit-7b'"):
        set_review_verdict(audit, "expert-1", rater_id(audit, "j2", "llm"),
                                 "r-Mechanics-Apply-0-orbit-7b", "correct")
    person = rater_id(audit, "expert-2", "human")
    with pytest.raises(ProjectError, match="gave no verdict"):
        set_review_agreement(audit, "expert-1", person, rid, "COR", 2)
    with pytest.raises(ProjectError, match="reviewer's name"):
        set_review_verdict(audit, "  ", judge, rid, "correct")
    with pytest.raises(ProjectError, match="already a rater of kind 'llm'"):
        set_review_verdict(audit, "j2", judge, rid, "correct")
    assert audit.conn.execute("SELECT count(*) FROM judge_review_criteria").fetchone() == (1,)
    assert not audit.conn.in_transaction


# -- the schema upgrade -----------------------------------------------------------------------

def test_a_schema_4_project_is_upgraded_keeping_its_reviews(tmp_path):
    old = older_schema(tmp_path / "db", 4)
    path = tmp_path / "old.physgrade"
    with Project.create(path, migration_dir=old) as project:
        assert project.schema_version == 4
        insert_questions(project, [question()])
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [response()]), "responses")
        import_file(project, write_jsonl(tmp_path / "v.jsonl", [
            {"response_id": "r-1", "judge": "j1", "scores": PREFS_FULL}]), "verdicts")
        # The review as physgrade left it then (its importer now also fills a sample).
        expert = rater_id(project, "expert-1", "human")
        judge = rater_id(project, "j1", "llm")
        project.conn.execute("INSERT INTO judge_reviews (reviewer_id, judge_id, response_id, "
                             "verdict, updated_at) VALUES (?, ?, 'r-1', 'correct', 'then')",
                             (expert, judge))
        project.conn.execute("INSERT INTO judge_review_criteria (reviewer_id, judge_id, "
                             "response_id, criterion, agreement, updated_at) VALUES "
                             "(?, ?, 'r-1', 'ANS', 2, 'then')", (expert, judge))
        tables = {r[0] for r in project.conn.execute("SELECT name FROM sqlite_master")}
        assert "review_samples" not in tables
    with Project.open(path) as project:
        assert project.schema_version == len(migrations()) >= 5
        tables = {r[0] for r in project.conn.execute("SELECT name FROM sqlite_master")}
        assert {"review_samples", "review_sample_items", "judge_aliases"} <= tables
        assert project.conn.execute("SELECT verdict FROM judge_reviews").fetchall() == [
            ("correct",)]
        # Its imported review is in no sample yet: the "imported" sample takes it once.
        assert sampling.loose_reviews(project)
        assert sampling.take_imported(project) == Changes.of(RecordKind.SAMPLES, responses=["r-1"])
        [imported] = sampling.samples(project)
        assert imported.imported and sampling.items(project, imported.id) == ["r-1"]
        assert session.progress(project, imported.id, "expert-1") == (0, 1)  # COR etc. to do
        assert not sampling.loose_reviews(project) and not sampling.take_imported(project)
        drawn = sampling.draw(project, "s", ["j1"], 1, seed=0)
        assert sampling.items(project, drawn.id) == ["r-1"]
        assert session.progress(project, drawn.id, "expert-1") == (0, 1)
        with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):
            project.conn.execute("INSERT INTO review_sample_items VALUES (1, 'r-nope', 'x')")
        with pytest.raises(sqlite3.IntegrityError, match="UNIQUE"):
            project.conn.execute("INSERT INTO judge_aliases VALUES (2, 'Judge A')")
        assert project.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


# -- the command ------------------------------------------------------------------------------

def physgrade(*args):
    return subprocess.run([sys.executable, "-m", "physgrade.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_review_sample_command(demo):
    result = physgrade("review-sample", demo, "--judge", LARGE, "--judge", MINI,
                       "--per-stratum", 2, "--seed", 11, "--strata", "topic,model",
                       "--name", "pilot")
    assert result.returncode == 0, result.stderr
    with Project.open(demo) as project:
        [drawn] = [s for s in sampling.samples(project) if not s.imported]
        aliases = blind.stored(project.conn, drawn.judge_ids).values()
    assert drawn.name == "pilot" and drawn.seed == 11 and drawn.strata == ("topic", "model")
    assert (f"{drawn.n_items} responses in {len(drawn.strata_counts)} strata, the same for "
            "each of 2 judges") in result.stdout
    assert drawn.n_items == 2 * len(drawn.strata_counts) == 42
    assert not any(alias in result.stdout for alias in aliases) and "Judge" not in result.stdout

    again = physgrade("review-sample", demo, "--judge", LARGE, "--per-stratum", 1)
    assert again.returncode == 0, again.stderr
    assert "'sample 3'" in again.stdout  # after the demo's "imported" sample and pilot
    refused = physgrade("review-sample", demo, "--judge", LARGE, "--per-stratum", 2,
                        "--name", "pilot")
    assert refused.returncode == 1 and "already a sample named 'pilot'" in refused.stderr
    unknown = physgrade("review-sample", demo, "--judge", "arbiter-huge", "--per-stratum", 2)
    assert unknown.returncode == 1 and "no judge 'arbiter-huge'" in unknown.stderr
    zero = physgrade("review-sample", demo, "--judge", LARGE, "--per-stratum", 0)
    assert zero.returncode == 1 and "at least 1 response per stratum" in zero.stderr


def test_a_sample_nobody_could_review_is_refused(demo: Path) -> None:
    # Judges that never judged the same responses leave nothing to audit: refused, not stored.
    with Project.open(demo) as project:
        project.conn.execute("INSERT INTO raters (name, kind) VALUES ('idle-judge', 'llm')")
        rater = project.conn.execute("SELECT id FROM raters WHERE name = 'idle-judge'").fetchone()
        response = project.conn.execute("SELECT id FROM responses LIMIT 1").fetchone()
        project.conn.execute("INSERT INTO assessments (rater_id, response_id, rubric, "
                             "assessed_at) VALUES (?, ?, 'prefs', '2026-01-01T00:00:00Z')",
                             (rater[0], response[0]))
        with pytest.raises(ValueError, match="no response has a complete verdict from every"):
            sampling.draw(project, "none", ["idle-judge"], 2, 1)
        assert not project.conn.execute("SELECT 1 FROM review_samples WHERE name = 'none'"
                                        ).fetchone()


def test_review_writes_say_what_they_changed(audit):
    judge = rater_id(audit, "j1", "llm", "v1")
    rid, qid = "r-Optics-None-2-quark-lm-3", "q-Optics-None-2"
    on_rid = Changes.of(RecordKind.REVIEWS, responses=[rid], questions=[qid])
    assert set_review_agreement(audit, "expert-1", judge, rid, "COR", reviews.FULL) == \
        Changes.of(RecordKind.REVIEWS, RecordKind.RATERS, responses=[rid], questions=[qid])
    assert set_review_agreement(audit, "expert-1", judge, rid, "COR", None) == on_rid
    assert set_review_verdict(audit, "expert-1", judge, rid, reviews.STRICT) == on_rid
    assert set_review_verdict(audit, "expert-1", judge, rid, None) == on_rid


def test_the_review_vocabulary_is_defined_once():
    assert list(reviews.VERDICTS) == ["correct", "lenient", "strict"]
    assert list(reviews.AGREEMENTS) == [2, 1, 0] and reviews.AGREEMENT_LEVELS == (0, 1, 2)
    assert reviews.verdicts_text() == "correct, lenient or strict"
    assert reviews.verdicts_text(quoted=True) == "'correct', 'lenient' or 'strict'"
    assert reviews.agreements_text() == "2 (full), 1 (partial) or 0 (disagree)"
    assert [reviews.verdict_of(t) for t in (" Lenient", "-1", "0", "+1", "1", "fine")] == [
        "lenient", "lenient", "correct", "strict", "strict", None]
    assert [reviews.is_agreement(v) for v in (0, 2, 3, True, 1.0, None)] == [
        True, True, False, False, False, False]
    from physgrade.validation import figures
    assert figures.VERDICTS is reviews.VERDICTS
    assert figures.AGREEMENT_LEVELS is reviews.AGREEMENT_LEVELS


def test_imported_reviews_take_the_same_vocabulary(audit, tmp_path):
    rid = "r-Optics-None-2-quark-lm-3"
    record = {"response_id": rid, "judge": "j1", "reviewer": "expert-1", "verdict": "+1",
              "criteria": {"COR": 2}}
    result = import_file(audit, write_jsonl(tmp_path / "ok.jsonl", [record]), "judge_reviews")
    assert result.changes == Changes.of(RecordKind.REVIEWS, RecordKind.RATERS, RecordKind.SAMPLES)
    assert audit.conn.execute("SELECT verdict FROM judge_reviews").fetchall() == [("strict",)]
    with pytest.raises(ImportErrors, match="'maybe' is not correct, lenient or strict"):
        import_file(audit, write_jsonl(tmp_path / "bad.jsonl", [{**record, "verdict": "maybe"}]),
                    "judge_reviews")
    with pytest.raises(ImportErrors, match=r"'3' is not 2 \(full\), 1 \(partial\) or 0 \(disagree\)"):
        import_file(audit, write_jsonl(tmp_path / "bad2.jsonl", [{**record, "criteria": {
            "COR": "3"}}]), "judge_reviews")


# -- a verdict labelled correct agrees with every criterion ------------------------------------

def stored_review(project: Project, judge: int, rid: str) -> tuple[dict[str, int], str | None]:
    """expert-1's agreements and label on a verdict, read through a fresh connection."""
    with Project.open(project.path) as other:
        criteria = dict(other.conn.execute(
            "SELECT criterion, agreement FROM judge_review_criteria WHERE judge_id = ? AND "
            "response_id = ?", (judge, rid)))
        label = other.conn.execute("SELECT verdict FROM judge_reviews WHERE judge_id = ? AND "
                                   "response_id = ?", (judge, rid)).fetchone()
    return criteria, label[0] if label else None


def test_correct_is_refused_while_a_criterion_only_partly_agrees(audit):
    judge = rater_id(audit, "j1", "llm", "v1")
    rid = "r-Optics-Apply-1-quark-lm-3"
    set_review_agreement(audit, "expert-1", judge, rid, "INT", reviews.FULL)
    set_review_agreement(audit, "expert-1", judge, rid, "ANS", reviews.DISAGREE)
    set_review_agreement(audit, "expert-1", judge, rid, "CAL", reviews.PARTIAL)
    with pytest.raises(ScoreError, match=r"A verdict of correct needs every criterion to agree "
                                         r"fully; CAL is marked 1 \(partial\), ANS is marked 0 "
                                         r"\(disagree\)$") as refused:
        set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)
    assert refused.value.field == "verdict"
    assert stored_review(audit, judge, rid) == ({"INT": 2, "ANS": 0, "CAL": 1}, None)
    assert not audit.conn.in_transaction
    # The other labels do not claim full agreement; correct is taken once every criterion agrees.
    set_review_verdict(audit, "expert-1", judge, rid, reviews.LENIENT)
    with pytest.raises(ScoreError, match="CAL is marked 1"):
        set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)
    assert stored_review(audit, judge, rid)[1] == reviews.LENIENT
    set_review_agreement(audit, "expert-1", judge, rid, "ANS", reviews.FULL)
    set_review_agreement(audit, "expert-1", judge, rid, "CAL", None)
    set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)
    assert stored_review(audit, judge, rid) == ({"INT": 2, "ANS": 2}, reviews.CORRECT)
    # Another reviewer's partial agreement is theirs: it does not stand in expert-1's way.
    set_review_agreement(audit, "expert-2", judge, rid, "INT", reviews.PARTIAL)
    set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)


def test_marking_a_criterion_partial_clears_the_label_correct(audit):
    judge = rater_id(audit, "j1", "llm", "v1")
    rid = "r-Optics-Apply-1-quark-lm-3"
    for criterion in PREFS_FULL:
        set_review_agreement(audit, "expert-1", judge, rid, criterion, reviews.FULL)
    set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)
    # Full agreement again, or an agreement withdrawn, leave the label as it is.
    set_review_agreement(audit, "expert-1", judge, rid, "INT", reviews.FULL)
    set_review_agreement(audit, "expert-1", judge, rid, "COH", None)
    assert stored_review(audit, judge, rid)[1] == reviews.CORRECT
    changes = set_review_agreement(audit, "expert-1", judge, rid, "INT", reviews.PARTIAL)
    assert changes.touches(RecordKind.REVIEWS) and rid in changes.responses
    criteria, label = stored_review(audit, judge, rid)
    assert criteria["INT"] == reviews.PARTIAL and label is None  # labelled again by the reviewer
    set_review_verdict(audit, "expert-1", judge, rid, reviews.STRICT)
    set_review_agreement(audit, "expert-1", judge, rid, "CAL", reviews.DISAGREE)
    assert stored_review(audit, judge, rid)[1] == reviews.STRICT  # strict is no contradiction
    set_review_agreement(audit, "expert-1", judge, rid, "INT", reviews.FULL)
    set_review_agreement(audit, "expert-1", judge, rid, "CAL", reviews.FULL)
    set_review_verdict(audit, "expert-1", judge, rid, reviews.CORRECT)
    set_review_agreement(audit, "expert-1", judge, rid, "ANS", reviews.DISAGREE)
    assert stored_review(audit, judge, rid)[1] is None


# -- imported reviews are a sample of their own -------------------------------------------------

def test_imported_reviews_are_audited_in_the_imported_sample(audit, tmp_path):
    j1, j2 = rater_id(audit, "j1", "llm", "v1"), rater_id(audit, "j2", "llm")
    mech, optics = "r-Mechanics-Apply-0-orbit-7b", "r-Optics-None-1-orbit-7b"
    first = [{"response_id": mech, "judge": "j1", "reviewer": "expert-1",
              "criteria": {"ANS": 2}, "verdict": "correct"},
             {"response_id": optics, "judge": "j2", "reviewer": "expert-2", "verdict": "strict"}]
    result = import_file(audit, write_jsonl(tmp_path / "first.jsonl", first), "judge_reviews")
    assert RecordKind.SAMPLES in result.changes.kinds
    [imported] = sampling.samples(audit)
    assert imported.name == sampling.IMPORTED and imported.imported
    assert imported.judge_ids == (j1, j2) and imported.text() == \
        "2 responses with imported reviews of 2 judges"
    assert sampling.items(audit, imported.id) == [mech, optics]
    # Each judge's verdict on each response, where it gave one: j2 never judged mech.
    pairs = {(i.response_id, i.judge_id) for i in session.queue(audit, imported.id, "expert-1")}
    assert pairs == {(mech, j1), (optics, j1), (optics, j2)}
    assert session.progress(audit, imported.id, "expert-2")[1] == 3
    view = session.verdict_view(audit, next(i for i in session.queue(
        audit, imported.id, "expert-1") if i.response_id == mech), "expert-1")
    assert view.agreements == {"ANS": 2} and view.verdict == "correct"

    # The same file again adds nothing; a drawn sample keeps its own reviews; a later import
    # adds only what no sample holds.
    import_file(audit, write_jsonl(tmp_path / "first.jsonl", first), "judge_reviews")
    drawn = sampling.draw(audit, "drawn", ["j1 [v1]"], 100, seed=1, strata=())
    held = next(rid for rid in sampling.items(audit, drawn.id) if rid not in (mech, optics))
    set_review_verdict(audit, "expert-1", j1, held, "lenient")  # reviewed in the drawn sample
    assert not sampling.loose_reviews(audit)
    later = [{"response_id": held, "judge": "j2", "reviewer": "expert-2", "verdict": "lenient"},
             {"response_id": mech, "judge": "j1", "reviewer": "expert-2", "verdict": "strict"}]
    import_file(audit, write_jsonl(tmp_path / "later.jsonl", later), "judge_reviews")
    [imported, _] = sampling.samples(audit)
    assert sampling.items(audit, imported.id) == sorted([mech, optics, held])
    assert imported.judge_ids == (j1, j2)

    with pytest.raises(ValueError, match="'imported' is kept for the sample of imported reviews"):
        sampling.draw(audit, "Imported", ["j1 [v1]"], 1, seed=1)
    assert [s.name for s in sampling.samples(audit)] == ["imported", "drawn"]


def test_the_demo_offers_its_imported_reviews_as_a_sample(demo):
    with Project.open(demo) as project:
        [imported] = sampling.samples(project)
        assert imported.name == "imported" and imported.judges == (LARGE, MINI)
        assert imported.n_items == 16
        reviewed = set(project.conn.execute(
            "SELECT p.name, v.response_id, v.judge_id FROM judge_reviews v JOIN raters p ON "
            "p.id = v.reviewer_id"))
        assert len(reviewed) == 64
        queued = {(reviewer, item.response_id, item.judge_id) for reviewer in
                  ("expert-1", "expert-2")
                  for item in session.queue(project, imported.id, reviewer)}
        assert queued == reviewed
        assert session.progress(project, imported.id, "expert-1") == (32, 32)
        assert not sampling.loose_reviews(project)
