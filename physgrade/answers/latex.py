"""Answer text brought to one plain form before it is parsed.

Answers arrive as LaTeX (``\\boxed{\\dfrac{m v^{2}}{2}}``, ``3.2 \\times 10^{-19}\\ \\text{J}``), as
plain text (``mv^2/2``, ``15 m/s``) or as Unicode (``2.5×10⁻³ m``). This module removes what only
affects looks (delimiters, spacing, sizes, fonts), spells Unicode maths as LaTeX, and splits
answers at top-level commas. It works on strings only: nothing here interprets the text.
"""

from __future__ import annotations

import re

#: Longer answers are refused before any parsing: a final answer is a formula, not a page.
MAX_LENGTH = 2000


class Unparseable(ValueError):
    """The text cannot be read as an answer; the message says why, in words."""


_UNICODE = {
    "−": "-", "–": "-", "—": "-", "×": r"\times ", "·": r"\cdot ", "⋅": r"\cdot ", "∙": r"\cdot ",
    "÷": "/", "√": r"\sqrt ", "∞": r"\infty ", "°": r"^\circ ", "µ": r"\mu ", "Ω": r"\Omega ",
    "Å": r"\AA ", "≤": r"\le ", "≥": r"\ge ", "≈": r"\approx ", "≠": r"\ne ", "′": "'", "’": "'",
    "ℏ": r"\hbar ", "∫": r"\int ", "∂": r"\partial ", "∇": r"\nabla ", "ℓ": r"\ell ", "，": ",",
    "（": "(", "）": ")", "：": ":", "。": ".", "⁄": "/", "″": "''",
}
_GREEK = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho " \
         "sigma tau upsilon phi chi psi omega".split()
for _offset, _name in enumerate(_GREEK):
    _UNICODE.setdefault(chr(0x3B1 + _offset + (_offset >= 17)), f"\\{_name} ")  # ς skipped
    _UNICODE.setdefault(chr(0x391 + _offset + (_offset >= 17)), f"\\{_name.capitalize()} ")
_UNICODE.update({"ϕ": r"\phi ", "ϵ": r"\epsilon ", "ϑ": r"\theta ", "μ": r"\mu "})
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_UNICODE_CHARACTER = re.compile("|".join(map(re.escape, _UNICODE)))

#: Commands whose one argument is shown in another font or with a decoration that does not
#: change which quantity is meant (\vec{v} is v); their argument replaces them.
_WRAPPERS = ("text", "textrm", "textit", "textbf", "textnormal", "mathrm", "mathit", "mathbf",
             "mathsf", "mathnormal", "boldsymbol", "bm", "mbox", "operatorname", "vec", "hat",
             "overline", "overrightarrow", "widehat", "tilde", "widetilde", "bar", "mathcal",
             "pmb", "ensuremath", "displaylines")
_WRAPPER = re.compile(r"\\(?:" + "|".join(_WRAPPERS) + r")\s*(?=\{)")
#: Dots over a symbol make another quantity (a velocity, not a position): \dot{x} becomes x_dot.
_DOTS = re.compile(r"\\(dot|ddot)\s*(?=\{)")
#: A decoration without braces (``\\tilde L``, ``\\dot y``, ``\\hat\\theta``) takes one letter or command.
_BARE_DECORATION = re.compile(
    r"\\(vec|hat|tilde|widetilde|widehat|bar|overline|mathbf|boldsymbol|bm|dot|ddot)"
    r"(?![A-Za-z])\s*(\\[A-Za-z]+|[A-Za-z])")
_MARK = r"(?:\s*\^\s*(?:{0}|\{{\s*{0}\s*\}}))"
_MINUTES = r"(?:'(?!')|" + _MARK.format(r"\\prime") + ")"
_SECONDS = r"(?:''|\"|" + _MARK.format(r"\\prime\s*\\prime") + "|" + _MARK.format(r"\\prime") \
    + r"\s*\{\s*\}" + _MARK.format(r"\\prime") + ")"
_ARC_NUMBER = r"(?<![\w.^{])(\d+(?:\.\d+)?)\s*"
#: An angle in degrees, arc minutes and seconds: 1^{\prime} 42^{\prime\prime} (1′42″), 3° 5'.
_DEGREE_MARK = _MARK.format(r"\\circ")
_ARC = re.compile(rf"(?:{_ARC_NUMBER}{_DEGREE_MARK}\s*)?(?:{_ARC_NUMBER}{_MINUTES}\s*)?"
                  rf"(?:{_ARC_NUMBER}{_SECONDS})?")
_OLD_FONT = re.compile(r"\{\\(?:rm|it|bf|mathrm)\s+([^{}]*)\}")
_DROPPED = re.compile(
    r"\\(?:displaystyle|textstyle|scriptstyle|limits|nolimits|[bB]igg?[lrm]?|middle)(?![A-Za-z])"
    r"|\\left(?![A-Za-z])\.?|\\right(?![A-Za-z])\.?|\$|\\[()\[\]]|&|\\\\")
_SPACES = re.compile(r"\\[,;:! ]|\\(?:quad|qquad|enspace|thinspace|medspace|thickspace)(?![A-Za-z])"
                     r"|\\hspace\*?\{[^{}]*\}|~")
#: 1,500 or 12,000,000 (no space after the commas): one number, not a list.
_THOUSANDS = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d.,])")
_FRAC_VARIANTS = re.compile(r"\\[dt]frac(?![A-Za-z])|\\cfrac(?![A-Za-z])")
_GROUPED_DIGITS = re.compile(r"(?<=\d)\{,\}(?=\d)")
_TRAILING = re.compile(r"[\s.;。]+$")


def braced(text: str, start: int) -> tuple[str, int]:
    """The contents of the brace group opening at ``text[start]`` and the index after it."""
    if start >= len(text) or text[start] != "{":
        raise Unparseable("a brace group was expected")
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char == "\\":
            continue
        if char == "{" and text[index - 1] != "\\":
            depth += 1
        elif char == "}" and text[index - 1] != "\\":
            depth -= 1
            if depth == 0:
                return text[start + 1:index], index + 1
    raise Unparseable("unbalanced braces")


def boxed(text: str) -> list[str]:
    """The contents of every ``\\boxed{...}`` (or ``\\fbox{...}``), in order."""
    found = []
    for match in re.finditer(r"\\(?:boxed|fbox)\s*(?=\{)", text):
        try:
            found.append(braced(text, match.end())[0])
        except Unparseable:
            continue
    return found


def _unwrap(text: str, pattern: re.Pattern[str], replace) -> str:
    """Replace each ``\\command{argument}`` that ``pattern`` finds with ``replace(match, argument)``."""
    while match := pattern.search(text):
        argument, end = braced(text, match.end())
        text = text[:match.start()] + replace(match, argument) + text[end:]
    return text


def clean(text: str) -> str:
    """The answer in one plain LaTeX-like form: no boxes, delimiters, spacing or font commands."""
    if len(text) > MAX_LENGTH:
        raise Unparseable(f"the answer is {len(text):,} characters long; at most {MAX_LENGTH:,} "
                          "are read")
    text = _UNICODE_CHARACTER.sub(lambda m: _UNICODE[m.group()], text)
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^{" + m.group().translate(_SUPERSCRIPTS) + "}", text)
    text = _ARC.sub(_arc_degrees, text)
    text = _BARE_DECORATION.sub(r"\\\1{\2}", text)
    if found := boxed(text):
        text = ", ".join(found)
    text = _DROPPED.sub(" ", text)
    text = _SPACES.sub(" ", text)
    text = _FRAC_VARIANTS.sub(r"\\frac", text)
    text = _GROUPED_DIGITS.sub("", text)
    text = _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text)
    text = _OLD_FONT.sub(r"\1", text)
    text = _unwrap(text, _WRAPPER, lambda _m, argument: " " + argument + " ")
    text = _unwrap(text, _DOTS, lambda m, argument: f" {argument.strip()}_{{{m.group(1)}}}")
    text = text.replace("**", "^").replace(r"\%", "%")
    return _TRAILING.sub("", " ".join(text.split()))


def _arc_degrees(match: re.Match[str]) -> str:
    """Degrees, arc minutes and seconds as degrees: 1′42″ is (1/60 + 42/3600)°."""
    degrees, minutes, seconds = match.groups()
    if minutes is None and seconds is None:
        return match.group()
    terms = [term for term in (degrees, minutes and f"{minutes}/60", seconds and f"{seconds}/3600")
             if term]
    return "(" + " + ".join(terms) + ")^{\\circ} "


def split_top_level(text: str, separators: str = ",;") -> list[str]:
    """``text`` split at separators outside brackets and braces (an interval keeps its comma)."""
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth = max(depth - 1, 0)
        elif char in separators and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return [part.strip() for part in parts]
