"""``physgrade prompts``: the prompt versions a project knows, recorded by real judge runs against
the loopback server or named by imported verdicts, listed and shown whole."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from physgrade.cli import main
from physgrade.judge import verdicts
from physgrade.judge.client import connect
from physgrade.judge.prompts import EXAMPLES, Prompts
from physgrade.project import Project
from physgrade.refinement import refine

MODEL = "claude-haiku-4-5"
#: The version the demo's judges' verdicts were imported under; its texts are unknown.
IMPORTED = "prefs-v1"


@pytest.fixture
def judged(demo: Path, fake) -> Path:
    """The demo after two verdicts of the model under the bundled prompts."""
    assert main(["judge", str(demo), "--model", MODEL, "--limit", "2"]) == 0
    return demo


def columns(line: str) -> list[str]:
    """A line of the listing split into its columns (two spaces or more apart)."""
    return re.split(r"\s{2,}", line.strip())


def rows(out: str) -> dict[str, list[str]]:
    """The listing's rows by version."""
    return {cells[0]: cells for cells in map(columns, out.splitlines()[1:])}


def test_the_listing_shows_recorded_and_imported_versions(judged: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["prompts", str(judged)]) == 0
    out = capsys.readouterr().out
    assert columns(out.splitlines()[0]) == ["version", "purpose", "made", "from",
                                            "judges (verdicts)", "examples"]
    bundled = verdicts.prompt_version(Prompts.load())
    listed = rows(out)
    assert list(listed) == [bundled, IMPORTED]
    _, purpose, made, base, judges, examples = listed[bundled]
    assert (purpose, base, judges, examples) == ("verdicts", "-", f"{MODEL}: 2", "0")
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", made)
    assert listed[IMPORTED][1:] == ["-", "imported", "-", "arbiter-large: 126, arbiter-mini: 126",
                                    "0"]


def test_show_prints_a_recorded_version_whole(judged: Path, capsys) -> None:
    bundled = Prompts.load()
    capsys.readouterr()
    assert main(["prompts", str(judged), "--show", verdicts.prompt_version(bundled)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"prompt version {verdicts.prompt_version(bundled)}\n"
                          "purpose: verdicts; recorded ")
    assert f"judge {MODEL}: 2 verdicts" in out
    for name in verdicts.TEMPLATES:
        assert f"===== {name} =====\n{bundled.texts[name].rstrip()}" in out
    assert "===== examples =====" not in out and "refined from" not in out


def test_show_prints_a_refined_version_with_its_base_and_examples(demo: Path, fake,
                                                                  capsys) -> None:
    with Project.open(demo) as project:
        planned = refine.plan(project, refine.Settings("arbiter-mini", MODEL), Prompts.load())
        done = refine.run(project, connect(), planned, None, 4)
    assert done.stopped is None
    base, refined = planned.before.prompt_version, planned.after.prompt_version
    ids = [example.response_id for example in planned.examples]
    assert main(["prompts", str(demo), "--show", refined]) == 0
    out = capsys.readouterr().out
    assert f"refined from {base} with 4 examples: {', '.join(ids)}\n" in out
    block = planned.refined_prompts.texts[EXAMPLES].rstrip()
    assert f"===== {EXAMPLES} =====\n{block}" in out
    assert out.count("<example>") == 4
    # Listed after its base (recorded before it, as the run recorded the base when it ran it).
    assert main(["prompts", str(demo)]) == 0
    listed = rows(capsys.readouterr().out)
    assert list(listed) == [base, refined, IMPORTED]
    assert listed[refined][3] == base and listed[refined][-1] == "4"
    assert listed[base][3] == "-" and listed[base][-1] == "0"


def test_an_unknown_version_is_refused_naming_the_known_ones(judged: Path, capsys) -> None:
    capsys.readouterr()
    assert main(["prompts", str(judged), "--show", "prefs-nope"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    bundled = verdicts.prompt_version(Prompts.load())
    assert captured.err == (f"physgrade: no prompt version 'prefs-nope' in {judged} (its "
                            f"versions: {bundled}, {IMPORTED})\n")


def test_json_gives_the_listing_and_one_version_with_its_texts(judged: Path, capsys) -> None:
    bundled = Prompts.load()
    version = verdicts.prompt_version(bundled)
    capsys.readouterr()
    assert main(["prompts", str(judged), "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)["versions"]
    assert [(v["version"], v["stored"]) for v in listing] == [(version, True), (IMPORTED, False)]
    assert listing[1]["judges"] == [{"judge": "arbiter-large", "verdicts": 126},
                                    {"judge": "arbiter-mini", "verdicts": 126}]
    assert all("texts" not in v for v in listing)
    assert main(["prompts", str(judged), "--show", version, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["texts"] == {name: bundled.texts[name] for name in verdicts.texts(bundled)}
    assert shown["judges"] == [{"judge": MODEL, "verdicts": 2}]
    assert main(["prompts", str(judged), "--show", IMPORTED, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["texts"] is None


def test_a_project_without_versions_says_how_they_come(tmp_path: Path, capsys) -> None:
    path = tmp_path / "empty.physgrade"
    Project.create(path).close()
    assert main(["prompts", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and out.startswith(f"no prompt versions in {path} yet: a judge run "
                                                  "records the prompts it sends")
    assert main(["prompts", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"versions": []}
