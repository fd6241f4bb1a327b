"""No orphans: worker processes end when the process that started them ends, even by SIGKILL.

A killed caller runs no clean-up, so its workers must notice by themselves. Each worker calls
:func:`die_with` first thing, naming the caller (its ``os.getpid()``):

* when the caller is the worker's parent (a forked pool), Linux kills the worker the moment the
  parent dies (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), even when it is stuck in C code;
* otherwise (a forkserver's workers, whose parent is the server) or where ``prctl`` does not
  exist, a watchdog thread waits for the caller's end (a pidfd on Linux, a process handle on
  Windows, a poll twice a second elsewhere), removes what the caller left behind (the folder of
  multiprocessing's forkserver socket) and ends the worker.

A forkserver ends by itself once its caller and all its workers are gone (its "alive" pipe hits
end of file), so the whole chain goes.

Only the caller stops its workers otherwise. Ctrl+C reaches every process in the terminal's
foreground group, and a worker interrupted mid-task prints its traceback. So workers are started
inside :func:`starting_workers`, which holds the caller's signals (SIGINT, SIGTERM) back until
the start is complete: no start is left half made, and the processes started are born with those
signals blocked (a forkserver imports its preloads for seconds before it ignores Ctrl+C itself).
:func:`die_with` then ignores Ctrl+C in the worker and gives SIGTERM back its default, silent
end (a forked worker inherits its caller's handlers).

The kernel's signal is tied to the *thread* that forked the worker: a forked pool must be shut
down before the thread that made it ends (pools in this package live inside one call).
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import sys
import threading
import time
from contextlib import contextmanager
from typing import Iterable, Iterator

_PR_SET_PDEATHSIG = 1
_POLL_S = 0.5
#: The signals that stop a caller, which its workers leave to it.
_CALLERS_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def starting_workers() -> Iterator[None]:
    """Start worker processes inside this block (see the module's notes): the caller's signals
    that arrive meanwhile take effect when it ends."""
    if not hasattr(signal, "pthread_sigmask"):  # Windows: no signal masks to inherit
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _CALLERS_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def die_with(origin: int, leftovers: Iterable[str] = ()) -> None:
    """End this process as soon as the process ``origin`` ends, and leave stopping it otherwise
    to ``origin`` (see the module's notes). Where the watchdog does it, it first removes the
    folders ``leftovers`` that a killed ``origin`` could not remove itself (the kernel's SIGKILL
    leaves no time for that)."""
    _leave_signals_to_caller()
    if os.getppid() == origin and _kill_on_parent_death():
        if os.getppid() != origin:  # the parent died before the kernel was asked
            os._exit(1)
        return
    threading.Thread(target=_watch, args=(origin, tuple(leftovers)), name="die-with-caller",
                     daemon=True).start()


def _leave_signals_to_caller() -> None:
    """Ignore Ctrl+C, and end at once on SIGTERM (which must still end a worker: pools terminate
    their workers with it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})


def _kill_on_parent_death() -> bool:
    """Ask Linux for SIGKILL when the parent dies; False where that cannot be asked."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(origin: int, leftovers: tuple[str, ...]) -> None:
    """Block until ``origin`` has ended, then clean up and end this process (if it cannot be
    watched, the worker lives on: its caller still ends it in the ordinary way)."""
    try:
        _wait_for_end(origin)
    except Exception:  # noqa: BLE001 - a watchdog that fails must not take its worker down
        return
    for folder in leftovers:
        shutil.rmtree(folder, ignore_errors=True)  # the other workers may be at it too
    os._exit(1)


def _wait_for_end(origin: int) -> None:
    if sys.platform == "win32":
        import _winapi

        synchronize = 0x00100000
        handle = _winapi.OpenProcess(synchronize, False, origin)
        _winapi.WaitForSingleObject(handle, _winapi.INFINITE)
        return
    try:
        descriptor = os.pidfd_open(origin)  # Linux 5.3+: readable once the process has ended
    except ProcessLookupError:
        return
    except (AttributeError, OSError):
        descriptor = None
    if descriptor is not None:
        select.select([descriptor], [], [])
        return
    while _alive(origin):
        time.sleep(_POLL_S)


def _alive(origin: int) -> bool:
    if os.getppid() == origin:
        return True
    try:
        os.kill(origin, 0)  # POSIX only: on Windows this would end the process
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
