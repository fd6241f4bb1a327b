"""Where the API key comes from (physgrade.judge.credentials), on a real file-based keyring kept
under the test's folder, and the Run judge dialog that remembers a typed key: the environment
wins, a remembered key is read back from the keyring's file, forgetting deletes it, a system
without a keyring keeps the key for the session and says so, and the key is never written to
the project or the app's settings."""

from __future__ import annotations

from pathlib import Path

import keyring
import pytest
from keyring.backends import fail
from keyring.errors import KeyringError
from keyrings.alt.file import PlaintextKeyring

from physgrade.judge import credentials
from physgrade.judge.client import connect
from physgrade.judge.credentials import NO_KEYRING, SERVICE, USER, Source

SECRET = "sk-ant-remembered-0123456789"


def file_keyring(path: Path) -> PlaintextKeyring:
    """A real backend whose file is ``path`` (each call a new backend object on that file)."""
    backend = PlaintextKeyring()
    backend.file_path = str(path)
    return backend


@pytest.fixture
def keyring_file(tmp_path: Path, monkeypatch) -> Path:
    """The keyring is a file under the test's folder; no key in the environment or the session.
    The keyring in use before is restored afterwards."""
    path = tmp_path / "keyring" / "keyring_pass.cfg"
    before = keyring.get_keyring()
    keyring.set_keyring(file_keyring(path))
    monkeypatch.delenv(credentials.KEY_VARIABLE, raising=False)
    monkeypatch.setattr(credentials, "_session_key", None)
    yield path
    keyring.set_keyring(before)


@pytest.fixture
def no_keyring(monkeypatch) -> None:
    """A system without a keyring: keyring's own fail backend."""
    before = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    monkeypatch.delenv(credentials.KEY_VARIABLE, raising=False)
    monkeypatch.setattr(credentials, "_session_key", None)
    yield
    keyring.set_keyring(before)


def test_the_environment_wins_over_the_keyring(keyring_file: Path, monkeypatch) -> None:
    assert credentials.remember(SECRET) is None
    monkeypatch.setenv(credentials.KEY_VARIABLE, "sk-from-the-environment")
    found = credentials.find()
    assert found is not None and found.value == "sk-from-the-environment"
    assert found.source is Source.ENVIRONMENT and found.source == "from ANTHROPIC_API_KEY"
    assert SECRET not in repr(found) and "sk-from" not in repr(found)


def test_a_remembered_key_is_read_back_from_the_keyrings_file(keyring_file: Path) -> None:
    assert credentials.find() is None and credentials.remembered() is None
    assert credentials.remember(f"  {SECRET}\n") is None
    assert keyring_file.is_file()
    # A new backend object on the same file, as the next start of the app would make.
    keyring.set_keyring(file_keyring(keyring_file))
    found = credentials.find()
    assert found is not None and found.value == SECRET
    assert found.source is Source.KEYRING and found.source == "from the system keyring"
    assert credentials.remembered() is Source.KEYRING
    assert connect(max_retries=0).api_key == SECRET  # the client calls with it


def test_forgetting_deletes_the_key_from_the_keyring(keyring_file: Path) -> None:
    credentials.remember(SECRET)
    assert credentials.forget() is None
    keyring.set_keyring(file_keyring(keyring_file))
    assert keyring.get_password(SERVICE, USER) is None
    assert credentials.find() is None and credentials.remembered() is None
    assert SECRET.encode() not in keyring_file.read_bytes()
    assert credentials.forget() is None  # forgetting twice is no error


class LockedKeyring(PlaintextKeyring):
    """A keyring that keeps its keys but will not delete them, as a locked one refuses."""

    def delete_password(self, service: str, username: str) -> None:
        raise KeyringError("the keyring is locked")


def test_a_key_the_keyring_will_not_let_go_is_said_and_kept(keyring_file: Path,
                                                             qtbot, app_settings: Path) -> None:
    from physgrade_ui import preferences
    from physgrade_ui.settings_dialog import Choices, Refused, save

    credentials.remember(SECRET)
    locked = LockedKeyring()
    locked.file_path = str(keyring_file)
    keyring.set_keyring(locked)
    assert credentials.forget() == ("the system keyring did not let the key go (the keyring is "
                                    "locked)")
    assert keyring.get_password(SERVICE, USER) == SECRET
    before = preferences.JUDGE_MODEL.get()
    with pytest.raises(Refused, match="Forget the remembered key: the system keyring did not"):
        save(Choices(None, 0.05, 0.5, 0.8, None, "claude-sonnet-4-5", forget_key=True))
    assert preferences.JUDGE_MODEL.get() == before  # nothing kept


def test_without_a_keyring_the_key_is_kept_for_the_session_and_that_is_said(
        no_keyring: None) -> None:
    assert not credentials.has_keyring()
    assert credentials.find() is None
    assert credentials.remember(SECRET) == NO_KEYRING
    assert NO_KEYRING == ("this system has no keyring: the key is kept for this session only; "
                          "set ANTHROPIC_API_KEY to keep it")
    found = credentials.find()
    assert found is not None and found.value == SECRET
    assert found.source is Source.SESSION and found.source == "typed for this session"
    assert credentials.remembered() is Source.SESSION
    credentials.forget()
    assert credentials.find() is None


# -- the Run judge dialog --------------------------------------------------------------------

pytest.importorskip("pytestqt")


def labels(dialog) -> list[str]:
    """The texts of the labels in the dialog's form."""
    from PySide6.QtWidgets import QLabel

    return [shown.text() for shown in dialog.settings.findChildren(QLabel)]


def opened_judge(window, qtbot):
    from physgrade_ui.judge_dialog import RunJudgeDialog

    window.judge_action.trigger()
    dialog = window.findChild(RunJudgeDialog)
    assert dialog is not None
    qtbot.waitExposed(dialog)
    return dialog


def typed_to_remember(qtbot, demo: Path, fake, monkeypatch):
    """The window on ``demo`` and its Run judge dialog calling ``fake``, the key typed and
    "Remember" ticked."""
    from conftest import grading_window

    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.base_url)
    window = grading_window(qtbot, demo)
    dialog = opened_judge(window, qtbot)
    assert dialog.key is not None and dialog.remember_key is not None
    qtbot.keyClicks(dialog.key, SECRET)
    dialog.remember_key.setChecked(True)
    return window, dialog


def judge_one(qtbot, dialog) -> None:
    """Run the dialog's judge on one response, to its end."""
    dialog.limit.setValue(1)
    qtbot.waitUntil(lambda: not dialog.estimate_timer.isActive(), timeout=2000)
    worker = dialog.start()
    assert worker is not None
    qtbot.waitSignal(worker.finished, timeout=30_000).wait()


def test_a_key_remembered_in_the_dialog_is_used_next_time_and_written_nowhere_else(
        qtbot, demo: Path, app_settings: Path, keyring_file: Path, monkeypatch) -> None:
    from fake_anthropic import FakeAnthropic

    with FakeAnthropic() as fake:
        window, dialog = typed_to_remember(qtbot, demo, fake, monkeypatch)
        assert not dialog.keyring_note.isVisible()  # this system has a keyring
        judge_one(qtbot, dialog)
        dialog.close()
        qtbot.waitUntil(lambda: window.findChild(type(dialog)) is None, timeout=2000)
        assert file_keyring(keyring_file).get_password(SERVICE, USER) == SECRET

        # The next dialog finds it in the keyring, says so, and runs with it.
        again = opened_judge(window, qtbot)
        assert again.key is None
        assert "from the system keyring" in labels(again)
        judge_one(qtbot, again)
        again.close()
        sent = {r.headers.get("x-api-key") or r.headers["authorization"].removeprefix("Bearer ")
                for r in fake.message_requests()}
        assert sent == {SECRET} and len(fake.message_requests()) == 2
        window.close()
    ini_files = list(app_settings.rglob("*.ini"))
    assert ini_files, "the app's settings were written"
    for written in [demo, *ini_files]:
        assert SECRET.encode() not in written.read_bytes(), written


def test_without_a_keyring_the_dialog_says_so_and_keeps_the_key_for_the_session(
        qtbot, demo: Path, app_settings: Path, no_keyring: None, monkeypatch) -> None:
    from fake_anthropic import FakeAnthropic

    with FakeAnthropic() as fake:
        window, dialog = typed_to_remember(qtbot, demo, fake, monkeypatch)
        assert dialog.keyring_note.isVisible()
        assert dialog.keyring_note.text() == ("This system has no keyring: the key is kept for "
                                              "this session only; set ANTHROPIC_API_KEY to "
                                              "keep it.")
        judge_one(qtbot, dialog)
        dialog.close()
        qtbot.waitUntil(lambda: window.findChild(type(dialog)) is None, timeout=2000)
        again = opened_judge(window, qtbot)
        assert again.key is None
        assert "typed for this session" in labels(again)
        again.close()
        window.close()
    for written in [demo, *app_settings.rglob("*.ini")]:
        assert SECRET.encode() not in written.read_bytes(), written
