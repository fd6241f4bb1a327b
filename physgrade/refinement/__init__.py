"""Refining a language-model judge from expert corrections, measured honestly: examples come
from a calibration part of the responses the experts graded, and the judge is measured before
and after on a held-out part it has never seen corrected (:mod:`.refine`).

``split``: the calibration and held-out parts. ``examples``: which corrections the refined
prompt shows. ``measures``: agreement before and after on the held-out part.
"""
