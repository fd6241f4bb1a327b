"""Agreement statistics for comparing human grades with LLM-judge verdicts (see docs/statistics.md)."""

from __future__ import annotations

from physgrade.stats.agreement import (
    COEFFICIENTS,
    SCALES,
    agreement,
    cohen_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    krippendorff_alpha,
    percent_agreement,
)
from physgrade.stats.estimate import Estimate
from physgrade.stats.paired import (
    Bias,
    McNemar,
    SignTest,
    bias,
    confusion_matrix,
    mcnemar_exact,
    mean_absolute_difference,
    pearson,
    sign_test,
    spearman,
)
from physgrade.stats.table import RatingsTable, read_ratings

__all__ = [
    "COEFFICIENTS", "SCALES", "Bias", "Estimate", "McNemar", "RatingsTable", "SignTest", "agreement",
    "bias", "cohen_kappa", "confusion_matrix", "fleiss_kappa", "gwet_ac1", "gwet_ac2",
    "krippendorff_alpha", "mcnemar_exact", "mean_absolute_difference", "pearson", "percent_agreement",
    "read_ratings", "sign_test", "spearman",
]
