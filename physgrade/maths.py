"""Untrusted text with LaTeX maths, as a safe HTML fragment with MathML formulas.

Questions, reference solutions and model responses are plain text that may contain LaTeX between
``$$...$$`` or ``\\[...\\]`` (display) and ``$...$`` or ``\\(...\\)`` (inline). Everything else is
escaped text. The text is untrusted, so a formula is never passed through as the converter wrote
it: latex2mathml copies ``\\text{...}`` verbatim into its markup (``<script>`` included) and turns
``\\href``, ``\\style`` and ``\\class`` into attributes. Instead the converter's element tree (taken
before it is turned into that string, so ``\\text{<b>}`` stays text rather than parsing as a tag) is
checked against allow-lists of MathML presentation elements and attributes, then serialised here
with every text and attribute value escaped. A formula that fails to convert, or is refused, is
shown as its escaped source in ``<code class="tex-error">`` so the reader still sees it.

A single ``$`` follows Pandoc's rule so that prices stay text: the opening ``$`` must not be
followed by a space, and the closing ``$`` must not be preceded by a space nor followed by a digit
("$5 and $6" is text, "$v = 5$ m/s" is maths). ``\\$`` is a literal dollar. As in TeX, no formula
spans a blank line, so a stray dollar cannot swallow the following paragraphs.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache
from xml.etree.ElementTree import Element

from latex2mathml.converter import convert_to_element

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
    (?P<escaped_dollar>\\\$)
  | \n?  # display maths is a block of its own: the line breaks beside it are not kept
    (?P<display>\$\${_DOLLARS_BODY}\$\$ | \\\[{_BRACKETS_BODY}\\\])
    [ \t]*\n?
  | (?P<inline>\\\({_PARENTHESES_BODY}\\\) | \$(?![\s$]){_DOLLAR_BODY}(?<!\s)\$(?!\d))
""", re.DOTALL | re.VERBOSE)


@lru_cache(maxsize=512)
def to_html(text: str | None) -> str:
    """``text`` as an HTML fragment: escaped text, ``<br>`` line breaks and MathML formulas.

    Display formulas are ``<div class="display-math">`` blocks, so embed the result in a ``<div>``.
    Cached: a question and its reference solution are shown again with each of its responses.
    """
    if not text:
        return ""
    text = text.replace("\r\n", "\n")
    parts = []
    position = 0
    for match in _DELIMITED.finditer(text):
        parts.append(_text_html(text[position:match.start()]))
        if match["escaped_dollar"]:
            parts.append("$")
        elif match["display"]:
            parts.append(f'<div class="display-math">{_formula_html(match["display"], True)}</div>')
        else:
            parts.append(_formula_html(match["inline"], False))
        position = match.end()
    parts.append(_text_html(text[position:]))
    return "".join(parts)


@lru_cache(maxsize=4096)
def latex_to_mathml(latex: str, display: bool) -> str | None:
    """One formula as safe MathML, or None if it cannot be converted or uses anything refused.

    Cached, because the same formulas recur across responses and every view re-renders them.
    """
    if _MACRO_DEFINITION.search(latex):
        return None
    latex = _SYNONYM_ENVIRONMENT.sub(lambda m: rf"\{m[1]}{{{_ENVIRONMENT_SYNONYMS[m[2]]}}}", latex)
    try:
        tree = convert_to_element(latex, display="block" if display else "inline")
        return _serialise(tree) if _is_allowed(tree) else None
    except Exception:  # the converter fails in many ways on bad LaTeX; none may reach the caller
        return None


def _formula_html(source: str, display: bool) -> str:
    """A delimited formula (``source`` keeps its delimiters) as MathML, or as its escaped source."""
    delimiter_length = 1 if source[0] == "$" and source[1] != "$" else 2
    mathml = latex_to_mathml(source[delimiter_length:-delimiter_length], display)
    if mathml is None:
        return f'<code class="tex-error" title="Not shown as a formula">{_text_html(source)}</code>'
    return mathml


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
