"""Checks run in worker processes that can be killed, so hostile text never hangs the caller.

The parser refuses oversized numbers and nesting up front, but sympy and pint are large, and an
expression that slips through could still simplify for minutes or eat memory. Each check
therefore runs in a worker process with an address-space limit and a deadline: a check that
misses it ends as ``timeout``, its worker is killed and a fresh one takes its place.

Workers are forked from a server process that has already imported sympy and pint
(multiprocessing's "forkserver"), so a replacement is ready in milliseconds and no worker
inherits the caller's threads or Qt state. Where forkserver does not exist (Windows) they are
spawned instead. Workers end with their caller even when it is killed mid-check, and the
forkserver with them; Ctrl+C they leave to their caller, which stops them
(:mod:`physgrade.orphans`).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from contextlib import suppress
from dataclasses import dataclass
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Iterable, Iterator

from ..leftovers import claimed, hold
from ..orphans import die_with, starting_workers
from ..tasks import Task
from .outcome import Check, Outcome, Settings

#: Seconds one check may take, and megabytes it may allocate beyond a worker's start-up size.
TIME_LIMIT = 2.0
MEMORY_LIMIT_MB = 1024
#: The lock in multiprocessing's folder of a process using this module, held while it lives.
_CALLER_MARK = "physgrade-caller.lock"
_marking = threading.Lock()


@dataclass(frozen=True)
class Request:
    """One check to run: the reference answer, the response (or its answer) and what is known."""

    gold: str
    pred: str
    answer_type: str | None = None
    unit: str | None = None


def _context() -> multiprocessing.context.BaseContext:
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["physgrade.answers.compare"])
        # The forkserver starts the resource tracker first, which unblocks the caller's signals
        # once it runs: it must run before the first worker starts inside starting_workers().
        resource_tracker.ensure_running()
        _mark_temp_dir()
        return context
    return multiprocessing.get_context("spawn")


def _mark_temp_dir() -> None:
    """Mark multiprocessing's folder of this process (the forkserver's socket is made in it) as
    a live caller's. A killed caller's workers remove its folder, but none may be there to: the
    caller killed while its forkserver imported the preloads, or all of them killed at once. The
    folders of callers that are over go here, before this process starts its forkserver."""
    with _marking:
        mark = Path(multiprocessing.util.get_temp_dir()) / _CALLER_MARK
        if mark.exists():
            return
        for over in Path(tempfile.gettempdir()).glob(f"pymp-*/{_CALLER_MARK}"):
            with suppress(OSError), claimed(over) as removable:
                if removable:
                    shutil.rmtree(over.parent)
        hold(mark)  # until this process ends


def _limit_memory(megabytes: int) -> None:
    """Cap this process's address space at its current size plus ``megabytes`` (POSIX only)."""
    try:
        import resource
    except ImportError:
        return
    with open("/proc/self/statm") as statm:
        current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = current + megabytes * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _serve(connection: Connection, settings: Settings, memory_mb: int, caller: int,
           leftovers: tuple[str, ...]) -> None:
    """A worker's loop: receive a request, send back (outcome, reason, answer, parts right,
    parts in all), until None.
    The worker ends with ``caller`` (its parent is the forkserver), even mid-check, and removes
    ``leftovers`` if the caller was killed."""
    die_with(caller, leftovers)
    from .compare import check

    try:
        _limit_memory(memory_mb)
    except (OSError, ValueError):
        pass  # no /proc (macOS) or a hard limit already lower: run without our cap
    while True:
        try:
            request = connection.recv()
        except (EOFError, OSError):
            return  # the caller went away without closing us, or was killed
        if request is None:
            return
        try:
            result = check(request.gold, request.pred, request.answer_type, request.unit, settings)
        except MemoryError:
            result = Check(Outcome.TIMEOUT, f"the check needed more than {memory_mb} MB")
        except RecursionError:
            result = Check(Outcome.UNPARSEABLE, "the answer is nested too deeply")
        except Exception as error:  # a bug or a library failure must not kill the run
            result = Check(Outcome.UNPARSEABLE, f"the check failed: {type(error).__name__}: {error}")
        try:
            connection.send((result.outcome.value, result.reason, result.answer,
                             result.parts_right, result.parts_total))
        except OSError:
            return  # the caller was killed: nobody waits for the answer


class _Worker:
    def __init__(self, context, settings: Settings, memory_mb: int) -> None:
        self.connection, child = context.Pipe()
        # The caller's multiprocessing folder holds the forkserver's socket: a killed caller
        # leaves it behind, so its workers remove it.
        leftovers = (multiprocessing.util.get_temp_dir(),)
        self.process = context.Process(
            target=_serve, args=(child, settings, memory_mb, os.getpid(), leftovers), daemon=True)
        with starting_workers():
            self.process.start()
        child.close()
        self.job: int | None = None
        self.deadline = 0.0

    def send(self, job: int, request: Request, time_limit: float) -> None:
        self.job, self.deadline = job, time.monotonic() + time_limit
        self.connection.send(request)

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.connection.close()

    def stop(self) -> None:
        try:
            self.connection.send(None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=1)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.connection.close()


class Checker:
    """A pool of answer-checking workers; use as a context manager, or call :meth:`close`.

    One checker serves one thread at a time. Start-up costs a second or two (the first worker
    imports sympy and pint), so long-lived callers such as the app keep one checker open.
    """

    def __init__(self, settings: Settings = Settings(), workers: int = 1,
                 time_limit: float = TIME_LIMIT, memory_mb: int = MEMORY_LIMIT_MB) -> None:
        self.settings = settings
        self.time_limit = time_limit
        self.memory_mb = memory_mb
        self._context = _context()
        self._size = max(1, workers)
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers.clear()

    def check(self, request: Request) -> Check:
        """One check, bounded by the time limit."""
        return next(iter(self.map([request])))[1]

    def map(self, requests: Iterable[Request], task: Task | None = None,
            total: int | None = None) -> Iterator[tuple[Request, Check]]:
        """Every request with its check, in the order given, spread over the workers.

        ``task`` receives progress and may cancel: the checks in flight are then abandoned (their
        workers killed) and :class:`~physgrade.tasks.Cancelled` is raised.
        """
        with self._lock:
            yield from self._map(iter(requests), task, total)

    def _map(self, requests: Iterator[Request], task: Task | None,
             total: int | None) -> Iterator[tuple[Request, Check]]:
        while len(self._workers) < self._size:
            self._workers.append(_Worker(self._context, self.settings, self.memory_mb))
        pending: deque[tuple[int, Request]] = deque()
        waiting: dict[int, Request] = {}
        results: dict[int, Check] = {}
        next_job = next_out = done = 0
        exhausted = False
        try:
            while True:
                while not exhausted and len(pending) < 4 * self._size:
                    request = next(requests, None)
                    if request is None:
                        exhausted = True
                    else:
                        pending.append((next_job, request))
                        next_job += 1
                for worker in self._workers:
                    if worker.job is None and pending:
                        started, request = pending.popleft()
                        waiting[started] = request
                        self._send(worker, started, request)
                busy = [worker for worker in self._workers if worker.job is not None]
                if not busy:
                    break
                timeout = max(0.0, min(worker.deadline for worker in busy) - time.monotonic())
                ready = wait([worker.connection for worker in busy], timeout=timeout)
                for index, worker in enumerate(self._workers):
                    job = worker.job
                    if job is None:
                        continue
                    if worker.connection in ready:
                        results[job] = self._receive(index)
                    elif time.monotonic() >= worker.deadline:
                        results[job] = Check(
                            Outcome.TIMEOUT, f"the check took longer than {self.time_limit:g} s")
                        self._restart(index)
                    else:
                        continue
                    self._workers[index].job = None
                    done += 1
                while next_out in results:
                    yield waiting.pop(next_out), results.pop(next_out)
                    next_out += 1
                if task is not None:
                    task.report(done, total, "Checking answers")
        except BaseException:  # cancelled, or the caller stopped iterating: drop work in flight
            for index, worker in enumerate(self._workers):
                if worker.job is not None:
                    self._restart(index)
            raise

    def _send(self, worker: _Worker, job: int, request: Request) -> None:
        try:
            worker.send(job, request, self.time_limit)
        except (BrokenPipeError, OSError):  # the worker died while idle: give it a successor
            index = self._workers.index(worker)
            self._restart(index)
            self._workers[index].send(job, request, self.time_limit)

    def _receive(self, index: int) -> Check:
        try:
            outcome, reason, answer, right, total = self._workers[index].connection.recv()
        except (EOFError, OSError):
            self._restart(index)
            return Check(Outcome.TIMEOUT, "the check stopped its worker (out of memory?)")
        return Check(Outcome(outcome), reason, answer, right, total)

    def _restart(self, index: int) -> None:
        """Kill a stuck or dead worker and start a fresh one in its place."""
        self._workers[index].kill()
        self._workers[index] = _Worker(self._context, self.settings, self.memory_mb)
