"""The reading, measured in the browser: every formula of the demo fits its box at the window
sizes experts use and at the narrowest and widest reading panes, and hostile Markdown is inert."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWebEngineCore import QWebEngineScript  # noqa: E402

from conftest import page_dom, page_json, page_text  # noqa: E402
from physgrade.grading import grading_item  # noqa: E402
from physgrade.maths import to_html  # noqa: E402
from physgrade.project import Project  # noqa: E402
from physgrade_ui import reading  # noqa: E402
from physgrade_ui.reading_view import ReadingView, blocked_requests  # noqa: E402

pytestmark = pytest.mark.usefixtures("app_settings")
WAIT_MS = 10_000

#: For every <math>: is it inside the content box of each boxed ancestor (up to the body) and
#: inside the viewport? Then every element whose content is wider than its box (it would clip or
#: scroll), and whether the document scrolls sideways. Run in the application's script world.
MEASURE = """(() => {
  const viewport = document.documentElement.clientWidth;
  const content = (element) => {
    const box = element.getBoundingClientRect(), style = getComputedStyle(element);
    return [box.left + parseFloat(style.borderLeftWidth) + parseFloat(style.paddingLeft),
            box.right - parseFloat(style.borderRightWidth) - parseFloat(style.paddingRight)];
  };
  const name = (element) => element.tagName.toLowerCase()
    + (element.className ? "." + String(element.className).split(" ").join(".") : "");
  const clipped = [];
  for (const math of document.querySelectorAll("math")) {
    const box = math.getBoundingClientRect();
    const where = [];
    if (box.left < -1 || box.right > viewport + 1) where.push("viewport");
    for (let up = math.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).display.startsWith("inline") && up.clientWidth === 0) continue;
      const [left, right] = content(up);
      if (box.left < left - 1 || box.right > right + 1) where.push(name(up));
    }
    if (where.length) clipped.push({formula: math.textContent, width: box.width, where});
  }
  const overflowing = [...document.body.querySelectorAll("*")]
    .filter((element) => element.clientWidth > 0 && element.scrollWidth > element.clientWidth + 1)
    .map((element) => ({element: name(element), text: element.textContent.slice(0, 80),
                        scroll: element.scrollWidth, width: element.clientWidth}));
  return JSON.stringify({viewport, maths: document.querySelectorAll("math").length, clipped,
    overflowing, scrolls: document.documentElement.scrollWidth > viewport});
})()"""


def measure(qtbot, view) -> dict:
    """What :data:`MEASURE` finds in the page ``view`` shows."""
    return page_json(qtbot, view, MEASURE)


def problems(found: dict, where: str) -> list[str]:
    """Everything that does not fit, named: the response, the formula, the box it leaves."""
    return ([f"{where}: formula {c['formula']!r} ({c['width']:.0f} px) leaves {c['where']}"
             for c in found["clipped"]]
            + [f"{where}: {o['element']} {o['text']!r} is {o['scroll']} px wide in {o['width']} px"
               for o in found["overflowing"]]
            + ([f"{where}: the page scrolls sideways"] if found["scrolls"] else []))


def response_ids(path: Path) -> list[str]:
    with Project.open(path) as project:
        return [row[0] for row in project.conn.execute("SELECT id FROM responses ORDER BY id")]


def test_every_demo_formula_fits_the_grade_page_at_common_window_sizes(window, demo: Path,
                                                                        qtbot) -> None:
    page = window.grading
    ids = response_ids(demo)
    assert len(ids) == 126
    found = []
    for width, height in ((1440, 900), (1280, 800)):
        window.resize(width, height)  # as wide as the window's minimum width allows
        qtbot.waitUntil(lambda: window.height() == height, timeout=WAIT_MS)  # noqa: B023
        width = window.width()
        for response_id in ids:
            with qtbot.waitSignal(page.shown, timeout=WAIT_MS,
                                  check_params_cb=lambda shown: shown == response_id):  # noqa: B023
                page.show_response(response_id)
            pane = page.reader.width()  # the rubric beside it may take more or less room
            assert 400 < pane < width - 400, pane  # the reading has most of the room left
            # The browser takes a new size a moment after the widget does: measure once it has.
            qtbot.waitUntil(lambda: measure(qtbot, page.reader.current)["viewport"]  # noqa: B023
                            <= pane, timeout=WAIT_MS)  # noqa: B023
            found += problems(measure(qtbot, page.reader.current),
                              f"{response_id} at {width}×{height} ({pane} px pane)")
    assert not found, "\n".join(found)


@pytest.mark.parametrize("pane", [450, 700, 1200])
def test_every_demo_formula_fits_the_narrowest_and_widest_reading(qtbot, demo: Path,
                                                                  pane: int) -> None:
    view = ReadingView(reading.CSS)
    qtbot.addWidget(view)
    view.resize(pane, 700)
    view.show()
    qtbot.waitExposed(view)
    found = []
    maths = 0
    with Project.open(demo) as project:
        for response_id in response_ids(demo):
            with qtbot.waitSignal(view.rendered, timeout=WAIT_MS):
                view.show_html(reading.grading_html(grading_item(project, response_id,
                                                                 "expert-1")))
            measured = measure(qtbot, view)
            maths += measured["maths"]
            found += problems(measured, f"{response_id} in a {pane} px pane")
    assert maths > 1000  # the demo is full of formulas, and all of them were measured
    assert not found, "\n".join(found)


def test_columns_stack_in_a_narrow_pane_reference_first(qtbot, demo: Path) -> None:
    view = ReadingView(reading.CSS)
    qtbot.addWidget(view)
    view.show()
    with Project.open(demo) as project:
        fragment = reading.grading_html(grading_item(project, "r-0001", "expert-1"))
    placed = {}
    for pane in (600, 900):
        view.resize(pane, 700)
        with qtbot.waitSignal(view.rendered, timeout=WAIT_MS):
            view.show_html(fragment)
        got: list[str] = []
        view.page().runJavaScript(
            "JSON.stringify([...document.querySelectorAll('.columns > div')].map("
            "c => [c.getBoundingClientRect().left, c.getBoundingClientRect().top]))",
            QWebEngineScript.ScriptWorldId.ApplicationWorld, got.append)
        qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)  # noqa: B023
        placed[pane] = json.loads(got[0])
    (reference_left, reference_top), (response_left, response_top) = placed[600]
    assert reference_left == response_left and reference_top < response_top  # stacked
    (reference_left, reference_top), (response_left, response_top) = placed[900]
    assert reference_top == response_top and reference_left < response_left  # side by side


#: Products of 3,000 characters or more with no relation, plus or minus: juxtaposed factors, and
#: chains of \\cdot and of \\times.
LONG_PRODUCTS = {
    "juxtaposed": " ".join(f"a_{{{i}}}" for i in range(1, 460)),
    "brackets": "".join(f"(x_{{{i}}})" for i in range(1, 360)),
    "cdot": r" \cdot ".join(f"a_{{{i}}}" for i in range(1, 260)),
    "times": r" \times ".join(f"b^{{{i}}}" for i in range(1, 250)),
}
#: The smallest font the maths may be shrunk to: 0.85 of its size in the text (reading.FITS).
FLOOR = 0.85

#: The page's width and scroll width, and the sizes of the maths in the text and the smallest.
SIZES = """(() => {
  const sizes = [...document.querySelectorAll("math")].map(m => parseFloat(getComputedStyle(m).fontSize));
  return JSON.stringify({scroll: document.documentElement.scrollWidth,
                         width: document.documentElement.clientWidth,
                         text: parseFloat(getComputedStyle(document.querySelector("p math")).fontSize),
                         smallest: Math.min(...sizes), maths: sizes.length});
})()"""


@pytest.mark.parametrize("pane", [420, 900])
@pytest.mark.parametrize("kind", sorted(LONG_PRODUCTS))
def test_long_products_wrap_in_a_paragraph_and_in_display_maths(qtbot, kind: str, pane: int) -> None:
    latex = LONG_PRODUCTS[kind]
    assert len(latex) >= 3000
    view = ReadingView(reading.CSS)
    qtbot.addWidget(view)
    view.resize(pane, 700)
    view.show()
    qtbot.waitExposed(view)
    with qtbot.waitSignal(view.rendered, timeout=WAIT_MS):
        view.show_html(to_html(f"Inline, $E = 1$ and ${latex}$ in a sentence.\n\n$${latex}$$"))
    found = measure(qtbot, view)
    assert problems(found, f"{kind} in a {pane} px pane") == []
    got: list[str] = []
    view.page().runJavaScript(SIZES, QWebEngineScript.ScriptWorldId.ApplicationWorld, got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)
    sizes = json.loads(got[0])
    assert sizes["maths"] > 200  # both formulas were cut into many pieces
    assert sizes["scroll"] <= sizes["width"]  # no sideways scrollbar
    assert sizes["smallest"] >= FLOOR * sizes["text"] - 0.01


HOSTILE = """**Bold** and *emphasis*, `<b>code</b>` and $v = \\sqrt{2 g h}$.

- <script>alert(1)</script>
- <img src="http://example.invalid/a.png" onerror="alert(1)">
- <iframe src="http://example.invalid/frame"></iframe>

> [click](javascript:alert(1)) [site](http://example.invalid/page) <http://example.invalid/auto>
> ![image](http://example.invalid/b.png) ![ref][logo] [ref][logo]

[logo]: http://example.invalid/c.png

| a | b |
|---|---|
| <img src=http://example.invalid/d.png> | <a href="http://example.invalid/e">x</a> |

```html"><script>alert(1)</script>
<iframe src="http://example.invalid/g"></iframe>
```
"""


def test_hostile_markdown_is_inert_in_a_real_view(qtbot) -> None:
    fragment = to_html(HOSTILE)
    for forbidden in ("<script", "<img", "<iframe", "<a ", "<style"):
        assert forbidden not in fragment.lower(), forbidden
    assert "<strong>Bold</strong>" in fragment and "<table>" in fragment and "<math" in fragment
    before = len(blocked_requests())
    view = ReadingView(reading.CSS)
    qtbot.addWidget(view)
    view.resize(700, 700)
    view.show()
    with qtbot.waitSignal(view.rendered, timeout=WAIT_MS):
        view.show_html(fragment)
    got: list[str] = []
    view.page().runJavaScript(  # elements and attributes as the browser built them
        "JSON.stringify([...document.body.querySelectorAll('*')].flatMap(e => "
        "[e.tagName.toLowerCase(), ...[...e.attributes].map(a => a.name)]))",
        QWebEngineScript.ScriptWorldId.ApplicationWorld, got.append)
    qtbot.waitUntil(lambda: bool(got), timeout=WAIT_MS)
    built = set(json.loads(got[0]))
    assert not built & {"script", "img", "iframe", "a", "style", "href", "src", "link", "object"}
    assert not {name for name in built if name.startswith("on")}
    assert "<script" not in page_dom(qtbot, view).lower()
    text = page_text(qtbot, view)
    assert "<script>alert(1)</script>" in text  # shown as it was written
    assert '<img src="http://example.invalid/a.png" onerror="alert(1)">' in text
    assert "[site](http://example.invalid/page)" in text
    assert "[logo]: http://example.invalid/c.png" in text
    qtbot.wait(300)  # anything the page might have asked for would have been asked by now
    assert blocked_requests()[before:] == []
