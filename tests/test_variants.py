"""Contextual variants against their base questions: faithful retellings pass (names, places and
the way a quantity is written may change), drift is found and said line by line, on the command
line and on the Questions page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import page_text, question, shot, wait_for, write_jsonl
from physgrade.cli import main
from physgrade.importer import import_file
from physgrade.project import Project
from physgrade.variants import VariantCheck, check_variants, quantities

BASE = ("A delivery rider pulls away from rest and accelerates uniformly at 2.5 m/s^2 along a "
        "straight road. What is the scooter's speed after it has covered 45 m?")
#: The base retold: other names and places, numbers that belong to names, dates and ordinals,
#: and the same quantities written otherwise (Unicode, LaTeX, unit names, trailing zeros).
FAITHFUL = ("In 2019, Ananya from Flat 12B on Route 66 in Pune delivers lunch boxes to the 3rd "
            "floor of Tower 4; she pulls away from rest and accelerates uniformly at "
            "$2.50\\,\\mathrm{m/s^{2}}$ along FC Road. What is her scooter's speed after it has "
            "covered 45 metres?")
KETTLE = ("A family's 2200 W electric kettle holds 1.5 kg of water at 20 °C. How long does it "
          "take to bring the water to 100 °C? (specific heat of water 4186 J/(kg·K))")


def variant(qid: str, text: str, base: str = "q-base", **fields) -> dict:
    return question(qid, question=text, variant_of=base, region="Asia",
                    **{"answer": "15.0 m/s", **fields})


def checked(project: Project, tmp_path: Path, *variants: dict, base: dict | None = None
            ) -> dict[str, VariantCheck]:
    """Import a base (BASE, answer 15.0 m/s) and ``variants``; their checks by id."""
    records = [base or question("q-base", question=BASE, answer="15.0 m/s"), *variants]
    import_file(project, write_jsonl(tmp_path / "questions.jsonl", records), "questions")
    return {check.id: check for check in check_variants(project)}


def test_quantities_are_numbers_with_the_unit_written_right_after_them():
    assert [q.shown for q in quantities(BASE)] == ["2.5 m/s^2", "45 m"]
    assert [q.shown for q in quantities(FAITHFUL)] == ["2.50 m/s^2", "45 metres"]
    assert [q.shown for q in quantities(KETTLE)] == [
        "2200 W", "1.5 kg", "20 °C", "100 °C", "4186 J/(kg·K)"]
    # Prose words that pint knows as units are not units; numbers in names are no quantities.
    found = quantities("She packs 5 in a box, 3 are red, 2 cups, at 4 a.m., 600 lines per "
                       "millimetre, H2O, v_0, x^2, COVID-19, #7, in 1998, the 2nd floor")
    assert [(q.shown, q.unit) for q in found] == [("5", None), ("3", None), ("2", None),
                                                  ("4", None), ("600", None)]
    scientific = quantities("c = 3.00 × 10^8 m/s, 3e8 m/s, $3.0 \\times 10^{8}$ m/s, "
                            "1.5 × 10^-3 kg/m, -5.0 μC, a 2.0-kg block, 20 degrees Celsius")
    assert [q.value for q in scientific] == [3e8, 3e8, 3e8, 1.5e-3, -5.0, 2.0, 20.0]
    assert scientific[0].key == scientific[1].key == scientific[2].key
    assert quantities("20 degrees Celsius")[0].key == quantities("20°C")[0].key
    assert quantities("5 kilograms")[0].key == quantities("5 kg")[0].key
    assert quantities("45 m")[0].key != quantities("4500 cm")[0].key


def test_faithful_variants_pass(project: Project, tmp_path: Path):
    checks = checked(
        project, tmp_path,
        variant("q-v1", FAITHFUL),
        variant("q-v2", BASE.replace("2.5 m/s^2", "2.5 m/s²").replace("delivery rider",
                                                                      "courier in Accra")),
        # The same answer written otherwise: the answer checker tells it is the same.
        variant("q-v3", FAITHFUL, answer="15 m/s", unit="\\mathrm{m/s}",
                answer_type="numerical"))
    assert {qid: (check.ok, check.differences) for qid, check in checks.items()} == {
        "q-v1": (True, []), "q-v2": (True, []), "q-v3": (True, [])}
    assert checks["q-v1"].as_dict() == {"id": "q-v1", "base": "q-base", "kind": "contextual",
                                        "ok": True, "differences": []}


def test_drifted_variants_are_found_with_what_differs(project: Project, tmp_path: Path):
    checks = checked(
        project, tmp_path,
        variant("q-number", FAITHFUL.replace("45 metres", "40 metres")),
        variant("q-unit", BASE.replace("45 m", "45 km")),
        variant("q-dropped", BASE.replace(" at 2.5 m/s^2", "")),
        variant("q-added", BASE.replace("rider", "rider carrying 12 kg")),
        variant("q-answer", FAITHFUL, answer="12 m/s"),
        variant("q-field", FAITHFUL, unit="km/h"))
    differences = {qid: check.differences for qid, check in checks.items()}
    assert differences["q-number"] == ["statement: 45 m in the base, 40 metres in the variant"]
    assert differences["q-unit"] == ["statement: 45 m in the base, 45 km in the variant"]
    assert differences["q-dropped"] == ["statement: 2.5 m/s^2 in the base, missing from the "
                                        "variant"]
    assert differences["q-added"] == ["statement: 12 kg in the variant, not in the base"]
    assert differences["q-field"] == ["unit of the answer: m/s in the base, km/h in the variant"]
    [answer] = differences["q-answer"]
    assert answer.startswith("answer: 15.0 m/s in the base, 12 m/s in the variant (rules: ")
    assert "20% off" in answer
    assert not any(check.ok for check in checks.values())


def test_a_variant_whose_base_is_gone_is_not_ok(project: Project, tmp_path: Path):
    checked(project, tmp_path, variant("q-v", BASE))
    project.conn.execute("PRAGMA foreign_keys = OFF")  # as a file edited outside physgrade
    with project.transaction():
        project.conn.execute("DELETE FROM questions WHERE id = 'q-base'")
    [check] = check_variants(project)
    assert (check.ok, check.differences) == (False, ["base: q-base is not in the project"])


def test_the_same_quantity_in_other_units_is_drift_but_said_so(project: Project,
                                                                tmp_path: Path):
    checks = checked(project, tmp_path, variant("q-cm", BASE.replace("45 m", "4500 cm")))
    assert checks["q-cm"].differences == [
        "statement: 45 m in the base, 4500 cm in the variant (the same quantity in other units)"]


def test_options_keep_their_letters_and_quantities(project: Project, tmp_path: Path):
    options = {"A": "1.0 × 10^-4 J", "B": "2.0 × 10^-4 J", "C": "5.0 × 10^-3 J"}
    base = question("q-base", question="A 4.0 μF capacitor is charged to 50 V. How much energy "
                    "does it store?", options=options, answer="C", answer_type="MC", unit=None)
    retold = "Kofi charges a 4.0 μF capacitor in Kumasi to 50 V. How much energy does it store?"
    checks = checked(
        project, tmp_path,
        question("q-same", question=retold, options={**options, "B": "2.0×10^{-4} J"},
                 answer="C", answer_type="MC", unit=None, variant_of="q-base"),
        question("q-moved", question=retold, options={**options, "C": "5.0 × 10^-2 J"},
                 answer="C", answer_type="MC", unit=None, variant_of="q-base"),
        question("q-letter", question=retold, options=options, answer="B", answer_type="MC",
                 unit=None, variant_of="q-base"),
        question("q-fewer", question=retold, options={"A": options["A"], "B": options["B"]},
                 answer="B", answer_type="MC", unit=None, variant_of="q-base"),
        base=base)
    assert checks["q-same"].ok
    assert checks["q-moved"].differences == [
        "option C: 5.0×10^-3 J in the base, 5.0×10^-2 J in the variant"]
    [letter] = checks["q-letter"].differences
    assert letter.startswith("answer: C in the base, B in the variant (rules: option B vs C")
    assert checks["q-fewer"].differences[0] == "options: A, B, C in the base, A, B in the variant"


def test_the_demo_variants_are_faithful(demo: Path):
    with Project.open(demo) as project:
        checks = check_variants(project)
    assert [(c.id, c.base, c.ok) for c in checks] == [
        ("q-0101", "q-0005", True), ("q-0102", "q-0005", True), ("q-0103", "q-0005", True),
        ("q-0104", "q-0017", True), ("q-0105", "q-0017", True), ("q-0106", "q-0022", True)]


def drift(path: Path, qid: str = "q-0102", old: str = "45 m", new: str = "40 m") -> None:
    """Change a number in a demo variant's statement (as a careless retelling would)."""
    with Project.open(path) as project, project.transaction():
        project.conn.execute("UPDATE questions SET question = replace(question, ?, ?) "
                             "WHERE id = ?", (old, new, qid))


def test_the_command_lists_drifted_variants_and_prints_every_one_as_json(demo: Path, capsys):
    drift(demo)
    assert main(["check-variants", str(demo)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "q-0102 (variant of q-0005): drifted",
        "  statement: 45 m in the base, 40 m in the variant",
        "6 variants checked: 5 faithful, 1 drifted"]
    assert main(["check-variants", str(demo), "--all"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "q-0101 (variant of q-0005): faithful" in lines and len(lines) == 8
    assert main(["check-variants", str(demo), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)["variants"]
    assert [v["id"] for v in printed] == [f"q-010{n}" for n in range(1, 7)]
    assert printed[1] == {"id": "q-0102", "base": "q-0005", "kind": "contextual", "ok": False,
                          "differences": ["statement: 45 m in the base, 40 m in the variant"]}


def test_a_project_without_variants_says_so(project: Project, capsys):
    assert main(["check-variants", str(project.path)]) == 0
    assert capsys.readouterr().out == "no contextual variants in this project\n"


def test_the_questions_page_marks_drifted_variants(qtbot, demo: Path, tmp_path: Path,
                                                   request, app_settings):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import Qt

    from physgrade_ui import transfer
    from physgrade_ui.questions import DRIFTED, VARIANT_COLUMN

    drift(demo)
    window = request.getfixturevalue("window")
    page = window.questions
    window.questions_action.trigger()
    qtbot.waitUntil(lambda: "q-0102" in page.model.drifted, timeout=10_000)
    assert set(page.model.drifted) == {"q-0102"}
    assert DRIFTED in window.statusBar().currentMessage()

    page.filter.setText(DRIFTED)  # the mark is text the filter finds
    assert page.proxy.rowCount() == 1
    marked = page.proxy.index(0, VARIANT_COLUMN)
    assert marked.data() == "⚠ drifted · q-0005 · Africa"
    assert "45 m in the base, 40 m in the variant" in marked.data(
        Qt.ItemDataRole.ToolTipRole)
    page.table.setFocus()
    page.select("q-0102")
    qtbot.waitUntil(lambda: "drifted from its base q-0005" in page_text(qtbot, page.reader),
                    timeout=10_000)
    assert "statement: 45 m in the base, 40 m in the variant" in page_text(qtbot, page.reader)
    shot(window, "questions-drifted.png")

    # A new drifted variant imported: the page checks the variants again.
    added = write_jsonl(tmp_path / "more.jsonl", [question(
        "q-0107", question="Ravi's sitar string is 0.50 m long, has linear mass density "
        "1.5 × 10^-3 kg/m and is under a tension of 70 N. What is its second harmonic?",
        answer="400 Hz", unit="Hz", variant_of="q-0022", region="Asia")])
    wait_for(qtbot, window.start_import(transfer.ImportRequest(added, "questions", {})),
             "finished")
    qtbot.waitUntil(lambda: "q-0107" in page.model.drifted, timeout=10_000)
    assert page.model.drifted["q-0107"].differences == [
        "statement: 60 N in the base, 70 N in the variant"]
