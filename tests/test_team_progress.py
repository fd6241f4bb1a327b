"""Each grader's progress on their assignment, and their pace from the score history."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from conftest import PREFS_FULL
from physgrade import pace
from physgrade.pace import IDLE_CAP_S
from physgrade.project import Project
from physgrade.raters import LLM, rater_id
from physgrade.scores import set_score
from physgrade.selection import ResponseFilter
from physgrade.team.assign import AssignmentPlan, apply
from physgrade.team.progress import GraderProgress, grader_progress

CONCEPTUAL_FULL = {"SET": 1, "CON": 0, "EXE": None, "COH": 1, "ANS": 1}  # N/A counts as scored
START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def grade(project: Project, grader: str, response_id: str, scores: dict) -> None:
    for criterion, value in scores.items():
        set_score(project, grader, response_id, criterion, value)


def set_history_times(project: Project, grader: str, times: list[datetime]) -> None:
    """Give ``grader``'s history rows (in the order they were written) the times ``times``."""
    ids = [row for (row,) in project.conn.execute(
        "SELECT h.id FROM score_history h JOIN raters r ON r.id = h.rater_id "
        "WHERE r.name = ? ORDER BY h.id", (grader,))]
    assert len(ids) == len(times)
    project.conn.executemany(
        "UPDATE score_history SET changed_at = ? WHERE id = ?",
        [(moment.isoformat(timespec="milliseconds").replace("+00:00", "Z"), row)
         for moment, row in zip(times, ids)])


def test_assigned_graded_remaining_and_pace_per_person(loaded: Project,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    apply(loaded, AssignmentPlan(("ana", "ben"), 0.0, None, 0, ResponseFilter(),
                                 (("r-1", "ana"), ("r-2", "ana"), ("r-3", "ben")),
                                 {"r-1": ("orbit-7b", "Mechanics"),
                                  "r-2": ("quark-lm-3", "Mechanics"),
                                  "r-3": ("orbit-7b", "Mechanics")}))
    grade(loaded, "ana", "r-1", PREFS_FULL)            # assigned, finished
    grade(loaded, "ana", "r-3", CONCEPTUAL_FULL)       # not assigned to her, finished
    grade(loaded, "ana", "r-2", {"INT": 1})            # assigned, started only
    for criterion, value in {"answer": 1, "reasoning": 2, "calculations": 2}.items():
        # a whole coarse verdict is no grade of r-2 under its rubric
        set_score(loaded, "ana", "r-2", criterion, value, rubric="coarse")
    grade(loaded, "cyd", "r-2", PREFS_FULL)            # nothing assigned, one finished
    grade(loaded, "dee", "r-1", PREFS_FULL)            # two finished, all at one instant
    grade(loaded, "dee", "r-2", PREFS_FULL)
    judge = rater_id(loaded, "arbiter", LLM, "v1")
    loaded.conn.executemany(
        "INSERT INTO scores VALUES (?, 'r-2', 'prefs', ?, ?, NULL, '2026-01-01')",
        [(judge, key, value) for key, value in PREFS_FULL.items()])

    # Ana's 17 actions, 20 s apart, with a two-hour lunch after the first response: the
    # history is written out of time order (as a merge may), so it is sorted by time.
    times = [START + timedelta(seconds=20 * i) for i in range(8)]
    times += [times[-1] + timedelta(hours=2, seconds=20 * i) for i in range(9)]
    set_history_times(loaded, "ana", times[::-1])
    set_history_times(loaded, "dee", [START] * 16)
    working_s = 15 * 20 + IDLE_CAP_S

    assert grader_progress(loaded) == [
        GraderProgress("ana", assigned=2, graded=1, remaining=1, unassigned_graded=1,
                       per_hour=None),  # two responses say nothing about a pace yet
        GraderProgress("ben", assigned=1, graded=0, remaining=1, unassigned_graded=0,
                       per_hour=None),
        GraderProgress("cyd", assigned=0, graded=0, remaining=0, unassigned_graded=1,
                       per_hour=None),
        GraderProgress("dee", assigned=0, graded=0, remaining=0, unassigned_graded=2,
                       per_hour=None),  # no working time between the changes
    ]
    # The working time a rate is taken over, were two responses enough for one.
    monkeypatch.setattr(pace, "RATE_AFTER", 2)
    assert grader_progress(loaded)[0].per_hour == pytest.approx(2 * 3600 / working_s) == \
        pytest.approx(12.0)


def test_no_people_no_progress(loaded: Project) -> None:
    assert grader_progress(loaded) == []


def test_a_grade_finished_before_the_assignment_is_work_done(loaded: Project) -> None:
    grade(loaded, "ana", "r-1", PREFS_FULL)            # graded before anything is assigned
    assert [(p.assigned, p.graded, p.unassigned_graded) for p in grader_progress(loaded)] == [
        (0, 0, 1)]
    apply(loaded, AssignmentPlan(("ana",), 0.0, None, 0, ResponseFilter(), (("r-1", "ana"),),
                                 {"r-1": ("orbit-7b", "Mechanics")}, include_graded=True))
    assert grader_progress(loaded)[0] == GraderProgress(
        "ana", assigned=1, graded=1, remaining=0, unassigned_graded=0, per_hour=None)
