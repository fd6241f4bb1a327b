"""The project's answer tolerance: one number, kept in the project file, that the rules rater
(``verify``), the app's answer hint and the judge prompt ("within 1 percent") all use, so the
raters cannot disagree by construction on answers between two tolerances.

The default is :data:`~physgrade.answers.outcome.DEFAULT_RTOL` (1%); why 1% is said there.
"""

from __future__ import annotations

from ..changes import Changes, RecordKind
from ..project import Project
from .outcome import DEFAULT_RTOL, Settings

KEY = "answer_tolerance"


def answer_tolerance(project: Project) -> float:
    """The project's relative tolerance for numbers (the default where it has none)."""
    kept = project.setting(KEY)
    return DEFAULT_RTOL if kept is None else float(kept)


def set_answer_tolerance(project: Project, rtol: float) -> Changes:
    """Keep ``rtol`` as the project's tolerance; one the rules refuse raises ValueError."""
    Settings(rtol=rtol)
    with project.transaction():
        project.put_setting(KEY, repr(float(rtol)))
    return Changes.of(RecordKind.SETTINGS)


def settings(project: Project) -> Settings:
    """The rules' settings for ``project``: the defaults at the project's tolerance."""
    return Settings(rtol=answer_tolerance(project))


def in_words(rtol: float) -> str:
    """A tolerance as the judge prompt states it: 0.01 is "1 percent"."""
    return f"{rtol * 100:g} percent"
