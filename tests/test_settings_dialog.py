"""File ▸ Settings… on real widgets over the demo project: each setting shows its value, is
changed by typing, and Save keeps it where the app reads it (the grader, the answer hint's
tolerance, the duplicate audit, the Run judge dialog, the remembered key); a bad value is
refused with its field named and changes nothing; Cancel changes nothing; it fits 1280 × 800."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest

pytest.importorskip("pytestqt")

from keyrings.alt.file import PlaintextKeyring  # noqa: E402
from PySide6.QtCore import QRect, QSettings, Qt  # noqa: E402
from PySide6.QtWidgets import QDialogButtonBox, QLineEdit  # noqa: E402

from conftest import grading_window, response, write_jsonl  # noqa: E402
from physgrade.answers.tolerance import answer_tolerance  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.judge import credentials  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui import dialogs, grader, preferences  # noqa: E402
from physgrade_ui.duplicates import AuditDialog, remembered_request  # noqa: E402
from physgrade_ui.judge_dialog import RunJudgeDialog  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.settings_dialog import SettingsDialog  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
ROOM = QRect(0, 0, 1280, 800)
WAIT_MS = 30_000  # the hint's first check starts the checker's worker


@pytest.fixture
def keyring_file(tmp_path: Path, monkeypatch) -> Path:
    """A real file-based keyring under the test's folder, restored afterwards."""
    path = tmp_path / "keyring.cfg"
    backend = PlaintextKeyring()
    backend.file_path = str(path)
    before = keyring.get_keyring()
    keyring.set_keyring(backend)
    monkeypatch.delenv(credentials.KEY_VARIABLE, raising=False)
    monkeypatch.setattr(credentials, "_session_key", None)
    yield path
    keyring.set_keyring(before)


def opened(window: MainWindow, qtbot) -> SettingsDialog:
    """The dialog as the menu opens it (one closed before is gone first: it deletes itself)."""
    qtbot.waitUntil(lambda: window.findChild(SettingsDialog) is None, timeout=2000)
    window.settings_action.trigger()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None and dialog.isVisible()
    qtbot.waitExposed(dialog)
    return dialog


def retype(qtbot, field: QLineEdit, text: str) -> None:
    field.selectAll()
    qtbot.keyClicks(field, text) if text else qtbot.keyClick(field, Qt.Key.Key_Delete)


def press(qtbot, dialog: SettingsDialog, button: QDialogButtonBox.StandardButton) -> None:
    box = dialog.findChild(QDialogButtonBox)
    qtbot.mouseClick(box.button(button), Qt.MouseButton.LeftButton)


def kept() -> dict[str, object]:
    """Everything the app's settings hold now."""
    settings = QSettings()
    return {key: settings.value(key) for key in settings.allKeys()}


def test_each_setting_shows_its_value_and_save_keeps_it_where_the_app_reads_it(
        qtbot, demo: Path, tmp_path: Path, keyring_file: Path) -> None:
    window = grading_window(qtbot, demo)
    credentials.remember("sk-ant-to-forget")
    dialog = opened(window, qtbot)
    assert dialog.grader is not None and dialog.grader.currentText() == "expert-1"
    assert dialog.tolerance.text() == "1%"  # the project's answer tolerance
    assert (dialog.jaccard.text(), dialog.cosine.text()) == ("0.4", "0.78")
    assert dialog.model.edit.text() == "" and "all-MiniLM-L6-v2" in dialog.model.edit.placeholderText()
    assert dialog.judge_model.currentText() == "claude-haiku-4-5"
    assert dialog.key_source.text() == "from the system keyring"
    assert dialog.forget_key.isEnabled()

    model = tmp_path / "my-model"
    model.mkdir()
    retype(qtbot, dialog.grader.lineEdit(), "ana")
    retype(qtbot, dialog.tolerance, "5%")
    retype(qtbot, dialog.jaccard, "0.5")
    retype(qtbot, dialog.cosine, "0.82")
    retype(qtbot, dialog.model.edit, str(model))
    retype(qtbot, dialog.judge_model.lineEdit(), "claude-sonnet-4-5")
    dialog.forget_key.click()
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert not dialog.isVisible()

    assert grader.chosen_for(demo) == "ana" and window.pages.person == "ana"
    assert window.windowTitle().endswith("— ana")
    with Project.open(demo) as project:  # the project's, which the judge prompt states too
        assert answer_tolerance(project) == pytest.approx(0.05)
    assert preferences.JUDGE_MODEL.get() == "claude-sonnet-4-5"
    request = remembered_request()
    assert request is not None and request.against is None
    assert (request.jaccard, request.cosine, request.model) == (0.5, 0.82, model)
    assert credentials.find() is None and credentials.remembered() is None

    # What the settings drive: the next audit and judge run start from them.
    audit = AuditDialog(remembered_request(), window)
    qtbot.addWidget(audit)
    assert (audit.jaccard.value(), audit.cosine.value()) == (0.5, 0.82)
    assert audit.local.isChecked() and audit.model.path() == model
    window.judge_action.trigger()
    judge = window.findChild(RunJudgeDialog)
    assert judge is not None and judge.model.currentText() == "claude-sonnet-4-5"
    judge.close()

    again = opened(window, qtbot)  # shows what was saved
    assert (again.grader.currentText(), again.tolerance.text(), again.jaccard.text(),
            again.cosine.text(), again.model.edit.text()) == ("ana", "5%", "0.5", "0.82",
                                                              str(model))
    assert not again.forget_key.isEnabled()
    assert again.key_source.text().startswith("none")


def test_the_answer_hint_checks_under_the_saved_tolerance(qtbot, loaded: Project,
                                                          tmp_path: Path) -> None:
    import_file(loaded, write_jsonl(tmp_path / "r4.jsonl", [
        response("r-4", text="v = 2.0 x 5.0\nFinal Answer: 10.4 m/s")]), "responses")
    window = grading_window(qtbot, loaded.path, 1500, 940, WAIT_MS)
    page, hint = window.grading, window.grading.hints.view

    def hint_for(response_id: str) -> str:
        assert page.select(response_id)
        qtbot.waitUntil(lambda: hint.line not in ("Rules: checking…", ""), timeout=WAIT_MS)
        return hint.line

    assert hint_for("r-4") == "Rules: ✗ not equivalent — 10.4 m/s vs 10.0 m/s: 4% off, more than 1%"
    dialog = opened(window, qtbot)
    retype(qtbot, dialog.tolerance, "5")
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    within = "Rules: ✓ equivalent — 10.4 m/s vs 10.0 m/s: 4% within 5%"
    qtbot.waitUntil(lambda: hint.line == within, timeout=WAIT_MS)  # on show, without moving
    hint_for("r-1")
    assert hint_for("r-4") == within


@pytest.mark.parametrize(("field", "text", "named"), [
    ("tolerance", "two", "Answer tolerance: “two” is not a number."),
    ("tolerance", "150%", "Answer tolerance: relative tolerance must be at least 0 and below 1"),
    ("jaccard", "0", "Duplicates: the Jaccard threshold must be in (0, 1], not 0.0."),
    ("cosine", "high", "Duplicates: cosine: “high” is not a number."),
    ("model", "/no/such/model", "Embedding model: Choose an existing model folder or .onnx file."),
    ("judge_model", "", "Judge model: enter a model name."),
    ("grader", "", "Grader: enter your name or initials."),
])
def test_a_bad_value_is_refused_with_its_field_named_and_nothing_changes(
        qtbot, demo: Path, field: str, text: str, named: str) -> None:
    window = grading_window(qtbot, demo)
    before = kept()
    dialog = opened(window, qtbot)
    retype(qtbot, dialog.judge_model.lineEdit(), "claude-sonnet-4-5")  # a good change, not kept
    widget = getattr(dialog, field)
    edit = widget.edit if field == "model" else widget.lineEdit() if field in (
        "judge_model", "grader") else widget
    retype(qtbot, edit, text)
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert dialog.isVisible() and dialog.error.isVisible()
    assert dialog.error.text().startswith(named)
    assert kept() == before and window.pages.person == "expert-1"


def test_cancel_changes_nothing(qtbot, demo: Path) -> None:
    window = grading_window(qtbot, demo)
    before = kept()
    dialog = opened(window, qtbot)
    retype(qtbot, dialog.grader.lineEdit(), "ana")
    retype(qtbot, dialog.tolerance, "5%")
    retype(qtbot, dialog.cosine, "0.9")
    retype(qtbot, dialog.judge_model.lineEdit(), "claude-sonnet-4-5")
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Cancel)
    assert not dialog.isVisible()
    assert kept() == before and grader.chosen_for(demo) == "expert-1"
    assert window.pages.person == "expert-1"


def test_the_dialog_fits_a_1280_by_800_screen(qtbot, demo: Path, monkeypatch) -> None:
    from test_dialogs_fit import assert_fits

    monkeypatch.setattr(dialogs, "available_room", lambda widget: QRect(ROOM))
    window = grading_window(qtbot, demo, ROOM.width(), ROOM.height())
    dialog = opened(window, qtbot)
    assert_fits(qtbot, dialog)
    retype(qtbot, dialog.cosine, "2")  # a refusal keeps it open, and in the room
    press(qtbot, dialog, QDialogButtonBox.StandardButton.Ok)
    assert dialog.error.isVisible()
    assert_fits(qtbot, dialog)
