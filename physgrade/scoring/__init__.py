"""A project's scores as the reports read them: read once into memory, then narrowed there.

- :mod:`physgrade.scoring.store`: the scores as columnar arrays (a ``ScoreStore``);
- :mod:`physgrade.scoring.tables`: a selection of a store as tables, joined with what was scored;
- :mod:`physgrade.scoring.readings`: what a report reads besides the scores, kept until it changes;
- :mod:`physgrade.scoring.cache`: a store and readings kept up to date while a project is open.

Scores are written by :mod:`physgrade.scores` alone, never here.
"""
