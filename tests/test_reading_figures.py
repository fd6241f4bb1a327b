"""Figures in the reading, measured in the browser: shown with the statement, the reference and
the response they belong to, sized to their column at the window sizes experts use, enlarged
by F (and back by Esc) as a grader types it, loaded from nothing but the reading itself; an
image carrying HTML in a text chunk stays a picture."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PIL import Image, ImageDraw, PngImagePlugin  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402

from conftest import grading_window, page_dom, page_json, page_text, question, response, write_jsonl  # noqa: E402
from physgrade.importer import import_file  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui.reading_view import blocked_requests  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000
HOSTILE_TEXT = '<script>alert(1)</script><img src="http://example.invalid/x.png">'

#: Each figure's image: loaded?, its natural and shown size, its column's content width, the
#: view's size; the statement's first line on screen?; what F enlarged (in the application's
#: script world, which page content cannot reach).
MEASURE = """(() => {
  if (!document.querySelector('.statement')) return JSON.stringify({shown: []});
  const shown = [...document.body.querySelectorAll('figure.figure img')].map((img) => {
    const box = img.getBoundingClientRect(), column = img.closest('.statement > div, #reference,'
      + ' #response').getBoundingClientRect();
    return {loaded: img.complete && img.naturalWidth > 0, natural: img.naturalWidth,
            width: box.width, height: box.height, column: column.width,
            owner: img.closest('#reference') ? 'reference' : img.closest('#response')
              ? 'response' : 'question'};
  });
  const statement = document.querySelector('.statement > div').getBoundingClientRect();
  const enlarged = document.getElementById('enlarged');
  const big = enlarged && enlarged.querySelector('img').getBoundingClientRect();
  return JSON.stringify({shown, view: [innerWidth, innerHeight],
    statement: [statement.top, statement.width],
    enlarged: enlarged ? {at: enlarged.dataset.at, width: big.width, height: big.height} : null});
})()"""


def diagram(size: tuple[int, int], label: str, **png_text: str) -> bytes:
    """A block on an incline, drawn at about twice the size it is shown (sharp on high DPI)."""
    width, height = size
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    draw.polygon([(40, height - 40), (width - 40, height - 40), (width - 40, 60)],
                 outline="black", width=5)
    draw.rectangle([width // 2, height // 2 - 40, width // 2 + 90, height // 2 + 40],
                   outline="navy", width=5)
    draw.text((60, 30), label, fill="black")
    info = PngImagePlugin.PngInfo()
    for key, value in png_text.items():
        info.add_text(key, value)
    out = io.BytesIO()
    image.save(out, "PNG", pnginfo=info)
    return out.getvalue()


@pytest.fixture
def figured(tmp_path: Path) -> Path:
    """A project with one question showing two figures (the second carrying HTML in a PNG text
    chunk), a figure in its reference solution and a response that answers with a sketch."""
    (tmp_path / "figs").mkdir()
    for name, size, text in (("incline.png", (1000, 620), {}),
                             ("forces.png", (700, 700), {"Comment": HOSTILE_TEXT}),
                             ("reference.png", (900, 500), {}), ("sketch.png", (600, 400), {})):
        (tmp_path / "figs" / name).write_bytes(diagram(size, name, **text))
    path = tmp_path / "figures.physgrade"
    with Project.create(path) as project:
        import_file(project, write_jsonl(tmp_path / "q.jsonl", [question(
            "q-fig", question="The block in Figure 1 slides down the incline; Figure 2 shows "
            "the forces on it. Find its acceleration.", images=["figs/incline.png",
                                                               "figs/forces.png"],
            reference_images=["figs/reference.png"])]), "questions")
        import_file(project, write_jsonl(tmp_path / "r.jsonl", [dict(
            response("r-fig", "q-fig"), images=["figs/sketch.png"])]), "responses")
    return path


def measure(qtbot, view) -> dict:
    return page_json(qtbot, view, MEASURE)


def loaded(qtbot, view) -> dict:
    """The measure, once every figure has been decoded and laid out."""
    found: list[dict] = []
    qtbot.waitUntil(lambda: bool(found.append(measure(qtbot, view)) or (
        found[-1]["shown"] and all(f["loaded"] for f in found[-1]["shown"]))), timeout=WAIT_MS)
    return found[-1]


def enlarged(qtbot, view, number: int) -> dict:
    """What F enlarged, once it is figure ``number``."""
    found: list[dict] = []
    qtbot.waitUntil(lambda: found.append(measure(qtbot, view)["enlarged"] or {})
                    or found[-1].get("at") == str(number - 1), timeout=WAIT_MS)
    return found[-1]


@pytest.mark.parametrize("size", [(1440, 900), (1280, 800)])
def test_figures_fit_their_columns_and_f_enlarges_each_in_turn(qtbot, figured: Path,
                                                               size: tuple[int, int]) -> None:
    before = len(blocked_requests())
    window = grading_window(qtbot, figured, *size)
    reader = window.grading.reader
    found = loaded(qtbot, reader)
    assert [f["owner"] for f in found["shown"]] == ["question", "question", "reference",
                                                    "response"]
    assert [f["natural"] for f in found["shown"]] == [1000, 700, 900, 600]
    view_width, view_height = found["view"]
    for figure in found["shown"]:
        assert figure["width"] <= figure["column"] + 1, figure  # never wider than its column
        assert figure["height"] <= 0.42 * view_height + 1, figure  # the statement stays in view
        assert figure["width"] >= min(figure["natural"], figure["column"]) * 0.3, figure
    top, statement_width = found["statement"]
    assert 0 < top < view_height / 3 and statement_width > 300  # the statement is read first

    focused = window.focusWidget()
    for number in (1, 2, 3, 4):  # F as a grader types it, on whatever has the focus
        qtbot.keyClick(focused, Qt.Key.Key_F)
        big = enlarged(qtbot, reader, number)
        # Fills the reading as far as its shape allows.
        assert big["width"] >= view_width - 40 or big["height"] >= view_height - 60, big
        assert f"Figure {number} of 4" in window.statusBar().currentMessage()
    qtbot.keyClick(focused, Qt.Key.Key_F)  # after the last one: the reading again
    qtbot.waitUntil(lambda: measure(qtbot, reader)["enlarged"] is None, timeout=WAIT_MS)
    qtbot.keyClick(focused, Qt.Key.Key_F)
    qtbot.waitUntil(lambda: measure(qtbot, reader)["enlarged"] is not None, timeout=WAIT_MS)
    assert window.grading.figures.back_action.isEnabled()
    qtbot.keyClick(focused, Qt.Key.Key_Escape)
    qtbot.waitUntil(lambda: measure(qtbot, reader)["enlarged"] is None, timeout=WAIT_MS)
    assert not window.grading.figures.back_action.isEnabled()
    assert blocked_requests()[before:] == []  # the figures come from the reading itself


def test_an_image_holding_html_stays_a_picture(qtbot, figured: Path) -> None:
    before = len(blocked_requests())
    window = grading_window(qtbot, figured)
    reader = window.grading.reader
    loaded(qtbot, reader)
    assert "alert(1)" not in page_text(qtbot, reader)
    dom = page_dom(qtbot, reader)
    assert "<script" not in dom.lower() and "example.invalid" not in dom
    # Every image is a data: URI of its checked type; nothing else was asked for.
    sources = [part.split('"', 1)[0] for part in dom.split('src="')[1:]]
    assert len(sources) == 4 and all(s.startswith("data:image/png;base64,") for s in sources)
    assert blocked_requests()[before:] == []  # every image had loaded (``loaded``)
