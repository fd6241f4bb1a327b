"""Untrusted text with Markdown and LaTeX maths, as a safe HTML fragment with MathML formulas.

Questions, reference solutions and model responses are plain text that may contain LaTeX between
``$$...$$`` or ``\\[...\\]`` (display) and ``$...$`` or ``\\(...\\)`` (inline), and Markdown
(emphasis, lists, block quotes, code, tables), which models write all the time.

The text is untrusted, so a formula is never passed through as the converter wrote it:
latex2mathml copies ``\\text{...}`` verbatim into its markup (``<script>`` included) and turns
``\\href``, ``\\style`` and ``\\class`` into attributes. Instead the converter's element tree (taken
before it is turned into that string, so ``\\text{<b>}`` stays text rather than parsing as a tag) is
checked against allow-lists of MathML presentation elements and attributes, then serialised here
with every text and attribute value escaped. A formula that fails to convert, or is refused, is
shown as its escaped source in ``<code class="tex-error">`` so the reader still sees it.

Markdown goes through markdown-it-py with raw HTML off (tags show as text) and links, images,
autolinks and link reference definitions switched off: nothing is clickable and nothing asks
for a remote resource; ``[x](http://...)`` shows as written. Code blocks lose their language
name, so no attribute in the output comes from the text. Markdown must not touch the maths
(``a_1 * b_2`` is no emphasis inside ``$...$``), so formulas are found first and swapped for
placeholders made of a private-use character absent from the text plus a number (NUL would not
survive: Markdown replaces it); after rendering, each placeholder becomes its MathML, or its
source again inside code, where Markdown shows text as written. Single line breaks stay line
breaks, as models rely on them; text that is one paragraph comes back without ``<p>``, so it
fits in a line or a table cell.

A single ``$`` follows Pandoc's rule so that prices stay text: the opening ``$`` must not be
followed by a space, and the closing ``$`` must not be preceded by a space nor followed by a digit
("$5 and $6" is text, "$v = 5$ m/s" is maths). ``\\$`` is a literal dollar. As in TeX, no formula
spans a blank line, so a stray dollar cannot swallow the following paragraphs.

Bare LaTeX: a line with no formula in it that contains a command (a backslash and letters, as in
``T = C\\sqrt{m/k}``) and is not prose is shown as one inline formula, if it converts; otherwise
it stays text. A Markdown list, quote or heading marker and a short leading label ending in a
colon ("Answer:") stay text. The line is prose when, once commands and brace groups are removed,
two ordinary words of three letters or more stand next to each other ("where \\theta is the
angle"); such a line stays text with its backslashes.

The reading panes cannot run scripts, so formulas are made to fit their width here: each formula
is split at its top-level relations (``=``, ``\\approx``, ``\\le``, ``\\to``, ...: never inside a
brace group, ``\\left...\\right`` or an environment) and each of those pieces at its top-level
``+`` and ``-``, into several ``<math>`` elements, each piece after the first starting with its
operator. A piece still estimated (from its MathML) wider than ``FIT_FROM`` em, such as a long
product, is cut again before its top-level ``\\cdot``, ``\\times`` and ``*`` and between its
juxtaposed factors (never inside braces, brackets, scripts or arguments; a function or big
operator keeps its first factor). Inline pieces are separated by ``<wbr>``, so a line may end
between them; display pieces sit in ``<span class="piece">`` groups inside
``<span class="display-math">`` (a span, as it may land in a ``<p>``), which the style sheet lays
out as wrapping rows. A formula none of whose pieces fails to convert is shown split; otherwise
it is converted whole (cut at its products only). A display formula whose widest piece is still
wider than ``FIT_FROM`` em is marked ``fit-N`` with that width, so that the style sheet can
shrink it towards its column's width, down to a size still read with ease.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable
from functools import lru_cache
from itertools import chain
from math import ceil
from xml.etree.ElementTree import Element, SubElement

from latex2mathml.converter import convert_to_element
from markdown_it import MarkdownIt
from markdown_it.token import Token

MATHML_NAMESPACE = "http://www.w3.org/1998/Math/MathML"

#: The MathML presentation elements latex2mathml emits for ordinary LaTeX, and their harmless kin.
ALLOWED_ELEMENTS = frozenset({
    "math", "mrow", "mi", "mn", "mo", "ms", "mtext", "mspace", "msub", "msup", "msubsup", "mfrac",
    "msqrt", "mroot", "mover", "munder", "munderover", "mmultiscripts", "mprescripts", "none",
    "mtable", "mtr", "mtd", "mlabeledtr", "maligngroup", "malignmark", "mstyle", "mpadded",
    "mphantom", "menclose", "merror", "mfenced", "semantics", "annotation",
})

#: Layout attributes only. Left out on purpose: href, style and class (``\\href``, ``\\style``,
#: ``\\class`` fill them from the input), event handlers, src, and mathcolor/mathbackground
#: (white-on-white text would hide part of a response from the grader).
ALLOWED_ATTRIBUTES = frozenset({
    "accent", "accentunder", "align", "columnalign", "columnlines", "columnspacing", "depth",
    "display", "displaystyle", "fence", "form", "frame", "height", "largeop", "linebreak",
    "linethickness", "lspace", "mathsize", "mathvariant", "maxsize", "minsize", "movablelimits",
    "notation", "rowalign", "rowlines", "rowspacing", "rspace", "scriptlevel", "separator",
    "stretchy", "symmetric", "voffset", "width",
})

#: Lengths, keywords and lists of them: no quotes, colons, parentheses or slashes, so no url(...).
_SAFE_ATTRIBUTE_VALUE = re.compile(r"[\w#.,+\- %]*", re.ASCII)

#: latex2mathml expands macros, and nested definitions grow exponentially (a few lines of
#: ``\def`` take minutes and gigabytes), so formulas that define macros are refused unconverted.
_MACRO_DEFINITION = re.compile(
    r"\\(?:def|newcommand|renewcommand|providecommand|newenvironment|renewenvironment"
    r"|DeclareMathOperator)(?![A-Za-z])")

#: Environments latex2mathml does not know, renamed to ones it renders the same way.
_ENVIRONMENT_SYNONYMS = {"aligned": "align*", "gathered": "matrix"}
_SYNONYM_ENVIRONMENT = re.compile(rf"\\(begin|end)\{{({'|'.join(_ENVIRONMENT_SYNONYMS)})\}}")

# A formula's body is made of runs of plain characters, escaped pairs (so "\$" never closes it) and
# line breaks that do not start a blank line. It cannot hold its own opening delimiter either (nor
# could it in TeX), so a failed opening scans only as far as the next one: matching stays linear.
_PLAIN = r"[^\\\n$]++"
_LINE_BREAK = r"\n(?![ \t]*\n)"
_DOLLARS_BODY = rf"(?:{_PLAIN}|\\.|\$(?!\$)|{_LINE_BREAK})++"
_BRACKETS_BODY = rf"(?:{_PLAIN}|\\[^\[\]]|\$|{_LINE_BREAK})++"
_PARENTHESES_BODY = rf"(?:{_PLAIN}|\\[^()]|\$|{_LINE_BREAK})++"
_DOLLAR_BODY = rf"(?:{_PLAIN}|\\.|{_LINE_BREAK})++"

_DELIMITED = re.compile(rf"""
    (?P<escaped_dollar>\\\$)  # found only so that it opens nothing; Markdown shows it as "$"
  | (?P<display>\$\${_DOLLARS_BODY}\$\$ | \\\[{_BRACKETS_BODY}\\\])
  | (?P<inline>\\\({_PARENTHESES_BODY}\\\) | \$(?![\s$]){_DOLLAR_BODY}(?<!\s)\$(?!\d))
""", re.DOTALL | re.VERBOSE)

#: A line that may be bare LaTeX (it holds a command), less its Markdown markers and its label.
#: Possessive, so that a line of many markers or spaces cannot make matching backtrack.
_BARE_LINE = re.compile(r"""
    ^(?:[ \t]*+(?:(?:[-*+]|\d{1,9}[.)]|\#{1,6})[ \t]++|>[ \t]*+))*+
    (?:[ \t]*+(?:\*\*|__)?[A-Za-z][A-Za-z ]{0,40}:(?:\*\*|__)?[ \t]++)?
    [ \t]*+(?P<latex>(?:[^\n\\]|\\[^A-Za-z\n])*+\\[A-Za-z][^\n]*)""", re.MULTILINE | re.VERBOSE)
_NOT_BARE = re.compile(r"\$|\\[(\[]")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_TWO_WORDS = re.compile(r"\b[A-Za-z]{3,} [A-Za-z]{3,}\b")

#: Where a formula may be split: relations first, then the pieces at binary plus and minus.
_RELATIONS = frozenset({
    "=", "<", ">", "≈", "≤", "≥", "≠", "≡", "∼", "≃", "≅", "∝", "≪", "≫", "→", "←", "↔", "⇒", "⇔",
    "↦", "⟶", "⟹", "⟺",
    r"\approx", r"\le", r"\leq", r"\leqslant", r"\ge", r"\geq", r"\geqslant", r"\ne", r"\neq",
    r"\equiv", r"\sim", r"\simeq", r"\cong", r"\propto", r"\ll", r"\gg", r"\doteq", r"\coloneqq",
    r"\to", r"\gets", r"\rightarrow", r"\leftarrow", r"\longrightarrow", r"\Rightarrow",
    r"\Leftarrow", r"\Longrightarrow", r"\implies", r"\iff", r"\Leftrightarrow",
    r"\Longleftrightarrow", r"\mapsto",
})
_BINARY_OPERATORS = frozenset({"+", "-", "−", "±", "∓", r"\pm", r"\mp"})
#: Where a piece still too wide is cut: before these, and between juxtaposed factors.
_MULTIPLICATION = frozenset({r"\cdot", r"\times", "*", r"\ast", "⋅", "×"})
_OPENING = frozenset({"{", "(", "[", r"\left", r"\begin"})
_CLOSING = frozenset({"}", ")", "]", r"\right", r"\end"})
#: Commands whose next token is their delimiter, not a bracket that opens or closes a group.
_SIZED = frozenset({r"\left", r"\right", r"\middle"} | {
    rf"\{size}{side}" for size in ("big", "Big", "bigg", "Bigg") for side in ("", "l", "r", "m")})
#: Tokens after which an operator is unary, an argument or part of a longer operator.
_NO_OPERAND = frozenset({"^", "_", ",", ";", ":", "/", "*", r"\not", r"\cdot", r"\times",
                         r"\div", r"\over"}) | _RELATIONS | _BINARY_OPERATORS | _OPENING
#: Spacing, skipped when looking at what precedes an operator.
_SPACING = frozenset({r"\,", r"\;", r"\:", r"\!", "\\ ", r"\quad", r"\qquad", "~"})
#: Commands that take the next token or group as their argument: never cut from it.
_TAKES_ARGUMENT = frozenset({
    r"\frac", r"\dfrac", r"\tfrac", r"\sqrt", r"\binom", r"\hat", r"\widehat", r"\check",
    r"\tilde", r"\widetilde", r"\bar", r"\overline", r"\underline", r"\vec", r"\dot", r"\ddot",
    r"\acute", r"\grave", r"\breve", r"\mathring", r"\overrightarrow", r"\overleftarrow",
    r"\overbrace", r"\underbrace", r"\mathrm", r"\mathbf", r"\mathit", r"\mathsf", r"\mathtt",
    r"\mathcal", r"\mathbb", r"\mathfrak", r"\boldsymbol", r"\bm", r"\text", r"\textrm",
    r"\textbf", r"\textit", r"\mbox", r"\operatorname", r"\limits", r"\nolimits"})
#: Functions and big operators, kept with the factor they apply to ("\sin x", "\sum_i a_i").
_PREFIX = frozenset({
    r"\sin", r"\cos", r"\tan", r"\cot", r"\sec", r"\csc", r"\arcsin", r"\arccos", r"\arctan",
    r"\sinh", r"\cosh", r"\tanh", r"\coth", r"\ln", r"\log", r"\lg", r"\exp", r"\det", r"\dim",
    r"\ker", r"\deg", r"\arg", r"\max", r"\min", r"\sup", r"\inf", r"\lim", r"\limsup",
    r"\liminf", r"\Pr", r"\gcd", r"\sum", r"\prod", r"\coprod", r"\int", r"\iint", r"\iiint",
    r"\oint", r"\bigcup", r"\bigcap", r"\partial", r"\nabla", r"\operatorname"})
_NOT_STARTING = _NO_OPERAND | _MULTIPLICATION | _CLOSING | _SIZED | _SPACING
_NOT_ENDING = _NO_OPERAND | _MULTIPLICATION | _TAKES_ARGUMENT | _PREFIX | _SIZED
#: Top-level tokens that make a formula unsplittable: style switches would not reach the later
#: pieces, and rows and columns need the formula whole.
_UNSPLITTABLE = frozenset({r"\displaystyle", r"\textstyle", r"\scriptstyle", r"\rm", r"\bf",
                           r"\it", r"\cal", r"\sf", r"\tt", r"\color", r"\\", "&", r"\over",
                           r"\tag", r"\atop", r"\choose"})
_LATEX_TOKEN = re.compile(r"\\(?:[A-Za-z]+|.)|\s+|.", re.DOTALL)

#: Display formulas whose widest piece is estimated wider than this many em get a class
#: ``fit-N`` (N: the estimate rounded up to even em, at most FIT_MOST), with which the style sheet
#: shrinks them to the pane's width: such a piece has no product left to cut it at, and the page
#: cannot run scripts. Pieces wider than this are first cut at their products.
FIT_FROM = 16
FIT_MOST = 120
#: The size of scripts, and of what a fraction holds outside display style.
_SCRIPT = 0.71
_EM_LENGTH = re.compile(r"\s*(\d*\.?\d+)\s*em\s*")

#: CommonMark with tables and strikethrough; no raw HTML, nothing that links or loads.
_MARKDOWN = (MarkdownIt("commonmark", {"html": False, "breaks": True, "xhtmlOut": False})
             .enable(["table", "strikethrough"])
             .disable(["link", "image", "autolink", "reference", "html_block", "html_inline"]))
#: Code points for placeholders: private use, so no real text has them (one absent is picked).
_PRIVATE_USE = (range(0xE000, 0xF900), range(0xF0000, 0xFFFFE), range(0x100000, 0x10FFFE))


@lru_cache(maxsize=4096)
def to_html(text: str | None) -> str:
    """``text`` as an HTML fragment: Markdown as HTML, escaped text and MathML formulas.

    Cached: a question and its reference solution are shown again with each of its responses,
    and the workbench renders every part of a response on each move.
    """
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    free = (chr(c) for c in chain(*_PRIVATE_USE) if chr(c) not in text)
    display_mark, inline_mark = next(free), next(free)
    sources: list[str] = []
    formulas: list[str] = []
    marked: list[str] = []
    position = 0
    for start, end, display, latex in _formulas(text):
        mark = display_mark if display else inline_mark
        marked += [text[position:start], f"{mark}{len(sources)}{mark}"]
        sources.append(text[start:end])
        formulas.append(_formula_html(text[start:end], latex, display))
        position = end
    marked.append(text[position:])
    placeholder = re.compile(f"([{display_mark}{inline_mark}])(\\d+)\\1")
    tokens = _MARKDOWN.parse("".join(marked))
    _adapt(tokens, lambda code: placeholder.sub(lambda m: sources[int(m[2])], code))
    if [token.type for token in tokens] == ["paragraph_open", "inline", "paragraph_close"]:
        tokens = tokens[1:2]  # one paragraph: its content alone, to sit in a line or a cell
    rendered = _MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {})
    if not sources:
        return rendered
    # Display maths is a block of its own: the line breaks beside it would add empty lines.
    return re.sub(f"(<br>\n)?([{display_mark}{inline_mark}])(\\d+)\\2(<br>\n)?",
                  lambda m: formulas[int(m[3])] if m[2] == display_mark
                  else f"{m[1] or ''}{formulas[int(m[3])]}{m[4] or ''}", rendered)


def _formulas(text: str) -> list[tuple[int, int, bool, str]]:
    """Where the formulas are, in order: (start, end, display, LaTeX), bare lines included."""
    found = [(match.start(), match.end(), True, match["display"][2:-2]) if match["display"]
             else (match.start(), match.end(), False, match["inline"][2:-2]
                   if match["inline"][0] == "\\" else match["inline"][1:-1])
             for match in _DELIMITED.finditer(text) if not match["escaped_dollar"]]
    if "\\" not in text:
        return found
    starts = [start for start, *_ in found]
    bare = []
    for line in _BARE_LINE.finditer(text):
        latex = line["latex"].rstrip()
        after = bisect_right(starts, line.start())
        if (_NOT_BARE.search(line[0]) or (after and found[after - 1][1] > line.start())
                or (after < len(found) and found[after][0] < line.end())
                or _is_prose(latex) or _pieces_html(latex, False) is None):
            continue
        bare.append((line.start("latex"), line.start("latex") + len(latex), False, latex))
    return sorted(found + bare) if bare else found


def _is_prose(line: str) -> bool:
    """Whether two ordinary words stand side by side once commands and brace groups are gone."""
    depth = 0
    outside = []
    for part in re.split(r"([{}])", line):
        if part == "{":
            depth += 1
        elif part == "}":
            depth = max(depth - 1, 0)
        elif depth == 0:
            outside.append(part)
    return bool(_TWO_WORDS.search(_COMMAND.sub(" ", " ".join(outside))))


def _formula_html(source: str, latex: str, display: bool) -> str:
    """A formula as MathML pieces, or as its escaped source (``source`` keeps its delimiters)."""
    pieces = _pieces_html(latex, display)
    if pieces is None:
        shown = f'<code class="tex-error" title="Not shown as a formula">{_text_html(source)}</code>'
        return f'<span class="display-math">{shown}</span>' if display else shown
    groups, widest = pieces
    if display:
        fit = f" fit-{min(2 * ceil(widest / 2), FIT_MOST)}" if widest > FIT_FROM else ""
        rows = "".join(f'<span class="piece">{"".join(group)}</span>' for group in groups)
        return f'<span class="display-math{fit}">{rows}</span>'
    return "<wbr>".join(piece for group in groups for piece in group)


@lru_cache(maxsize=4096)
def _pieces_html(latex: str, display: bool) -> tuple[tuple[tuple[str, ...], ...], float] | None:
    """The formula split at relations, each part at plus and minus and each piece still too wide
    at its products, as MathML, with the estimated width of the widest piece; whole (cut at its
    products only) if a piece does not convert; None if the formula does not convert either."""
    groups = [_split(part, _BINARY_OPERATORS) for part in _split(latex, _RELATIONS)]
    converted = [[_narrowed(piece, display, (g, p) != (0, 0)) for p, piece in enumerate(group)]
                 for g, group in enumerate(groups)]
    if any(pieces is None for group in converted for pieces in group):
        whole = _narrowed(latex, display, False)
        if whole is None:
            return None
        converted = [[whole]]
    return (tuple(tuple(markup for pieces in group if pieces for markup, _ in pieces)
                  for group in converted),
            max(width for group in converted for pieces in group if pieces for _, width in pieces))


def _narrowed(latex: str, display: bool, continuation: bool) -> list[tuple[str, float]] | None:
    """A piece as MathML; one estimated wider than ``FIT_FROM`` em cut before each top-level
    multiplication sign and between juxtaposed factors, so that a long product wraps (kept whole
    if a factor does not convert). None if the piece does not convert."""
    piece = _piece(latex, display, continuation)
    if piece is None or piece[1] <= FIT_FROM:
        return None if piece is None else [piece]
    factors = _split(latex, _MULTIPLICATION, juxtaposed=True)
    narrowed = [_piece(factor, display, continuation if f == 0 else
                       next(_LATEX_TOKEN.finditer(factor))[0] in _MULTIPLICATION)
                for f, factor in enumerate(factors)]
    done = [factor for factor in narrowed if factor is not None]
    return done if 1 < len(done) == len(factors) else [piece]


def _split(latex: str, operators: frozenset[str], juxtaposed: bool = False) -> list[str]:
    """``latex`` cut before each top-level operator in ``operators`` that follows an operand and,
    if ``juxtaposed``, before each top-level factor that follows one (a function or big operator
    keeps its first factor; digits, arguments and scripts stay with what they belong to)."""
    cuts = [0]
    depth = 0
    previous: str | None = None
    delimiter = False  # the token after \left, \big... is its delimiter, not a bracket
    prefix = False  # a function or big operator waits for the factor it applies to
    for match in _LATEX_TOKEN.finditer(latex):
        token = match[0]
        if token.isspace() or token in _SPACING:
            continue
        if delimiter:
            delimiter = False
            if previous != r"\right":  # what \right closes is an operand, whatever its delimiter
                previous = token
            continue
        if depth == 0 and token in _UNSPLITTABLE:
            return [latex]
        if depth == 0 and previous is not None:
            if token in operators and previous not in _NO_OPERAND:
                cuts.append(match.start())
            elif juxtaposed and _starts_factor(token, previous):
                if prefix:
                    prefix = False
                elif _ends_operand(previous):
                    cuts.append(match.start())
        prefix = prefix or (depth == 0 and token in _PREFIX)
        if token in _OPENING:
            depth += 1
        elif token in _CLOSING:
            depth -= 1
            if depth < 0:
                return [latex]
        delimiter = token in _SIZED
        previous = token
    if depth or len(cuts) == 1:
        return [latex]
    return [latex[start:end] for start, end in zip(cuts, cuts[1:] + [len(latex)])]


def _starts_factor(token: str, previous: str) -> bool:
    """Whether ``token`` may start a factor after ``previous``: a letter, a number, a command
    that is no operator, or a bracket after a bracket (``f(x)`` is one factor, ``(a)(b)`` two);
    not a script or an argument."""
    if previous in ("^", "_") or previous in _TAKES_ARGUMENT:
        return False
    if token in ("(", r"\left"):
        return previous in (")", "]", r"\right") or previous in _PREFIX
    if token[0] == "\\":
        return token[1:].isalpha() and token not in _NOT_STARTING
    return token.isalpha() or (token.isdigit() and not (previous.isdigit() or previous == "."))


def _ends_operand(token: str) -> bool:
    """Whether a factor may end with ``token`` (not with an operator, a script sign, an argument
    command or an opening bracket)."""
    if token in (")", "]", "}", "!", "'", r"\right"):
        return True
    if token[0] == "\\":
        return token[1:].isalpha() and token not in _NOT_ENDING
    return token.isalnum()


@lru_cache(maxsize=8192)
def _piece(latex: str, display: bool, continuation: bool) -> tuple[str, float] | None:
    """A formula or piece of one as safe MathML, with its estimated width in em; None if it
    cannot be converted or uses anything refused. A piece that continues a formula keeps its
    leading operator infix (alone at the start it would be spaced as a sign).

    Cached, because the same formulas recur across responses and every view re-renders them.
    """
    tree = _convert(latex, display)
    if tree is None:
        return None
    first = next(element for element in tree.iter() if len(element) == 0)
    if continuation and first.tag == "mo":
        first.set("form", "infix")
        row = tree[0] if len(tree) == 1 and tree[0].tag == "mrow" else tree
        if row[0] is first and all(map(_space_like, row[1:])):
            # An operator beside text only ("= \text{kg}") makes its row an operator, which
            # is spaced as a whole; an empty identifier keeps the spacing around the operator.
            SubElement(row, "mi")
    return _serialise(tree), _width(tree)


def _space_like(element: Element) -> bool:
    """MathML Core's space-like elements: text and space, and rows made only of them."""
    return element.tag in ("mtext", "mspace") or (
        element.tag in ("mrow", "mstyle", "mphantom", "mpadded")
        and all(map(_space_like, element)))


def latex_to_mathml(latex: str, display: bool) -> str | None:
    """One formula as safe MathML, or None if it cannot be converted or uses anything refused."""
    piece = _piece(latex, display, False)
    return None if piece is None else piece[0]


def _convert(latex: str, display: bool) -> Element | None:
    """The converter's checked element tree for ``latex``; None if refused or not converted."""
    if _MACRO_DEFINITION.search(latex):
        return None
    latex = _SYNONYM_ENVIRONMENT.sub(lambda m: rf"\{m[1]}{{{_ENVIRONMENT_SYNONYMS[m[2]]}}}", latex)
    try:
        tree = convert_to_element(latex, display="block" if display else "inline")
    except Exception:  # the converter fails in many ways on bad LaTeX; none may reach the caller
        return None
    return tree if _is_allowed(tree) else None


def _width(element: Element, scale: float = 1.0, display: bool = True) -> float:
    """Roughly how wide ``element`` renders, in em of the formula's font: enough to tell which
    pieces need shrinking to fit a pane, and by about how much."""
    tag, children = element.tag, list(element)
    if tag in ("mi", "mn", "mtext", "ms"):
        return scale * (0.6 if tag == "mi" else 0.55) * len(html.unescape(element.text or ""))
    if tag == "mo":
        text = html.unescape(element.text or "")
        return scale * (0.6 * len(text) + (0 if text in "()[]{}|‖⟨⟩" else 0.5))
    if tag == "mspace":
        length = _EM_LENGTH.fullmatch(element.get("width", ""))
        return scale * float(length[1]) if length else 0.0
    if tag == "mstyle":
        display = element.get("displaystyle", str(display).lower()) == "true"
        scale = 1.0 if element.get("scriptlevel") == "0" else scale
    widths = [_width(child, scale, display) for child in children]
    scripts = [_width(child, scale * _SCRIPT, False) for child in children[1:]]
    if tag in ("msub", "msup", "msubsup") and widths:
        return widths[0] + max(scripts, default=0.0) + 0.1
    if tag in ("munder", "mover", "munderover") and widths:
        return max([widths[0], *scripts])
    if tag == "mfrac":
        inner = [_width(child, scale if display else scale * _SCRIPT, False) for child in children]
        return max(inner, default=0.0) + 0.3
    if tag == "msqrt":
        return sum(widths) + 1.0
    if tag == "mroot" and widths:
        return widths[0] + 1.0 + max(scripts, default=0.0)
    if tag == "mtable":
        return max((sum(_width(cell, scale, display) + 0.8 for cell in row) for row in children),
                   default=0.0)
    return sum(widths) + (0.6 if tag == "menclose" else 0.0)


def _adapt(tokens: list[Token], restore: Callable[[str], str]) -> None:
    """Fit parsed Markdown to the reading: headings below the page's own, code showing the
    formulas in it as written, no language name (the one attribute text could set) and table
    alignment as a class, so the output has no style attribute."""
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(int(token.tag[1]) + 3, 6)}"
        elif token.type in ("th_open", "td_open") and "style" in token.attrs:
            token.attrs = {"class": str(token.attrs["style"]).replace("text-align:", "align-")}
        elif token.type in ("fence", "code_block"):
            token.info = ""
            token.content = restore(token.content)
        for child in token.children or ():
            if child.type == "code_inline":
                child.content = restore(child.content)


def _text_html(text: str) -> str:
    return html.escape(text, quote=True).replace("\n", "<br>")


def _is_allowed(tree: Element) -> bool:
    for element in tree.iter():
        if element.tag not in ALLOWED_ELEMENTS:
            return False
        for name, value in element.attrib.items():
            if name == "xmlns":
                if value != MATHML_NAMESPACE:
                    return False
            elif name not in ALLOWED_ATTRIBUTES or not _SAFE_ATTRIBUTE_VALUE.fullmatch(value):
                return False
    return True


def _serialise(element: Element) -> str:
    """MathML markup for an allowed tree, escaping all text.

    latex2mathml stores characters in element text as references ("&#x0003C;") mixed with raw
    text, so text is unescaped once and then escaped: "<" in the input can only come out as "&lt;".
    """
    attributes = "".join(f' {name}="{html.escape(value, quote=True)}"'
                         for name, value in element.attrib.items())
    children = "".join(_serialise(child) for child in element)
    return (f"<{element.tag}{attributes}>{_escape_text(element.text)}{children}</{element.tag}>"
            f"{_escape_text(element.tail)}")


def _escape_text(text: str | None) -> str:
    return html.escape(html.unescape(text), quote=True) if text else ""
