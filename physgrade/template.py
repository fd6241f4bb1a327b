"""Parse solutions written in the study's three-part template and decide template compliance.

Reference solutions and model responses are meant to follow::

    Problem Formulation:  (Given / Find / Approach / Assumptions)
    Step-by-step Detailed Solution:  (Step N: Reasoning / General Formula /
                                      Substitution / Calculation / Result)
    Final Answer:

Model output bends this in many ways (markdown headings, bold labels, other cases,
dashes instead of colons, numbered lists instead of ``Step N``), so labels are recognised
leniently but only at the start of a line. Sections are kept as character offsets into the
original text, not copies: the database stores them compactly and the UI can highlight them.

Imports parse tens of thousands of responses at once, so all labels of a text are found by
one pass of one compiled expression and the rest works on the few matches only.
"""

from __future__ import annotations

import re
import sys
from array import array
from bisect import bisect_left
from dataclasses import dataclass

__all__ = ["Span", "Step", "ParsedSolution", "parse_solution", "scan", "from_stored", "section_text"]


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range [start, end) of the original text.

    It covers a part's content after its label, stripped of surrounding whitespace.
    """

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Step:
    """One solution step; ``parts`` maps reasoning, general_formula, substitution, calculation
    and result to spans."""

    number: int  # as written, or the running count when unnumbered
    span: Span  # the whole step's content
    parts: dict[str, Span]


@dataclass(frozen=True, slots=True)
class ParsedSolution:
    """Where the template's parts sit in one text, as character offsets into it."""

    formulation: Span | None
    formulation_parts: dict[str, Span]
    solution: Span | None
    steps: tuple[Step, ...]
    final_answer: Span | None

    @property
    def compliant(self) -> bool:
        """Whether formulation, solution and final answer are labelled, non-empty and in that order."""
        return _compliant(self.formulation, self.solution, self.final_answer)


def _compliant(formulation: Span | None, solution: Span | None, final: Span | None) -> bool:
    """The study's template compliance: three labelled, non-empty sections, in order."""
    if formulation is None or solution is None or final is None:
        return False
    if formulation.start == formulation.end or solution.start == solution.end or final.start == final.end:
        return False
    return formulation.end <= solution.start and solution.end <= final.start


# --- the label expression -------------------------------------------------------------------
#
# A label line: indentation and blockquote marks, an optional markdown heading, optional bullets
# or bold markers, the label words, then a separator. The separator is what keeps prose out: a
# colon, a dash followed by a space, or the end of the line; a markdown heading may also carry a
# title after the label. Numbered list items (candidate steps) may be indented by one space at
# most: models indent the sub-lists inside a step by two to four.
#
# Repetitions are possessive (*+) so that no line, however degenerate, makes the engine backtrack
# over it more than once: small models sometimes emit thousands of dashes, spaces or newlines.
#
# Speed: the regex engine skips an alternative at once when its first item is a plain character
# class that fails, but not when it starts with a group or a case-insensitive literal. So every
# alternative starts with its first letter as a class like [Gg], and the named group that tells
# the kind follows it (and is the last group to close, so ``match.lastindex`` names it). Kinds
# that have several spellings get numbered group names, mapped back in _Grammar.of.

# Outline labels place the three sections and the steps: they alone decide template compliance,
# and imports store them. Part labels (and numbered list items) cut sections into their parts;
# they are looked for only when a text is read. An import of 58,000 responses needs only the
# outline: a second, smaller expression with far fewer matches, about three times quicker.
_OUTLINE_WORDS: tuple[tuple[str, str], ...] = (
    ("formulation", r"problem[ \t]+formulation"),
    ("formulation", r"formulation"),
    ("solution", r"step[ \t]*+-?[ \t]*+by[ \t]*+-?[ \t]*+step[ \t]+(?:detailed[ \t]+)?solutions?"),
    ("solution", r"detailed[ \t]+(?:step[ \t]*+-?[ \t]*+by[ \t]*+-?[ \t]*+step[ \t]+)?solutions?"),
    ("solution", r"solutions?"),
    ("final", r"final[ \t]+answers?"),
    ("answer", r"answers?"),
    ("given", r"given"),
    ("find", r"find"),
)
_PART_WORDS: tuple[tuple[str, str], ...] = (
    ("approach", r"approach"),
    ("assumptions", r"assumptions?"),
    ("reasoning", r"reasoning"),
    ("general_formula", r"general[ \t]+formula[es]?"),
    ("substitution", r"substitutions?"),
    ("calculation", r"calculations?"),
    ("result", r"results?"),
)


def _alternative(group: str, words: str) -> str:
    """``[Ww](?P<group>(?i:ords))``: first letter as a class the engine can test fast, rest in any case."""
    first = words[0]
    return f"[{first.upper()}{first}](?P<{group}>(?i:{words[1:]}))"


_RULE = r"[ \t\r\-*_]*+"  # a blank line or a markdown horizontal rule ("---", "* * *")
_SETEXT = r"(?:\n[ \t]*+(?:-{3,}+|={3,}+)[ \t\r]*+$)?"  # the underline of a "Label\n-----" heading
_PREFIX = r"[ \t>]*+(?:(?P<hash>\#{1,6})[ \t]*+)?[*_+\- \t]*+"
_HEADING_TITLE = r"(?(hash)\b[^\n]*|(?!))"  # "## Solution using energy": the title is label, not content
_SEP = rf"(?: [*_]*+[ \t]*+(?: [:：][*_]*+ | [-–—](?=[ \t]) | [*_\#\t \r]*+${_SETEXT} ) | {_HEADING_TITLE} )[ \t]*+"
_STEP_SEP = rf"""(?: [*_]*+[ \t]*+(?: [:：)][*_]*+ | \.(?!\d)[*_]*+ | [-–—](?=[ \t]) | [*_\#\t \r]*+${_SETEXT} )
                   | (?:\*\*|__) | {_HEADING_TITLE} )[ \t]*+"""
_STEP = rf"| [Ss](?P<step>(?i:tep)(?:[ \t]*+\d{{1,4}})?) {_STEP_SEP}"
_ITEM = r"| [ ]?(?:\*\*|__)?(?P<item>\d{1,3})[.)](?:\*\*|__)?(?=[ \t])"
_FLAGS = re.MULTILINE | re.VERBOSE


@dataclass(frozen=True, slots=True)
class _Grammar:
    """One label expression in two forms, and the kind each of its groups stands for.

    The form that starts with a literal "\n" lets the regex engine jump from line to line; the
    other covers the first line of the text. A match of the first form starts right after the
    previous content line, taking in up to three blank lines or horizontal rules ("---") that
    models put between sections, so the content before it needs little stripping.
    """

    first_line: re.Pattern[str]
    other_lines: re.Pattern[str]
    kind_of_index: dict[int, str]  # the kind group closes last, so lastindex names it

    @classmethod
    def of(cls, words: tuple[tuple[str, str], ...], steps: bool, items: bool) -> "_Grammar":
        alternatives = " | ".join(_alternative(f"{kind}{i}", w) for i, (kind, w) in enumerate(words))
        body = rf"""
(?:
  {_PREFIX}
  (?:
      (?: {alternatives} ) {_SEP}
    {_STEP if steps else ""}
  )
  {_ITEM if items else ""}
)
"""
        first_line = re.compile(body, _FLAGS)
        other_lines = re.compile(rf"\n(?:{_RULE}\n){{0,3}}+" + body, _FLAGS)
        kind_of_group = {f"{kind}{i}": kind for i, (kind, _) in enumerate(words)}
        kind_of_group |= {"step": "step", "item": "item"}
        return cls(first_line, other_lines, {index: kind_of_group[name] for name, index
                                             in other_lines.groupindex.items()
                                             if name in kind_of_group})

    def find(self, text: str) -> list[Label]:
        """Every label of this grammar in ``text``, in order."""
        kind_of = self.kind_of_index
        found = [(kind_of[m.lastindex],) + m.span() for m in self.other_lines.finditer(text)]  # type: ignore[index]
        if first := self.first_line.match(text):
            found.insert(0, (kind_of[first.lastindex], 0, first.end()))  # type: ignore[index]
        return found


_TOP = frozenset(("formulation", "solution", "final"))
_FORMULATION_PARTS = frozenset(("given", "find", "approach", "assumptions"))
_STEP_PARTS = frozenset(("reasoning", "general_formula", "substitution", "calculation", "result"))
# A repeated label this close after an empty one replaces it (bounds the work on degenerate text).
_MERGE_GAP = 80
_STEP_NUMBER = re.compile(r"(?i:step)[ \t]*(\d*)|(\d+)")  # in a step label, or a list item's number

# Building frozen dataclasses through their __init__ costs about a microsecond each on the study
# machines (every field goes through object.__setattr__); a parse builds ~30 spans, so that alone
# would take half the time budget. Filling the slots directly builds equal objects in half the time.
_new = object.__new__
_set_start = Span.__dict__["start"].__set__  # the slots' member descriptors
_set_end = Span.__dict__["end"].__set__


def _span(text: str, start: int, end: int) -> Span:
    """The content of text[start:end] without surrounding whitespace; empty content keeps its position.

    Walks inwards character by character instead of slicing: sections are long and the whitespace
    left at their ends by the label expression is short. A "**" closing a bold label line is
    dropped as well.
    """
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if text.endswith("**", start, end) and text.count("**", start, end) % 2:
        # "**Final Answer: 5 m/s**": the bold opened before the label closes here
        end -= 2
        while end > start and text[end - 1].isspace():
            end -= 1
    span = _new(Span)
    _set_start(span, start)
    _set_end(span, end)
    return span


# A label as found: (kind, boundary, content start). The boundary is where the label's line
# begins (its preceding newline), which is where the content before it ends.
Label = tuple[str, int, int]

# Stored label kinds are these codes (see scan): append new kinds, never reorder.
_KINDS = ("formulation", "solution", "final", "answer", "given", "find", "approach", "assumptions",
          "reasoning", "general_formula", "substitution", "calculation", "result", "step", "item")
_KIND_CODE = {kind: code for code, kind in enumerate(_KINDS)}
_BIG_ENDIAN = sys.byteorder == "big"

_OUTLINE = _Grammar.of(_OUTLINE_WORDS, steps=True, items=False)
_OUTLINE_KINDS = frozenset(kind for kind, _ in _OUTLINE_WORDS) | {"step"}
_PARTS = _Grammar.of(_PART_WORDS, steps=False, items=True)


def _parts(text: str, labels: list[Label], starts: list[int], lo: int, hi: int) -> dict[str, Span]:
    """Sub-part spans of the labels in [lo, hi): each runs to the next sub-label; the first of a kind wins."""
    i, j = bisect_left(starts, lo), bisect_left(starts, hi)
    parts: dict[str, Span] = {}
    for k in range(i, j):
        kind, _, content = labels[k]
        if kind not in parts:
            parts[kind] = _span(text, content, starts[k + 1] if k + 1 < j else hi)
    return parts


@dataclass(slots=True)
class _Layout:
    """The three top-level sections and the labels inside them, before sub-parts are cut."""

    formulation: Span | None
    formulation_bounds: tuple[int, int]  # from its label's line to its last content
    solution: Span | None
    lo: int  # where steps may start
    hi: int  # where steps must end
    final_answer: Span | None
    fparts: list[Label]  # Given and Find (the other formulation parts are not outline labels)
    steps: list[tuple[int | None, int, int]]
    top_starts: list[int]

    @property
    def compliant(self) -> bool:
        """Whether formulation, solution and final answer are labelled, non-empty and in that order."""
        return _compliant(self.formulation, self.solution, self.final_answer)


def _layout(text: str, found: list[Label]) -> _Layout:
    """Place the top-level sections from the outline labels ``found``.

    Rules that matter to users:
    - the first label of each section kind opens that section; later ones of the same kind are
      content (a label repeated right after an empty one, like ``## Final Answer`` followed by
      ``**Final Answer:** ...``, moves the section start past the second label);
    - a bare ``Answer:`` counts as the final answer only when no ``Final Answer`` label exists and
      no other outline label follows it;
    - without a formulation heading, ``Given:`` and ``Find:`` opening the text (both before the
      solution) make the formulation, starting at the first of them;
    - ``Step N`` labels outside a labelled solution section still give steps, but no compliance;
    - numbered list items become steps only inside a labelled solution with no ``Step N`` labels.
    """
    tops: dict[str, list[int]] = {}  # kind -> [boundary, content start]
    last_top = ""
    fparts: list[Label] = []
    steps: list[tuple[int | None, int, int]] = []
    first_kind = found[0][0] if found else ""
    last_label: Label | None = found[-1] if found else None
    for label in found:
        kind, at, content = label
        if kind in _TOP:
            seen = tops.get(kind)
            if seen is None:
                tops[kind] = [at, content]
                last_top = kind
            elif (kind == last_top and at - seen[1] < _MERGE_GAP
                  and not text[seen[1]:at].strip(" \t\r\n*_#>-")):
                seen[1] = content
        elif kind in _FORMULATION_PARTS:
            fparts.append(label)
        elif kind == "step":
            steps.append((None, at, content))

    if "final" not in tops and last_label is not None and last_label[0] == "answer":
        tops["final"] = [last_label[1], last_label[2]]

    if "formulation" not in tops and first_kind in ("given", "find"):
        limit = min([v[0] for k, v in tops.items()] + [s[1] for s in steps[:1]] + [len(text)])
        if {"given", "find"} <= {lab[0] for lab in fparts if lab[1] < limit}:
            tops["formulation"] = [fparts[0][1], fparts[0][1]]

    top_starts = sorted(v[0] for v in tops.values())
    n = len(text)

    def section_end(at: int) -> int:
        return next((s for s in top_starts if s > at), n)

    formulation = solution = final_answer = None
    formulation_bounds = (0, 0)
    if f := tops.get("formulation"):
        end = section_end(f[0])
        end = next((s[1] for s in steps if f[0] < s[1] < end), end)
        formulation_bounds = (f[0], end)
        formulation = _span(text, f[1], end)

    if s := tops.get("solution"):
        lo, hi = s[1], section_end(s[0])
        solution = _span(text, lo, hi)
    else:
        lo, hi = (formulation.end if formulation else 0), n
        if (a := tops.get("final")) and a[0] >= lo:
            hi = a[0]

    if a := tops.get("final"):
        final_answer = _span(text, a[1], section_end(a[0]))
    return _Layout(formulation, formulation_bounds, solution, lo, hi, final_answer, fparts,
                   steps, top_starts)


def _assemble(text: str, outline: list[Label]) -> ParsedSolution:
    """Cut the sections, their sub-parts and the steps, from the outline labels of ``text``."""
    layout = _layout(text, outline)
    parts = _PARTS.find(text)
    formulation_parts: dict[str, Span] = {}
    if layout.formulation is not None:
        fparts = sorted(layout.fparts + [p for p in parts if p[0] in _FORMULATION_PARTS],
                        key=lambda label: label[1])
        formulation_parts = _parts(text, fparts, [lab[1] for lab in fparts],
                                   *layout.formulation_bounds)
    lo, hi = layout.lo, layout.hi
    chosen = [st for st in layout.steps if lo <= st[1] < hi]
    if not chosen and layout.solution is not None:
        chosen = [(None, at, content) for kind, at, content in parts
                  if kind == "item" and lo <= at < hi]
    sparts = [p for p in parts if p[0] in _STEP_PARTS]
    spart_starts = [lab[1] for lab in sparts]
    parsed_steps = []
    for i, (_, at, content) in enumerate(chosen):
        stop = chosen[i + 1][1] if i + 1 < len(chosen) else hi
        number = _STEP_NUMBER.search(text, at, content)
        written = number.group(1) or number.group(2) if number else None
        parsed_steps.append(
            Step(
                int(written) if written else i + 1,
                _span(text, content, stop),
                _parts(text, sparts, spart_starts, at, stop),
            )
        )
    return ParsedSolution(layout.formulation, formulation_parts, layout.solution,
                          tuple(parsed_steps), layout.final_answer)


def parse_solution(text: str) -> ParsedSolution:
    """Locate the template's sections, sub-parts and steps in ``text`` (see :func:`_layout`)."""
    return _assemble(text, _OUTLINE.find(text))


def scan(text: str) -> tuple[bytes, bool]:
    """What an import stores of a text: its outline labels, packed, and template compliance.

    The outline (sections and steps) is all that compliance depends on; the parts within the
    sections are cut when a text is read (:func:`from_stored`). That keeps an import of tens of
    thousands of responses fast. Each label is three little-endian uint32: kind code, line
    start, content start.
    """
    outline = _OUTLINE.find(text)
    packed = array("I", [v for kind, at, content in outline
                         for v in (_KIND_CODE[kind], at, content)])
    if _BIG_ENDIAN:
        packed.byteswap()
    return packed.tobytes(), _layout(text, outline).compliant


def from_stored(text: str, stored: bytes) -> ParsedSolution:
    """The parsed solution of ``text`` from what :func:`scan` stored for it."""
    flat = array("I")
    flat.frombytes(stored)
    if _BIG_ENDIAN:
        flat.byteswap()
    labels = [(_KINDS[flat[i]], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]
    # Only outline labels are stored; anything else (from an older store) is found afresh.
    return _assemble(text, [label for label in labels if label[0] in _OUTLINE_KINDS])


def section_text(text: str, span: Span | None) -> str:
    """The text a span covers; "" for a missing section so callers need no None checks."""
    return "" if span is None else text[span.start : span.end]
