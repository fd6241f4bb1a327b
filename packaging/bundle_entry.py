"""The PyInstaller bundle's entry point (packaging/physgrade.spec): physgrade's command line, as
the ``physgrade`` console script runs it; with no command it opens the desktop app."""

import multiprocessing
import os
import sys


def main() -> int:
    # The answer checks' worker processes (forkserver, else spawn) start through this
    # executable: freeze_support makes such a start run the worker, not the command line.
    multiprocessing.freeze_support()
    # A windowed build (Windows, macOS) may start without standard streams; printing and Qt's
    # messages then go nowhere instead of failing.
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    from physgrade.cli import main as command_line

    return command_line()


if __name__ == "__main__":
    sys.exit(main())
