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
_QUANTITY = re.compile(
    r"(?P<number>[-−]?\d+(?:\.\d+)?(?:\s*(?:\\times|×|\\cdot|\*)\s*10\s*\^\s*\{?\s*[-−]?\d+\s*\}?"
    r"|[eE][-+−]?\d+)?)"
    r"(?P<unit>\s*(?:\\(?:text|mathrm)\s*\{[^{}]*\}|[A-Za-zµμΩ°%][A-Za-z0-9µμΩ°/^·*\-{}]*)?)")


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
    if found := latex.boxed(text):
        return Found(tuple(part.strip() for part in found), source or "boxed")
    if stated := list(_STATED.finditer(text)):
        answer = stated[-1].group("text").strip().rstrip(".。").strip()
        if answer:
            return Found((answer,), source or "stated answer")
    if not _PROSE.search(_LATEX_WORDS.sub(" ", text)):
        return Found((text,), source or "whole response")  # a formula, however long
    if quantities := [m for m in _QUANTITY.finditer(text) if m.group("number")]:
        return Found((quantities[-1].group().strip(),), source or "last quantity")
    if len(text) <= 200:
        return Found((text,), source or "whole response")  # a short sentence: read it whole
    return None


def option_letters(text: str, options: str = "ABCDEFGHIJ") -> tuple[str, ...] | None:
    """The option letters an answer names ("B", "(A) and (C)", "Option D: 5 m/s"), or None."""
    text = latex.clean(text).strip()
    letters = f"[{options}]"
    alone = rf"[(\[]?{letters}[)\]]?"
    if re.fullmatch(rf"{alone}(?:\s*(?:,|;|&|\band\b|\s)\s*{alone})*", text):
        return tuple(sorted(set(re.findall(letters, text))))
    if match := re.match(rf"(?:option\s+|choice\s+)?[(\[]?({letters})(?:[)\].:]|\s*$)", text,
                         re.IGNORECASE):
        return (match.group(1).upper(),)
    return None
