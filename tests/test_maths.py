"""Untrusted text with LaTeX as HTML: escaping, delimiters, MathML, fallbacks and hostile input."""

from __future__ import annotations

import html
from html.parser import HTMLParser
from xml.etree.ElementTree import Element, SubElement

import pytest

from physgrade import maths
from physgrade.maths import ALLOWED_ELEMENTS, MATHML_NAMESPACE, latex_to_mathml, to_html

FRAGMENT_TAGS = {"br", "div", "code", "span"}


class Markup(HTMLParser):
    """The tags, attributes and text of an HTML fragment, as a browser would read them."""

    def __init__(self, fragment: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str]] = []
        self.text = ""
        self.feed(fragment)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(name, value or "") for name, value in attrs]

    def handle_data(self, data):
        self.text += data


def assert_inert(fragment: str) -> Markup:
    markup = Markup(fragment)
    assert set(markup.tags) <= ALLOWED_ELEMENTS | FRAGMENT_TAGS
    assert not {"script", "img", "iframe", "a", "style"} & set(markup.tags)
    for name, value in markup.attributes:
        assert name not in {"href", "src", "style"} and not name.startswith("on"), (name, value)
        assert "javascript:" not in value.lower() and "url(" not in value.lower()
    assert "<script" not in fragment.lower()
    return markup


@pytest.mark.parametrize("text", [
    "<script>alert(1)</script>", "<img src=x onerror=alert(1)>",
    '<iframe src="javascript:alert(1)"></iframe>', '<a href="javascript:alert(1)">click</a> & "quotes"',
])
def test_plain_text_is_escaped(text):
    assert to_html(text) == html.escape(text, quote=True)
    assert assert_inert(to_html(text)).text == text


def test_line_breaks_and_nothing():
    assert to_html("a\nb\r\nc") == "a<br>b<br>c"
    assert "<br>" not in to_html("a\n$$x$$\nb")  # display maths is a block of its own
    assert to_html(None) == to_html("") == ""


@pytest.mark.parametrize("text", [
    r"$\text{<script>alert(1)</script>}$", r"$\text{<iframe src=x></iframe>}$",
    r'$\text{<a href="http://evil">x</a>}$', r"$\mathrm{<img src=x onerror=alert(1)>}$",
    r"$\href{javascript:alert(1)}{x}$", r"\(\href{http://evil}{x}\)",
    r"$$\style{background:url(javascript:alert(1))}{x}$$", r"$\class{tex-error}{x}$",
    r"$\unicode{<script>}$", r"$\unicode{x3C}script$", r"$\color{white}{hidden}$",
    r'$x" onload="alert(1)$', r"$\mbox{<b onmouseover=alert(1)>}$",
])
def test_hostile_maths_is_inert(text):
    assert_inert(to_html(text))


@pytest.mark.parametrize("text", [r"$\text{<script>alert(1)</script>}$", r"\[\text{<b>bold</b>}\]"])
def test_markup_in_text_is_shown_as_text(text):
    output = to_html(text)
    assert "tex-error" not in output
    assert "<mtext>&lt;" in output


@pytest.mark.parametrize("latex", [
    r"\href{javascript:alert(1)}{x}", r"\href{http://evil}{x}", r"\style{color:red}{x}",
    r"\class{evil}{x}", r"\color{white}{x}",
    r"\def\a{xx}\def\b{{\a}{\a}}\def\c{{\b}{\b}}\c",  # macros expand exponentially
])
def test_refused_formulas(latex):
    assert latex_to_mathml(latex, False) is None
    assert to_html(f"${latex}$").startswith('<code class="tex-error"')


@pytest.mark.parametrize("tag, attributes", [
    ("script", {}), ("mi", {"href": "x"}), ("mi", {"onclick": "x"}), ("mspace", {"width": "url(x)"}),
])
def test_converter_output_is_not_trusted(monkeypatch, tag, attributes):
    def rogue_converter(latex, display):
        SubElement(math := Element("math", {"xmlns": MATHML_NAMESPACE}), tag, attributes)
        return math
    monkeypatch.setattr(maths, "convert_to_element", rogue_converter)
    assert latex_to_mathml(f"x_{{{tag} {attributes}}}", False) is None


@pytest.mark.parametrize("text, display", [
    ("$x^2$", False), (r"\(x^2\)", False), ("$$x^2$$", True), (r"\[x^2\]", True),
])
def test_each_delimiter_style(text, display):
    output = to_html(f"before {text} after")
    assert "<msup><mi>x</mi><mn>2</mn></msup>" in output
    assert output.startswith("before ") and output.endswith("after")
    assert ('<div class="display-math"><math' in output) == display
    assert f'display="{"block" if display else "inline"}"' in output


@pytest.mark.parametrize("text, expected", [
    (r"costs \$5", "costs $5"),
    ("costs $5 and $", "costs $5 and $"),
    ("$5 and $6", "$5 and $6"),
    ("from $5-$6 each", "from $5-$6 each"),
    ("between $ 3 and 4 $", "between $ 3 and 4 $"),
    ("$x\n\ny$", "$x<br><br>y$"),
])
def test_dollars_that_are_text(text, expected):
    assert to_html(text) == expected


def test_formulas_among_units_and_prices():
    output = to_html(r"$a = 2.0$ m/s$^2$ for \$3, $t = 5.0$ s")
    assert output.count("<math") == 3
    assert "for $3, " in output


@pytest.mark.parametrize("latex, element", [
    (r"\boxed{v = 14\,\mathrm{m/s}}", '<menclose notation="box">'),
    (r"\text{total energy}", "<mtext>total"),
    (r"\frac{1}{2} m v^2", "<mfrac>"),
    (r"\sqrt{2 g h}", "<msqrt>"),
    (r"\vec{F} = m \hat{a}", "<mover"),
    (r"a \cdot b \times c \approx 2", "<mo>≈</mo>"),
    (r"g = 9.81\,\mathrm{m/s^2}", 'mathvariant="normal"'),
    (r"\begin{aligned} T - mg &= ma \\ T &= m(g + a) \end{aligned}", "<mtable"),
    (r"\begin{pmatrix} 1 & 0 \\ 0 & 1 \end{pmatrix}", "<mtable>"),
    (r"\left( \frac{L}{2\pi} \right)^2", 'fence="true"'),
])
def test_physics_latex_renders(latex, element):
    mathml = latex_to_mathml(latex, True)
    assert mathml is not None and mathml.startswith("<math ")
    assert element in mathml
    assert_inert(mathml)


@pytest.mark.parametrize("text, display", [
    (r"$\frac{1}{$", False), (r"\(\left( x\)", False), (r"$$x^$$", True), (r"\[\sqrt{\]", True),
])
def test_bad_latex_shows_its_source(text, display):
    source = f'<code class="tex-error" title="Not shown as a formula">{html.escape(text)}</code>'
    expected = f'<div class="display-math">{source}</div>' if display else source
    assert to_html(f"see {text}") == f"see {expected}"
