"""Team grading in the app, on the real demo project: the Assign dialog's preview is the core's
plan and Assign stores it (the Overview then shows each grader's share); Make Grader Packs
writes the packs; a merge with a conflict opens the Conflicts dialog, whose keys settle it; a
pack opens graded as its grader."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel  # noqa: E402
from shiboken6 import isValid  # noqa: E402

from conftest import grading_window, press, shot, wait_for  # noqa: E402
from physgrade.demo import DEMO_SAMPLE  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.queue import ASSIGNED  # noqa: E402
from physgrade.scores import scored, set_score  # noqa: E402
from physgrade.selection import ResponseFilter  # noqa: E402
from physgrade.team import assign, merge, packs  # noqa: E402
from physgrade_ui import grader  # noqa: E402
from physgrade_ui.main_window import ADJUDICATE, MainWindow  # noqa: E402
from physgrade_ui.team import AssignDialog, ConflictsDialog, PacksDialog  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")

GRADERS = ("expert-1", "expert-2", "carol")
SEED = 7
WAIT_MS = 10_000


def planned(qtbot, dialog: AssignDialog) -> None:
    """Wait for the debounced preview of what the form asks for now."""
    qtbot.waitUntil(dialog.planned, timeout=WAIT_MS)


def column(table, name: str) -> dict[str, str]:
    """Row name -> the cell under the header ``name``."""
    headers = [table.horizontalHeaderItem(c).text() for c in range(table.columnCount())]
    return {table.item(r, 0).text(): table.item(r, headers.index(name)).text()
            for r in range(table.rowCount())}


def assign_in(path: Path, overlap: float = 0.2) -> None:
    """Assign every response of the project at ``path`` among GRADERS (through the core)."""
    with Project.open(path) as project:
        assign.apply(project, assign.plan(project, GRADERS, overlap, seed=SEED))


def make_conflicts(project_path: Path, pack_path: Path, grader_name: str,
                   count: int) -> list[tuple[str, str]]:
    """The same criteria scored 1 in the pack and 0 in the project by the pack's grader, on
    responses they had not scored before: (response, criterion) of each conflict to be."""
    with Project.open(pack_path) as pack:
        rows = pack.conn.execute(
            "SELECT id FROM responses WHERE id NOT IN (SELECT s.response_id FROM scores s JOIN "
            "raters r ON r.id = s.rater_id WHERE r.name = ?) ORDER BY id LIMIT ?",
            (grader_name, count)).fetchall()
        chosen = [(response, scored(pack, response).rubric.keys[0]) for (response,) in rows]
        for response, criterion in chosen:
            set_score(pack, grader_name, response, criterion, 1, note="in the pack")
    with Project.open(project_path) as project:
        for response, criterion in chosen:
            set_score(project, grader_name, response, criterion, 0, note="at the office")
    return chosen


def test_the_preview_is_the_plan_and_assign_stores_it(window: MainWindow, demo: Path, qtbot,
                                                      errors: list[str]) -> None:
    window.overview_action.trigger()  # on show: it hears the assignment's broadcast
    table = window.overview.graders
    qtbot.waitUntil(lambda: table.rowCount() == 2, timeout=WAIT_MS)  # the demo's two experts
    assert column(table, "Assigned") == {"expert-1": "0", "expert-2": "0"}
    dialog = window.assign_responses()
    assert isinstance(dialog, AssignDialog) and dialog.isVisible()
    qtbot.waitExposed(dialog)
    dialog.graders.clear()
    qtbot.keyClicks(dialog.graders, ", ".join(GRADERS))
    dialog.activateWindow()  # Alt keys go to the active window
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)
    qtbot.keyClick(dialog, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)  # Alt+S: the seed
    qtbot.waitUntil(dialog.seed.spin.hasFocus, timeout=WAIT_MS)
    dialog.seed.setValue(SEED)
    planned(qtbot, dialog)
    with Project.open(demo) as project:
        expected = assign.plan(project, GRADERS, 0.2, seed=SEED)
        only_orbit = assign.plan(project, GRADERS, 0.2, seed=SEED,
                                 report_filter=ResponseFilter(models=frozenset({"orbit-7b"})))
        only_sample = assign.plan(project, GRADERS, 0.2, seed=SEED, sample=DEMO_SAMPLE)
    assert dialog.summary.text() == expected.text()
    assert column(dialog.per_grader_table, "New") == {
        name: str(count) for name, count in expected.counts().items()}
    assert column(dialog.per_grader_table, "Assigned before") == {name: "0" for name in GRADERS}
    by_model = expected.by_facet("model")
    assert column(dialog.facet_tables["model"], "carol") == {
        model: str(count) for model, count in by_model["carol"].items()}
    shot(dialog, "team-assign.png")

    # The filter, by keyboard: Space ticks the model list's current entry.
    models = dialog.filters["models"]
    models.setFocus()
    models.setCurrentRow(models.values().index("orbit-7b"))
    press(qtbot, dialog, Qt.Key.Key_Space)
    assert models.chosen() == {"orbit-7b"}
    planned(qtbot, dialog)
    assert column(dialog.per_grader_table, "New") == {
        name: str(count) for name, count in only_orbit.counts().items()}
    models.item(models.values().index("orbit-7b")).setCheckState(Qt.CheckState.Unchecked)
    planned(qtbot, dialog)
    # The demo's estimation sample alone (Alt+L reaches the choice).
    assert dialog.sample.isVisible() and dialog.sample.currentText() == "Any response"
    qtbot.keyClick(dialog, Qt.Key.Key_L, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(dialog.sample.hasFocus, timeout=WAIT_MS)
    dialog.sample.setCurrentIndex(dialog.sample.findData(DEMO_SAMPLE))
    planned(qtbot, dialog)
    assert dialog.summary.text() == only_sample.text()
    dialog.sample.setCurrentIndex(0)
    planned(qtbot, dialog)

    press(qtbot, dialog, Qt.Key.Key_Return)  # Assign is the default button
    wait_for(qtbot, window.ops.worker, "finished")
    assert not (isValid(dialog) and dialog.isVisible()) and errors == []  # closed, deleted
    with Project.open(demo) as project:
        assert {name: len(assign.assigned(project, name)) for name in GRADERS} == \
            expected.counts()
    assert window.statusBar().currentMessage() == f"Assigned: {expected.text()}"

    qtbot.waitUntil(lambda: table.rowCount() == len(GRADERS), timeout=WAIT_MS)
    assert column(table, "Assigned") == {
        name: f"{count:,}" for name, count in expected.counts().items()}
    assert column(table, "Graded")["carol"] == "0"


def test_a_plan_the_core_refuses_is_said_in_the_preview(window: MainWindow, qtbot,
                                                        errors: list[str]) -> None:
    dialog = window.assign_responses()
    dialog.graders.setText("expert-1")  # one grader cannot grade a response twice
    qtbot.waitUntil(dialog.refusal.isVisible, timeout=WAIT_MS)
    assert "two graders" in dialog.refusal.text()
    assert not dialog.assign_button.isEnabled() and errors == []
    dialog.overlap.setValue(0)
    planned(qtbot, dialog)
    assert not dialog.refusal.isVisible() and dialog.assign_button.isEnabled()


def test_only_responses_no_one_has_graded_unless_unticked(window: MainWindow, demo: Path, qtbot,
                                                          errors: list[str]) -> None:
    with Project.open(demo) as project:
        ungraded = assign.plan(project, GRADERS, 0.2, seed=SEED)
        everything = assign.plan(project, GRADERS, 0.2, seed=SEED, include_graded=True)
    assert ungraded.responses() == 25 and everything.responses() == 126  # 101 graded
    dialog = window.assign_responses()
    qtbot.waitExposed(dialog)
    dialog.graders.setText(", ".join(GRADERS))
    dialog.seed.setValue(SEED)
    planned(qtbot, dialog)
    assert dialog.ungraded_only.isChecked() and dialog.ungraded_only.isVisible()
    assert dialog.preview is not None and dialog.preview.plan.rows == ungraded.rows

    dialog.activateWindow()  # Alt keys go to the active window
    qtbot.waitUntil(dialog.isActiveWindow, timeout=WAIT_MS)
    qtbot.keyClick(dialog, Qt.Key.Key_E, Qt.KeyboardModifier.AltModifier)  # Alt+E: untick
    qtbot.waitUntil(lambda: not dialog.ungraded_only.isChecked(), timeout=WAIT_MS)
    planned(qtbot, dialog)
    assert dialog.preview.plan.rows == everything.rows
    assert dialog.summary.text() == everything.text()

    press(qtbot, dialog, Qt.Key.Key_Return)
    wait_for(qtbot, window.ops.worker, "finished")
    assert errors == []
    with Project.open(demo) as project:
        assert {name: len(assign.assigned(project, name)) for name in GRADERS} == \
            everything.counts()


def test_closing_the_window_with_the_dialogs_open(window: MainWindow, demo: Path,
                                                  qtbot) -> None:
    assign_in(demo)
    dialogs = [window.assign_responses(), window.make_grader_packs(), window.show_conflicts()]
    assert all(dialog is not None and dialog.isVisible() for dialog in dialogs)
    window.close()
    qtbot.waitUntil(lambda: not any(isValid(dialog) and dialog.isVisible()
                                    for dialog in dialogs), timeout=WAIT_MS)
    assert window.project is None


def test_make_grader_packs_writes_a_pack_per_grader(window: MainWindow, demo: Path, qtbot,
                                                    tmp_path: Path, monkeypatch,
                                                    errors: list[str]) -> None:
    assert window.make_grader_packs() is None  # nobody is assigned yet: said, and where to go
    assert "Assign Responses" in errors[-1]
    assign_in(demo)
    folder = tmp_path / "packs"
    folder.mkdir()
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", lambda *args: str(folder))

    dialog = window.make_grader_packs()
    assert isinstance(dialog, PacksDialog)
    assert dialog.graders.ordered() == tuple(sorted(GRADERS))  # everyone assigned, ticked
    dialog.browse()
    dialog.accept()
    wait_for(qtbot, window.ops.worker, "finished")
    written = sorted(path.name for path in folder.iterdir())
    assert written == sorted(f"demo-{name}.physgrade" for name in GRADERS)
    assert all(name in window.statusBar().currentMessage() for name in written)
    assert all(name in errors[-1] for name in written)  # the information box lists them
    with Project.open(folder / "demo-carol.physgrade") as pack:
        assert packs.origin(pack).grader == "carol" and packs.origin(pack).blind

    dialog = window.make_grader_packs()  # the files are there now: refused, in the dialog
    dialog.browse()
    dialog.accept()
    assert dialog.isVisible() and "already" in dialog.error.text()
    assert window.ops.worker is None


def test_the_packs_dialog_checks_the_paths_the_packs_are_written_to(
        window: MainWindow, demo: Path, qtbot, tmp_path: Path, errors: list[str]) -> None:
    # "Carol" and "carol" make one slug: the second pack is written to demo-carol-2.physgrade,
    # and that is the file the dialog finds in the way (not only demo-carol.physgrade).
    with Project.open(demo) as project:
        assign.apply(project, assign.plan(project, ("Carol", "carol"), 0, seed=SEED))
    folder = tmp_path / "packs"
    folder.mkdir()
    (folder / "demo-carol-2.physgrade").write_text("someone's file")
    dialog = window.make_grader_packs()
    assert isinstance(dialog, PacksDialog)
    assert [dialog.graders.item(row).text().split()[-1] for row in range(2)] == [
        "demo-carol.physgrade", "demo-carol-2.physgrade"]
    dialog.folder.setText(str(folder))
    dialog.accept()
    assert dialog.isVisible() and "demo-carol-2.physgrade is in that folder already" in \
        dialog.error.text()
    assert window.ops.worker is None and errors == []
    assert [path.name for path in folder.iterdir()] == ["demo-carol-2.physgrade"]


def test_a_merge_without_conflicts_says_what_came_in_and_that_nothing_waits(
        window: MainWindow, demo: Path, qtbot, tmp_path: Path, monkeypatch,
        errors: list[str]) -> None:
    assign_in(demo)
    pack_path = tmp_path / "expert-1.physgrade"
    with Project.open(demo) as project:
        packs.make_pack(project, "expert-1", pack_path)
    with Project.open(pack_path) as pack:
        response = pack.conn.execute("SELECT min(response_id) FROM assignments").fetchone()[0]
        criterion = scored(pack, response).rubric.keys[0]
        set_score(pack, "expert-1", response, criterion, 1, note="in the pack")
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",
                        lambda *args: ([str(pack_path)], ""))

    wait_for(qtbot, window.merge_packs(), "finished")
    assert [box.windowTitle() for box in window.ops.boxes] == ["Packs merged"]
    assert errors == [
        f"{pack_path.name} (expert-1): 1 score taken into the project (given, changed or taken "
        "back in the pack); 1 change of the grader's kept in the history.\n\n"
        "Nothing waits for you: every score the packs brought is in the project, and the "
        "Overview counts it."]
    assert window.findChild(ConflictsDialog) is None


def test_a_merge_with_conflicts_opens_them_and_keys_settle_them(
        window: MainWindow, demo: Path, qtbot, tmp_path: Path, monkeypatch) -> None:
    assign_in(demo)
    pack_path = tmp_path / "expert-1.physgrade"
    with Project.open(demo) as project:
        packs.make_pack(project, "expert-1", pack_path)
    first, *others = make_conflicts(demo, pack_path, "expert-1", 3)
    monkeypatch.setattr(QFileDialog, "getOpenFileNames",
                        lambda *args: ([str(pack_path)], ""))

    wait_for(qtbot, window.merge_packs(), "finished")
    dialog = window.findChild(ConflictsDialog)
    assert dialog is not None
    qtbot.waitUntil(lambda: dialog.isVisible() and dialog.table.rowCount() == 3,
                    timeout=WAIT_MS)
    assert "3 conflicts wait" in window.statusBar().currentMessage()
    # What came in, in plain words, above the conflicts: no box on top of the window.
    assert dialog.merged.isVisible() and dialog.merged.text().splitlines() == [
        f"{pack_path.name} (expert-1): 0 scores taken into the project (given, changed or taken "
        "back in the pack); 3 scores that differ from the project's own, kept apart for a person "
        "to decide; 3 changes of the grader's kept in the history.",
        "3 conflicts wait for a person: the same grader gave a criterion one value in the "
        "project and another in a pack, and nothing was overwritten."]
    assert window.ops.boxes == []
    assert dialog.table.item(0, 0).text() == first[0]
    shot(dialog, "team-conflicts.png")
    dialog.activateWindow()
    qtbot.waitUntil(dialog.table.hasFocus, timeout=WAIT_MS)

    press(qtbot, dialog, Qt.Key.Key_J)  # the first row (selected): the project's value
    qtbot.waitUntil(lambda: dialog.table.rowCount() == 2, timeout=WAIT_MS)
    press(qtbot, dialog, "a")  # a stray key settles nothing
    QApplication.processEvents()
    assert dialog.table.rowCount() == 2
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    assert len(dialog.selected_ids()) == 2
    press(qtbot, dialog, Qt.Key.Key_P)  # the rest: the pack's values
    qtbot.waitUntil(dialog.empty.isVisible, timeout=WAIT_MS)
    assert dialog.table.rowCount() == 0 and not dialog.keep_pack.isEnabled()

    with Project.open(demo) as project:
        assert merge.open_conflicts(project) == []
        values = dict(project.conn.execute(
            "SELECT s.response_id || '/' || s.criterion, s.value FROM scores s JOIN raters r "
            "ON r.id = s.rater_id WHERE r.name = 'expert-1'").fetchall())
    assert [values["/".join(key)] for key in [first, *others]] == [0, 1, 1]


def test_a_pack_opens_graded_as_its_grader(qtbot, demo: Path, tmp_path: Path) -> None:
    assign_in(demo)
    pack_path = tmp_path / "for-carol.physgrade"
    with Project.open(demo) as project:
        made, _ = packs.make_pack(project, "carol", pack_path)
    window = grading_window(qtbot, pack_path)  # remembered: expert-1
    assert window.pages.person == "carol"
    assert grader.remembered() == "expert-1"  # who you are elsewhere has not changed
    assert window.windowTitle() == "physgrade — for-carol.physgrade — pack for carol"
    assert "carol's grader pack" in window.statusBar().currentMessage()
    queue = window.grading.queue
    assert queue.facet_filter().assignment == {ASSIGNED}
    assert queue.model.rowCount() == made.responses


def score_by_key(qtbot, window: MainWindow) -> str:
    """Give the Grade page's current criterion a value it has not got, by key: the name the
    project stored it under, as its history tells."""
    page = window.grading
    criterion = page.panel.current_criterion
    given = page.item.mine.get(criterion.key)
    value = next(value for value in criterion.allowed_values(page.item.question.multiple_choice)
                 if given is None or value != given.value)
    response = page.item.response_id
    press(qtbot, window, str(value))
    (name,) = window.project.conn.execute(
        "SELECT r.name FROM score_history h JOIN raters r ON r.id = h.rater_id WHERE "
        "h.response_id = ? AND h.criterion = ? AND h.new_value = ? ORDER BY h.id DESC LIMIT 1",
        (response, criterion.key, value)).fetchone()
    return name


def test_a_pack_does_not_change_who_grades_the_project(qtbot, demo: Path,
                                                       tmp_path: Path) -> None:
    """Carol's pack, then the project, in one window: the pack is graded as carol, the project
    as its own person (expert-1), and the pages say who."""
    assign_in(demo)
    pack_path = tmp_path / "for-carol.physgrade"
    with Project.open(demo) as project:
        packs.make_pack(project, "carol", pack_path)
    window = grading_window(qtbot, pack_path)  # remembered: expert-1
    page = window.grading
    assert page.person_label.text() == "Grading as carol"
    assert score_by_key(qtbot, window) == "carol"

    assert window.open_project(demo)
    qtbot.waitUntil(lambda: page.item is not None and page.panel.hasFocus(), timeout=WAIT_MS)
    assert page.person_label.text() == "Grading as expert-1"
    assert window.windowTitle() == "physgrade — demo.physgrade — expert-1"
    assert score_by_key(qtbot, window) == "expert-1"
    window.show_page(ADJUDICATE)
    assert window.adjudicate.adjudicator_label.text() == "Adjudicating as expert-1"


def change_grader(qtbot) -> None:
    """Ctrl+G, as a person types it, to whatever has the keyboard."""
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_G, Qt.KeyboardModifier.ControlModifier)


def test_changing_who_grades_one_project_keeps_the_others(qtbot, demo: Path,
                                                          tmp_path: Path) -> None:
    """Ctrl+G says what it changes and changes only the open project; in a pack it asks
    nothing, as the pack is always graded as its grader."""
    other = tmp_path / "other.physgrade"
    shutil.copy(demo, other)
    window = grading_window(qtbot, other)  # remembered: expert-1, kept for this project
    assert window.open_project(demo)
    change_grader(qtbot)
    dialog = window.grader_dialog
    assert dialog is not None and dialog.isVisible()
    said = dialog.findChild(QLabel).text()
    assert "from now on in demo.physgrade" in said and "nothing is moved" in said
    dialog.name.lineEdit().selectAll()
    qtbot.keyClicks(dialog.name.lineEdit(), "ben")
    qtbot.keyClick(dialog.name.lineEdit(), Qt.Key.Key_Return)
    page = window.grading
    qtbot.waitUntil(lambda: page.person_label.text() == "Grading as ben", timeout=WAIT_MS)

    assert window.open_project(other)
    qtbot.waitUntil(lambda: page.item is not None, timeout=WAIT_MS)
    assert page.person_label.text() == "Grading as expert-1"

    pack_path = tmp_path / "for-carol.physgrade"
    assign_in(demo)
    with Project.open(demo) as project:
        packs.make_pack(project, "carol", pack_path)
    assert window.open_project(pack_path)
    change_grader(qtbot)
    assert window.grader_dialog is None
    assert "always graded as carol" in window.statusBar().currentMessage()
    assert window.open_project(demo)
    qtbot.waitUntil(lambda: page.person_label.text() == "Grading as ben", timeout=WAIT_MS)
