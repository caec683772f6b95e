"""A sweep's points read side by side: each point's figures from its bundle, the series along one axis, and what the
curves say (where compiled stops paying off, which mode gains most where).

The figures are the bundles' own (medians, intervals, speedups, device speedup, peak memory, compile time);
throughput is the batch over the median step. Failed points (an out-of-memory at a large batch) stay in the
series with their status, so a page can mark them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from reportgen.bundle.analysis import Finding
from reportgen.bundle.base import RunStatus
from reportgen.bundle.store import Bundle
from reportgen.bundle.timing import Interval

__all__ = ["PAYOFF", "PointFigures", "Series", "ordered", "point_figures", "series", "sweep_axes", "sweep_findings"]

PAYOFF: Final = 1.0
"""Compiled pays off at a point when its speedup's interval lies above this."""


@dataclass(frozen=True)
class PointFigures:
    """One point of a sweep: its values on the swept axes and its bundle's figures."""

    name: str
    point: dict[str, str]
    status: RunStatus
    batch: int | None
    eager_ms: float | None = None
    compiled_ms: float | None = None
    eager_ci: Interval | None = None
    compiled_ci: Interval | None = None
    speedup: float | None = None
    speedup_ci: Interval | None = None
    device_speedup: float | None = None
    peak_eager_bytes: int | None = None
    peak_compiled_bytes: int | None = None
    compile_s: float | None = None
    recompiles: int | None = None

    @property
    def throughput(self) -> tuple[float | None, float | None]:
        """Samples per second, eager and compiled: the batch over the median step."""
        if self.batch is None:
            return None, None
        return tuple(self.batch / (ms / 1000) if ms else None for ms in (self.eager_ms, self.compiled_ms))  # type: ignore[return-value]

    @property
    def pays_off(self) -> bool | None:
        """Whether compiled is faster beyond the noise (speedup interval above 1); None without an interval."""
        if self.speedup_ci is None:
            return None
        return self.speedup_ci.low > PAYOFF


def point_figures(bundle: Bundle) -> PointFigures:
    """A point's figures from its bundle (a failed run keeps its status and whatever it measured)."""
    m, a = bundle.manifest, bundle.analysis
    timing = a.timing if a is not None else None
    metrics = m.metrics
    return PointFigures(
        name=bundle.name,
        point=dict(m.point),
        status=m.status,
        batch=m.recipe.inputs.batch_size,
        eager_ms=metrics.eager.median_ms if metrics.eager else None,
        compiled_ms=metrics.compiled.median_ms if metrics.compiled else None,
        eager_ci=timing.eager_median_ci_ms if timing else None,
        compiled_ci=timing.compiled_median_ci_ms if timing else None,
        speedup=metrics.speedup,
        speedup_ci=timing.speedup_ci if timing else None,
        device_speedup=a.figures.device_speedup if a is not None and a.figures is not None else None,
        peak_eager_bytes=metrics.peak_memory_eager_bytes,
        peak_compiled_bytes=metrics.peak_memory_compiled_bytes,
        compile_s=metrics.compile_time_s,
        recompiles=sum(1 for v in a.versions if v.reason) if a is not None else None,
    )


def sweep_axes(points: Sequence[PointFigures]) -> list[str]:
    """The axes whose value differs between points, in the order the points name them."""
    names: dict[str, None] = {}
    for p in points:
        names.update(dict.fromkeys(p.point))
    return [n for n in names if len({p.point.get(n) for p in points}) > 1]


def _order(value: str) -> tuple[int, float, str]:
    """Numbers in numeric order, then text."""
    try:
        return 0, float(value), value
    except ValueError:
        return 1, 0.0, value


@dataclass(frozen=True)
class Series:
    """The points along `axis` that share their values on every other axis: one line of a chart."""

    axis: str
    label: str
    points: tuple[PointFigures, ...]

    @property
    def values(self) -> list[str]:
        """The axis' value at each point, in order."""
        return [p.point.get(self.axis, "") for p in self.points]


def series(points: Sequence[PointFigures], axis: str) -> list[Series]:
    """The lines of a chart against `axis`: one per combination of the other axes' values, points in axis order."""
    others = [a for a in sweep_axes(points) if a != axis]
    groups: dict[tuple[str, ...], list[PointFigures]] = {}
    for p in points:
        groups.setdefault(tuple(p.point.get(a, "") for a in others), []).append(p)
    return [
        Series(
            axis,
            ", ".join(f"{a} {v}" for a, v in zip(others, key, strict=True)) or "all points",
            tuple(sorted(members, key=lambda p: _order(p.point.get(axis, "")))),
        )
        for key, members in sorted(groups.items(), key=lambda item: [_order(v) for v in item[0]])
    ]


def ordered(points: Sequence[PointFigures]) -> list[PointFigures]:
    """The points in the order of their values, axis by axis (numbers numerically)."""
    axes = sweep_axes(points)
    return sorted(points, key=lambda p: [_order(p.point.get(a, "")) for a in axes])


def sweep_findings(points: Sequence[PointFigures]) -> list[Finding]:
    """What the curves say: where along the batch axis compiled stops paying off, which mode gains most where,
    and the points that failed."""
    return [f for f in (_payoff(points), _best_mode(points), _failed(points)) if f is not None]


def _payoff(points: Sequence[PointFigures]) -> Finding | None:
    """Per line along `batch_size`: the batch sizes below which compiled stops beating eager beyond the noise."""
    if "batch_size" not in sweep_axes(points):
        return None
    lines, thresholds = [], []
    for line in series(points, "batch_size"):
        verdicts = [(p.point.get("batch_size", ""), p.pays_off) for p in line.points if p.pays_off is not None]
        paying = [b for b, pays in verdicts if pays]
        losing = [b for b, pays in verdicts if not pays]
        if paying and losing and max(map(float, losing)) < min(map(float, paying)):
            lines.append(f"{line.label}: pays off from batch {paying[0]}, not at {', '.join(losing)}")
            thresholds.append(paying[0])
    if not lines:
        return None
    return Finding(
        rule="sweep-payoff",
        severity="info",
        title=f"Compiled stops paying off below batch {min(thresholds, key=_order)}",
        evidence="\n".join(f"- {line}" for line in lines),
        suggestion="At small batches the step is launch-bound: try `mode: reduce-overhead` (CUDA graphs) there.",
    )


def _best_mode(points: Sequence[PointFigures]) -> Finding | None:
    """With `mode` and `batch_size` swept: at which batch each mode's speedup is highest."""
    axes = sweep_axes(points)
    if "mode" not in axes or "batch_size" not in axes:
        return None
    best: dict[str, tuple[float, str]] = {}
    for line in series(points, "mode"):
        batch = line.points[0].point.get("batch_size", "")
        ranked = [p for p in line.points if p.speedup is not None]
        if ranked:
            top = max(ranked, key=lambda p: p.speedup or 0.0)
            best[batch] = (top.speedup or 0.0, top.point.get("mode", ""))
    if not best:
        return None
    rows = [f"- batch {b}: {mode} ({s:.2f}x)" for b, (s, mode) in sorted(best.items(), key=lambda i: _order(i[0]))]
    return Finding(
        rule="sweep-best-mode",
        severity="info",
        title="The best compile mode by batch size",
        evidence="\n".join(rows),
        suggestion="Each speedup is that point's own eager against its compiled steps; compare intervals on the "
        "points' pages before choosing a mode.",
    )


def _failed(points: Sequence[PointFigures]) -> Finding | None:
    failed = [p for p in points if p.status is not RunStatus.ok]
    if not failed:
        return None
    return Finding(
        rule="sweep-failed-points",
        severity="warning",
        title=f"{len(failed)} of {len(points)} points did not finish",
        evidence="\n".join(f"- `{p.name}`: {p.status.value}" for p in failed),
        suggestion="Each point's page gives its error; an out-of-memory point marks where the sweep's axis ends.",
    )
