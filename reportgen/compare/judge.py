"""Judging each kind of figure (`reportgen.bundle.figures`): device figures against the range of their profiled
steps, counts exactly, wall figures only with `MIN_WALL_RUNS` runs a side and never alone."""

from __future__ import annotations

from typing import Literal

from reportgen.bundle import (
    COUNTS,
    CountChange,
    Figures,
    KernelLaunch,
    LaunchChange,
    MetricChange,
    StepFigures,
    Verdict,
)
from reportgen.compare.pool import Headline

__all__ = [
    "COUNT_CHANGE_ROWS",
    "count_changes",
    "count_metrics",
    "device_metrics",
    "launch_changes",
    "metric",
    "side_figures",
    "wall_metrics",
]

COUNT_CHANGE_ROWS = 40
"""Op and kernel names kept per comparison whose count per step changed, largest change first."""

_Sides = tuple[Figures | None, Figures | None]
_SIDES: tuple[Literal["eager", "compiled"], ...] = ("eager", "compiled")


def side_figures(figures: Figures | None, side: str) -> StepFigures | None:
    if figures is None:
        return None
    return figures.eager if side == "eager" else figures.compiled


def device_metrics(figures: _Sides, threshold: float) -> list[MetricChange]:
    """Device time per step (gated on GPU runs: the GPU's clock), GPU-active time and the device speedup (shown).

    A device figure's interval is the range of its profiled steps: the steps of one run repeat within a fraction
    of a percent, so a change beyond the threshold and outside both ranges is the code's (or the GPU's)."""
    on_gpu = all(f is not None and f.device == "cuda" for f in figures)

    def judged(m: MetricChange) -> MetricChange:  # on a CPU run they are CPU time: the host's speed moves them
        if on_gpu or m.verdict == "not measured":
            return m
        return m.model_copy(update={"verdict": "not judged", "gated": False})

    out: list[MetricChange] = []
    for side in _SIDES:
        pair = tuple(side_figures(f, side) for f in figures)
        out += [
            judged(_device_metric("device time", side, pair, threshold, ranged=True)),
            judged(_device_metric("GPU-active time", side, pair, threshold, ranged=False)),
        ]
    speedups = [f.device_speedup if f else None for f in figures]
    speedup = metric("device speedup", "x", "higher", speedups[0], speedups[1], None, None, threshold)
    return [*out, judged(speedup.model_copy(update={"kind": "device", "side": "both"}))]


def _device_metric(
    what: str, side: str, pair: tuple[StepFigures | None, ...], threshold: float, ranged: bool
) -> MetricChange:
    """Device time (judged against the steps' ranges) or GPU-active time (shown) per step of one side."""
    values = [(x.device_ms if ranged else x.active_ms) if x else None for x in pair]
    ranges = [x.device_range_ms if x and ranged else None for x in pair]
    m = metric(f"{what} per step, {side}", "ms", "lower", values[0], values[1], ranges[0], ranges[1], threshold)
    return m.model_copy(update={"kind": "device", "side": side})


def count_metrics(figures: _Sides, threshold: float) -> list[MetricChange]:
    """Each count per step, eager and compiled: exact for a given code and input. Growth beyond the threshold
    regresses, shrinking beyond it improves, any smaller change is `changed` (listed, not failing); a count
    neither side can have (GPU counts of CPU runs) is left out."""
    out: list[MetricChange] = []
    for side in _SIDES:
        a, b = (side_figures(f, side) for f in figures)
        for name, words in COUNTS.items():
            before, after = (x.count(name) if x else None for x in (a, b))
            if before is None and after is None:
                continue
            out.append(
                MetricChange(
                    name=f"{words} per step, {side}",
                    unit="",
                    better="lower",
                    before=before,
                    after=after,
                    gated=before is not None and after is not None,
                    verdict=_count_verdict(before, after, threshold),
                    kind="count",
                    side=side,
                )
            )
    return out


def _count_verdict(before: float | None, after: float | None, threshold: float) -> Verdict:
    if before is None or after is None:
        return "not measured"
    if after == before:
        return "within noise"
    if before == 0:
        return "regressed"  # something the step never did
    change = after / before - 1.0
    return "regressed" if change > threshold else "improved" if change < -threshold else "changed"


def wall_metrics(
    headlines: tuple[Headline, Headline], threshold: float, judged: bool, code_moved: bool
) -> list[MetricChange]:
    """Step times and the wall speedup, judged only with `MIN_WALL_RUNS` runs a side; a move beyond the threshold
    and the intervals while no device figure or count moved is `host or between-process` (not failing). The host
    probe is shown, never gated."""
    old_h, new_h = headlines
    out = []
    for name, side, better, x, y in (
        ("eager median", "eager", "lower", old_h.eager, new_h.eager),
        ("compiled median", "compiled", "lower", old_h.compiled, new_h.compiled),
        ("speedup", "both", "higher", old_h.speedup, new_h.speedup),
    ):
        m = metric(
            name, "ms" if name != "speedup" else "x", better, x.value, y.value, x.interval, y.interval, threshold
        )
        if m.verdict != "not measured":
            if not judged:
                m = m.model_copy(update={"verdict": "not judged", "gated": False})
            elif m.verdict in ("regressed", "improved") and not code_moved:
                m = m.model_copy(update={"verdict": "host or between-process", "gated": False})
        out.append(m.model_copy(update={"kind": "wall", "side": side}))
    host = metric(
        "host probe (CPU speed)", "ms", "lower", old_h.host_probe_ms, new_h.host_probe_ms, None, None, threshold
    )
    if host.change is not None:
        moved = abs(host.change) > threshold
        host = host.model_copy(update={"verdict": "host or between-process" if moved else "within noise"})
    return [*out, host.model_copy(update={"kind": "wall", "gated": False})]


def count_changes(
    before: Figures | None, after: Figures | None, limit: int | None = COUNT_CHANGE_ROWS
) -> list[CountChange]:
    """Ops and kernels whose count per step changed, each side, largest change first (the first `limit`; None:
    all)."""
    out: list[CountChange] = []
    for side in _SIDES:
        a, b = side_figures(before, side), side_figures(after, side)
        if a is None or b is None:
            continue
        for what, x, y in (("aten op", a.aten_ops, b.aten_ops), ("kernel", a.kernels, b.kernels)):
            for name in set(x) | set(y):
                old, new = x.get(name, 0.0), y.get(name, 0.0)
                if old != new:
                    out.append(CountChange(side=side, what=what, name=name, before=old, after=new))  # type: ignore[arg-type]
    out.sort(key=lambda c: (-abs(c.after - c.before), c.side, c.name))
    return out[:limit]


def launch_changes(before: list[KernelLaunch], after: list[KernelLaunch]) -> list[LaunchChange]:
    """The Triton kernels both runs launched (same name and source), each with another config, by name."""
    old = {(k.kernel, k.source): k for k in before}
    return [
        LaunchChange(kernel=k.kernel, source=k.source, before=was.config, after=k.config, tuning=(was.tuning, k.tuning))
        for k in sorted(after, key=lambda k: (k.kernel, k.source))
        if (was := old.get((k.kernel, k.source))) is not None and was.config != k.config
    ]


def metric(
    name: str,
    unit: str,
    better: str,
    before: float | None,
    after: float | None,
    before_ci: tuple[float, float] | None,
    after_ci: tuple[float, float] | None,
    threshold: float,
) -> MetricChange:
    """A metric with intervals on both sides is gated: it regressed only beyond the threshold and the intervals."""
    gated = before_ci is not None and after_ci is not None
    if before is None or after is None or before <= 0:
        verdict: Verdict = "not measured"
    else:
        change = after / before - 1.0
        worse = change > threshold if better == "lower" else change < -threshold
        better_ = change < -threshold if better == "lower" else change > threshold
        apart = not gated or before_ci[1] < after_ci[0] or after_ci[1] < before_ci[0]  # type: ignore[index]
        verdict = "regressed" if worse and apart else "improved" if better_ and apart else "within noise"
    return MetricChange(
        name=name,
        unit=unit,
        better=better,  # type: ignore[arg-type]
        before=before,
        after=after,
        before_ci=before_ci,
        after_ci=after_ci,
        gated=gated,
        verdict=verdict,
    )
