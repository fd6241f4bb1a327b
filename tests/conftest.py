"""Shared fixtures: real project files in a temporary folder, and the bundled demo data.

Tests write only under pytest's temporary folder: :func:`pytest_configure` points the home and
every per-user folder there for the whole session (see its notes).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Callable

import pytest

from physgrade.project import Project

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))  # the synthetic corpus generator
#: This session's own folder (home, caches, temporary files, screenshots), under pytest's.
SESSION = Path()


@pytest.hookimpl(trylast=True)  # after pytest's own set-up, which makes its temporary folder
def pytest_configure(config: pytest.Config) -> None:
    """Before any test module is imported, point the home folder, the XDG folders, matplotlib's
    and torch's folders and (for child processes) TMPDIR into the session's folder. What would
    otherwise land in the user's home or in /tmp: the app's settings (QSettings), Qt's, Mesa's
    and QtWebEngine's caches, the embedding model unpacked and exported by
    physgrade.dedup.models (once per session here), ONNX Runtime's telemetry folder,
    matplotlib's font list, torch's ``torchinductor_<user>`` folder, and what killed commands
    leave in TMPDIR. Child processes inherit all of it."""
    global SESSION
    SESSION = config._tmp_path_factory.mktemp("session", numbered=False)
    home = SESSION / "home"
    folders = {"HOME": home, "XDG_CONFIG_HOME": home / ".config",
               "XDG_CACHE_HOME": home / ".cache", "XDG_DATA_HOME": home / ".local" / "share",
               "XDG_STATE_HOME": home / ".local" / "state",
               "MPLCONFIGDIR": home / ".config" / "matplotlib",
               "TORCHINDUCTOR_CACHE_DIR": SESSION / "tmp" / "torchinductor",
               "TMPDIR": SESSION / "tmp"}
    for name, folder in folders.items():
        folder.mkdir(parents=True, exist_ok=True)
        os.environ[name] = str(folder)
    # TMPDIR is for child processes: this one keeps /tmp (pytest has read it already) for what
    # it cleans up itself at exit, after pytest's own folder may be gone.
    # The suite imports ONNX Runtime itself (tests/test_dedup.py); physgrade turns its telemetry
    # off in physgrade.dedup.onnx_runtime.runtime, which tests/test_telemetry.py checks without this.
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"


@pytest.fixture
def project(tmp_path: Path) -> Project:
    with Project.create(tmp_path / "test.physgrade") as opened:
        yield opened


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def older_schema(folder: Path, version: int) -> Path:
    """``folder``, made, with the project's first ``version`` migrations: a project created
    from it (``Project.create(path, folder)``) is one an older physgrade made, for the upgrade
    tests to open."""
    from physgrade.project import migrations

    folder.mkdir()
    for step in migrations()[:version]:
        shutil.copy(step.path, folder / step.path.name)
    return folder


REFERENCE = """Problem Formulation:
Given: $v_0 = 0$, $a = 2.0$ m/s$^2$, $t = 5.0$ s
Find: the final speed $v$
Approach: constant-acceleration kinematics
Assumptions: straight line, constant acceleration
Step-by-step Detailed Solution:
Step 1:
Reasoning: the cyclist starts from rest and speeds up uniformly.
General Formula: $v = v_0 + a t$
Substitution: $v = 0 + 2.0 \\times 5.0$
Calculation: $v = 10.0$
Result: $v = 10.0$ m/s
Final Answer: 10.0 m/s
"""


def question(qid: str = "q-1", **fields) -> dict:
    record = {"id": qid, "kind": "problem", "topic": "Mechanics",
              "question": "A cyclist starts from rest and accelerates at 2.0 m/s^2 for 5.0 s. "
                          "How fast is she going?",
              "options": None, "answer": "10.0 m/s", "answer_type": "NV", "unit": "m/s",
              "reference_solution": REFERENCE, "bloom_cognitive": "Apply",
              "bloom_knowledge": "Procedural", "variant_of": None, "region": None}
    record.update(fields)
    return record


#: The questions' columns a project of every schema has (version 1 on), less the template's.
OLDEST_QUESTION_COLUMNS = ("id", "kind", "topic", "question", "options", "answer", "answer_type",
                           "unit", "reference_solution", "bloom_cognitive", "bloom_knowledge",
                           "variant_of", "region")


def insert_questions(project: Project, records: list[dict]) -> None:
    """Write ``records`` (as :func:`question` makes them) as an older physgrade did: into the
    columns every schema has, for the upgrade tests, whose older schemas today's importer does
    not write."""
    cells = [[json.dumps(r[c]) if c == "options" and r[c] is not None else r[c]
              for c in OLDEST_QUESTION_COLUMNS] for r in records]
    project.conn.executemany(
        f"INSERT INTO questions ({', '.join(OLDEST_QUESTION_COLUMNS)}) "
        f"VALUES ({', '.join('?' * len(OLDEST_QUESTION_COLUMNS))})", cells)


def mc_question(qid: str = "q-mc", kind: str = "conceptual") -> dict:
    return question(qid, kind=kind, question="Which quantity is conserved in an elastic "
                    "collision?", options={"A": "momentum only", "B": "kinetic energy only",
                                           "C": "both", "D": "neither"}, answer="C",
                    answer_type="MC", unit=None, bloom_cognitive="Remember",
                    bloom_knowledge="Factual")


def response(rid: str = "r-1", qid: str = "q-1", model: str = "orbit-7b",
             text: str = REFERENCE) -> dict:
    return {"id": rid, "question_id": qid, "model": model, "response": text}


PREFS_FULL = {"INT": 1, "MOD": 1, "CON": 1, "APP": 1, "CAL": 1, "COR": 2, "COH": 1, "ANS": 2}


@pytest.fixture
def loaded(project: Project, tmp_path: Path) -> Project:
    """A project with two questions (one multiple choice) and three responses."""
    from physgrade.importer import import_file
    import_file(project, write_jsonl(tmp_path / "q.jsonl", [question(), mc_question()]),
                "questions")
    import_file(project, write_jsonl(tmp_path / "r.jsonl", [
        response(), response("r-2", model="quark-lm-3", text="The speed is 10 m/s."),
        response("r-3", "q-mc", text="Both are conserved.\nFinal Answer: C")]), "responses")
    return project


@pytest.fixture(autouse=True, scope="session")
def keyring_of_the_tests(tmp_path_factory):
    """Every test's keyring is a file under the tests' own folder: a key the app remembers
    (the Run judge dialog's box) never reaches the user's keyring, and none of theirs is read."""
    import keyring
    from keyrings.alt.file import PlaintextKeyring

    backend = PlaintextKeyring()
    backend.file_path = str(tmp_path_factory.mktemp("keyring") / "keyring_pass.cfg")
    before = keyring.get_keyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(before)


@pytest.fixture
def app_settings(qapp, tmp_path: Path) -> Path:
    """Keep the app's settings (recent projects, the grader's name) out of the user's own."""
    from PySide6.QtCore import QCoreApplication, QSettings

    from physgrade_ui import style

    QCoreApplication.setOrganizationName("physgrade-tests")
    QCoreApplication.setApplicationName("physgrade")
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    QSettings().clear()
    style.apply(qapp)
    return tmp_path


@pytest.fixture(scope="session")
def demo_copy(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Path, bool], Path]:
    """Copy the demo project to a path, with its estimation sample or without: each is built
    once a session, and copied (a millisecond, where a build takes a tenth of a second and
    hundreds of tests take a fresh demo). Copies are the same file, the project's random
    identity included."""
    from physgrade.demo import build_demo

    built: dict[bool, Path] = {}

    def copy(path: Path, estimation_sample: bool) -> Path:
        if estimation_sample not in built:
            source = tmp_path_factory.mktemp("demo") / "demo.physgrade"
            build_demo(source, estimation_sample=estimation_sample)
            assert [p.name for p in source.parent.iterdir()] == [source.name]  # no WAL left
            built[estimation_sample] = source
        shutil.copyfile(built[estimation_sample], path)
        return path

    return copy


@pytest.fixture
def demo(tmp_path: Path, demo_copy: Callable[[Path, bool], Path]) -> Path:
    """A fresh copy of the bundled demo project."""
    return demo_copy(tmp_path / "demo.physgrade", True)


@pytest.fixture
def unsampled_demo(tmp_path: Path, demo_copy: Callable[[Path, bool], Path]) -> Path:
    """A fresh copy of the demo project without its estimation sample (for tests that draw
    samples of their own)."""
    return demo_copy(tmp_path / "demo.physgrade", False)


def page_text(qtbot, view) -> str:
    """The text a reading view shows, as the browser has rendered it."""
    got: list[str] = []
    view.page().toPlainText(got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    return got[0]


def page_json(qtbot, view, script: str):
    """What ``script`` (which returns JSON text) finds in the page ``view`` shows, run in the
    application's script world, which page content cannot reach."""
    from PySide6.QtWebEngineCore import QWebEngineScript

    got: list[str] = []
    view.page().runJavaScript(script, QWebEngineScript.ScriptWorldId.ApplicationWorld,
                              got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    return json.loads(got[0])


def page_dom(qtbot, view) -> str:
    """The reading view's document as the browser holds it (elements, not text)."""
    got: list[str] = []
    view.page().toHtml(got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=10_000)
    return got[0]


@pytest.fixture
def window(qtbot, demo: Path):
    """The app's main window on a fresh demo project, graded by expert-1, shown."""
    from physgrade_ui import grader
    from physgrade_ui.main_window import MainWindow

    grader.remember("expert-1")
    shown = MainWindow(demo)
    qtbot.addWidget(shown)
    shown.show()
    qtbot.waitExposed(shown)
    return shown


def grading_window(qtbot, path: Path, width: int = 1440, height: int = 900,
                   timeout_ms: int = 10_000):
    """The app's main window on ``path``, graded by expert-1, shown at ``width`` × ``height``
    with the keyboard on the Grade page's rubric, as a grader finds it."""
    from physgrade_ui import grader
    from physgrade_ui.main_window import MainWindow

    grader.remember("expert-1")
    shown = MainWindow(path)
    qtbot.addWidget(shown)
    shown.resize(width, height)
    shown.show()
    qtbot.waitExposed(shown)
    shown.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(lambda: shown.grading.panel.hasFocus(), timeout=timeout_ms)
    return shown


def wait_for(qtbot, worker, outcome: str, timeout_ms: int = 10_000) -> None:
    """Wait until a worker reports ``outcome`` (finished, failed or cancelled)."""
    assert worker is not None, "nothing was started"
    with qtbot.waitSignal(getattr(worker, outcome), timeout=timeout_ms):
        pass


#: The API key the judge tests use; it must never be written anywhere.
TEST_KEY = "sk-ant-test-0123456789-secret"


@pytest.fixture
def fake(monkeypatch):
    """The loopback Messages API (tests/fake_anthropic.py), with the real client pointed at it
    through ANTHROPIC_BASE_URL and a key in ANTHROPIC_API_KEY."""
    from fake_anthropic import FakeAnthropic

    with FakeAnthropic() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", TEST_KEY)
        yield server


@pytest.fixture
def errors(monkeypatch) -> list[str]:
    """Error boxes, recorded instead of shown (a modal box would block the test)."""
    from PySide6.QtWidgets import QMessageBox  # here: core tests run without Qt

    shown: list[str] = []
    monkeypatch.setattr(QMessageBox, "critical",
                        lambda parent, title, text, *args: shown.append(text))
    # The app's one error path (physgrade_ui.operations) opens its boxes without blocking.
    monkeypatch.setattr(QMessageBox, "open", lambda box: shown.append(box.text()))
    return shown


def shot(widget, name: str) -> None:
    """Save a screenshot of ``widget`` as ``name`` in the folder PHYSGRADE_SHOTS names (for
    looking at a page; the screenshots in docs/ are copied from there), else in the session's
    temporary folder: either way the widget must render."""
    from PySide6.QtWidgets import QApplication  # here: core tests run without Qt

    folder = Path(os.environ.get("PHYSGRADE_SHOTS") or SESSION / "shots")
    QApplication.processEvents()  # the layouts settle first
    folder.mkdir(parents=True, exist_ok=True)
    assert widget.grab().save(str(folder / name))


def press(qtbot, window, *keys) -> None:
    """Keys as a person types them, to whatever has the keyboard."""
    from PySide6.QtWidgets import QApplication

    for key in keys:
        qtbot.keyClick(QApplication.focusWidget() or window, key)


def replayed_history(project: Project) -> dict[tuple[int, str, str, str], int | None]:
    """People's scores as their history tells them: each applied row's new value in id order
    per person, response, rubric and criterion (a clear removes the score), proposals skipped."""
    scores: dict[tuple[int, str, str, str], int | None] = {}
    for *key, action, value in project.conn.execute(
            "SELECT rater_id, response_id, rubric, criterion, action, new_value "
            "FROM score_history WHERE NOT proposed ORDER BY id"):
        if action == "clear":
            scores.pop(tuple(key), None)
        else:
            scores[tuple(key)] = value
    return scores


def people_scores(project: Project) -> dict[tuple[int, str, str, str], int | None]:
    """People's scores as the project holds them, keyed as :func:`replayed_history`'s."""
    return {tuple(key): value for *key, value in project.conn.execute(
        "SELECT s.rater_id, s.response_id, s.rubric, s.criterion, s.value FROM scores s "
        "JOIN raters r ON r.id = s.rater_id WHERE r.kind = 'human'")}
