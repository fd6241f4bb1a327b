"""What each score level means: stored per project, described for every allowed value, replaced
only as a whole checked document."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conftest import older_schema
from physgrade.changes import RecordKind
from physgrade.formats import FormatError
from physgrade.grading import grading_item
from physgrade.levels import document, levels, load_document, set_levels
from physgrade.project import Project, migrations
from physgrade.rubric import CONCEPTUAL, GRADED_RUBRICS, PREFS


def expected_values() -> dict[str, dict[str, set[int | None]]]:
    return {rubric.key: {c.key: set(c.choices()) for c in rubric.criteria} for rubric in GRADED_RUBRICS}


def described_values(project: Project) -> dict[str, dict[str, set[int | None]]]:
    return {rubric: {criterion: set(values) for criterion, values in criteria.items()}
            for rubric, criteria in levels(project).items()}


def test_a_new_project_describes_every_allowed_value_of_both_graded_rubrics(project):
    assert [rubric.key for rubric in GRADED_RUBRICS] == [PREFS.key, CONCEPTUAL.key]
    assert described_values(project) == expected_values()
    stored = levels(project)
    assert stored["conceptual"]["EXE"][None].startswith("Nothing to compute")
    for criteria in stored.values():
        for texts in criteria.values():
            assert all(text.strip() for text in texts.values())


def test_the_final_answers_levels_a_multiple_choice_question_takes_speak_of_options(project):
    """A multiple-choice ANS takes 0 and the maximum only, so those two must read for options."""
    stored = levels(project)
    for rubric in (PREFS, CONCEPTUAL):
        for value in rubric.criterion("ANS").choices(multiple_choice=True):
            assert "option" in stored[rubric.key]["ANS"][value]
    assert "not for multiple choice" in stored["prefs"]["ANS"][1]


def test_an_existing_project_gets_the_defaults_when_it_is_upgraded(tmp_path):
    older = older_schema(tmp_path / "schema6", 6)
    path = tmp_path / "old.physgrade"
    Project.create(path, older).close()
    with Project.open(path) as upgraded:
        assert upgraded.schema_version == len(migrations()) >= 7
        assert described_values(upgraded) == expected_values()


def test_grading_items_carry_their_rubrics_levels(loaded):
    item = grading_item(loaded, "r-1", "tess")
    assert item.levels == levels(loaded)["prefs"]
    assert set(item.levels["COR"]) == {0, 1, 2}
    conceptual = grading_item(loaded, "r-3", "tess")
    assert set(conceptual.levels["EXE"]) == {0, 1, None}


def edited(project: Project) -> dict:
    shown = copy.deepcopy(document(project))
    cor = shown["rubrics"][0]["criteria"][5]
    assert cor["key"] == "COR"
    cor["levels"]["1"] = "  Exactly one slip in a unit or an intermediate value.  "
    return shown


def test_set_levels_replaces_descriptions_and_says_what_changed(project):
    edits, changes = set_levels(project, edited(project), "levels.json")
    assert [(e.rubric.key, e.criterion, e.value, e.after) for e in edits] == [
        ("prefs", "COR", 1, "Exactly one slip in a unit or an intermediate value.")]
    assert changes.touches(RecordKind.RUBRICS)
    assert levels(project)["prefs"]["COR"][1] == "Exactly one slip in a unit or an intermediate value."
    again, changes = set_levels(project, edited(project), "levels.json")
    assert again == [] and not changes


def test_a_document_may_name_only_what_it_rewords(project):
    only = {"rubrics": [{"key": "conceptual", "criteria": [
        {"key": "EXE", "levels": {"0": "Wrong.", "1": "Right.", "N/A": "Nothing to compute."}}]}]}
    edits, _ = set_levels(project, only, "exe.json")
    assert len(edits) == 3
    assert levels(project)["conceptual"]["EXE"] == {0: "Wrong.", 1: "Right.",
                                                    None: "Nothing to compute."}
    assert levels(project)["prefs"] == document_levels(document(project), 0)


def document_levels(shown: dict, index: int) -> dict:
    return {c["key"]: {None if k == "N/A" else int(k): v for k, v in c["levels"].items()}
            for c in shown["rubrics"][index]["criteria"]}


def bad(project: Project, change) -> str:
    shown = edited(project)
    change(shown)
    before = levels(project)
    with pytest.raises(FormatError) as refused:
        set_levels(project, shown, "levels.json")
    assert levels(project) == before, "a refused file changes nothing"
    return str(refused.value)


def set_field(path: list, value):
    def change(shown: dict) -> None:
        target = shown
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = value
    return change


@pytest.mark.parametrize(("change", "message"), [
    (set_field(["rubrics", 0, "criteria", 5, "name"], "Units"),
     "levels.json, field 'rubrics[0].criteria[5].name': P-REFS COR has name \"Units and "
     "consistency\", not \"Units\"; only level descriptions can be changed"),
    (set_field(["rubrics", 0, "criteria", 5, "maximum"], 3),
     "field 'rubrics[0].criteria[5].maximum': P-REFS COR has maximum 2, not 3"),
    (set_field(["rubrics", 1, "criteria", 2, "allows_na"], False),
     "field 'rubrics[1].criteria[2].allows_na': conceptual EXE has allows_na true, not false"),
    (set_field(["rubrics", 0, "maximum"], True),
     "field 'rubrics[0].maximum': the P-REFS rubric has maximum 10, not true"),
    (set_field(["rubrics", 0, "criteria", 5, "levels", "3"], "Better than perfect."),
     "field 'rubrics[0].criteria[5].levels[\"3\"]': P-REFS COR has no level 3; its levels are "
     "0, 1, 2"),
    (lambda shown: shown["rubrics"][0]["criteria"][5]["levels"].pop("2"),
     "field 'rubrics[0].criteria[5].levels': P-REFS COR level 2 has no description"),
    (set_field(["rubrics", 0, "criteria", 0, "levels", "N/A"], "Not applicable."),
     "P-REFS INT has no level N/A; its levels are 0, 1"),
    (set_field(["rubrics", 0, "criteria", 5, "levels", "1"], "   "),
     "field 'rubrics[0].criteria[5].levels[\"1\"]': P-REFS COR level 1: the description is "
     "empty"),
    (set_field(["rubrics", 0, "criteria", 5, "levels", "1"], 1),
     "the description must be text, not a number"),
    (set_field(["rubrics", 0, "criteria", 5, "key"], "UNI"),
     "field 'rubrics[0].criteria[5].key': unknown criterion \"UNI\" of the P-REFS rubric"),
    (set_field(["rubrics", 1, "key"], "coarse"),
     "field 'rubrics[1].key': unknown rubric \"coarse\"; the rubrics are prefs, conceptual"),
    (set_field(["rubrics", 0, "criteria", 1, "key"], "INT"),
     "field 'rubrics[0].criteria[1].key': P-REFS INT is given twice"),
    (set_field(["rubrics", 0, "criteria", 5, "level"], {}),
     "field 'rubrics[0].criteria[5].level': unknown field"),
    (set_field(["rubrics", 0, "criteria"], {}),
     "field 'rubrics[0].criteria': must be a JSON array, not an object"),
])
def test_a_document_that_changes_more_than_descriptions_is_refused_whole(project, change,
                                                                         message):
    """The COR edit earlier in the same document is not kept either."""
    assert message in bad(project, change)


def test_load_document_names_the_file_and_line_of_broken_json(tmp_path):
    broken = tmp_path / "levels.json"
    broken.write_text('{"rubrics": [\n  {"key": "prefs",}\n]}', encoding="utf-8")
    with pytest.raises(FormatError, match=r"levels.json line 2: not JSON"):
        load_document(broken)
    with pytest.raises(FormatError, match="cannot read the file"):
        load_document(tmp_path / "missing.json")
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"rubrics": []}), encoding="utf-8")
    assert load_document(Path(good)) == {"rubrics": []}
