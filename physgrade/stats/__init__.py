"""Agreement statistics for comparing human grades with LLM-judge verdicts (see docs/statistics.md).

Import from the module that defines a name: ``estimate`` (light) for :class:`Estimate`,
``agreement``, ``paired`` and ``describe`` for the statistics (they load scipy, statsmodels,
scikit-learn and krippendorff), ``table`` for reading a ratings CSV. The package itself loads
nothing, so that code which only shows estimates stays quick to start.
"""
