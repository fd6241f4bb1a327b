"""``physgrade verify --model``: the model stage after the rules, through the real ``anthropic``
client against the loopback server (tests/fake_anthropic.py). Only what the rules left
unsettled is asked, once; the combined rater ``rules+MODEL`` records which stage decided."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from conftest import question, response, write_jsonl
from fake_anthropic import Fault
from physgrade.answers import model_stage
from physgrade.answers.model_stage import AnswerCheck, read_answer_check
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.judge import versions
from physgrade.judge.prompts import Prompts
from physgrade.judge.tools import InvalidOutput
from physgrade.project import Project

MODEL = "claude-haiku-4-5"
LONG_PROSE = ("I am not able to work this problem out with the information I have, and rather "
              "than guess I will stop here. There is no value I would stand behind, so please "
              "treat this response as giving no answer at all to the question that was asked.")
#: Response → what the rules conclude; the first two stand, the rest go to the model.
RULES = {"r-1": "equivalent", "r-6": "no_answer", "r-4": "not_equivalent",
         "r-5": "not_equivalent", "r-7": "unparseable"}
UNSETTLED = {"r-4", "r-5", "r-7"}
#: r-5's final answer as the model sees it: its Final Answer section as written.
TWO_PARTS = "\\boxed{2.0 m/s}, \\boxed{5.0 J}"


@pytest.fixture
def checked(tmp_path: Path) -> Path:
    """A project whose responses the rules settle (r-1 right, r-6 no answer) or leave open
    (r-4 a wrong number, r-5 one of two parts wrong, r-7 a value in words)."""
    return make_project(tmp_path)


def make_project(tmp_path: Path) -> Path:
    """The project of :func:`checked`, not yet checked by the rules."""
    path = tmp_path / "answers.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [
            question(), question("q-2", question="A 2.0 kg cart... its speed and kinetic energy?",
                                 answer="2.0 m/s, 4.0 J", answer_type="NV, NV", unit=None)]),
            "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [
            response("r-1"),
            response("r-4", text="Final Answer: 12 m/s"),
            response("r-5", "q-2", text="Final Answer: \\boxed{2.0 m/s}, \\boxed{5.0 J}"),
            response("r-6", text=LONG_PROSE),
            response("r-7", text="Final Answer: about ten metres per second")]), "responses")
    return path


def judge(body: dict) -> dict:
    """The scripted model: NO for 12 m/s and for 5.0 J, YES for everything else."""
    prompt = body["messages"][0]["content"]
    final = re.search(r"<final_answer>(.*?)</final_answer>", prompt, re.DOTALL).group(1)
    parts = re.findall(r"^Part (\d+): (.*)$", prompt, re.MULTILINE)
    verdicts = []
    for number, text in parts:
        wrong = "12 m/s" in final or ("5.0 J" in final and "J" in text)
        verdicts.append({"part": int(number), "verdict": "NO" if wrong else "YES",
                         "reason": "differs" if wrong else "same value"})
    return {"parts": verdicts}


def asked_about(fake) -> list[str]:
    """The final answers of the requests sent, in order."""
    return [re.search(r"<final_answer>(.*?)</final_answer>", r.body["messages"][0]["content"],
                      re.DOTALL).group(1) for r in fake.message_requests()]


def verify(path: Path, *more: str) -> int:
    return main(["verify", str(path), "--workers", "2", "--model", MODEL, *more])


def version() -> str:
    return model_stage.prompt_version(Prompts.load())


def ans_scores(path: Path) -> dict[str, int]:
    with Project.open(path) as project:
        return dict(project.conn.execute(
            "SELECT s.response_id, s.value FROM scores s JOIN raters t ON t.id = s.rater_id "
            "WHERE t.name = ? AND t.kind = 'rules' AND t.prompt_version = ? AND s.criterion = "
            "'ANS'", (model_stage.rater_name(MODEL), version())))


def checks(path: Path) -> dict[str, model_stage.Stored]:
    with Project.open(path) as project:
        return {rid: found for rid in RULES
                if (found := model_stage.stored_check(project, MODEL, version(), rid))}


def test_only_unsettled_answers_are_asked_once_each_and_never_again(checked, fake, capsys):
    fake.answer = judge
    assert verify(checked, "--concurrency", "2") == 0
    out = capsys.readouterr().out
    assert "3 calls, about" in out and "$" in out  # the estimate, printed first
    assert out.index("3 calls, about") < out.index("3 done")
    assert "settled by the rules and copied into" in out
    assert sorted(asked_about(fake)) == ["12 m/s", TWO_PARTS, "about ten metres per second"]
    with Project.open(checked) as project:
        from physgrade.answers.tolerance import settings
        from physgrade.answers.verify import stored
        assert {rid: stored(project, rid, settings(project)).outcome for rid in RULES} == RULES
        recorded = versions.find(project, version())
        assert recorded is not None and recorded.purpose == "answers"
        assert set(recorded.texts) == set(model_stage.TEMPLATES)
    assert verify(checked) == 0
    assert "0 calls" in capsys.readouterr().out
    assert len(fake.message_requests()) == 3  # nothing asked twice


def test_the_combined_rater_records_the_stage_outcome_and_parts(checked, fake, capsys):
    fake.answer = judge
    assert verify(checked) == 0
    found = checks(checked)
    two_parts = found["r-5"]  # the model: part 1 YES, part 2 NO
    assert (two_parts.outcome, two_parts.stage, two_parts.parts_right, two_parts.parts_total) \
        == ("not_equivalent", "model", 1, 2)
    assert two_parts.reason == "part 1 YES: same value; part 2 NO: differs"
    assert (found["r-7"].outcome, found["r-7"].stage, found["r-7"].parts_right) == \
        ("equivalent", "model", 1)
    assert (found["r-4"].outcome, found["r-4"].stage) == ("not_equivalent", "model")
    assert (found["r-1"].outcome, found["r-1"].stage, found["r-1"].parts_right,
            found["r-1"].parts_total) == ("equivalent", "rules", 1, 1)
    assert (found["r-6"].outcome, found["r-6"].stage, found["r-6"].parts_right) == \
        ("no_answer", "rules", 0)
    assert ans_scores(checked) == {"r-1": 2, "r-4": 0, "r-5": 0, "r-6": 0, "r-7": 2}
    out = capsys.readouterr().out
    assert f"rules+{MODEL} [{version()}]: 2 equivalent (1 by the rules, 1 by the model)" in out


def test_the_request_shows_the_question_the_parts_the_answer_and_the_tolerance(checked, fake):
    fake.answer = judge
    assert verify(checked) == 0
    body = next(r.body for r in fake.message_requests()
                if "5.0 J" in r.body["messages"][0]["content"])
    prompt = body["messages"][0]["content"]
    assert "Part 1: 2.0 m/s\nPart 2: 4.0 J" in prompt and "kinetic energy" in prompt
    assert "within 1 percent" in body["system"]
    assert body["tool_choice"] == {"type": "tool", "name": model_stage.TOOL}


def test_rejected_credentials_stop_the_run_and_keep_what_arrived(checked, fake, capsys):
    fake.answer = judge
    fake.push(Fault(), Fault(status=401))
    assert verify(checked, "--concurrency", "1") == 1
    assert "the model stage stopped early: the API answered 401" in capsys.readouterr().err
    assert len(fake.message_requests()) == 2
    kept = checks(checked)
    assert {rid for rid, found in kept.items() if found.stage == "model"} == {"r-4"}
    assert {rid for rid, found in kept.items() if found.stage == "rules"} == {"r-1", "r-6"}
    assert verify(checked, "--concurrency", "1") == 0  # the rest, and only the rest
    assert len(fake.message_requests()) == 4
    assert set(asked_about(fake)[2:]) == {TWO_PARTS, "about ten metres per second"}


def test_a_malformed_reply_is_a_recorded_failure_not_a_guess(checked, fake, capsys):
    fake.answer = lambda body: {"parts": [{"part": 1, "verdict": "yes", "reason": "fine"}]}
    assert verify(checked, "--limit", "1") == 0
    assert len(fake.message_requests()) == 2  # sent back once with the problem named
    assert "verdict must be YES or NO" in json.dumps(fake.message_requests()[1].body)
    failed = {rid: found for rid, found in checks(checked).items() if found.status == "failed"}
    assert list(failed) == ["r-4"] and failed["r-4"].outcome is None
    assert "r-4" not in ans_scores(checked)
    assert verify(checked, "--dry-run") == 0
    assert "2 calls" in capsys.readouterr().out  # the failure is not asked again unasked


def test_a_dry_run_sends_nothing_and_rules_flags_are_refused(checked, fake, capsys):
    assert verify(checked, "--dry-run") == 0
    out = capsys.readouterr().out
    assert "3 calls, about" in out and "dry run: nothing was sent" in out
    assert fake.message_requests() == [] and checks(checked) == {}
    assert verify(checked, "--rtol", "0.05") == 1
    assert "leave out --rtol" in capsys.readouterr().err


def test_a_batch_is_submitted_collected_by_judge_status_and_stored_like_a_direct_run(
        checked, fake, capsys, tmp_path):
    fake.answer = judge
    direct = tmp_path / "direct.physgrade"
    shutil.copy(checked, direct)
    assert verify(checked, "--batch") == 0
    out = capsys.readouterr().out
    assert "3 calls, about" in out and "half price in a batch" in out
    assert "submitted 3 requests in 1 batch(es)" in out and f"judge-status {checked}" in out
    assert fake.message_requests() == []  # nothing asked directly
    [batch_id] = list(fake.batches)
    assert sorted(re.search(r"<final_answer>(.*?)</final_answer>",
                            item["params"]["messages"][0]["content"], re.DOTALL).group(1)
                  for item in fake.batches[batch_id]["requests"]) == \
        ["12 m/s", TWO_PARTS, "about ten metres per second"]
    # The rules' settled checks are in at once; the model's wait for the batch.
    assert {rid: found.stage for rid, found in checks(checked).items()} == \
        {"r-1": "rules", "r-6": "rules"}
    assert verify(checked, "--dry-run") == 0
    assert "3 waiting in submitted batches" in capsys.readouterr().out
    with Project.open(checked) as project:
        assert project.conn.execute("SELECT purpose, model, prompt_version, requests FROM "
                                    "judge_batches").fetchall() == [("answers", MODEL,
                                                                     version(), 3)]

    assert main(["judge-status", str(checked)]) == 0
    assert "in_progress" in capsys.readouterr().out
    fake.finish_batches()
    assert main(["judge-status", str(checked)]) == 0
    assert "collected: 3 stored, 0 failed, 0 not answered" in capsys.readouterr().out
    assert fake.message_requests() == []

    assert verify(direct) == 0  # the same project, asked directly
    assert len(fake.message_requests()) == 3
    assert checks(checked) == checks(direct) and len(checks(checked)) == len(RULES)
    assert ans_scores(checked) == ans_scores(direct) == {"r-1": 2, "r-4": 0, "r-5": 0,
                                                          "r-6": 0, "r-7": 2}
    with Project.open(checked) as project:
        extras = [json.loads(extra) for (extra,) in project.conn.execute(
            "SELECT a.extra FROM assessments a JOIN raters t ON t.id = a.rater_id WHERE t.name "
            "= ?", (model_stage.rater_name(MODEL),))]
    assert sorted(e.get("batch", "") for e in extras) == ["", "", batch_id, batch_id, batch_id]
    assert verify(checked, "--dry-run") == 0
    assert "0 calls" in capsys.readouterr().out
    assert verify(checked, "--batch", "--workers", "1") == 0  # nothing more to submit
    assert list(fake.batches) == [batch_id]


def test_batch_goes_only_with_model(checked, capsys):
    assert main(["verify", str(checked), "--batch"]) == 1
    assert "--batch only go with --model" in capsys.readouterr().err


def test_answers_are_read_strictly():
    good = {"parts": [{"part": 2, "verdict": "NO", "reason": "sign"},
                      {"part": 1, "verdict": "YES", "reason": "same"}]}
    found = read_answer_check(2, good)
    assert isinstance(found, AnswerCheck) and (found.parts_right, found.parts_total) == (1, 2)
    assert [p.part for p in found.parts] == [1, 2] and found.outcome == "not_equivalent"
    for bad, problem in [
            ({"parts": good["parts"][:1]}, "exactly 2 entries"),
            ({"parts": good["parts"], "note": "x"}, "exactly one field"),
            ({"parts": [good["parts"][0], good["parts"][0]]}, "given twice"),
            ({"parts": [{"part": 1, "verdict": "Yes", "reason": "a"}, good["parts"][0]]},
             "YES or NO"),
            ({"parts": [{"part": 3, "verdict": "YES", "reason": "a"}, good["parts"][0]]},
             "from 1 to 2"),
            ({"parts": [{"part": 1, "verdict": "YES", "reason": " "}, good["parts"][0]]},
             "needs a reason"),
            ({"parts": [{"part": 1, "verdict": "YES"}, good["parts"][0]]}, "exactly part"),
            ("YES", "exactly one field")]:
        with pytest.raises(InvalidOutput, match=problem):
            read_answer_check(2, bad)

