"""Numbers a study can publish: a judge's scores on every response, corrected by expert grades on
a random sample of them (prediction-powered inference, :mod:`physgrade.stats.ppi`).

``sample``: draw and store the estimation samples experts grade. ``estimates``: the corrected
estimates per model, their differences, and how many grades a wanted precision needs.
"""
