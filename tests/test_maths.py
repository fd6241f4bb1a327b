"""Untrusted text with Markdown and LaTeX as HTML: escaping, delimiters, MathML, fallbacks,
Markdown, formulas split to fit, bare LaTeX and hostile input."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser
from xml.etree.ElementTree import Element, SubElement

import pytest

from physgrade import maths
from physgrade.maths import ALLOWED_ELEMENTS, MATHML_NAMESPACE, latex_to_mathml, to_html

#: What the Markdown and the formulas' layout may add to MathML (never a link, image or frame).
FRAGMENT_TAGS = {"br", "wbr", "code", "span", "p", "em", "strong", "s", "ul", "ol", "li",
                 "blockquote", "pre", "hr", "h4", "h5", "h6", "table", "thead", "tbody", "tr",
                 "th", "td"}


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
    assert to_html("a\nb\r\nc") == "a<br>\nb<br>\nc"  # single line breaks are kept
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
    assert ('<span class="display-math"><span class="piece"><math' in output) == display
    assert f'display="{"block" if display else "inline"}"' in output


@pytest.mark.parametrize("text, expected", [
    (r"costs \$5", "costs $5"),
    ("costs $5 and $", "costs $5 and $"),
    ("$5 and $6", "$5 and $6"),
    ("from $5-$6 each", "from $5-$6 each"),
    ("between $ 3 and 4 $", "between $ 3 and 4 $"),
    ("$x\n\ny$", "<p>$x</p>\n<p>y$</p>\n"),
])
def test_dollars_that_are_text(text, expected):
    assert to_html(text) == expected


def test_formulas_among_units_and_prices():
    output = to_html(r"$a = 2.0$ m/s$^2$ for \$3, $t = 5.0$ s")
    assert output.count("<math") == 5  # each equation in two pieces: "a" and "= 2.0"
    assert output.count("<wbr>") == 2
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
    expected = f'<span class="display-math">{source}</span>' if display else source
    assert to_html(f"see {text}") == f"see {expected}"


# -- Markdown -------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("**bold** and *emphasis*", "<strong>bold</strong> and <em>emphasis</em>"),
    ("use `F = ma` here", "use <code>F = ma</code> here"),
    ("- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>\n"),
    ("1. first\n2. second", "<ol>\n<li>first</li>\n<li>second</li>\n</ol>\n"),
    ("> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>\n"),
    ("# Solution\n\nText", "<h4>Solution</h4>\n<p>Text</p>\n"),  # below the page's headings
    ("```python\nx = 1\n```", "<pre><code>x = 1\n</code></pre>\n"),  # no language class
    ("one\n\ntwo", "<p>one</p>\n<p>two</p>\n"),
    ("~~wrong~~", "<s>wrong</s>"),
])
def test_markdown_renders(text, expected):
    assert to_html(text) == expected


def test_tables_render_with_alignment_as_a_class():
    output = to_html("| quantity | value |\n|:--|--:|\n| $v$ | 3 m/s |")
    assert "<table>" in output and '<th class="align-left">quantity</th>' in output
    assert '<td class="align-right">3 m/s</td>' in output and "<math" in output
    assert_inert(output)


@pytest.mark.parametrize("text, kept", [
    (r"$a_1 * b_2 * c_3$", "<mo>*</mo>"),  # no emphasis between the stars
    (r"$x_1$ and $y_1$ and $z_1$", "<msub><mi>y</mi><mn>1</mn></msub>"),  # nor between "_"
    (r"$$\mathbf{F} = [a](b)$$", "<mo stretchy=\"false\">[</mo>"),  # no link either
])
def test_markdown_leaves_maths_alone(text, kept):
    output = to_html(text)
    assert "<em>" not in output and kept in output


def test_code_shows_maths_as_written():
    assert to_html("inline `$x^2$` here") == "inline <code>$x^2$</code> here"
    fenced = to_html("```\n$$E = mc^2$$\n\\frac{a}{b}\n```")
    assert fenced == "<pre><code>$$E = mc^2$$\n\\frac{a}{b}\n</code></pre>\n"


def test_display_maths_in_a_paragraph_is_valid_there():
    output = to_html("The energy is\n$$E = mc^2$$\nwhich is large.\n\nNext paragraph.")
    assert output.startswith('<p>The energy is<span class="display-math">')
    assert "</span>which is large.</p>" in output and "<div" not in output


def test_private_use_characters_in_the_text_are_kept():
    text = "\ue000 0\ue000 and \ue001 $x$ \uf8ff"
    output = to_html(text)
    assert "\ue000 0\ue000 and \ue001 " in output and output.endswith(" \uf8ff")
    assert output.count("<math") == 1


HOSTILE_MARKDOWN = [
    "<script>alert(1)</script>", "text <script>alert(1)</script> text",
    '<img src="http://example.invalid/a.png" onerror="alert(1)">',
    '<iframe src="http://example.invalid"></iframe>', "[click](javascript:alert(1))",
    "[site](http://example.invalid/x)", "![image](http://example.invalid/a.png)",
    "<http://example.invalid/auto>", "[ref]\n\n[ref]: http://example.invalid/ref",
    "![ref][logo]\n\n[logo]: http://example.invalid/logo.png",
    '| a |\n|---|\n| <img src=x onerror=alert(1)> |', "`<script>alert(1)</script>`",
    '```html"><script>alert(1)</script>\n<b onclick="alert(1)">x</b>\n```',
    "    <iframe src=x></iframe>", "> <style>body{background:url(http://x)}</style>",
    "&lt;script&gt;alert(1)&lt;/script&gt;", "*<b>em</b>*",
    r"$$\href{http://evil}{x}$$ and \href{javascript:alert(1)}{y}",
]


@pytest.mark.parametrize("text", HOSTILE_MARKDOWN)
def test_hostile_markdown_is_inert(text):
    output = to_html(text)
    lowered = output.lower()
    assert "<script" not in lowered and "<img" not in lowered and "<iframe" not in lowered
    markup = assert_inert(output)
    assert not {name for name, _ in markup.attributes} - {"xmlns", "display", "class", "title",
                                                          "stretchy", "mathvariant", "form"}


def test_links_show_as_written():
    assert assert_inert(to_html("see [the site](http://example.invalid/x)")).text == (
        "see [the site](http://example.invalid/x)")
    assert assert_inert(to_html("[r]: http://example.invalid/r")).text == (
        "[r]: http://example.invalid/r")


# -- formulas split to fit ------------------------------------------------------------------------

def pieces(output: str) -> list[str]:
    """The text of each <math> element of ``output``, in order."""
    return [Markup(math).text.replace("\xa0", " ")
            for math in re.findall(r"<math .*?</math>", output, re.DOTALL)]


@pytest.mark.parametrize("latex, expected", [
    (r"v = v_0 + a t", ["v", "=v0", "+at"]),
    (r"E \approx 1.2 \le 3 \to \infty", ["E", "≈1.2", "≤3", "→∞"]),
    (r"x <= y", ["x", "<=y"]),  # "<=" is one relation
    (r"a = -b - c", ["a", "=−b", "−c"]),  # the sign of b is no operator to break at
    (r"a^{-1} = b_{i+1}", ["a−1", "=bi+1"]),
    (r"\frac{a = b}{c + d} = e", ["a=bc+d", "=e"]),  # braces are one piece
    (r"\left( a = b + c \right) = d", ["(a=b+c)", "=d"]),
    (r"\begin{cases} a = b \\ c = d \end{cases} = e", None),  # environments: a single piece
    (r"\displaystyle a = \frac{1}{2}", ["a=12"]),  # a style switch would not reach the rest
    (r"\left. a \right| = b", ["a|", "=b"]),
    (r"f(x = 1) = 2", ["f(x=1)", "=2"]),
])
def test_formulas_split_at_top_level_relations_then_plus_and_minus(latex, expected):
    output = to_html(f"$${latex}$$")
    found = pieces(output)
    if expected is None:
        assert len(found) == 2 and found[-1] == "=e"
    else:
        assert found == expected
    assert output.count('<span class="piece">') == len(maths._split(latex, maths._RELATIONS))


def test_continuing_pieces_start_with_an_infix_operator():
    output = to_html("$a = b + c$")
    assert output.count('<mo form="infix">') == 2
    assert output.count("<wbr>") == 2  # inline pieces: a line may end between them
    assert "piece" not in output


def test_an_operator_beside_text_only_keeps_its_spacing():
    # Alone with text, "=" would make the piece an operator, spaced after "kg" rather than "=".
    assert '<mo form="infix">=</mo><mtext>kg</mtext><mi></mi>' in to_html(r"$m = \text{kg}$")
    assert "<mi></mi>" not in to_html("$m = k g$")


def test_a_formula_whose_piece_fails_is_converted_whole(monkeypatch):
    real = maths._convert
    monkeypatch.setattr(maths, "_convert", lambda latex, display: None
                        if latex.strip() == "= b" else real(latex, display))
    maths._pieces_html.cache_clear()
    maths._piece.cache_clear()
    try:
        assert pieces(maths._formula_html("$a = b$", "a = b", False)) == ["a=b"]
    finally:
        maths._pieces_html.cache_clear()
        maths._piece.cache_clear()


@pytest.mark.parametrize("latex, fit", [
    (r"v = \sqrt{2 g h} = 19.8", None),  # every piece is narrow
    (r"\frac{(2.0\,\text{kg})(3.0\,\text{m/s}) + (4.0\,\text{kg})(-1.5\,\text{m/s})}"
     r"{2.0\,\text{kg} + 4.0\,\text{kg}}", range(20, 26)),  # it renders 19 em wide
    (r"\text{" + "a" * 400 + "}", [maths.FIT_MOST]),
])
def test_wide_unbreakable_pieces_are_marked_for_shrinking(latex, fit):
    output = to_html(f"$${latex}$$")
    marked = re.search(r'class="display-math fit-(\d+)"', output)
    assert (marked is None) if fit is None else int(marked[1]) in fit
    assert "fit-" not in to_html(f"${latex}$")  # inline formulas break between their pieces


#: 3,000 characters of product, none of it a relation, a plus or a minus.
LONG_PRODUCTS = {
    "juxtaposed": (" ".join(f"a_{{{i}}}" for i in range(1, 460)), None),
    "brackets": ("".join(f"(x_{{{i}}})" for i in range(1, 360)), None),
    "cdot": (r" \cdot ".join(f"a_{{{i}}}" for i in range(1, 260)), "·"),
    "times": (r" \times ".join(f"b^{{{i}}}" for i in range(1, 250)), "×"),
}


@pytest.mark.parametrize("kind", sorted(LONG_PRODUCTS))
def test_long_products_are_cut_between_their_factors(kind):
    latex, operator = LONG_PRODUCTS[kind]
    assert len(latex) >= 3000
    factors = maths._split(latex, maths._MULTIPLICATION, juxtaposed=True)
    assert "".join(factors) == latex  # nothing lost, nothing added
    whole = pieces(latex_to_mathml(latex, True))
    for output in (to_html(f"$${latex}$$"), to_html(f"${latex}$")):
        found = pieces(output)
        assert len(found) == len(factors) > 200
        assert "".join(found) == "".join(whole)  # the same text as the formula in one piece
        if operator:  # each continuation starts with its operator, set infix
            assert all(piece.startswith(operator) for piece in found[1:])
            assert output.count('<mo form="infix">') == len(found) - 1
    assert to_html(f"${latex}$").count("<wbr>") == len(factors) - 1  # a line may end there
    assert "fit-" not in to_html(f"$${latex}$$")  # every factor fits: nothing is shrunk


@pytest.mark.parametrize("latex, factors", [
    (r"a \cdot b \times c * d", ["a ", r"\cdot b ", r"\times c ", "* d"]),
    (r"\frac{a b}{c d} e", [r"\frac{a b}{c d} ", "e"]),  # never inside braces
    (r"\left( a b \right) \left| c d \right|", [r"\left( a b \right) ", r"\left| c d \right|"]),
    (r"\begin{pmatrix} a b \end{pmatrix} c", [r"\begin{pmatrix} a b \end{pmatrix} ", "c"]),
    (r"a^{b c} d_{e f} x^2 y", ["a^{b c} ", "d_{e f} ", "x^2 ", "y"]),  # scripts stay
    (r"a^\alpha b_\beta", [r"a^\alpha ", r"b_\beta"]),
    (r"12.5 x", ["12.5 ", "x"]),  # a number is one factor
    (r"f(x) g(x) (a)(b)", ["f(x) ", "g(x) ", "(a)", "(b)"]),  # f(x) is applied, not multiplied
    (r"\sin x \cos(y) z", [r"\sin x ", r"\cos(y) ", "z"]),  # a function keeps its argument
    (r"\sum_{i=1}^{N} a_i b_i", [r"\sum_{i=1}^{N} a_i ", "b_i"]),
    (r"\vec a \hat{b} \mathrm{d}x", [r"\vec a ", r"\hat{b} ", r"\mathrm{d}", "x"]),
    (r"a \cdot -b", ["a ", r"\cdot -b"]),  # a sign is no factor to cut at
    (r"\displaystyle a b", [r"\displaystyle a b"]),  # a style switch keeps it whole
])
def test_products_split_between_top_level_factors_only(latex, factors):
    assert maths._split(latex, maths._MULTIPLICATION, juxtaposed=True) == factors


def test_only_pieces_too_wide_are_cut_at_their_products():
    assert pieces(to_html("$$F = m a b$$")) == ["F", "=mab"]
    long = " ".join(f"x_{{{i}}}" for i in range(1, 40))
    found = pieces(to_html(f"$$F = {long} + y z$$"))
    assert found[:3] == ["F", "=x1", "x2"] and found[-1] == "+yz"  # the narrow piece stays whole


# -- bare LaTeX -----------------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    (r"T = C\sqrt{m/k}", ["T", "=Cm/k"]),
    (r"Answer: T = 2\pi\sqrt{L/g}", ["T", "=2πL/g"]),  # the label stays text
    (r"- \frac{1}{2} m v^2", ["12mv2"]),  # so does a list marker
    (r"\text{total energy} = 5\,\mathrm{J}", ["total energy", "=5J"]),  # words in braces: maths
])
def test_bare_latex_lines_render_as_maths(text, expected):
    output = to_html(text)
    assert pieces(output) == expected and "\\" not in Markup(output).text


@pytest.mark.parametrize("text", [
    r"where \theta is the angle",  # prose
    r"The formula \frac{a}{b} gives the ratio",
    r"\notacommand{",  # does not convert
    r"a plain line with a backslash \ and no command",
    r"costs \$5 and \frac{1}{2}",  # has a dollar: not bare
])
def test_other_lines_with_backslashes_stay_text(text):
    output = to_html(text)
    assert "<math" not in output and "\\" in Markup(output).text


def test_bare_lines_and_formulas_together():
    text = "Given $m = 2$ kg.\nT = C\\sqrt{m/k}\n$$\n\\frac{a}{b}\n$$"
    output = to_html(text)
    assert pieces(output) == ["m", "=2", "T", "=Cm/k", "ab"]  # the display stays whole
