"""Timed steps: the wall-time samples every run's step timing records (shared by the manifest and the ranks)."""

from __future__ import annotations

from pydantic import Field

from reportgen.bundle.base import BundleModel

__all__ = ["StepTimes"]


class StepTimes(BundleModel):
    """Wall times of timed steps, in milliseconds per step.

    Each sample is one block of `block_steps` steps run back to back (as a training loop runs them) and
    synchronised once at its end, divided by `block_steps`; eager and compiled blocks alternate, so
    sample i of eager and sample i of compiled were taken side by side.
    """

    samples_ms: list[float]
    block_steps: int = Field(default=1, description="Steps per timed block (1: each step synchronised alone).")
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float

    @property
    def iqr_ms(self) -> float:
        """Inter-quartile range."""
        return self.q3_ms - self.q1_ms
