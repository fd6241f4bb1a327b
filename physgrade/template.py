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

import json
import re
from bisect import bisect_left
from dataclasses import dataclass

__all__ = ["Span", "Step", "ParsedSolution", "parse_solution", "section_text"]


@dataclass(frozen=True, slots=True)
class Span:
    """A half-open character range [start, end) of the original text (the content after the label, stripped of surrounding whitespace)."""

    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Step:
    """One solution step; ``parts`` maps reasoning/general_formula/substitution/calculation/result to spans."""

    number: int  # as written, or the running count when unnumbered
    span: Span  # the whole step's content
    parts: dict[str, Span]


@dataclass(frozen=True, slots=True)
class ParsedSolution:
    """Where the template's parts sit in one text; offsets only, so it is cheap to store."""

    formulation: Span | None
    formulation_parts: dict[str, Span]
    solution: Span | None
    steps: tuple[Step, ...]
    final_answer: Span | None

    @property
    def compliant(self) -> bool:
        """Whether formulation, solution and final answer are labelled, non-empty and in that order."""
        f, s, a = self.formulation, self.solution, self.final_answer
        if f is None or s is None or a is None:
            return False
        if f.start == f.end or s.start == s.end or a.start == a.end:
            return False
        return f.end <= s.start and s.end <= a.start

    def to_json(self) -> str:
        """Compact JSON for the database; absent parts are left out rather than stored as null."""
        data: dict[str, object] = {}
        if self.formulation is not None:
            data["f"] = [self.formulation.start, self.formulation.end]
        if self.formulation_parts:
            data["fp"] = {k: [v.start, v.end] for k, v in self.formulation_parts.items()}
        if self.solution is not None:
            data["s"] = [self.solution.start, self.solution.end]
        if self.steps:
            data["st"] = [
                [st.number, st.span.start, st.span.end, {k: [v.start, v.end] for k, v in st.parts.items()}]
                for st in self.steps
            ]
        if self.final_answer is not None:
            data["a"] = [self.final_answer.start, self.final_answer.end]
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, data: str) -> ParsedSolution:
        """Rebuild exactly what :meth:`to_json` stored."""
        raw = json.loads(data)

        def span(pair: list[int] | None) -> Span | None:
            return None if pair is None else Span(pair[0], pair[1])

        def spans(mapping: dict[str, list[int]]) -> dict[str, Span]:
            return {k: Span(v[0], v[1]) for k, v in mapping.items()}

        return cls(
            formulation=span(raw.get("f")),
            formulation_parts=spans(raw.get("fp", {})),
            solution=span(raw.get("s")),
            steps=tuple(Step(n, Span(s, e), spans(p)) for n, s, e, p in raw.get("st", ())),
            final_answer=span(raw.get("a")),
        )


# --- the label expression -------------------------------------------------------------------
#
# A label line: indentation and blockquote marks, an optional markdown heading, optional bullets
# or bold markers, the label words, then a separator. The separator is what keeps prose out: a
# colon, a dash followed by a space, or the end of the line; a markdown heading may also carry a
# title after the label. Numbered list items (candidate steps) may be indented by one space at
# most: models indent the sub-lists inside a step by two to four.
#
# Speed: the regex engine skips an alternative at once when its first item is a plain character
# class that fails, but not when it starts with a group or a case-insensitive literal. So every
# alternative starts with its first letter as a class like [Gg], and the named group that tells
# the kind follows it (and is the last group to close, so ``match.lastgroup`` names it). Kinds
# that have several spellings get numbered group names, mapped back through _KIND_OF_GROUP.

_LABEL_WORDS: tuple[tuple[str, str], ...] = (
    ("formulation", r"problem[ \t]+formulation"),
    ("formulation", r"formulation"),
    ("solution", r"step[ \t]*-?[ \t]*by[ \t]*-?[ \t]*step[ \t]+(?:detailed[ \t]+)?solutions?"),
    ("solution", r"detailed[ \t]+(?:step[ \t]*-?[ \t]*by[ \t]*-?[ \t]*step[ \t]+)?solutions?"),
    ("solution", r"solutions?"),
    ("final", r"final[ \t]+answers?"),
    ("answer", r"answers?"),
    ("given", r"given"),
    ("find", r"find"),
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


_KIND_OF_GROUP = {f"{kind}{i}": kind for i, (kind, _) in enumerate(_LABEL_WORDS)}
_KIND_OF_GROUP |= {"step": "step", "item": "item"}

_RULE = r"[ \t\r\-*_]*"  # a blank line or a markdown horizontal rule ("---", "* * *")
_SETEXT = r"(?:\n[ \t]*(?:-{3,}|={3,})[ \t\r]*$)?"  # the underline of a "Label\n-----" heading
_PREFIX = r"[ \t>]*(?:(?P<hash>\#{1,6})[ \t]*)?[*_+\- \t]*"
_HEADING_TITLE = r"(?(hash)\b[^\n]*|(?!))"  # "## Solution using energy": the title is label, not content
_SEP = rf"(?: [*_]*[ \t]*(?: [:：][*_]* | [-–—](?=[ \t]) | [*_\#\t \r]*${_SETEXT} ) | {_HEADING_TITLE} )[ \t]*"
_STEP_SEP = rf"""(?: [*_]*[ \t]*(?: [:：)][*_]* | \.(?!\d)[*_]* | [-–—](?=[ \t]) | [*_\#\t \r]*${_SETEXT} )
                   | (?:\*\*|__) | {_HEADING_TITLE} )[ \t]*"""
_BODY = rf"""
(?:
  {_PREFIX}
  (?:
      (?: {" | ".join(_alternative(f"{kind}{i}", words) for i, (kind, words) in enumerate(_LABEL_WORDS))} ) {_SEP}
    | [Ss](?P<step>(?i:tep)(?:[ \t]*\d{{1,4}})?) {_STEP_SEP}
  )
| [ ]?(?:\*\*|__)?(?P<item>\d{{1,3}})[.)](?:\*\*|__)?(?=[ \t])
)
"""
_FLAGS = re.MULTILINE | re.VERBOSE
# Two forms of one expression: the one that starts with a literal "\n" lets the regex engine jump
# from line to line; the other covers the first line of the text. A match of the first form starts
# right after the previous non-blank line, so the content before it needs little stripping.
_FIRST_LINE = re.compile(_BODY, _FLAGS)
_OTHER_LINES = re.compile(rf"\n(?:{_RULE}\n)*" + _BODY, _FLAGS)

_TOP = frozenset(("formulation", "solution", "final"))
_FORMULATION_PARTS = frozenset(("given", "find", "approach", "assumptions"))
_STEP_PARTS = frozenset(("reasoning", "general_formula", "substitution", "calculation", "result"))
_STEP_NUMBER = re.compile(r"(?i:step)[ \t]*(\d*)|(\d+)")  # in a step label, or a list item's number

# Building frozen dataclasses through their __init__ costs about a microsecond each on the study
# machines (every field goes through object.__setattr__); a parse builds ~30 spans, so that alone
# would take half the time budget. Filling the slots directly builds equal objects in half the time.
_new = object.__new__
_set_start = Span.start.__set__  # type: ignore[attr-defined]
_set_end = Span.end.__set__  # type: ignore[attr-defined]


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
        return _span(text, start, end - 2)
    span = _new(Span)
    _set_start(span, start)
    _set_end(span, end)
    return span


# A label as found: (kind, boundary, content start). The boundary is where the label's line
# begins (its preceding newline), which is where the content before it ends.
_Label = tuple[str, int, int]


def _parts(text: str, labels: list[_Label], starts: list[int], lo: int, hi: int) -> dict[str, Span]:
    """Sub-part spans of the labels in [lo, hi): each runs to the next sub-label; the first of a kind wins."""
    i, j = bisect_left(starts, lo), bisect_left(starts, hi)
    parts: dict[str, Span] = {}
    for k in range(i, j):
        kind, _, content = labels[k]
        if kind not in parts:
            parts[kind] = _span(text, content, starts[k + 1] if k + 1 < j else hi)
    return parts


def parse_solution(text: str) -> ParsedSolution:
    """Locate the template's sections, sub-parts and steps in ``text``.

    Rules that matter to users:
    - the first label of each section kind opens that section; later ones of the same kind are
      content (a label repeated right after an empty one, like ``## Final Answer`` followed by
      ``**Final Answer:** ...``, moves the section start past the second label);
    - a bare ``Answer:`` counts as the final answer only when no ``Final Answer`` label exists and
      nothing labelled follows it;
    - without a formulation heading, ``Given:`` and ``Find:`` opening the text (both before the
      solution) make the formulation, starting at the first of them;
    - ``Step N`` labels outside a labelled solution section still give steps, but no compliance;
    - numbered list items become steps only inside a labelled solution with no ``Step N`` labels.
    """
    kind_of = _KIND_OF_GROUP
    found = [(kind_of[m.lastgroup], m.start(), m.end()) for m in _OTHER_LINES.finditer(text)]  # type: ignore[index]
    if first := _FIRST_LINE.match(text):
        found.insert(0, (kind_of[first.lastgroup], 0, first.end()))  # type: ignore[index]

    tops: dict[str, list[int]] = {}  # kind -> [boundary, content start]
    last_top = ""
    fparts: list[_Label] = []
    sparts: list[_Label] = []
    steps: list[tuple[int | None, int, int]] = []
    items: list[tuple[int | None, int, int]] = []
    first_kind = ""
    last_label: _Label | None = None
    for label in found:
        kind, at, content = label
        if kind == "item":
            items.append((None, at, content))
            continue
        first_kind = first_kind or kind
        last_label = label
        if kind in _STEP_PARTS:
            sparts.append(label)
        elif kind in _TOP:
            seen = tops.get(kind)
            if seen is None:
                tops[kind] = [at, content]
                last_top = kind
            elif kind == last_top and not text[seen[1] : at].strip(" \t\r\n*_#>-"):
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
    formulation_parts: dict[str, Span] = {}
    if f := tops.get("formulation"):
        end = section_end(f[0])
        end = next((s[1] for s in steps if f[0] < s[1] < end), end)
        formulation = _span(text, f[1], end)
        formulation_parts = _parts(text, fparts, [lab[1] for lab in fparts], f[0], end)

    if s := tops.get("solution"):
        lo, hi = s[1], section_end(s[0])
        solution = _span(text, lo, hi)
    else:
        lo, hi = (formulation.end if formulation else 0), n
        if (a := tops.get("final")) and a[0] >= lo:
            hi = a[0]

    chosen = [st for st in steps if lo <= st[1] < hi]
    if not chosen and solution is not None:
        chosen = [it for it in items if lo <= it[1] < hi]
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

    if a := tops.get("final"):
        final_answer = _span(text, a[1], section_end(a[0]))

    return ParsedSolution(formulation, formulation_parts, solution, tuple(parsed_steps), final_answer)


def section_text(text: str, span: Span | None) -> str:
    """The text a span covers; "" for a missing section so callers need no None checks."""
    return "" if span is None else text[span.start : span.end]
