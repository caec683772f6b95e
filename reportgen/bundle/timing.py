"""Timing statistics of a run, computed by `reportgen.analyze` from the step samples in the manifest."""

from __future__ import annotations

import math

from pydantic import Field

from reportgen.bundle.base import NOT_MEASURED, BundleModel

__all__ = ["Interval", "TimingSummary", "format_ms"]


def format_ms(value: float) -> str:
    """A step time in milliseconds as every page and finding writes it: 2 decimals from 1 ms up, else 3
    significant digits (`0.118`); "—" for what is not a finite number (a bundle may come from elsewhere)."""
    if not math.isfinite(value):
        return NOT_MEASURED
    return f"{value:.2f}" if value >= 1 else f"{value:#.3g}"


class Interval(BundleModel):
    """A confidence interval."""

    low: float
    high: float
    level: float = Field(default=0.95, description="Confidence level, e.g. 0.95.")

    def contains(self, value: float) -> bool:
        """Whether `value` lies in the interval (ends included)."""
        return self.low <= value <= self.high


class TimingSummary(BundleModel):
    """How confident the step times and the speedup are."""

    eager_median_ci_ms: Interval | None = Field(default=None, description="Bootstrap interval of eager's median.")
    compiled_median_ci_ms: Interval | None = Field(default=None, description="Bootstrap interval of compiled's median.")
    speedup_ci: Interval | None = Field(
        default=None, description="Bootstrap interval of median(eager) / median(compiled)."
    )
    eager_cv: float | None = Field(default=None, description="Coefficient of variation of eager's samples.")
    compiled_cv: float | None = Field(default=None, description="Coefficient of variation of compiled's samples.")
    host_cv: float | None = Field(
        default=None,
        description="Coefficient of variation of the host probe (`Metrics.host_probe_ms`): how much the host CPU's "
        "speed varied while the steps were timed.",
    )
    host_correlation: float | None = Field(
        default=None,
        description="Rank correlation between the host probe and the mean of the pair of blocks timed after it: "
        "near 1 when the steps slowed down with the host's CPU.",
    )
    resamples: int = Field(default=0, description="Bootstrap resamples behind the intervals.")
    paired: bool = Field(
        default=False,
        description="Whether the speedup's resamples kept sample i of eager and of compiled together (taken side "
        "by side); False when the counts differ and each side was resampled on its own.",
    )
