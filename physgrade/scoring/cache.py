"""A project's scores kept in memory while it is open, brought up to date by change notices.

The app computes a report again for every filter change and every grade given; reading the
scores each time would cost seconds. A :class:`ScoreCache` reads them once
(:class:`~physgrade.scoring.store.ScoreStore`) and hears every :class:`~physgrade.changes.Changes`
the app broadcasts: the scores of the responses a change names are read again before the next
report, and anything it cannot patch (new raters, responses, questions, Bloom levels) drops the
store, so that no report is computed from a stale number. The small tables reports read besides
the scores (:class:`~physgrade.scoring.readings.Readings`) are forgotten when what they come from
changes.

Changes are noted on the GUI thread and the store is used on workers: :meth:`ScoreCache.note`
never waits for a read under way.
"""

from __future__ import annotations

import threading

from physgrade.changes import Changes, RecordKind
from physgrade.project import Project
from physgrade.scoring.readings import Readings
from physgrade.scoring.store import ScoreStore, StoreOutdated
from physgrade.tasks import Task

#: Changes that alter what the store holds besides scores: it is read again whole (the settings
#: name the declared facets, which it holds a column of each).
REREAD = (RecordKind.RATERS, RecordKind.RESPONSES, RecordKind.QUESTIONS, RecordKind.BLOOM,
          RecordKind.SETTINGS)


class ScoreCache:
    """The :class:`ScoreStore` of one open project, kept up to date, and what else its reports
    read (``readings``). One project only: a cache is made for each project opened."""

    def __init__(self) -> None:
        self.readings = Readings()
        self._store: ScoreStore | None = None
        self._reading = threading.Lock()  # one read at a time; the others use its result
        self._noting = threading.Lock()   # guards what changed since the store was read
        self._changed: set[str] = set()   # responses whose scores changed
        self._whole = False                # something changed that a patch cannot follow
        self._decisions = False            # adjudicators' decisions changed

    def note(self, changes: Changes) -> None:
        """Remember what ``changes`` touched, for the next :meth:`store` (quick: any thread)."""
        self.readings.forget(changes)
        with self._noting:
            if changes.touches(*REREAD) or (changes.touches(RecordKind.SCORES)
                                            and changes.responses is None):
                self._whole = True
            elif changes.touches(RecordKind.SCORES):
                assert changes.responses is not None
                self._changed |= changes.responses
            if changes.touches(RecordKind.ADJUDICATIONS):
                self._decisions = True

    def store(self, project: Project, task: Task | None = None) -> ScoreStore:
        """The project's scores as they are now: read whole the first time and after a change
        a patch cannot follow, else with the responses changed since read again."""
        with self._reading:
            with self._noting:
                whole, changed, decisions = self._whole, self._changed, self._decisions
                self._whole, self._changed, self._decisions = False, set(), False
            try:
                self._store = self._brought_up_to_date(project, task, whole, changed, decisions)
            except BaseException:
                # Cancelled or failed part-way: what was noted is still to be done.
                with self._noting:
                    self._whole |= whole
                    self._changed |= changed
                    self._decisions |= decisions
                raise
            return self._store

    def _brought_up_to_date(self, project: Project, task: Task | None, whole: bool,
                            changed: set[str], decisions: bool) -> ScoreStore:
        store = self._store
        if store is None or whole:
            return ScoreStore.read(project, task)
        try:
            if changed:
                store = store.updated(project, changed)
        except StoreOutdated:
            return ScoreStore.read(project, task)
        return store.with_decisions(project) if decisions else store
