"""The Duplicates page on the real demo project: a real audit (the embedded ONNX model) on the
worker thread, then reviewed by keyboard as an expert would, every decision read back from the
project file."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtGui import QAction, QTextCharFormat  # noqa: E402
from PySide6.QtWidgets import QApplication, QFileDialog, QPushButton  # noqa: E402

from conftest import press, shot, wait_for, write_jsonl  # noqa: E402
from physgrade.changes import Changes, RecordKind  # noqa: E402
from physgrade.dedup import pairs  # noqa: E402
from physgrade.dedup.audit import DEFAULT_COSINE, DEFAULT_JACCARD  # noqa: E402
from physgrade.judge import duplicates as judge_duplicates  # noqa: E402
from physgrade.judge.client import Outcome  # noqa: E402
from physgrade.judge.tools import DuplicateLabel  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade.tasks import Cancelled, Task  # noqa: E402
from physgrade_ui import duplicates  # noqa: E402
from physgrade_ui.duplicates import AuditDialog, AuditRequest, DuplicatesPage, diff_html  # noqa: E402
from physgrade_ui.main_window import MainWindow  # noqa: E402
from physgrade_ui.progress import ProgressDialog  # noqa: E402

#: The first audit in a fresh cache unpacks and exports the embedded model (~6 s).
AUDIT_MS = 120_000
WITHIN = AuditRequest(None, DEFAULT_JACCARD, DEFAULT_COSINE)
#: The near-duplicates written into the demo, as clusters of the project's questions.
DEMO_CLUSTERS = [["q-0005", "q-0101", "q-0102", "q-0103"], ["q-0017", "q-0104", "q-0105"],
                 ["q-0022", "q-0106"]]
DEMO_PAIRS = {("q-0005", "q-0101"), ("q-0005", "q-0102"), ("q-0005", "q-0103"),
              ("q-0017", "q-0104"), ("q-0017", "q-0105"), ("q-0022", "q-0106")}

pytestmark = pytest.mark.usefixtures("app_settings")


def run(qtbot, page: DuplicatesPage, request: AuditRequest, outcome: str = "finished") -> None:
    wait_for(qtbot, page.start_audit(request), outcome, AUDIT_MS)
    qtbot.waitUntil(lambda: not page.ops.busy, timeout=AUDIT_MS)


@pytest.fixture
def page(window: MainWindow, qtbot) -> DuplicatesPage:
    """The Duplicates page on show, after an audit of the demo's questions with each other."""
    window.duplicates_action.trigger()
    shown = window.duplicates
    run(qtbot, shown, WITHIN)
    every_pair(shown)
    return shown


@pytest.fixture(scope="module")
def embedder():
    from physgrade.dedup.engine import Embedder
    from physgrade.dedup.models import resolve

    return Embedder(resolve())


@pytest.fixture
def reviewed(window: MainWindow, demo: Path, embedder) -> DuplicatesPage:
    """The Duplicates page on show, the demo audited beforehand through the core (quicker
    than a run from the page, which the tests above and below cover)."""
    from physgrade.dedup.run import audit_project

    with Project.open(demo) as project:
        audit_project(project, embedder)
    window.duplicates_action.trigger()
    every_pair(window.duplicates)
    return window.duplicates


def every_pair(page: DuplicatesPage) -> None:
    """Show every pair: the demo's near-duplicates are its declared variants, which the page
    leaves out of those to review at first."""
    choose(page.decision_filter, "Any")


def stored(path: Path, **narrow) -> list[pairs.StoredPair]:
    """The pairs as a fresh connection reads them from the file."""
    with Project.open(path) as project:
        return pairs.stored_pairs(project, **narrow)


def shown_pairs(page: DuplicatesPage) -> list[tuple[str, str]]:
    model = page.model
    return [(model.index(r, 0).data(), model.index(r, 1).data()) for r in range(model.rowCount())]


def cell(page: DuplicatesPage, row: int, title: str) -> str:
    column = [t for t, _ in duplicates.COLUMNS].index(title)
    return page.model.index(row, column).data()


def choose(combo, text: str) -> None:
    index = combo.findText(text)
    assert index >= 0, text
    combo.setCurrentIndex(index)


def shortcut(qtbot, action: QAction) -> None:
    """Type the action's shortcut, as a person would, to whatever has the keyboard."""
    qtbot.keySequence(QApplication.focusWidget(), action.shortcut())


def focus_table(window: MainWindow, page: DuplicatesPage, qtbot) -> None:
    window.activateWindow()  # shortcuts go to the active window
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=10_000)
    page.table.setFocus()
    qtbot.waitUntil(page.table.hasFocus, timeout=10_000)


def highlighted(pane) -> list[str]:
    """The runs of text drawn on the diff's highlight colour."""
    runs, block = [], pane.text.document().begin()
    while block.isValid():
        fragments = block.begin()
        while not fragments.atEnd():
            fragment = fragments.fragment()
            form: QTextCharFormat = fragment.charFormat()
            if form.background().color().name() == duplicates.style.DIFF_BACKGROUND:
                runs.append(fragment.text())
            fragments += 1
        block = block.next()
    return runs


@pytest.mark.parametrize("provider, shown", [
    ("CPUExecutionProvider", "CPU"), ("CUDAExecutionProvider", "CUDA"),
    ("CoreMLExecutionProvider", "CoreML"), ("DmlExecutionProvider", "DirectML"), (None, "?")])
def test_providers_are_named_as_people_name_them(provider, shown) -> None:
    assert duplicates.provider_name(provider) == shown


def test_before_an_audit_the_page_says_what_to_do(window: MainWindow) -> None:
    window.duplicates_action.trigger()
    page = window.duplicates
    assert page.body.currentWidget() is page.empty
    assert page.empty_run.isEnabled()
    assert page.model.rowCount() == 0


def test_an_audit_lists_the_demos_pairs_by_cosine_and_names_the_provider(
        page: DuplicatesPage, window: MainWindow, demo: Path, qtbot, monkeypatch) -> None:
    assert page.body.currentWidget() is page.content
    expected = stored(demo, source="")
    assert shown_pairs(page) == [(p.a, p.b) for p in expected]
    assert DEMO_PAIRS <= set(shown_pairs(page))
    cosines = [float(cell(page, r, "Cosine")) for r in range(page.model.rowCount())]
    assert cosines == sorted(cosines, reverse=True)
    assert [cell(page, r, "Stages") for r in range(len(expected))] == [
        "+".join(map(str, p.stages)) for p in expected]

    with Project.open(demo) as project:
        audit = pairs.last_audit(project, "")
    assert page.provider.text() == duplicates.provider_name(audit["provider"])
    assert page.provider.text() in ("CPU", "CUDA", "CoreML", "DirectML") and page.provider.isVisible()
    assert audit["model"] in page.details.text()
    assert f"Jaccard ≥ {DEFAULT_JACCARD:.2f}" in page.details.text()
    assert f"cosine ≥ {DEFAULT_COSINE:.2f}" in page.details.text()
    assert page.summary.text().startswith(f"{len(expected)} candidate pairs; items flagged: ")
    assert page.source.currentText() == "Within the project"
    assert window.statusBar().currentMessage().startswith(
        f"Audit done on {page.provider.text()} with {audit['model']}")

    page.select_row(2)
    pair = expected[2]
    assert page.comparison.a.title.text() == f"A · {pair.a}"
    assert page.comparison.b.title.text() == f"B · {pair.b}"
    assert page.comparison.a.text.toPlainText() == pair.a_text
    assert page.comparison.b.text.toPlainText() == pair.b_text
    assert highlighted(page.comparison.a) and highlighted(page.comparison.b)
    qtbot.wait(100)  # let the layout settle before looking
    shot(window, "duplicates.png")


def test_declared_variants_are_marked_and_left_out_of_those_to_review(
        window: MainWindow, demo: Path, embedder) -> None:
    """The demo's near-duplicates are its own declared variants (a question and its contextual
    variants are meant to be alike): marked as such, and not put before a reviewer to reject
    one by one."""
    from physgrade.dedup.run import audit_project

    with Project.open(demo) as project:
        audit_project(project, embedder)
    window.duplicates_action.trigger()
    page = window.duplicates
    assert page.decision_filter.currentText() == "To review"
    everything = stored(demo)
    declared = {(p.a, p.b) for p in everything if p.declared_variant}
    of_one_base = {(p.a, p.b) for p in everything
                   if any({p.a, p.b} <= set(cluster) for cluster in DEMO_CLUSTERS)}
    assert DEMO_PAIRS <= declared == of_one_base  # a variant and its base, or two of one base
    assert shown_pairs(page) == [(p.a, p.b) for p in everything if not p.declared_variant]
    assert page.count.text().endswith(f"{len(declared)} declared variants")
    choose(page.decision_filter, "Any")
    assert shown_pairs(page) == [(p.a, p.b) for p in everything]
    marked = {shown: cell(page, row, "Decision") for row, shown in enumerate(shown_pairs(page))}
    assert {shown for shown, text in marked.items() if text == "declared variant"} == declared
    shot(page, "duplicates-declared.png")


def test_keys_commit_decisions_at_once_and_move_on(reviewed: DuplicatesPage,
                                                    window: MainWindow, demo: Path,
                                                    qtbot) -> None:
    page = reviewed
    focus_table(window, page, qtbot)
    page.select_row(0)
    ids = [p.id for p in page.model.rows]

    press(qtbot, page, Qt.Key.Key_C)  # confirm the first pair; on to the second
    assert page.table.currentIndex().row() == 1
    press(qtbot, page, Qt.Key.Key_R)  # reject the second; on to the third
    assert page.table.currentIndex().row() == 2
    press(qtbot, page, Qt.Key.Key_K, Qt.Key.Key_Y)  # back to the second: confirm it instead
    press(qtbot, page, Qt.Key.Key_N)  # reject the third
    press(qtbot, page, Qt.Key.Key_J, Qt.Key.Key_Up, Qt.Key.Key_Up)  # back to the third…
    assert page.table.currentIndex().row() == 2
    press(qtbot, page, Qt.Key.Key_U)  # …and withdraw that decision: the selection stays
    assert page.table.currentIndex().row() == 2

    decided = {p.id: (p.decision, p.decided_by) for p in stored(demo)}
    assert decided[ids[0]] == ("confirmed", "expert-1")
    assert decided[ids[1]] == ("confirmed", "expert-1")
    assert decided[ids[2]] == (None, None)
    assert all(decided[i] == (None, None) for i in ids[3:])
    withdrawn = "declared variant" if page.model.rows[2].declared_variant else "—"
    assert [cell(page, r, "Decision") for r in range(3)] == ["✓ confirmed", "✓ confirmed",
                                                             withdrawn]
    assert page.comparison.decision.text() == "Undecided"
    assert page.count.text().endswith("2 confirmed, 0 rejected, 7 undecided · 9 declared "
                                      "variants")

    press(qtbot, page, Qt.Key.Key_R)
    assert stored(demo)[2].decision == "rejected"
    assert cell(page, 2, "Decision") == "✗ rejected"
    assert window.statusBar().currentMessage().endswith("rejected by expert-1")


def test_a_decision_shows_on_the_overview_without_a_refresh(reviewed: DuplicatesPage,
                                                            window: MainWindow, demo: Path,
                                                            qtbot) -> None:
    total = len(stored(demo))
    caption = window.overview.pairs.caption
    focus_table(window, reviewed, qtbot)
    shortcut(qtbot, window.overview_action)
    qtbot.waitUntil(lambda: caption.text() == f"0 of {total} candidate pairs decided (0%)")

    shortcut(qtbot, window.duplicates_action)
    qtbot.waitUntil(reviewed.table.hasFocus, timeout=10_000)
    first = reviewed.current_pair()
    press(qtbot, reviewed, Qt.Key.Key_C)
    with Project.open(demo) as project:  # a fresh connection: the decision is in the file
        assert [p.decision for p in pairs.stored_pairs(project) if p.id == first.id] == [
            "confirmed"]

    shortcut(qtbot, window.overview_action)  # no F5
    qtbot.waitUntil(lambda: caption.text().startswith(f"1 of {total} candidate pairs decided"))


def test_the_page_reads_again_only_what_touches_its_pairs(reviewed: DuplicatesPage,
                                                         window: MainWindow, demo: Path,
                                                         monkeypatch) -> None:
    page = reviewed
    choose(page.stage, "2 · embeddings")
    page.select_row(1)
    kept = page.current_pair()
    reads: list[tuple] = []
    real = pairs.stored_pairs
    monkeypatch.setattr(pairs, "stored_pairs",
                        lambda *args, **kwargs: reads.append(args) or real(*args, **kwargs))

    window.ops.changed.emit(Changes.of(RecordKind.SCORES, RecordKind.BLOOM, RecordKind.EMBEDDINGS))
    page.decide("rejected")  # its own decision: the row changes in place, on to the next
    assert reads == []
    assert cell(page, 1, "Decision") == "✗ rejected" and page.table.currentIndex().row() == 2

    with Project.open(demo) as project:  # a judge labels the pair, on a connection of its own
        changes = judge_duplicates.store(project, "claude-test", "v1", str(kept.id), Outcome(
            DuplicateLabel("same_topic", "Both about kettles."), raw="{}"))
    page.select_row(1)
    window.ops.changed.emit(changes)
    assert reads
    assert page.stage.currentText() == "2 · embeddings" and page.current_pair().id == kept.id
    assert cell(page, 1, "Judge") == "same topic"
    assert page.comparison.judge.text() == "Judge claude-test: same topic — Both about kettles."


def test_without_a_reviewer_a_key_asks_who_is_working(reviewed: DuplicatesPage,
                                                     window: MainWindow, demo: Path,
                                                     qtbot) -> None:
    window.pages.set_context(window.project, None)  # nobody has said who they are
    focus_table(window, reviewed, qtbot)
    press(qtbot, reviewed, Qt.Key.Key_C)
    assert window.statusBar().currentMessage() == duplicates.NO_REVIEWER
    assert window.grader_dialog is not None and window.grader_dialog.isVisible()
    assert all(p.decision is None for p in stored(demo))
    window.grader_dialog.reject()


def test_filters_narrow_the_rows_as_the_core_does(reviewed: DuplicatesPage,
                                                  window: MainWindow, demo: Path) -> None:
    page = reviewed
    everything = shown_pairs(page)
    for text, stage in (("2 · embeddings", 2), ("1 · word 5-grams", 1)):
        choose(page.stage, text)
        assert shown_pairs(page) == [(p.a, p.b) for p in stored(demo, stage=stage)]
        assert 0 < len(shown_pairs(page)) < len(everything)
    choose(page.stage, "1 + 2 · both")
    assert shown_pairs(page) == [(p.a, p.b) for p in stored(demo) if p.stages == (1, 2)]
    assert page.count.text().startswith(f"{len(shown_pairs(page))} of {len(everything)} pairs")
    choose(page.stage, "Any")
    assert shown_pairs(page) == everything

    first, second = page.model.rows[0], page.model.rows[1]
    page.decide("confirmed")  # the first pair; the second is on show now
    choose(page.decision_filter, "Confirmed")
    assert shown_pairs(page) == [(first.a, first.b)]
    choose(page.decision_filter, "Undecided")
    assert (first.a, first.b) not in shown_pairs(page)
    assert len(shown_pairs(page)) == len(everything) - 1
    choose(page.decision_filter, "Any")

    with Project.open(demo) as project:  # a judge labels the second pair
        judge_duplicates.store(project, "claude-test", "v1", str(second.id), Outcome(
            DuplicateLabel("close_duplicate", "Same <b>kettle</b>, same numbers."), raw="{}"))
    window.refresh_action.trigger()  # F5: another program changed the project
    choose(page.label_filter, "Close duplicate")
    assert shown_pairs(page) == [(second.a, second.b)]
    assert cell(page, 0, "Judge") == "close duplicate"
    assert page.comparison.judge.text() == ("Judge claude-test: close duplicate — Same "
                                            "<b>kettle</b>, same numbers.")
    assert page.comparison.judge.textFormat() == Qt.TextFormat.PlainText
    choose(page.label_filter, "Not labelled")
    assert len(shown_pairs(page)) == len(everything) - 1
    choose(page.label_filter, "Same topic")
    assert shown_pairs(page) == [] and page.comparison.a.title.text() == "A"
    assert not page.export_button.isEnabled()


def test_the_diff_highlights_changed_words_and_shows_markup_as_text() -> None:
    first, second = diff_html("A ball falls from rest.\nFind its speed.",
                              "A <b>ball</b> rises from rest.\nFind its speed.")
    mark = f'<span style="background-color: {duplicates.style.DIFF_BACKGROUND};">'
    assert f"{mark}ball falls</span>" in first
    assert f"{mark}&lt;b&gt;ball&lt;/b&gt; rises</span>" in second
    assert "<b>" not in second and "rest.<br>Find its speed." in second


def test_an_audit_against_a_file_compares_and_escapes_its_text(
        page: DuplicatesPage, window: MainWindow, demo: Path, tmp_path: Path, qtbot) -> None:
    kettle = next(p.a_text for p in page.model.rows if p.a == "q-0017")
    changed = kettle.replace("kettle", "<b>kettle</b>", 1).replace("1.5 kg", "2.0 kg", 1)
    assert changed != kettle
    other = write_jsonl(tmp_path / "bench.jsonl", [
        {"id": "bench-1", "question": changed},
        {"id": "bench-2", "question": "Name the largest moon of Saturn."}])
    run(qtbot, page, AuditRequest(other, DEFAULT_JACCARD, DEFAULT_COSINE))

    assert page.source.currentText() == "bench.jsonl"
    assert [page.source.itemText(i) for i in range(page.source.count())] == [
        "Within the project", "bench.jsonl"]
    assert ("q-0017", "bench-1") in shown_pairs(page)
    assert "against 2 in bench.jsonl" in page.details.text()
    page.select_row(shown_pairs(page).index(("q-0017", "bench-1")))
    pane = page.comparison.b
    assert pane.title.text() == "B · bench-1  (in bench.jsonl)"
    assert pane.text.toPlainText() == changed  # the markup is text, not bold
    assert "&lt;b&gt;kettle&lt;/b&gt;" in pane.text.toHtml()
    assert "2.0" in " ".join(highlighted(pane)) and "1.5" in " ".join(
        highlighted(page.comparison.a))

    choose(page.source, "Within the project")  # the other audit is still there
    assert shown_pairs(page) == [(p.a, p.b) for p in stored(demo, source="")]


def test_the_cluster_view_shows_the_demos_clusters(reviewed: DuplicatesPage, demo: Path,
                                                   window: MainWindow) -> None:
    page = reviewed
    assert page.tabs.tabText(1) == "Clusters (3)"
    page.tabs.setCurrentIndex(1)
    tree = page.clusters
    with Project.open(demo) as project:
        assert pairs.clusters(project) == DEMO_CLUSTERS
    groups = [[tree.topLevelItem(i).child(j).text(0)
               for j in range(tree.topLevelItem(i).childCount())]
              for i in range(tree.topLevelItemCount())]
    assert groups == DEMO_CLUSTERS
    assert tree.topLevelItem(0).text(1) == "4 questions"
    assert tree.topLevelItem(0).isExpanded()
    assert tree.topLevelItem(0).child(0).text(1).startswith("A delivery rider")
    shot(window, "duplicates-clusters.png")

    page.tabs.setCurrentIndex(0)  # rejecting the string pair undoes its cluster
    page.select_row(shown_pairs(page).index(("q-0022", "q-0106")))
    page.decide("rejected")
    assert page.tabs.tabText(1) == "Clusters (2)"
    page.tabs.setCurrentIndex(1)
    assert tree.topLevelItemCount() == 2


def test_export_writes_the_filtered_pairs(reviewed: DuplicatesPage, demo: Path,
                                          tmp_path: Path, monkeypatch) -> None:
    page = reviewed
    target = tmp_path / "pairs.csv"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *args, **kwargs: (str(target), "CSV (*.csv)"))
    choose(page.stage, "2 · embeddings")
    page.export_button.click()

    with target.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["a"], r["b"]) for r in rows] == shown_pairs(page)
    assert [(p.a, p.b) for p in stored(demo, stage=2)] == shown_pairs(page)
    assert len(rows) < len(stored(demo))
    assert all("2" in r["stages"].split("+") for r in rows)
    assert rows[0]["a_text"] == page.model.rows[0].a_text
    assert page.export_file == target


def test_an_export_that_cannot_be_written_says_why_once(reviewed: DuplicatesPage,
                                                         tmp_path: Path,
                                                         errors: list[str]) -> None:
    assert not reviewed.export_csv(tmp_path)  # a folder: no file can be written there
    assert len(errors) == 1 and errors[0].startswith("The pairs could not be written.")
    assert reviewed.export_file is None


def test_a_run_that_fails_says_why_and_changes_nothing(page: DuplicatesPage, demo: Path,
                                                       tmp_path: Path, errors: list[str],
                                                       qtbot) -> None:
    before = (stored(demo), shown_pairs(page), page.details.text())
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"id": "x-1", "question": "A ball."},
                                               {"id": "x-2", "text": "no question field"}])
    run(qtbot, page, AuditRequest(bad, DEFAULT_JACCARD, DEFAULT_COSINE), "failed")

    assert len(errors) == 1
    assert errors[0].startswith("The audit failed. Nothing was changed.")
    assert "bad.jsonl line 2, field 'question'" in errors[0]
    assert (stored(demo), shown_pairs(page), page.details.text()) == before
    assert page.source.count() == 1 and page.run_button.isEnabled()
    with Project.open(demo) as project:
        assert pairs.sources(project) == [""]


def test_cancel_stops_the_audit_and_changes_nothing(window: MainWindow, demo: Path, qtbot,
                                                    monkeypatch) -> None:
    window.duplicates_action.trigger()
    page = window.duplicates
    gate = threading.Event()
    real_run = duplicates.run_audit

    def held_run(request: AuditRequest, project: Project, task: Task):
        gate.wait(AUDIT_MS / 1000)  # hold the worker until the user has pressed Cancel
        return real_run(request, project, task)

    monkeypatch.setattr(duplicates, "run_audit", held_run)
    worker = page.start_audit(AuditRequest(None, 0.3, 0.7))
    assert not page.run_button.isEnabled()  # one audit at a time
    dialog = window.findChildren(ProgressDialog)[-1]
    with qtbot.waitSignal(worker.cancelled, timeout=AUDIT_MS):
        dialog.findChild(QPushButton).click()
        gate.set()
    assert stored(demo) == [] and page.run_button.isEnabled()
    assert page.body.currentWidget() is page.empty
    assert window.statusBar().currentMessage() == ("The audit was cancelled. Nothing was "
                                                   "changed.")


def test_the_audit_dialog_checks_its_choices(tmp_path: Path, qtbot) -> None:
    dialog = AuditDialog()
    qtbot.addWidget(dialog)
    assert (dialog.jaccard.value(), dialog.cosine.value()) == (DEFAULT_JACCARD, DEFAULT_COSINE)
    assert dialog.within.isChecked() and dialog.embedded.isChecked()
    assert not dialog.set_file.isEnabled()
    dialog.against.setChecked(True)
    dialog.accept()
    assert "compare against" in dialog.error.text()
    other = write_jsonl(tmp_path / "other.jsonl", [{"id": "a", "question": "Q?"}])
    dialog.set_file.edit.setText(str(other))
    dialog.local.setChecked(True)
    dialog.model.edit.setText(str(other))
    dialog.accept()
    assert "not an .onnx file" in dialog.error.text()
    dialog.embedded.setChecked(True)
    dialog.cosine.setValue(0.9)
    dialog.quantize.setChecked(True)
    dialog.accept()
    assert dialog.request() == AuditRequest(other, DEFAULT_JACCARD, 0.9, None, True)

    again = AuditDialog(dialog.request())  # the next run starts from the last one
    qtbot.addWidget(again)
    assert again.against.isChecked() and again.set_file.edit.text() == str(other)
    assert again.cosine.value() == 0.9 and again.quantize.isChecked()


def test_the_app_and_the_page_load_no_embedding_machinery(demo: Path, tmp_path: Path,
                                                          embedder) -> None:
    # ONNX Runtime, the tokenizer and sentence-transformers (with torch) load when the user
    # runs an audit, never when the app starts or the page shows stored pairs.
    from physgrade.dedup.run import audit_project

    with Project.open(demo) as project:
        audit_project(project, embedder)
    heavy = ("onnxruntime", "tokenizers", "sentence_transformers", "torch", "transformers")
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from PySide6.QtCore import QSettings\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([])\n"
        "app.setOrganizationName('physgrade-tests')\n"
        "QSettings.setDefaultFormat(QSettings.Format.IniFormat)\n"
        "QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, "
        f"{str(tmp_path / 'settings')!r})\n"
        "from physgrade_ui.main_window import MainWindow\n"
        f"window = MainWindow(Path({str(demo)!r}))\n"
        "window.duplicates_action.trigger()\n"
        "window.duplicates.decision_filter.setCurrentIndex("
        "window.duplicates.decision_filter.findText('Any'))\n"
        "assert window.duplicates.model.rowCount() > 0\n"
        f"print(' '.join(m for m in {heavy!r} if m in sys.modules))\n")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QTWEBENGINE_DISABLE_SANDBOX="1")
    env.pop("DISPLAY", None)
    loaded = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            check=True, env=env).stdout.split()
    assert loaded == []


def test_the_help_overlay_lists_the_pages_keys(window: MainWindow) -> None:
    window.duplicates_action.trigger()
    page = window.duplicates
    window.show_shortcuts()
    texts = [window.help.grid.itemAt(i).widget().text() for i in range(window.help.grid.count())]
    assert "Duplicates" in texts and "Grading" not in texts
    assert all(keys in texts and what in texts for keys, what in duplicates.KEYS)
    assert "confirm" in page.hint.text() and "reject" in page.hint.text()


def test_the_last_audit_settings_are_remembered_across_restarts(window: MainWindow, demo: Path,
                                                                  tmp_path: Path, qtbot,
                                                                  monkeypatch) -> None:
    # The app's settings (isolated per test) keep the thresholds, model and int8 choice of the
    # last run started, so a new session's dialog opens with them.
    assert duplicates.remembered_request() is None

    def stopped(request: AuditRequest, project: Project, task: Task) -> None:
        raise Cancelled()

    monkeypatch.setattr(duplicates, "run_audit", stopped)
    window.duplicates_action.trigger()
    model = tmp_path / "my-model"
    chosen = AuditRequest(None, 0.35, 0.72, model, True)
    with qtbot.waitSignal(window.duplicates.start_audit(chosen).cancelled, timeout=AUDIT_MS):
        pass
    assert duplicates.remembered_request() == chosen
    dialog = AuditDialog(duplicates.remembered_request())
    assert (dialog.jaccard.value(), dialog.cosine.value(), dialog.quantize.isChecked(),
            dialog.model.edit.text(), dialog.local.isChecked()) == (0.35, 0.72, True, str(model),
                                                                   True)
