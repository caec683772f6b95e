"""A comparison of two runs of one bundle: what `reportgen compare` prints (JSON with `--json`) and what a
bundle keeps of its comparison with the run before it (`comparison.json`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import SCHEMA_VERSION, BundleModel

__all__ = ["CategoryChange", "Comparison", "KernelChange", "MetricChange", "Side"]


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
    gated: bool = Field(description="Whether this metric can fail the comparison (it has intervals).")
    verdict: Literal["regressed", "improved", "within noise", "host changed", "not measured"] = Field(
        description="`host changed`: the host probe's median moved beyond the threshold between the runs (its "
        "ratio r) and the step time moved no further than the host may explain (`r ** 2`, see "
        "`reportgen.compare.diff.HOST_REACH`), so it is not judged; a step time that moved beyond that by the "
        "threshold and the intervals is still `regressed` (or `improved`)."
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
