"""A response's steps, numbered once for everyone who says where its reasoning breaks.

An expert marking the first wrong step, a judge naming it and an imported process-supervision
file all point at steps by number, so the numbering is defined here alone: the template's steps
where the parser found numbered steps, else the response's paragraphs (blocks of text between
blank lines), counted from 1 in the order they appear. The number is the position, not the
number a model wrote: "Step 2, Step 2, Step 3" are steps 1, 2 and 3.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from physgrade.project import Project, ProjectError
from physgrade.template import ParsedSolution, Span, from_stored, section_text

_BLANK_LINES = re.compile(r"\r?\n[ \t\r]*\n")


@dataclass(frozen=True, slots=True)
class ResponseStep:
    """One step: its number (1-based position), the label the reading gives it, where it sits
    in the response and its text."""

    number: int
    label: str
    span: Span
    text: str


def response_steps(text: str, sections: ParsedSolution | None) -> tuple[ResponseStep, ...]:
    """The steps of a response ``text`` whose template parts are ``sections``."""
    if sections is not None and sections.steps:
        return tuple(ResponseStep(n, f"Step {step.number}", step.span,
                                  section_text(text, step.span))
                     for n, step in enumerate(sections.steps, 1))
    found = []
    start = 0
    for match in [*_BLANK_LINES.finditer(text), None]:
        end = match.start() if match else len(text)
        block = text[start:end]
        if block.strip():
            left = start + len(block) - len(block.lstrip())
            right = start + len(block.rstrip())
            found.append(Span(left, right))
        start = match.end() if match else end
    return tuple(ResponseStep(n, f"Paragraph {n}", span, text[span.start:span.end])
                 for n, span in enumerate(found, 1))


def step_label(steps: tuple[ResponseStep, ...], number: int) -> str:
    """How the reading names step ``number`` of ``steps`` ("Step 3", "Paragraph 2")."""
    return next((step.label for step in steps if step.number == number), f"Step {number}")


def stored_steps(text: str, stored: bytes | None) -> tuple[ResponseStep, ...]:
    """The steps of a response as the project stores it: its text and its template labels
    (``responses.sections``; None where not parsed)."""
    return response_steps(text, from_stored(text, stored) if stored else None)


def steps_of(project: Project, response_id: str) -> tuple[ResponseStep, ...]:
    """The steps of the project's response ``response_id``."""
    row = project.conn.execute("SELECT response, sections FROM responses WHERE id = ?",
                               (response_id,)).fetchone()
    if row is None:
        raise ProjectError(f"no response {response_id!r} in this project")
    return stored_steps(*row)
