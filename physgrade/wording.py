"""How counts and sentences read in messages, said once for the command line, the core's
summaries and the app."""

from __future__ import annotations


def count(n: int, noun: str, plural: str | None = None) -> str:
    """``1 verdict``, ``2,000 verdicts``, ``3 criteria`` (with ``plural`` given)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def sentence(clause: str) -> str:
    """A core message or note ("the size must…", lower case, no full stop) as a sentence of its
    own, for text that strings several together or shows one alone."""
    return clause[:1].upper() + clause[1:] + ("" if clause.endswith(".") else ".")
