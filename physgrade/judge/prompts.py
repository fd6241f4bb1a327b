"""Judge prompts: plain-text templates in ``resources/prompts/``, filled in per item.

What a grading template states about its rubric (a criterion's range, the number of criteria,
the points) is not written in it but taken from :mod:`physgrade.rubric` when the templates are
loaded, through fields such as ``{{range ANS}}`` (see :func:`rubric_field`), so a prompt and the
rubric cannot disagree. So is the answer tolerance (``{{answer tolerance}}``, "1 percent"): it is
the project's setting (:mod:`physgrade.answers.tolerance`), the one the rules rater checks under.
Per-item values are ``$placeholders``, filled for each request.

A prompt version is a digest of every text (as loaded) and schema a request is built from, so
editing a template, the rubric or its tool schema makes a new version, and verdicts of the old
and new prompts are kept apart as different raters. The failure taxonomy a verdict puts the
first wrong step in is one of those texts (:data:`TAXONOMY`, the project's default taxonomy as
JSON): its categories are both listed in the request and the tool's choices, so rewording or
choosing another taxonomy makes a new version, and a recorded version rebuilds its requests.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template
from typing import Mapping

from physgrade import taxonomies
from physgrade.answers.outcome import DEFAULT_RTOL
from physgrade.answers.tolerance import answer_tolerance, in_words
from physgrade.project import Project
from physgrade.rubric import CONCEPTUAL, PREFS, Rubric
from physgrade.taxonomies import Category, Taxonomy

#: Each template and the placeholders it must use, no more and no fewer.
PLACEHOLDERS: dict[str, frozenset[str]] = {
    "system.md": frozenset(),
    "prefs_criteria.md": frozenset(),
    "problem_parts.md": frozenset({"question", "options", "reference_solution", "reference_answer",
                                   "formulation", "solution", "final_answer", "criteria"}),
    "problem_holistic.md": frozenset({"question", "options", "reference_solution",
                                      "reference_answer", "response", "criteria"}),
    "conceptual.md": frozenset({"question", "options", "reference_solution", "reference_answer",
                                "response"}),
    "multiple_choice.md": frozenset({"option_list", "answer_maximum"}),
    "first_wrong_step.md": frozenset({"markers", "categories"}),
    "bloom_system.md": frozenset(),
    "bloom.md": frozenset({"question", "options", "topic"}),
    "duplicate_system.md": frozenset(),
    "duplicate.md": frozenset({"problem_a", "problem_b"}),
    "examples.md": frozenset({"examples"}),
    "example.md": frozenset({"question", "response", "grade"}),
    "answer_check_system.md": frozenset(),
    "answer_check.md": frozenset({"question", "reference_answer", "final_answer"}),
}
#: Templates added after people had made folders of their own: a folder without them uses the
#: bundled ones rather than being refused.
BUNDLED_IF_MISSING = frozenset({"examples.md", "example.md", "answer_check_system.md",
                                "answer_check.md", "first_wrong_step.md"})
#: The rubric each grading template describes; its ``{{...}}`` fields are filled from it.
RUBRIC_OF: dict[str, Rubric] = {"prefs_criteria.md": PREFS, "problem_parts.md": PREFS,
                                "problem_holistic.md": PREFS, "conceptual.md": CONCEPTUAL}
_RUBRIC_FIELD = re.compile(r"\{\{([^{}]*)\}\}")
#: The field a template states the answer tolerance with ("1 percent").
TOLERANCE_FIELD = "answer tolerance"
_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve")
#: Placeholders filled with the templates' own text, which is trusted.
TRUSTED = frozenset({"options", "answer_maximum", "criteria", "examples", "markers",
                     "categories"})
#: Where a refined prompt keeps its filled-in examples (:meth:`Prompts.with_examples`).
EXAMPLES = "examples"
#: Where prompts keep the failure taxonomy their verdicts use (:meth:`Prompts.taxonomy`).
TAXONOMY = "taxonomy.json"
#: The tags templates wrap untrusted text in; the same tags inside that text are defused.
DATA_TAGS = ("question", "options", "reference_solution", "reference_answer", "formulation",
             "solution", "final_answer", "response", "topic", "problem_a", "problem_b",
             "example", "example_question", "example_response", "expert_grade")
_TAG = re.compile(r"<(\s*/?\s*(?:" + "|".join(DATA_TAGS) + r")\b)", re.IGNORECASE)


class PromptError(ValueError):
    """A template folder that cannot be used; the message names the file."""


def rubric_field(rubric: Rubric, field: str) -> str:
    """The text of a template's rubric field: ``range KEY`` (a criterion's scale, "0-2"),
    ``criteria`` (how many, "8"; ``criteria in words``: "eight"), ``points`` (the maximum
    total, "10") and ``points without KEY`` (the maximum when that criterion is N/A)."""
    words = field.split()
    if words[:1] == ["range"] and len(words) == 2:
        return f"0-{rubric.criterion(words[1]).maximum}"
    if words == ["criteria"]:
        return str(len(rubric.criteria))
    if words == ["criteria", "in", "words"]:
        return _WORDS[len(rubric.criteria)]
    if words == ["points"]:
        return str(rubric.maximum)
    if words[:2] == ["points", "without"] and len(words) == 3:
        return str(rubric.maximum - rubric.criterion(words[2]).maximum)
    raise ValueError(f"unknown rubric field {{{{{field}}}}}; the fields are {{{{range KEY}}}}, "
                     "{{criteria}}, {{criteria in words}}, {{points}} and {{points without KEY}}")


def _with_rubric(name: str, text: str, path: Path, tolerance: float = DEFAULT_RTOL) -> str:
    """The template with its rubric fields, and the answer tolerance, filled in."""
    def fill(match: re.Match[str]) -> str:
        if match.group(1).strip() == TOLERANCE_FIELD:
            return in_words(tolerance)
        if name not in RUBRIC_OF:
            raise PromptError(f"{path}: {match.group(0)} names the rubric, but this template "
                              "describes none")
        try:
            return rubric_field(RUBRIC_OF[name], match.group(1))
        except ValueError as exc:  # ScoreError too: a criterion of another rubric
            raise PromptError(f"{path}: {exc}") from None

    return _RUBRIC_FIELD.sub(fill, text)


def default_directory() -> Path:
    return Path(str(resources.files("physgrade_resources") / "prompts"))


def defuse(text: str) -> str:
    """Untrusted text with any of the prompt's own data tags made inert, so a response cannot
    close its ``<response>`` early and pose as instructions."""
    return _TAG.sub(r"&lt;\1", text)


@dataclass(frozen=True, slots=True)
class Prompts:
    """The templates of one folder, checked on loading."""

    directory: Path
    texts: Mapping[str, str]

    @classmethod
    def load(cls, directory: str | Path | None = None,
             tolerance: float = DEFAULT_RTOL, taxonomy: Taxonomy | None = None) -> "Prompts":
        """Read and check every template (by default the bundled ones; a folder of edited
        ones may leave out :data:`BUNDLED_IF_MISSING`), stating ``tolerance`` (the project's
        answer tolerance, :func:`physgrade.answers.tolerance.answer_tolerance`) as the one
        within which a final answer matches, and putting first wrong steps in ``taxonomy``
        (by default the built-in P-REFS one; :func:`for_project` passes the project's)."""
        folder = Path(directory) if directory is not None else default_directory()
        chosen = taxonomy or taxonomies.BUILT_IN[taxonomies.DEFAULT]
        texts = {TAXONOMY: json.dumps(
            {"name": chosen.name, "title": chosen.title, "categories": [
                {"key": c.key, "title": c.title, "description": c.description}
                for c in chosen.categories]}, ensure_ascii=False, indent=1)}
        for name, expected in PLACEHOLDERS.items():
            path = folder / name
            if name in BUNDLED_IF_MISSING and not path.exists():
                path = default_directory() / name
            try:
                text = path.read_text(encoding="utf-8")
            except OSError as exc:
                raise PromptError(f"prompt template {path} cannot be read: {exc}") from None
            text = _with_rubric(name, text, path, tolerance)
            template = Template(text)
            if not template.is_valid():
                raise PromptError(f"{path}: a '$' that is not a placeholder; write '$$' for a "
                                  "literal dollar sign")
            used = set(template.get_identifiers())
            if used != expected:
                wrong = sorted(used - expected) or sorted(expected - used)
                what = "unknown" if used - expected else "missing"
                raise PromptError(f"{path}: {what} placeholder(s) {', '.join(wrong)}; this "
                                  f"template takes {', '.join(sorted(expected)) or 'none'}")
            texts[name] = text
        return cls(folder, texts)

    @classmethod
    def stored(cls, texts: Mapping[str, str]) -> "Prompts":
        """Prompts rebuilt from texts a project stored (:mod:`physgrade.judge.versions`)."""
        return cls(Path("(stored in the project)"), dict(texts))

    def taxonomy(self) -> Taxonomy | None:
        """The failure taxonomy verdicts under these prompts name the first wrong step's
        category in (None for texts recorded before verdicts asked for the step)."""
        if TAXONOMY not in self.texts:
            return None
        data = json.loads(self.texts[TAXONOMY])
        return Taxonomy(data["name"], data["title"], "", tuple(
            Category(c["key"], c["title"], c["description"]) for c in data["categories"]))

    def with_examples(self, block: str) -> "Prompts":
        """These prompts with a block of graded examples put before each grading request (a
        refined prompt: see :mod:`physgrade.refinement`)."""
        return Prompts(self.directory, {**self.texts, EXAMPLES: block})

    def without_examples(self) -> "Prompts":
        return Prompts(self.directory, {name: text for name, text in self.texts.items()
                                        if name != EXAMPLES})

    def version(self, prefix: str, names: tuple[str, ...], *schemas: object) -> str:
        """``prefix-`` and ten hex digits of a digest of the named templates and schemas."""
        digest = hashlib.sha256()
        for name in names:
            digest.update(name.encode() + b"\0" + self.texts[name].encode() + b"\0")
        for schema in schemas:
            digest.update(json.dumps(schema, sort_keys=True).encode() + b"\0")
        return f"{prefix}-{digest.hexdigest()[:10]}"

    def fill(self, name: str, **values: str) -> str:
        """A template with its placeholders replaced; data values are defused first."""
        return Template(self.texts[name]).substitute(
            {key: value if key in TRUSTED else defuse(value)
             for key, value in values.items()})

    def options_block(self, options: Mapping[str, str] | None, answer_maximum: int) -> str:
        """The multiple-choice fragment for a question's options ("" when it has none)."""
        if not options:
            return ""
        listing = "\n".join(f"{letter}. {text}" for letter, text in options.items())
        return self.fill("multiple_choice.md", option_list=listing,
                         answer_maximum=str(answer_maximum))


def for_project(project: Project, directory: str | Path | None = None) -> Prompts:
    """The prompts of ``directory`` (the bundled ones by default) as ``project`` states them:
    its answer tolerance, and its default failure taxonomy."""
    return Prompts.load(directory, answer_tolerance(project), taxonomies.taxonomy(project))
