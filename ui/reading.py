"""A question as rich text for the reading pane: the question, its reference solution laid out by
the template's parts, and the responses.

Every imported string is untrusted and goes through :func:`text` (``html.escape``), so markup in
a response shows as literal characters and nothing is ever loaded. LaTeX stays as source for now.
"""

from __future__ import annotations

from html import escape

from physgrade.queries import QuestionDetail, ResponseSummary
from physgrade.template import ParsedSolution, Span, section_text
from physgrade_ui import style

FORMULATION_PARTS = (("given", "Given"), ("find", "Find"), ("approach", "Approach"),
                     ("assumptions", "Assumptions"))
STEP_PARTS = (("reasoning", "Reasoning"), ("general_formula", "General formula"),
              ("substitution", "Substitution"), ("calculation", "Calculation"),
              ("result", "Result"))

LABEL_WIDTH = 140  # one width for every labelled table, so their columns line up
OPTION_WIDTH = 24

#: Qt's rich text understands a subset of CSS 2; this stays inside it.
DOCUMENT_CSS = f"""
body {{ color: {style.TEXT}; }}
h2 {{ font-size: 14pt; margin: 0 0 4px 0; }}
h3 {{ font-size: 11.5pt; margin: 18px 0 6px 0; color: {style.TEXT}; }}
h4 {{ font-size: 10.5pt; margin: 12px 0 4px 0; color: {style.MUTED}; }}
p {{ margin: 4px 0 8px 0; }}
.meta {{ color: {style.MUTED}; }}
.label {{ color: {style.MUTED}; font-weight: 600; padding-right: 12px; }}
.correct {{ color: {style.GOOD}; font-weight: 600; }}
.good {{ color: {style.GOOD}; background-color: {style.GOOD_BACKGROUND}; }}
.warn {{ color: {style.WARN}; background-color: {style.WARN_BACKGROUND}; }}
"""

PLACEHOLDER = '<p class="meta">Select a question to read it here.</p>'


def text(value: str | None) -> str:
    """Untrusted text as HTML: escaped, line breaks kept."""
    return escape(value or "").replace("\n", "<br>")


def labelled_rows(rows: list[tuple[str, str]], width: int = LABEL_WIDTH) -> str:
    """A two-column table of (label, already escaped HTML) pairs; nothing for no rows."""
    if not rows:
        return ""
    body = "".join(f'<tr><td class="label" valign="top" width="{width}">'
                   f'{escape(label).replace(" ", "&nbsp;")}</td><td>{value}</td></tr>'
                   for label, value in rows)
    return f'<table cellspacing="0" cellpadding="3">{body}</table>'


def question_html(detail: QuestionDetail) -> str:
    """The whole reading pane for one question."""
    return "".join((_heading(detail), _question(detail),
                    _reference(detail.reference_solution, detail.reference_sections),
                    _responses(detail.responses)))


def _heading(detail: QuestionDetail) -> str:
    facts = [detail.topic or "no topic", detail.kind]
    if detail.bloom_cognitive or detail.bloom_knowledge:
        facts.append(" / ".join(filter(None, (detail.bloom_cognitive, detail.bloom_knowledge))))
    if detail.variant_of:
        facts.append(f"variant of {detail.variant_of}")
    if detail.region:
        facts.append(f"region: {detail.region}")
    return (f"<h2>{escape(detail.id)}</h2>"
            f'<p class="meta">{" · ".join(escape(fact) for fact in facts)}</p>')


def _question(detail: QuestionDetail) -> str:
    parts = [f"<p>{text(detail.question)}</p>"]
    if detail.options:
        parts.append(labelled_rows([
            (letter, f'<span class="correct">{text(option)} ✓</span>'
             if letter == detail.answer else text(option))
            for letter, option in detail.options.items()], OPTION_WIDTH))
    answer = [("Answer", text(detail.answer))] if detail.answer else []
    if detail.unit:
        answer.append(("Unit", text(detail.unit)))
    parts.append(labelled_rows(answer))
    return "".join(parts)


def _reference(solution: str | None, sections: ParsedSolution | None) -> str:
    if not solution:
        return '<h3>Reference solution</h3><p class="meta">None given.</p>'
    if sections is None or not sections.compliant:
        return ('<h3>Reference solution</h3><p class="meta">Not in the template; as written:</p>'
                f"<p>{text(solution)}</p>")
    return "<h3>Reference solution</h3>" + solution_html(solution, sections)


def solution_html(solution: str, sections: ParsedSolution) -> str:
    """A template-compliant solution by its parts: formulation, numbered steps, final answer."""
    def part(span: Span | None) -> str:
        return text(section_text(solution, span))

    formulation = labelled_rows([(label, part(sections.formulation_parts[key]))
                                 for key, label in FORMULATION_PARTS
                                 if key in sections.formulation_parts])
    parts = ["<h4>Formulation</h4>", formulation or f"<p>{part(sections.formulation)}</p>"]
    for step in sections.steps:
        rows = [(label, part(step.parts[key])) for key, label in STEP_PARTS if key in step.parts]
        parts += [f"<h4>Step {step.number}</h4>", labelled_rows(rows) or f"<p>{part(step.span)}</p>"]
    if not sections.steps:
        parts += ["<h4>Solution</h4>", f"<p>{part(sections.solution)}</p>"]
    parts += ["<h4>Final answer</h4>", f"<p>{part(sections.final_answer)}</p>"]
    return "".join(parts)


def _responses(responses: list[ResponseSummary]) -> str:
    if not responses:
        return '<h3>Responses</h3><p class="meta">No responses yet.</p>'
    parts = [f"<h3>Responses ({len(responses)})</h3>"]
    for response in responses:
        tag = ('<span class="good">&nbsp;template-compliant&nbsp;</span>' if response.compliant
               else '<span class="warn">&nbsp;not compliant&nbsp;</span>')
        parts.append(f'<hr><h4><span style="color:{style.TEXT}">{escape(response.model)}</span>'
                     f'&nbsp;&nbsp;<span class="meta">{escape(response.id)}</span>'
                     f"&nbsp;&nbsp;{tag}</h4><p>{text(response.text)}</p>")
    return "".join(parts)
