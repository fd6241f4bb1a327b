"""The final answer a response states, found the way a reader would look for it.

In order: the template's ``Final Answer:`` section (and within it the rules below), ``\\boxed{}``,
"the answer is X" or "ANSWER: X", a magnitude with its direction ("130 m at 22.6° north of east"),
the formulas in the text, the whole text if it is a short formula, and finally the last number
with its unit. Markdown around the answer (emphasis, code marks, quote markers, list bullets) is
set aside first. Finding nothing is a result (``no_answer``), not an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .. import template
from . import latex, vector

#: A stated answer: "the answer is", "final answer:", "ANSWER:", "答案是", up to the line's end.
_STATED = re.compile(
    r"(?:\b(?:final\s+)?answer\s*(?:is|=|:)|\bthe\s+result\s+is|答案(?:是|为|:|：))\s*:?\s*(?P<text>[^\n]+)",
    re.IGNORECASE)
#: Responses longer than this are not searched: no model writes a megabyte to answer.
MAX_RESPONSE = 200_000
#: A word of four letters or more standing alone marks a sentence; formulas have none.
_PROSE = re.compile(r"(?:^|(?<=\s))[A-Za-z]{4,}(?=\s|[,.;:!?]|$)")
_LATEX_WORDS = re.compile(r"\\[A-Za-z]+|\\(?:text|mathrm|operatorname)\{[^{}]*\}")
_SPACE = r"(?:\s|\\[,;:! ]|~)*"
_QUANTITY = re.compile(
    r"(?P<number>[-−]?\d+(?:\.\d+)?(?:\s*(?:\\times|×|\\cdot|\*)\s*10\s*\^\s*\{?\s*[-−]?\d+\s*\}?"
    r"|[eE][-+−]?\d+)?)"
    rf"(?P<unit>{_SPACE}(?:\\(?:text|mathrm)\s*\{{[^{{}}]*\}}|[A-Za-zµμΩ°%][A-Za-z0-9µμΩ°/^·*\-{{}}⁰¹²³⁴⁵⁶⁷⁸⁹⁻]*)?)")
#: A magnitude just before a direction: "130 m, " or "15 N at " in "15 N at 30° above ...".
_BEFORE_DIRECTION = re.compile(_QUANTITY.pattern + r"\s*(?:,|@|\bat\b|\bdirected\b|\bpointing\b)?\s*$")
_DELIMITERS = re.compile(r"\$\$?|\\[()\[\]]")
_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
#: Inline or display maths in prose: $...$, $$...$$, \(...\), \[...\].
_MATHS = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_UNIT_AFTER = re.compile(r"\s*([A-Za-zµμΩ°%][A-Za-z0-9µμΩ°/^\-⁰¹²³⁴⁵⁶⁷⁸⁹⁻]*)")
#: Markdown emphasis around words (**B**, *x*, __x__, _x_, ***x***), not a power such as x**2 or a^*, nor
#: a subscript such as v_0 or one after a brace group: in ``\mathbf{e}_{z}, B \mathbf{e}_{y}`` the
#: underscores are subscripts (after "}", before "{"), not emphasis around "{z}, B \mathbf{e}".
_EMPHASIS = re.compile(r"(?<![\w)}\]*^\\])(\*\*\*|___|\*\*|__|\*|_)(?=[^\s*_])(.+?)(?<=[^\s*_\\])\1"
                       r"(?![\w({*])")
#: A quote marker or a list bullet at the start of a line ("> ", "- ", "* ", "1. ").
_LINE_MARKS = re.compile(r"^[ \t]*(?:>[ \t]?)*(?:(?:[-*+•]|\d{1,2}[.)])[ \t]+(?=\S))?", re.MULTILINE)

@dataclass(frozen=True)
class Found:
    """The answer text (one part per ``\\boxed``, several for a compound answer) and where it was.

    ``picked_from`` is the running text an answer was picked out of (None when the response set
    the answer apart itself), so a check can tell whether the pick left other numbers behind.
    """

    parts: tuple[str, ...]
    source: str
    picked_from: str | None = None

    @property
    def text(self) -> str:
        return ", ".join(self.parts)

    def skips_numbers(self, used: Sequence[str]) -> bool:
        """Whether the text the answer was picked out of holds numbers that ``used`` leaves out
        (the last of several quantities, a formula among others): then the pick is a guess."""
        if self.picked_from is None:
            return False
        return len(_NUMBERS.findall(self.picked_from)) > len(_NUMBERS.findall(" ".join(used)))


def final_answer(response: str) -> Found | None:
    """The final answer ``response`` states, or None if it states none."""
    response = response.strip()
    if not response:
        return None
    if len(response) > MAX_RESPONSE:
        raise latex.Unparseable(f"the response is {len(response):,} characters long; at most "
                                f"{MAX_RESPONSE:,} are read")
    if len(response) > 200 or "\n" in response:
        final = template.parse_solution(response).final_answer
        section = template.section_text(response, final).strip()
        if section:
            return _within(section, "final answer section") or Found((section,), "final answer section")
    return _within(response, None)


def _within(text: str, source: str | None) -> Found | None:
    text = without_markdown(text)
    if found := latex.boxed(text):
        return Found(tuple(part.strip() for part in found), source or "boxed")
    if stated := list(_STATED.finditer(text)):
        answer = stated[-1].group("text").strip().rstrip(".。").strip()
        if answer:
            return _within(answer, source or "stated answer")
    if phrase := _vector_phrase(text):
        if _only_punctuation(_DELIMITERS.sub(" ", text).replace(phrase, "", 1)):
            return Found((phrase,), source or "whole response")
        return Found((phrase,), source or "vector in the text", picked_from=text)
    if maths := _maths(text):
        return Found(maths, source or "maths in the text", picked_from=text)
    if not _PROSE.search(_LATEX_WORDS.sub(" ", text)):
        return Found((text,), source or "whole response")  # a formula, however long
    if quantities := [m for m in _QUANTITY.finditer(text) if m.group("number")]:
        return Found((quantities[-1].group().strip(),), source or "last quantity", picked_from=text)
    if len(text) <= 200:
        return Found((text,), source or "whole response")  # a short sentence: read it whole
    return None


def without_markdown(text: str) -> str:
    """``text`` without the Markdown a response may wrap its answer in: ``**130 m**``, ``*x*``,
    ``__x__``, code marks, a "> " quote marker or a list bullet at the start of a line."""
    return _EMPHASIS.sub(r"\2", _LINE_MARKS.sub("", text).replace("`", ""))


def _vector_phrase(text: str) -> str | None:
    """The last magnitude with its direction in running text ("... is 130 m at 22.6° north of
    east."), if the text's last number belongs to it."""
    flat = _DELIMITERS.sub(" ", text)
    directions = list(vector.PHRASE.finditer(flat))
    if not directions or re.search(r"\d", flat[directions[-1].end():]):
        return None
    last = directions[-1]
    magnitude = _BEFORE_DIRECTION.search(flat[max(0, last.start() - 200):last.start()])
    phrase = ((magnitude.group() if magnitude else "") + last.group()).strip()
    return phrase if re.search(r"\d", phrase) else None


def _only_punctuation(text: str) -> bool:
    return not re.search(r"\w", text)


def _maths(text: str) -> tuple[str, ...]:
    """The formulas written in prose, each with a unit written just after it ("$v = 15$ m/s")."""
    found = []
    for match in _MATHS.finditer(text):
        formula = next(group for group in match.groups() if group is not None).strip()
        after = _UNIT_AFTER.match(text, match.end())
        if after and re.search(r"\d\s*$", formula) and _is_unit(after.group(1)):
            formula += " " + after.group(1)
        if formula:
            found.append(formula)
    return tuple(found)


def _is_unit(word: str) -> bool:
    from .units import parse_unit  # pint loads only where a check runs

    try:
        parse_unit(latex.clean(word.rstrip(".,;")))
    except latex.Unparseable:
        return False
    return True


def option_letters(text: str, options: str = "ABCDEFGHIJ") -> tuple[str, ...] | None:
    """The option letters an answer names ("B", "(A) and (C)", "C (kelvin)", "Option D"), or None."""
    text = without_markdown(text).replace("$", "").strip().rstrip(".")
    letters = f"[{options}]"
    alone = rf"[(\[]?{letters}[)\]]?"
    if re.fullmatch(rf"{alone}(?:\s*(?:,|;|&|\band\b|\s)\s*{alone})*", text):
        return tuple(sorted(set(re.findall(letters, text))))
    lead = r"(?:(?:the\s+)?(?:answer|option|choice)(?:\s+is)?\s*:?\s*)?"
    if match := re.match(rf"{lead}[(\[]?({letters})(?:[)\].:]|\s+\(|\s*$)", text, re.IGNORECASE):
        if match.group(1).upper() in options:
            return (match.group(1).upper(),)
    return None


def option_in_text(text: str, options: str = "ABCDEFGHIJ") -> tuple[str, ...] | None:
    """The last option a response names in prose ("... so the answer is (C)", "result: option B")."""
    pattern = rf"\b(?:option|choice|answer)(?:\s+is)?\s*:?\s*[(\[]?([{options}])\b"
    found = re.findall(pattern, without_markdown(text), re.IGNORECASE)
    found = [letter for letter in found if letter in options]
    return (found[-1],) if found else None
