"""What a finding rule reads (`FindingInputs`) and what a rule is (`Rule`): the rules' modules and `findings`, which
runs them, share these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from reportgen.analyze.timing import timing_summary
from reportgen.bundle import Analysis, Capture, Finding, Manifest, TimingSummary

__all__ = ["FindingInputs", "Rule"]


@dataclass(frozen=True)
class FindingInputs:
    """What a rule may read: the manifest, capture.json (empty when the run wrote none), the analysis so far."""

    manifest: Manifest
    capture: Capture
    analysis: Analysis

    @property
    def device(self) -> str | None:
        """`cuda` or `cpu`; None when the run recorded no environment."""
        return self.manifest.environment.device if self.manifest.environment else None

    @cached_property
    def timing(self) -> TimingSummary | None:
        """The analysis' timing summary; computed from the manifest's samples when the analysis holds none."""
        return self.analysis.timing if self.analysis.timing is not None else timing_summary(self.manifest.metrics)


Rule = Callable[[FindingInputs], Finding | None]
"""A rule: the finding it makes of the inputs, or None when it does not fire."""
