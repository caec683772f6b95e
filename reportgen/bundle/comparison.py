"""A comparison of two runs of one bundle: what `reportgen compare` prints (JSON with `--json`) and what a
bundle keeps of its comparison with the run before it (`comparison.json`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import SCHEMA_VERSION, BundleModel
from reportgen.bundle.capture import Tuning
from reportgen.bundle.figures import FigureKind

__all__ = [
    "MIN_WALL_RUNS",
    "CategoryChange",
    "Comparison",
    "CountChange",
    "KernelChange",
    "LaunchChange",
    "MetricChange",
    "Side",
    "Verdict",
]

MIN_WALL_RUNS = 3
"""Runs a side must pool before its wall figures (step times, wall speedup) are judged. One process's intervals
miss the variation between processes: five runs of the transformer recipe on one H200 spread 39 % in eager step
time while device time per step stayed within 0.26 % and every count was equal."""

Verdict = Literal[
    "regressed",
    "improved",
    "changed",
    "within noise",
    "host or between-process",
    "not judged",
    "host changed",
    "not measured",
]
"""What a compared figure did:

- `regressed` / `improved`: beyond its threshold (and outside both intervals, where it has them);
- `changed`: a count that moved by less than its threshold (listed, never failing);
- `within noise`: judged, and it did not move beyond its threshold and intervals;
- `host or between-process`: a wall figure that moved beyond its threshold and intervals while no device figure or
  count of the comparison moved: the host's CPU speed or the variation between processes, not the code;
- `not judged`: a wall figure with fewer than `MIN_WALL_RUNS` runs on a side (one process's intervals miss the
  variation between processes), or a device figure of a CPU run (CPU time: host-dependent);
- `host changed`: comparisons written before issue 27 (the host probe moved; read, never written now);
- `not measured`: a side lacks the figure."""


class Side(BundleModel):
    """One of the two runs."""

    bundle: str = Field(description="The bundle's directory.")
    run: str | None = Field(
        default=None, description="Where the run lies in its results directory (`<name>` or `.history/<name>/<id>`)."
    )
    pooled: list[str] = Field(
        default_factory=list,
        description="Other runs of the same identity whose step times were pooled with this one's (their paths).",
    )
    recipe_sha256: str | None = None
    device_name: str | None = None
    status: str
    torch: str | None = None
    device: str | None = None
    started_at: str | None = None


class MetricChange(BundleModel):
    """One headline number, before and after."""

    name: str
    unit: str
    better: Literal["lower", "higher"]
    before: float | None
    after: float | None
    before_ci: tuple[float, float] | None = None
    after_ci: tuple[float, float] | None = None
    gated: bool = Field(description="Whether this metric can fail the comparison.")
    verdict: Verdict
    kind: FigureKind = Field(
        default="wall",
        description="`device` (GPU clock), `count` (exact), `wall` (host-dependent) or `other` (compile time, memory).",
    )
    side: Literal["eager", "compiled", "both"] | None = Field(
        default=None, description="Which side of the run the figure is of; None: neither (compile time, probe)."
    )

    @property
    def change(self) -> float | None:
        """after / before - 1."""
        if self.before is None or self.after is None or self.before == 0:
            return None
        return self.after / self.before - 1.0


class KernelChange(BundleModel):
    """A kernel of one graph whose time per step changed beyond the threshold, appeared or went away."""

    graph: str
    name: str
    category: str
    before_us: float | None = Field(description="Device time per profiled step, µs; None = absent.")
    after_us: float | None
    kind: Literal["added", "removed", "slower", "faster"]


class CountChange(BundleModel):
    """An op or kernel name whose count per step changed: what stands behind a changed count."""

    side: Literal["eager", "compiled"]
    what: Literal["aten op", "kernel"]
    name: str
    before: float = Field(description="Per profiled step; 0 = absent.")
    after: float


class LaunchChange(BundleModel):
    """A Triton kernel both runs launched, with another config in each (`Capture.launches`): the same code doing
    other work, as when a kernel tuned in each run's process on its first call chose differently."""

    kernel: str
    source: str = Field(description="Its source file's name (the hash of its code).")
    before: str = Field(description="The config `before` launched it with.")
    after: str
    tuning: tuple[Tuning, Tuning] = Field(description="How each side chose it.")


class CategoryChange(BundleModel):
    """Device time per step of one Inductor category in one graph."""

    graph: str
    category: str
    before_us: float
    after_us: float


class Comparison(BundleModel):
    """Two runs of one recipe (and variant) side by side."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str
    before: Side
    after: Side
    threshold: float
    metrics: list[MetricChange]
    categories: list[CategoryChange] = Field(default_factory=list)
    kernels: list[KernelChange] = Field(default_factory=list)
    count_changes: list[CountChange] = Field(
        default_factory=list, description="Ops and kernels whose count per step changed, largest change first."
    )
    launch_changes: list[LaunchChange] = Field(
        default_factory=list, description="Triton kernels both runs launched with another config in each."
    )
    device_threshold: float | None = Field(
        default=None, description="The threshold device figures were judged with (None: comparisons before issue 27)."
    )
    compile_phases_s: dict[str, tuple[float | None, float | None]] = Field(default_factory=dict)
    graph_breaks: tuple[int, int] = (0, 0)
    recompiles: tuple[int, int] = (0, 0)
    notes: list[str] = Field(default_factory=list)
    comparable: bool = Field(
        default=True,
        description="Same recipe file and device model on both sides. `reportgen compare` judges any two runs it is "
        "given; a report's `regressions` finding only judges its run against a comparable one.",
    )

    @property
    def regressed(self) -> bool:
        """Whether a gated headline metric regressed beyond its noise."""
        return bool(self.regressions)

    @property
    def regressions(self) -> list[MetricChange]:
        """The gated headline metrics that regressed beyond their noise."""
        return [m for m in self.metrics if m.verdict == "regressed" and m.gated]
