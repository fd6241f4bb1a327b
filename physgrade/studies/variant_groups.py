"""Variant groups as SymPyBench (seed 003) measures them: how alike a model answers the
questions made from one template with other numbers, and accuracy by question format.

A *variant group* is the questions of one template: those sharing a ``variant_group`` (with or
without a base question among them), or, where no template is named, a base question with its
contextual variants (``variant_of``), as the P-REFS v2 study pairs them. Precisely, a question's
group is its own ``variant_group``; else, if it is a variant, its base's ``variant_group``, else
its base's id; else, if some question is a variant of it, its own id. A question in no group is
left out. A group counts for a model only where the sheet holds at least two of its members
and the model has a response to every one of them (and, for a group named by its base, to the
base): a group the model half answered would pass for a failure or a success.

Per model, over those groups (definitions in docs/statistics.md, "Variant groups"):

- **Consistency**: the share of groups whose every response has a correct final answer;
- **Complete failure**: the share whose every response is wrong;
- **Confusion**: the share whose accuracy (correct responses / responses) lies within the
  project's *confusion band* around 50% (the seed's "~50% accuracy", suggesting guessing),
  edges included: by default 40% to 60% (:data:`DEFAULT_CONFUSION_BAND`).

Correct means the final answer is correct in the rater's sheet (``final_correct``).

*Format* is the question field ``format`` as imported (SymPyBench's MC-Symbolic, MC-Numerical,
free form; :data:`FORMATS` spell them whatever the separators and case), read with
:mod:`physgrade.question_fields`. The answer type is not a format: it is UGPhysics' breakdown.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping

import pandas as pd

from physgrade import question_fields
from physgrade.analyses import as_table, each_model, each_value
from physgrade.changes import Changes, RecordKind
from physgrade.project import Project
from physgrade.stats.describe import proportion
from physgrade.stats.estimate import Estimate

#: The project setting that holds the confusion band (its half-width around 50%).
KEY = "confusion_band"
#: A group is "confused" at an accuracy from 50% − 10% to 50% + 10%, edges included: the seed
#: says "~50%" without a number, and ±10 points takes 2 of 4, 2 or 3 of 5 and 3 of 6 right.
DEFAULT_CONFUSION_BAND = 0.1
#: The question field that names a question's format.
FORMAT_FIELD = "format"
#: SymPyBench's formats, in the order the seed lists them.
FORMATS = ("MC-Symbolic", "MC-Numerical", "free form")
#: Accuracies are fractions of small counts: an edge is reached within this (2/5 is 0.5 − 0.1).
_EDGE = 1e-9
_SPELLING = {re.sub(r"[^a-z]", "", name.lower()): name for name in FORMATS}
#: The columns of :func:`consistency`.
CONSISTENCY_COLUMNS = ["model", "groups", "n", "consistent", "failed", "confused",
                       "consistency", "complete_failure", "confusion"]


def confusion_band(project: Project) -> float:
    """The project's confusion band: the half-width around 50% (the default where none is kept)."""
    kept = project.setting(KEY)
    return DEFAULT_CONFUSION_BAND if kept is None else float(kept)


def set_confusion_band(project: Project, half_width: float) -> Changes:
    """Keep ``half_width`` as the project's confusion band; one outside 0 ≤ w < 0.5 raises
    ValueError (at 0.5 every group, all right or all wrong, would be confused)."""
    checked_band(half_width)
    with project.transaction():
        project.put_setting(KEY, repr(float(half_width)))
    return Changes.of(RecordKind.SETTINGS)


def checked_band(half_width: float) -> float:
    """``half_width`` if it can be a confusion band, else ValueError saying what can."""
    if not (math.isfinite(half_width) and 0 <= half_width < 0.5):
        raise ValueError(f"the confusion band is a half-width around 50% from 0 to below 0.5 "
                         f"(0.1 is 40% to 60%), not {half_width!r}")
    return half_width


def band_in_words(half_width: float) -> str:
    """A band as a report says it: 0.1 is "40% to 60%"."""
    return f"{(0.5 - half_width) * 100:g}% to {(0.5 + half_width) * 100:g}%"


def format_label(value: str | None) -> str | None:
    """A format as :data:`FORMATS` spells it ("mc_symbolic", "Free-form"), else as given."""
    if value is None:
        return None
    return _SPELLING.get(re.sub(r"[^a-z]", "", value.lower()), value)


@dataclass(frozen=True, slots=True)
class Setup:
    """What the measures read from a project besides a rater's sheet: the confusion band and
    each question's format (None where it has none)."""

    band: float = DEFAULT_CONFUSION_BAND
    formats: Mapping[str, str | None] = field(default_factory=dict)

    def has_formats(self) -> bool:
        return any(value is not None for value in self.formats.values())


def read_setup(project: Project) -> Setup:
    """The project's confusion band and its questions' formats."""
    formats = {qid: format_label(value)
               for qid, value in question_fields.values(project, FORMAT_FIELD).items()}
    return Setup(confusion_band(project), formats)


def group_keys(sheet: pd.DataFrame) -> tuple[pd.Series, frozenset[str]]:
    """Each question of ``sheet`` (by id) with its variant group (NaN for none), and the groups
    named by their base (whose base is a member, in the sheet or not)."""
    questions = sheet.drop_duplicates("question_id").set_index("question_id")
    own, base = questions["variant_group"], questions["variant_of"]
    templated = own.fillna(base.map(own))
    named_by_base = frozenset(base[templated.isna() & base.notna()])
    ids = pd.Series(questions.index, index=questions.index)
    keys = templated.fillna(base).fillna(ids.where(ids.isin(named_by_base)))
    return keys, named_by_base


def consistency(sheet: pd.DataFrame, band: float = DEFAULT_CONFUSION_BAND) -> pd.DataFrame:
    """Per model (then :data:`~physgrade.analyses.ALL_MODELS`, each model's groups counted
    apart): ``groups`` counted, ``n`` responses in them, ``consistent, failed, confused``
    (groups all right, all wrong, within the band) and their shares of the groups
    ``consistency, complete_failure, confusion`` (Wilson intervals)."""
    checked_band(band)
    keys, named_by_base = group_keys(sheet)
    rows = sheet.assign(group=sheet["question_id"].map(keys))
    rows = rows[rows["group"].notna()]
    members = rows.groupby("group")["question_id"].nunique()
    bases_held = set(rows.loc[rows["group"] == rows["question_id"], "question_id"])
    members += [int(group in named_by_base and group not in bases_held) for group in members.index]
    per_model = (rows.groupby(["model", "group"])
                 .agg(answered=("question_id", "nunique"), n=("final_correct", "size"),
                      right=("final_correct", "sum"))
                 .reset_index())
    needed = members.reindex(per_model["group"]).to_numpy()
    counted = per_model[(per_model["answered"] == needed) & (needed >= 2)]
    table = []
    for model, mine in each_model(counted):
        groups = len(mine)
        right = int((mine["right"] == mine["n"]).sum())
        wrong = int((mine["right"] == 0).sum())
        confused = int(((mine["right"] / mine["n"] - 0.5).abs() <= band + _EDGE).sum())
        table.append({"model": model, "groups": groups, "n": int(mine["n"].sum()),
                      "consistent": right, "failed": wrong, "confused": confused,
                      "consistency": proportion(right, groups),
                      "complete_failure": proportion(wrong, groups),
                      "confusion": proportion(confused, groups)})
    return as_table(table, CONSISTENCY_COLUMNS)


def accuracy_by_format(sheet: pd.DataFrame, formats: Mapping[str, str | None]) -> pd.DataFrame:
    """Per model and format (:data:`FORMATS` first, others by name, then
    :data:`~physgrade.selection.NONE`): ``model, format, n`` responses and ``accuracy``, the
    share with a correct final answer."""
    rows = sheet.assign(format=sheet["question_id"].map(formats))
    table = []
    for model, mine in each_model(rows):
        for label, part in each_value(mine, "format", FORMATS):
            table.append({"model": model, "format": label, "n": len(part),
                          "accuracy": proportion(int(part["final_correct"].sum()), len(part))})
    return as_table(table, ["model", "format", "n", "accuracy"])



@dataclass(frozen=True)
class Measured:
    """One rater's variant-group measures and accuracy by format (None where no question has a
    format), at the project's confusion band: what the command ``variant-groups`` prints."""

    rater: str
    band: float
    groups: pd.DataFrame
    formats: pd.DataFrame | None

    def as_dict(self) -> dict:
        return {"rater": self.rater, "confusion_band": self.band,
                "band": band_in_words(self.band), "models": _records(self.groups),
                "formats": None if self.formats is None else _records(self.formats)}

    def text(self) -> str:
        lines = [f"Variant groups by {self.rater} (confusion: accuracy "
                 f"{band_in_words(self.band)})"]
        if self.groups.empty:
            lines.append("  no model answered every question of a variant group")
        for row in self.groups.to_dict("records"):
            lines.append(f"  {row['model']}: {row['groups']:,} groups, {row['n']:,} responses; "
                         f"consistency {row['consistency'].text(percent=True)}, complete failure "
                         f"{row['complete_failure'].text(percent=True)}, confusion "
                         f"{row['confusion'].text(percent=True)}")
        if self.formats is not None:
            lines.append("Accuracy by format")
            lines += [f"  {row['model']}, {row['format']}: {row['accuracy'].text(percent=True)} "
                      f"of {row['n']:,}" for row in self.formats.to_dict("records")]
        return "\n".join(lines)


def measure(sheet: pd.DataFrame, rater: str, setup: Setup) -> Measured:
    """``rater``'s sheet measured at ``setup``'s band, with accuracy by format if some question
    of the sheet has a format."""
    has_formats = sheet["question_id"].map(setup.formats).notna().any()
    return Measured(rater, setup.band, consistency(sheet, setup.band),
                    accuracy_by_format(sheet, setup.formats) if has_formats else None)


def _records(table: pd.DataFrame) -> list[dict]:
    """A table's rows as JSON: estimates as their dicts, counts as plain ints."""
    return [{key: value.as_dict() if isinstance(value, Estimate) else
             value.item() if hasattr(value, "item") else value for key, value in row.items()}
            for row in table.to_dict("records")]
