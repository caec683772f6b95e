"""How the summary writes step times, intervals, noise and the timing method (one place for pages and index)."""

from __future__ import annotations

from reportgen.bundle import Interval, Metrics, StepTimes, TimingSummary, format_ms
from reportgen.render.markup import MISSING, plural

__all__ = ["interval_text", "median_text", "ms_text", "speedup_text", "timing_method"]


def ms_text(value: float | None, unit: str = " ms") -> str:
    """Milliseconds, 2 decimals from 1 ms up, else 3 significant digits (`0.118 ms`)."""
    return MISSING if value is None else format_ms(value) + unit


def interval_text(interval: Interval | None, unit: str) -> str:
    """`95 % interval 118.80–121.20 ms` (unit ` ms`), `95 % interval 1.45–1.55×` (unit `×`)."""
    if interval is None:
        return f"95 % interval {MISSING}"
    low, high = (ms_text(v, "") if unit == " ms" else f"{v:.2f}" for v in (interval.low, interval.high))
    return f"{100 * interval.level:.0f} % interval {low}–{high}{unit}"


def median_text(times: StepTimes | None, interval: Interval | None, cv: float | None) -> str:
    """`120.00 ms (95 % interval 118.80–121.20 ms), CV 2.6 %`."""
    noise = MISSING if cv is None else f"{100 * cv:.1f} %"
    return MISSING if times is None else f"{ms_text(times.median_ms)} ({interval_text(interval, ' ms')}), CV {noise}"


def timing_method(metrics: Metrics, timing: TimingSummary) -> str:
    """How the step times were taken and what the intervals and CV mean; the host's own noise when probed."""
    if metrics.eager is None or metrics.compiled is None:
        return ""
    n, m = len(metrics.eager.samples_ms), len(metrics.compiled.samples_ms)
    host = (
        f" Before each pair of blocks a fixed CPU workload was timed: its CV of {timing.host_cv * 100:.0f} % is how much the "
        "host's CPU speed varied meanwhile (launch-bound steps are CPU time)."
        if timing.host_cv is not None
        else ""
    )
    return (
        f"Step times are measured in blocks of {plural(metrics.eager.block_steps, 'step')} run back to back with one "
        f"synchronisation per block, eager and compiled blocks alternating, {n if n == m else f'{n} and {m}'} "
        f"blocks {'each' if n == m else 'respectively'}; medians are shown with 95 % bootstrap intervals, and CV "
        f"(standard deviation ÷ mean of the blocks) is the run-to-run noise.{host}"
    )


def speedup_text(metrics: Metrics, timing: TimingSummary | None = None) -> str:
    """`1.50×`; given a timing summary, with its interval: `1.50× (95 % interval 1.45–1.55×)`."""
    speedup = metrics.speedup
    if speedup is None:
        return MISSING
    return f"{speedup:.2f}×" if timing is None else f"{speedup:.2f}× ({interval_text(timing.speedup_ci, '×')})"
