"""What the reading panes show, as HTML for a :class:`~physgrade_ui.reading_view.ReadingView`.

Every imported string (questions, solutions, responses, ids, model names) goes through
:func:`physgrade.maths.to_html` or ``html.escape``: HTML in a response shows as literal
characters, and only what the core makes from Markdown and LaTeX (MathML) is real markup.
"""

from __future__ import annotations

from html import escape

from physgrade.grading import GradingItem
from physgrade.images import CheckedImage
from physgrade.maths import FIT_FROM, FIT_MOST, to_html
from physgrade.queries import Question, QuestionDetail, ResponseSummary
from physgrade.steps import ResponseStep, response_steps
from physgrade.template import ParsedSolution, Span, section_text
from physgrade_ui import style

FORMULATION_PARTS = (("given", "Given"), ("find", "Find"), ("approach", "Approach"),
                     ("assumptions", "Assumptions"))
STEP_PARTS = (("reasoning", "Reasoning"), ("general_formula", "General formula"),
              ("substitution", "Substitution"), ("calculation", "Calculation"),
              ("result", "Result"))

#: The reading's width (CSS px) from which the reference and the response stand side by side:
#: each column then has about 420 px, enough for a line of mathematics; narrower, they stack,
#: reference first, each under a header that stays in view, and a key jumps between them.
SIDE_BY_SIDE_FROM = 880
#: Made for reading mathematics in a pane of 450 to 1200 px: labels sit above their text (a label
#: column would starve it), words never break inside (only code and LaTeX source may), display
#: formulas wrap between the pieces :mod:`physgrade.maths` splits them into rather than scroll,
#: and the reference and response stack below :data:`SIDE_BY_SIDE_FROM`. A piece too wide to
#: fit is shrunk by its ``fit-N`` class (N: its estimated width in em) against the width of its
#: column, which container units measure: a little under N em across it, but never below 0.92em
#: (0.85 of the maths' own 1.08em), as smaller is no longer read with ease; the rest scrolls.
#: The most of the view's height a figure takes in the reading (F shows it whole).
FIGURE_HEIGHT_VH = 42
#: The question box's width (CSS px) from which its figures stand beside the statement.
FIGURE_BESIDE_FROM = 640
FITS = "\n".join(f".display-math.fit-{n} math {{ font-size: clamp(0.92em, 87cqi / {n}, 1.08em); }}"
                 for n in range(FIT_FROM + 2, FIT_MOST + 1, 2))
CSS = f"""
html {{ background: {style.SURFACE}; }}
body {{ font: 15px/1.55 "DejaVu Sans", "Segoe UI", sans-serif; color: {style.TEXT};
        margin: 0; padding: 16px 22px 48px; overflow-wrap: break-word; }}
h1 {{ font-size: 17px; margin: 0 0 2px; }}
h2 {{ font-size: 13px; color: {style.MUTED}; border-bottom: 2px solid {style.BORDER};
      padding-bottom: 4px; margin: 18px 0 8px; }}
h3 {{ font-size: 13.5px; margin: 16px 0 4px; color: {style.TEXT}; }}
h4, h5, h6 {{ font-size: 14px; margin: 12px 0 4px; }}  /* Markdown headings in a text */
h6 {{ color: {style.MUTED}; }}
p {{ margin: 4px 0 8px; }}
ul, ol {{ margin: 4px 0 8px; padding-left: 1.6em; }}
li {{ margin: 2px 0; }}
blockquote {{ margin: 6px 0; padding: 0 0 0 12px; border-left: 3px solid {style.BORDER};
              color: {style.MUTED}; }}
code {{ font: 0.9em "DejaVu Sans Mono", monospace; background: {style.ALTERNATE};
        border-radius: 3px; padding: 0 3px; overflow-wrap: anywhere; }}
pre {{ background: {style.ALTERNATE}; border-radius: 4px; padding: 6px 10px; margin: 6px 0;
       white-space: pre-wrap; overflow-wrap: anywhere; }}
pre code {{ background: none; padding: 0; }}
table {{ border-collapse: collapse; margin: 6px 0; }}
th, td {{ border: 1px solid {style.BORDER}; padding: 3px 8px; vertical-align: top; }}
th {{ background: {style.ALTERNATE}; }}
.align-right {{ text-align: right; }}
.align-center {{ text-align: center; }}
.meta {{ color: {style.MUTED}; font-size: 13px; }}
.question {{ background: {style.ALTERNATE}; border: 1px solid {style.BORDER}; border-radius: 6px;
             padding: 10px 16px; margin: 10px 0 4px; }}
.columns {{ display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 28px; }}
.columns > div {{ min-width: 0; }}
@media (max-width: {SIDE_BY_SIDE_FROM - 0.02}px) {{
  .columns {{ grid-template-columns: minmax(0, 1fr); gap: 0; }} }}
.columns h2 {{ position: sticky; top: 0; z-index: 1; background: {style.SURFACE}; margin-top: 0;
               padding-top: 10px; }}
.columns h2.response {{ color: {style.ACCENT}; border-bottom-color: {style.ACCENT}; }}
.part {{ margin: 4px 0 10px; }}
.part > .label {{ color: {style.ACCENT}; font-weight: 600; font-size: 12px; line-height: 1.4;
                  letter-spacing: 0.02em; }}
.facts {{ display: flex; flex-wrap: wrap; column-gap: 32px; margin-top: 6px; }}
.facts > .part {{ margin-bottom: 2px; min-width: 0; }}
table.options {{ width: 100%; table-layout: fixed; }}
table.options td {{ border: none; padding: 2px 0; }}
.options td.label {{ width: 26px; color: {style.MUTED}; font-weight: 600; }}
.correct {{ color: {style.GOOD}; font-weight: 600; }}
.final {{ background: {style.GOOD_BACKGROUND}; border-left: 3px solid {style.GOOD};
          padding: 6px 10px; border-radius: 3px; }}
.tag {{ font-size: 11.5px; font-weight: 600; padding: 1px 7px; border-radius: 9px;
        margin-left: 6px; vertical-align: 1px; white-space: nowrap; }}
.good {{ color: {style.GOOD}; background: {style.GOOD_BACKGROUND}; }}
.warn {{ color: {style.WARN}; background: {style.WARN_BACKGROUND}; }}
.display-math {{ display: flex; flex-wrap: wrap; justify-content: center; align-items: baseline;
                 row-gap: 6px; margin: 8px 0; }}
.display-math > .piece {{ display: inline-flex; flex-wrap: wrap; align-items: baseline;
                          row-gap: 6px; max-width: 100%; }}
.tex-error {{ color: #8c1d18; background: #fdecea; border-radius: 3px; padding: 0 3px; }}
/* A font with an OpenType MATH table, which sets the scripts' shifts and sizes: in DejaVu Math
   a subscript drops 0.277em and a superscript rises 0.381em, at 80% (LaTeX's Computer Modern:
   0.247em, 0.363em, at 70%). In a font without one (DejaVu Sans, Chromium's "math" here) the
   subscript of E_n did not drop at all and the superscript of m^a rose 0.556em. */
math {{ font-size: 1.08em; font-family: "DejaVu Math TeX Gyre", "STIX Two Math", "Cambria Math",
        math; }}
/* A piece no wrapping or shrinking makes fit scrolls in its own box, never the page. */
math {{ max-width: 100%; overflow-x: auto; overflow-y: hidden; }}
body, .question, .columns > div {{ container-type: inline-size; }}
{FITS}
/* Figures: at most their own size (a figure drawn with twice the pixels stays sharp on a
   high-DPI screen), shrunk to the column and to a part of the view's height so the statement
   stays in sight; beside the statement where its box is wide. F enlarges one (#enlarged, a copy
   outside the body, which is a size container and would hold a fixed box inside itself). */
.figures {{ display: flex; flex-wrap: wrap; gap: 4px 14px; align-items: flex-start;
            margin: 8px 0; }}
.figures > figure.figure {{ flex: 1 1 0; min-width: 160px; margin: 0; }}
figure.figure img {{ display: block; box-sizing: border-box; max-width: 100%;
                     max-height: {FIGURE_HEIGHT_VH}vh; width: auto; height: auto;
                     background: white; border: 1px solid {style.BORDER}; border-radius: 4px; }}
figure.figure figcaption {{ color: {style.MUTED}; font-size: 12px; margin-top: 2px; }}
@container (min-width: {FIGURE_BESIDE_FROM}px) {{
  .statement.with-figures {{ display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 42%);
                             gap: 20px; align-items: start; }}
  .statement.with-figures .figures {{ margin-top: 4px; }} }}
#enlarged {{ position: fixed; inset: 0; z-index: 10; margin: 0; padding: 10px 16px;
             font: 13px "DejaVu Sans", "Segoe UI", sans-serif; color: {style.MUTED};
             background: {style.SURFACE}; display: flex; flex-direction: column;
             align-items: center; justify-content: center; }}
#enlarged img {{ width: 100%; height: calc(100vh - 48px); max-height: none; object-fit: contain;
                 border: none; }}
/* The response's steps, which the grader marks (physgrade_ui.step_marking): the one the keys
   act on outlined, the first wrong one red, the right ones green at their left, what is said of
   each as tags beside its label (ratings outlined); each step a size container, as its column
   is, so that its formulas fit its own width. */
.step {{ margin: 0 0 4px; padding: 1px 8px 2px 7px; border-left: 3px solid transparent;
         border-radius: 4px; scroll-margin-top: 48px; container-type: inline-size; }}
.step > h3 {{ margin-top: 10px; }}
.step.current {{ outline: 2px solid {style.ACCENT}; outline-offset: -1px; }}
.step.first-wrong {{ border-left-color: {style.BAD}; background: {style.BAD_BACKGROUND}; }}
.step.right {{ border-left-color: {style.GOOD}; }}
.tag.bad {{ color: {style.BAD}; background: {style.BAD_BACKGROUND}; }}
.tag.plain {{ color: {style.MUTED}; }}
.tag.solid.bad {{ color: white; background: {style.BAD}; }}
.tag.rating {{ background: {style.SURFACE}; border: 1px solid currentColor; padding: 0 6px; }}
hr {{ border: none; border-top: 1px solid {style.BORDER}; margin: 18px 0; }}
.placeholder {{ color: {style.MUTED}; margin-top: 40px; text-align: center; }}
"""


#: The ids of the grading reading's two columns (see :func:`grading_html`), which the reading
#: view jumps between.
REFERENCE_PART, RESPONSE_PART = "reference", "response"
#: The class of a response step's element in the grading reading; its ``data-step`` attribute
#: holds the step's number (:attr:`physgrade.steps.ResponseStep.number`).
STEP_CLASS = "step"


def placeholder(message: str) -> str:
    return f'<p class="placeholder">{escape(message)}</p>'


def tag(text: str, good: bool) -> str:
    return f'<span class="tag {"good" if good else "warn"}">{escape(text)}</span>'


def _parts(parts: list[tuple[str, str]]) -> str:
    """(label, already escaped HTML) pairs, each label above its text so the text has the
    pane's whole width; nothing for no parts."""
    return "".join(f'<div class="part"><div class="label">{escape(label)}</div>'
                   f"<div>{value}</div></div>" for label, value in parts)


def _options(options: list[tuple[str, str]]) -> str:
    """Answer options beside their letters: a letter is narrow, so it keeps a column."""
    body = "".join(f'<tr><td class="label">{escape(letter)}</td><td>{value}</td></tr>'
                   for letter, value in options)
    return f'<table class="options">{body}</table>'


def _facts(question: Question) -> list[str]:
    facts = [question.topic or "no topic", question.kind]
    if question.bloom_cognitive or question.bloom_knowledge:
        facts.append(" / ".join(filter(None, (question.bloom_cognitive,
                                              question.bloom_knowledge))))
    if question.variant_of:
        facts.append(f"variant of {question.variant_of}")
    if question.region:
        facts.append(f"region: {question.region}")
    return facts


def figures(images: tuple[CheckedImage, ...], whose: str) -> str:
    """``whose`` figures ("the question", "the response"...), numbered in the reading's order,
    each as a ``data:`` URI of its checked type: the view loads nothing else."""
    if not images:
        return ""
    return '<div class="figures">' + "".join(
        f'<figure class="figure"><img src="{image.data_uri}" alt="Figure {n} of {escape(whose)}"'
        f'><figcaption>Figure {n}{f" of {len(images)}" if len(images) > 1 else ""} · '
        f"{image.width}×{image.height} px · F enlarges</figcaption></figure>"
        for n, image in enumerate(images, 1)) + "</div>"


def question_block(question: Question) -> str:
    """The question, its figures, its options (the right one marked) and its expected answer."""
    statement = to_html(question.question)
    parts = [f'<div class="statement with-figures"><div>{statement}</div>'
             f'{figures(question.images, "the question")}</div>'
             if question.images else statement]
    if question.options:
        parts.append(_options([(letter, f'<span class="correct">{to_html(option)} ✓</span>'
                                if letter == question.answer else to_html(option))
                               for letter, option in question.options.items()]))
    answer = [("Answer", to_html(question.answer))] if question.answer else []
    if question.unit:
        answer.append(("Unit", to_html(question.unit)))
    if answer:
        parts.append(f'<div class="facts">{_parts(answer)}</div>')
    return f'<div class="question">{"".join(parts)}</div>'


def solution_block(text: str | None, sections: ParsedSolution | None, what: str,
                   images: tuple[CheckedImage, ...] = (), steps: bool = False) -> str:
    """A solution, after its figures, laid out by its template parts, or shown whole when it is
    not compliant. With ``steps`` each of its steps (:func:`physgrade.steps.response_steps`:
    template steps, else paragraphs) is an element of its own, for the grader to mark."""
    return figures(images, f"the {what}") + _solution(text, sections, what, steps)


def _step(step: ResponseStep, body: str) -> str:
    """One markable step: its label (with room for the tags marks add) above its text."""
    return (f'<div class="{STEP_CLASS}" data-step="{step.number}"><h3>{escape(step.label)}'
            f'<span class="step-tags"></span></h3>{body}</div>')


def _stepped(text: str, steps: tuple[ResponseStep, ...], paragraphs: bool) -> str:
    """A response outside the template, as written, each step in its element (what lies
    between them, such as a step's own label, shown plain)."""
    note = ", each paragraph a step" if paragraphs and steps else ""
    blocks = [f'<p class="meta">Not in the template; shown as written{note}.</p>']
    at = 0
    for step in steps:
        if text[at:step.span.start].strip():
            blocks.append(f'<div class="whole">{to_html(text[at:step.span.start])}</div>')
        blocks.append(_step(step, to_html(step.text)))
        at = step.span.end
    if text[at:].strip():
        blocks.append(f'<div class="whole">{to_html(text[at:])}</div>')
    return "".join(blocks)


def _solution(text: str | None, sections: ParsedSolution | None, what: str,
              steps: bool = False) -> str:
    if not text:
        return f'<p class="meta">No {escape(what)} given.</p>'
    templated = sections is not None and sections.compliant and bool(sections.steps)
    if steps and not templated:
        return _stepped(text, response_steps(text, sections),
                        sections is None or not sections.steps)
    if sections is None or not sections.compliant:
        return (f'<p class="meta">Not in the template; shown as written.</p>'
                f'<div class="whole">{to_html(text)}</div>')

    def part(span: Span | None) -> str:
        return to_html(section_text(text, span))

    blocks = ["<h3>Formulation</h3>",
              _parts([(label, part(sections.formulation_parts[key]))
                      for key, label in FORMULATION_PARTS if key in sections.formulation_parts])
              or part(sections.formulation)]
    marked = response_steps(text, sections) if steps else ()
    for position, step in enumerate(sections.steps):
        rows = [(label, part(step.parts[key])) for key, label in STEP_PARTS if key in step.parts]
        body = _parts(rows) or part(step.span)
        blocks.append(_step(marked[position], body) if marked
                      else f"<h3>Step {step.number}</h3>{body}")
    if not sections.steps:
        blocks += ["<h3>Solution</h3>", part(sections.solution)]
    blocks += ["<h3>Final answer</h3>", f'<div class="final">{part(sections.final_answer)}</div>']
    return "".join(blocks)


def grading_html(item: GradingItem) -> str:
    """The workbench's reading: the question on top, the reference and the response side by side
    (one above the other in a narrow pane)."""
    question = item.question
    compliance = tag("template-compliant" if item.compliant else "not compliant", item.compliant)
    heading = (f"<h1>{escape(question.id)}</h1>"
               f'<p class="meta">{" · ".join(escape(f) for f in _facts(question))}</p>')
    reference = solution_block(question.reference_solution, question.reference_sections,
                               "reference solution", question.reference_images)
    response = solution_block(item.text, item.sections, "response", item.images, steps=True)
    return (f"{heading}{question_block(question)}<div class='columns'>"
            f"<div id='{REFERENCE_PART}'><h2>Reference solution</h2>{reference}</div>"
            f"<div id='{RESPONSE_PART}'><h2 class='response'>Response · {escape(item.model)} · "
            f"{escape(item.response_id)}{compliance}</h2>{response}</div></div>")


def question_html(detail: QuestionDetail) -> str:
    """The question list's reading: the question, its reference, then every response."""
    question = detail.question
    parts = [f"<h1>{escape(question.id)}</h1>",
             f'<p class="meta">{" · ".join(escape(f) for f in _facts(question))}</p>',
             question_block(question), "<h2>Reference solution</h2>",
             solution_block(question.reference_solution, question.reference_sections,
                            "reference solution", question.reference_images),
             f"<h2>Responses ({len(detail.responses)})</h2>"]
    if not detail.responses:
        parts.append('<p class="meta">No responses yet.</p>')
    parts += [_response(response) for response in detail.responses]
    return "".join(parts)


def _response(response: ResponseSummary) -> str:
    compliance = tag("template-compliant" if response.compliant else "not compliant",
                     response.compliant)
    solution = solution_block(response.text, response.sections, "response", response.images)
    return (f"<hr><h3>{escape(response.model)} <span class='meta'>{escape(response.id)}</span>"
            f"{compliance}</h3>{solution}")
