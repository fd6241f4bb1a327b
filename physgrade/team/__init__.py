"""Team grading: several experts grade the same study, each on their own machine.

- :mod:`~physgrade.team.assign` splits responses among named graders, with a chosen share
  graded twice, stratified by model and topic, reproducible from a seed;
- :mod:`~physgrade.team.packs` writes one grader's share as a project file of its own (a pack);
- :mod:`~physgrade.team.merge` brings a pack's grades, notes and history back, three-way, and
  keeps what two places disagree on as conflicts for a person to settle;
- :mod:`~physgrade.team.adjudication` finds responses the graders disagree on and records an
  adjudicator's final values, which become the human consensus reports use;
- :mod:`~physgrade.team.progress` says how far each grader has got.
"""
