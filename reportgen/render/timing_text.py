"""How the summary writes its figures (one place for pages and index): first what repeats (device time and counts
per profiled step, eager against compiled, and how much of the step is device time and how much host time), then
the host-dependent wall figures (step times with their intervals and noise, the host probe, the timing method)."""

from __future__ import annotations

import statistics

from reportgen.bundle import (
    COUNTS,
    CountName,
    Figures,
    Interval,
    Metrics,
    StepFigures,
    StepTimes,
    TimingSummary,
    format_ms,
)
from reportgen.render.comparison_text import count_text
from reportgen.render.markup import MISSING, plural

__all__ = [
    "KEY_COUNTS",
    "WALL_HEADING",
    "host_probe_text",
    "interval_text",
    "median_text",
    "ms_text",
    "repeats_section",
    "speedup_text",
    "step_split",
    "timing_method",
]

KEY_COUNTS: tuple[CountName, ...] = ("kernels", "launches", "aten_ops", "graphs")
"""The counts the summary shows, one each for the GPU's work, the host's launches, the dispatcher and the compiled
graphs (the comparison page shows every count)."""
WALL_HEADING = (
    "### Wall figures (host-dependent)\n\nWhat the user waits for, timed without the profiler: the host's CPU "
    "speed and the variation between processes move them (the host probe times a fixed CPU workload)."
)


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


def host_probe_text(metrics: Metrics) -> str:
    """`1.02 ms (median of 40 timings of a fixed CPU workload: the host's CPU speed)`."""
    probe = metrics.host_probe_ms
    if not probe:
        return MISSING
    return f"{ms_text(statistics.median(probe))} (median of {len(probe)} timings of a fixed CPU workload: the host's CPU speed)"


def _sides(figures: Figures) -> tuple[tuple[str, StepFigures | None], ...]:
    return (("eager", figures.eager), ("compiled", figures.compiled))


def _device_bullet(figures: Figures) -> str:
    """`eager 6.10 ms [6.08–6.12], compiled 2.28 ms [2.27–2.29]: 2.68× device speedup (...)`."""

    def one(f: StepFigures | None) -> str:
        if f is None or f.device_ms is None or f.device_range_ms is None:
            return MISSING
        low, high = f.device_range_ms
        return f"{ms_text(f.device_ms)} [{format_ms(low)}–{format_ms(high)}]"

    speedup = figures.device_speedup
    steps = " and ".join(str(f.profiled_steps) for _, f in _sides(figures) if f is not None)
    return (
        ", ".join(f"{side} {one(f)}" for side, f in _sides(figures))
        + (f": {speedup:.2f}× device speedup" if speedup is not None else "")
        + f" (medians over {steps or MISSING} profiled steps; brackets: the lowest and highest step)"
    )


def _count_bullets(figures: Figures) -> list[str]:
    bullets = []
    for name in KEY_COUNTS:
        values = [f.count(name) if f else None for _, f in _sides(figures)]
        if all(v is None for v in values):
            continue  # a count the trace cannot have (GPU counts of a CPU run)
        words = COUNTS[name]
        sides = ", ".join(f"{side} {count_text(v)}" for (side, _), v in zip(_sides(figures), values, strict=True))
        bullets.append(f"- **{words[0].upper()}{words[1:]} per step:** {sides}")
    return bullets


def _saves(delta: float, what: str) -> str:
    return f"{'saves' if delta >= 0 else 'adds'} {ms_text(abs(delta))} of {what} time"


def step_split(figures: Figures, metrics: Metrics) -> str:
    """One sentence: how much of each side's step is GPU-active and how much the GPU waits on the host (wall median
    minus GPU-active median, floored at 0), compiled against eager, and what torch.compile saves on each."""
    if figures.device != "cuda":
        return (
            "On a CPU run the device figures are CPU time (the ops' own time): host-dependent like the wall figures, "
            "and the step is not split into device and host time."
        )
    parts: list[str] = []
    split: dict[str, tuple[float, float]] = {}
    for side, f, times in (("compiled", figures.compiled, metrics.compiled), ("eager", figures.eager, metrics.eager)):
        active, wall = (f.active_ms if f else None), (times.median_ms if times else None)
        if active is None or wall is None:
            continue
        host = max(wall - active, 0.0)
        share = min(active / wall, 1.0) if wall > 0 else 1.0
        label = side.capitalize() if not parts else side
        parts.append(
            f"{label}: {ms_text(active)} of the {ms_text(wall)} step is GPU-active ({100 * share:.0f} %), the rest "
            f"({ms_text(host)}) the GPU waits on the host"
        )
        split[side] = (active, host)
    if not parts:
        return ""
    if len(split) == 2:
        (eager_active, eager_host), (active, host) = split["eager"], split["compiled"]
        saving = f"{_saves(eager_active - active, 'GPU-active')} and {_saves(eager_host - host, 'host')}"
        parts.append(f"torch.compile {saving} per step")
    return "; ".join(parts) + " (wall medians against the profiled steps' GPU-active medians)."


def repeats_section(figures: Figures | None, metrics: Metrics) -> str:
    """The summary's lead: device time per step, eager against compiled, with the device speedup; the key counts;
    the step split into device and host time. Figures None: the run predates them."""
    heading = "### What repeats: device time and counts per step"
    if figures is None:
        return (
            f"{heading}\n\nNo device figures or counts: this run predates them (its analysis recorded none), so "
            "only the host-dependent wall figures below are shown."
        )
    label = "Device time per step" if figures.device == "cuda" else "CPU time per step"
    bullets = [f"- **{label}:** {_device_bullet(figures)}", *_count_bullets(figures)]
    about = (
        "The GPU's own clock and exact counts over the profiled steps: they repeat from run to run of the same code "
        "whatever the host does."
        if figures.device == "cuda"
        else "Counts over the profiled steps: exact for a given code whatever the host does."
    )
    return "\n\n".join(part for part in (heading, about, "\n".join(bullets), step_split(figures, metrics)) if part)
