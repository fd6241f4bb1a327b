"""Final answers checked by rule: a third rater beside people and LLM judges.

The pieces: :mod:`extract` finds a response's final answer, :mod:`latex` and :mod:`expr` read
answer text into sympy without ``eval``, :mod:`units` reads quantities with pint, :mod:`compare`
decides by answer type, :mod:`sandbox` runs checks in worker processes bounded in time and memory,
and :mod:`verify` stores the verdicts of a whole project as the rater ``rules``.
"""

from .outcome import Check, Outcome, Settings

__all__ = ["Check", "Outcome", "Settings"]
