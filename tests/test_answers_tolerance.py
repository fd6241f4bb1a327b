"""One answer tolerance per project, used by the rules and stated by the judge prompt; the
constants listed once; UGPhysics' rules as a preset (``--preset ugphysics``), never the default."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from physgrade.answers import constants, tolerance
from physgrade.answers.compare import check
from physgrade.answers.outcome import DEFAULT_RTOL, UGPHYSICS, Outcome, Settings
from physgrade.changes import Changes, RecordKind
from physgrade.cli import main
from physgrade.judge.prompts import Prompts
from physgrade.project import Project


def test_the_checker_and_the_judge_prompt_state_the_same_tolerance(tmp_path: Path) -> None:
    """The rules' default, a new project's setting and the bundled prompt all say the same."""
    with Project.create(tmp_path / "p.db") as project:
        assert tolerance.answer_tolerance(project) == Settings().rtol == DEFAULT_RTOL
        text = Prompts.load(tolerance=tolerance.answer_tolerance(project)).texts["prefs_criteria.md"]
        assert f"within {tolerance.in_words(Settings().rtol)} of it" in text
        assert tolerance.set_answer_tolerance(project, 0.02) == Changes.of(RecordKind.SETTINGS)
        assert tolerance.settings(project).rtol == 0.02
        text = Prompts.load(tolerance=tolerance.answer_tolerance(project)).texts["prefs_criteria.md"]
        assert "within 2 percent of it" in text and "1 percent" not in text
        with pytest.raises(ValueError):
            tolerance.set_answer_tolerance(project, 1.5)


def test_the_default_keeps_the_recorded_prompt_version() -> None:
    """At 1% the prompt text, and so its version, is what it was when it said "1 percent"."""
    text = Prompts.load().texts["prefs_criteria.md"]
    assert "{{" not in text and text.count("1 percent") == 2


def test_constants_are_listed_once_with_the_new_ones() -> None:
    symbols = [c.symbol for c in constants.CONSTANTS]
    assert len(symbols) == len(set(symbols))
    for name in ("m_n", "mu_B", "mu_N", "a_0", "alpha", "R_infty"):
        assert name in constants.VALUES
    assert constants.VALUES["a_0"] == pytest.approx(5.29177210903e-11)
    # a constant on one side only gets its value on both
    assert check(r"\frac{\mu_B B}{2}", r"4.637e-24 B", "EX").outcome == Outcome.EQUIVALENT
    assert check("m_n c^2", "1.50535e-10", "EX").outcome == Outcome.EQUIVALENT


def test_the_ugphysics_preset_compares_mantissas_at_one_percent() -> None:
    """Its known weakness: 3000 matches 3.02×10⁶ under the preset, never by default."""
    assert check("3.02\\times 10^{6}", "3000", "NV").outcome == Outcome.NOT_EQUIVALENT
    under = check("3.02\\times 10^{6}", "3000", "NV", settings=UGPHYSICS)
    assert under.outcome == Outcome.EQUIVALENT and "mantissas only" in under.reason
    assert UGPHYSICS.rtol == 1e-2 and UGPHYSICS.label == "ugphysics"
    assert Settings().label == ""


@pytest.mark.parametrize("gold, pred, kind", [
    (r"\frac{m c^2}{2}", r"\frac{m}{2}", "EX"),
    (r"\frac{\hbar^2}{2 m_e a_0^2}", "1/2", "EX"),
    (r"E = \frac{\hbar \omega}{2}", r"E = \frac{\omega}{2}", "EQ"),
])
def test_the_ugphysics_preset_removes_constants_from_expressions_and_equations(gold, pred, kind):
    assert check(gold, pred, kind).outcome == Outcome.NOT_EQUIVALENT
    assert check(gold, pred, kind, settings=UGPHYSICS).outcome == Outcome.EQUIVALENT


def test_the_preset_on_check_answer_and_check_answers(tmp_path: Path, capsys) -> None:
    args = ["--gold", "3.02e6", "--pred", "3000", "--json"]
    assert main(["check-answer", *args]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "not_equivalent"
    assert main(["check-answer", *args, "--preset", "ugphysics"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "equivalent"
    lines = tmp_path / "a.jsonl"
    lines.write_text(json.dumps({"id": 1, "gold": "m c^2", "pred": "m", "type": "EX"}) + "\n")
    assert main(["check-answers", str(lines), "--preset", "ugphysics", "--workers", "1"]) == 0
    assert '"equivalent"' in capsys.readouterr().out


def test_migration_names_the_earlier_rules_rater_by_its_two_percent(tmp_path: Path) -> None:
    """Verdicts the bare ``rules`` stored before were checked at 2%: they become
    ``rules [rtol 0.02]``, and a new project's tolerance is 1%."""
    from conftest import older_schema

    old = older_schema(tmp_path / "old", 11)
    with Project.create(tmp_path / "p.db", old) as project:
        project.conn.execute("INSERT INTO raters (name, kind, prompt_version) "
                             "VALUES ('rules', 'rules', ''), ('rules', 'rules', 'rtol 0.05')")
        project.conn.commit()
    with Project.open(tmp_path / "p.db") as project:
        assert sorted(v for (v,) in project.conn.execute(
            "SELECT prompt_version FROM raters WHERE kind = 'rules'")) == ["rtol 0.02", "rtol 0.05"]
        assert tolerance.answer_tolerance(project) == 0.01
