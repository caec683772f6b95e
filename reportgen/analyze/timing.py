"""Timing statistics: bootstrap intervals of the median step times and of the speedup, and run-to-run noise.

Each sample of `StepTimes` is one timed block; eager and compiled blocks alternate, so sample i of each were
taken side by side and the speedup resamples them in pairs (a slow stretch of the machine then slows both
halves of a pair alike instead of widening the interval). The bootstrap is the percentile one, with a fixed
seed so that analysing a bundle again gives the same numbers. No sample is ever dropped as an outlier.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from reportgen.bundle import Interval, Metrics, TimingSummary

__all__ = ["LEVEL", "RESAMPLES", "SEED", "percentile_interval", "timing_summary"]

RESAMPLES = 2000
"""Bootstrap resamples per interval."""
LEVEL = 0.95
"""Confidence level of the intervals."""
SEED = 15
"""Seed of the resampling: the same samples always give the same intervals."""


def timing_summary(metrics: Metrics) -> TimingSummary | None:
    """Intervals of both medians and of the speedup, and each side's coefficient of variation.

    The speedup's resamples take the same indices for eager and compiled (median(eager) / median(compiled) of
    each resample); when the sample counts differ, each side is resampled on its own.

    :returns: None when eager or compiled was not timed (or recorded no samples)
    """
    eager, compiled = metrics.eager, metrics.compiled
    if eager is None or compiled is None or not eager.samples_ms or not compiled.samples_ms:
        return None
    eager_ms = np.asarray(eager.samples_ms, dtype=np.float64)
    compiled_ms = np.asarray(compiled.samples_ms, dtype=np.float64)
    rng = np.random.default_rng(SEED)
    paired = eager_ms.size == compiled_ms.size
    eager_idx = rng.integers(0, eager_ms.size, size=(RESAMPLES, eager_ms.size))
    compiled_idx = eager_idx if paired else rng.integers(0, compiled_ms.size, size=(RESAMPLES, compiled_ms.size))
    eager_medians = np.median(eager_ms[eager_idx], axis=1)
    compiled_medians = np.median(compiled_ms[compiled_idx], axis=1)
    positive = bool(np.all(compiled_medians > 0))
    return TimingSummary(
        eager_median_ci_ms=percentile_interval(eager_medians),
        compiled_median_ci_ms=percentile_interval(compiled_medians),
        speedup_ci=percentile_interval(eager_medians / compiled_medians) if positive else None,
        eager_cv=_cv(eager_ms),
        compiled_cv=_cv(compiled_ms),
        host_cv=_cv(np.asarray(metrics.host_probe_ms, dtype=np.float64)),
        host_correlation=_host_correlation(metrics.host_probe_ms, eager_ms, compiled_ms),
        resamples=RESAMPLES,
        paired=paired,
    )


def percentile_interval(values: NDArray[np.float64]) -> Interval:
    """The central `LEVEL` percentile interval of bootstrap replicates."""
    tail = (1.0 - LEVEL) / 2
    low, high = np.quantile(values, [tail, 1.0 - tail])
    return Interval(low=float(low), high=float(high), level=LEVEL)


def _host_correlation(
    probe_ms: list[float], eager_ms: NDArray[np.float64], compiled_ms: NDArray[np.float64]
) -> float | None:
    """Spearman's rank correlation of the probe before each pair with the pair's mean step time; None without
    one probe per pair, or when either side is constant."""
    if len(probe_ms) < 3 or not (len(probe_ms) == eager_ms.size == compiled_ms.size):
        return None
    probe_ranks = np.argsort(np.argsort(np.asarray(probe_ms, dtype=np.float64)))
    pair_ranks = np.argsort(np.argsort((eager_ms + compiled_ms) / 2))
    if np.ptp(probe_ranks) == 0 or np.ptp(pair_ranks) == 0:
        return None
    return float(np.corrcoef(probe_ranks, pair_ranks)[0, 1])


def _cv(samples: NDArray[np.float64]) -> float | None:
    """Sample standard deviation ÷ mean; None with fewer than two samples or a mean that is not positive."""
    if samples.size < 2:
        return None
    mean = float(np.mean(samples))
    if mean <= 0:
        return None
    return float(np.std(samples, ddof=1)) / mean
