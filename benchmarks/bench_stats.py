"""Speed of Krippendorff's alpha with its bootstrap interval, against one plain alpha.

Target (issue: statistics): alpha with 1,000 bootstrap resamples on 6,000 items x 2 raters takes
well under 50 ms, since a report computes about a hundred alphas on 5,000-60,000 items. The best
of several runs is reported (this machine is noisy).

    python benchmarks/bench_stats.py [--items 6000] [--raters 2] [--resamples 1000] [--level ordinal]
"""

from __future__ import annotations

import argparse
import timeit

import krippendorff
import numpy as np

from physgrade.stats.agreement import SCALES, krippendorff_alpha


def ratings(items: int, raters: int) -> np.ndarray:
    """Criterion scores 0-2 that mostly agree, with 5% of ratings missing."""
    rng = np.random.default_rng(0)
    truth = rng.integers(0, 3, items)
    data = np.column_stack([np.where(rng.random(items) < 0.8, truth, rng.integers(0, 3, items))
                            for _ in range(raters)]).astype(float)
    data[rng.random(data.shape) < 0.05] = np.nan
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=6000)
    parser.add_argument("--raters", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--level", choices=SCALES, default="ordinal")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()

    data = ratings(args.items, args.raters)
    ours = min(timeit.repeat(lambda: krippendorff_alpha(data, args.level, resamples=args.resamples),
                             number=1, repeat=args.repeat))
    plain = min(timeit.repeat(lambda: krippendorff.alpha(data.T, level_of_measurement=args.level),
                              number=1, repeat=args.repeat))
    estimate = krippendorff_alpha(data, args.level, resamples=args.resamples)
    print(f"{args.items:,} items x {args.raters} raters, {args.level}: alpha {estimate.text()}")
    print(f"  with {args.resamples:,} bootstrap resamples  {ours * 1000:8.1f} ms")
    print(f"  one krippendorff.alpha call      {plain * 1000:8.1f} ms")
    print(f"  ratio                            {ours / plain:8.1f}x  (a loop of resamples: "
          f"~{args.resamples + 1}x)")


if __name__ == "__main__":
    main()
