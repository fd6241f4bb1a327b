"""The final answer a response states, found the way a reader would look for it.

In order: the template's ``Final Answer:`` section (and within it the rules below), ``\\boxed{}``,
"the answer is X" or "ANSWER: X", the whole text if it is a short formula, and finally the last
number with its unit. Finding nothing is a result (``no_answer``), not an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .. import template
from . import latex

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
    rf"(?P<unit>{_SPACE}(?:\\(?:text|mathrm)\s*\{{[^{{}}]*\}}|[A-Za-zµμΩ°%][A-Za-z0-9µμΩ°/^·*\-{{}}]*)?)")
#: Inline or display maths in prose: $...$, $$...$$, \(...\), \[...\].
_MATHS = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL)
_UNIT_AFTER = re.compile(r"\s*([A-Za-zµμΩ°%][A-Za-z0-9µμΩ°/^\-]*)")
#: Markdown emphasis around words (**B**, __x__), not a power such as x**2.
_EMPHASIS = re.compile(r"(?<![\w)])(\*\*|__)(?=\S)(.+?)(?<=\S)\1(?![\w(])")

@dataclass(frozen=True)
class Found:
    """The answer text (one part per ``\\boxed``, several for a compound answer) and where it was."""

    parts: tuple[str, ...]
    source: str

    @property
    def text(self) -> str:
        return ", ".join(self.parts)


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
    text = _EMPHASIS.sub(r"\2", text)
    if found := latex.boxed(text):
        return Found(tuple(part.strip() for part in found), source or "boxed")
    if stated := list(_STATED.finditer(text)):
        answer = stated[-1].group("text").strip().rstrip(".。").strip()
        if answer:
            return _within(answer, source or "stated answer")
    if maths := _maths(text):
        return Found(maths, source or "maths in the text")
    if not _PROSE.search(_LATEX_WORDS.sub(" ", text)):
        return Found((text,), source or "whole response")  # a formula, however long
    if quantities := [m for m in _QUANTITY.finditer(text) if m.group("number")]:
        return Found((quantities[-1].group().strip(),), source or "last quantity")
    if len(text) <= 200:
        return Found((text,), source or "whole response")  # a short sentence: read it whole
    return None


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
        parse_unit(word.rstrip(".,;"))
    except latex.Unparseable:
        return False
    return True


def option_letters(text: str, options: str = "ABCDEFGHIJ") -> tuple[str, ...] | None:
    """The option letters an answer names ("B", "(A) and (C)", "C (kelvin)", "Option D"), or None."""
    text = _EMPHASIS.sub(r"\2", text).replace("$", "").strip().rstrip(".")
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
    found = re.findall(pattern, _EMPHASIS.sub(r"\2", text), re.IGNORECASE)
    found = [letter for letter in found if letter in options]
    return (found[-1],) if found else None
