"""The findings on step times: compiled is slower than eager, or the run cannot tell them apart.

Both rules read the speedup's bootstrap interval (`FindingInputs.timing`, see `reportgen.analyze.timing`).
When it contains 1, the run cannot tell compiled from eager: `no_significant_difference` says so and
`compiled_slower` stays quiet, so one run never gets both. They are registered in `findings.RULES`.
"""

from __future__ import annotations

from reportgen.analyze.finding_inputs import FindingInputs
from reportgen.bundle import Finding, Interval, StepTimes, TimingSummary, format_ms
from reportgen.recipe import CompileOptions

__all__ = ["NOISY_HOST_CV", "compiled_slower", "no_significant_difference", "noisy_host"]

NOISY_HOST_CV = 0.10
"""The host probe's coefficient of variation above which the host's CPU is called noisy. A quiet machine
times the probe within a few per cent; a shared H100 host measured 20-33 %."""


def compiled_slower(inputs: FindingInputs) -> Finding | None:
    """The compiled step's median is slower than eager's (speedup < 1), beyond the noise.

    Quiet when the speedup's interval contains 1 (`no_significant_difference` fires instead). A problem when
    the inter-quartile ranges are apart too; a warning when they overlap (a small slowdown) or when there is
    no interval (no samples to resample).
    """
    metrics, timing = inputs.manifest.metrics, inputs.timing or TimingSummary()
    speedup, interval = metrics.speedup, timing.speedup_ci
    if speedup is None or speedup >= 1.0 or metrics.eager is None or metrics.compiled is None:
        return None
    if interval is not None and interval.contains(1.0):
        return None
    overlap = metrics.compiled.q1_ms <= metrics.eager.q3_ms and metrics.eager.q1_ms <= metrics.compiled.q3_ms
    if interval is None:
        noise = "No samples to resample: part of the gap may be run-to-run noise."
    elif overlap:
        noise = (
            f"The speedup's {_interval(interval, 'x')} lies below 1, so the slowdown is not run-to-run noise; the "
            "inter-quartile ranges overlap, so it is small next to the spread of the steps."
        )
    else:
        noise = (
            f"The speedup's {_interval(interval, 'x')} lies below 1 and the inter-quartile ranges do not overlap: "
            "the slowdown is not run-to-run noise."
        )
    tools = _other_modes(inputs.manifest.recipe.compile, inputs.device == "cuda")
    return Finding(
        rule="compiled-slower",
        severity="problem" if interval is not None and not overlap else "warning",
        title=f"Compiled is slower than eager ({speedup:.2f}x)",
        evidence=f"Median step: compiled {_median(metrics.compiled, timing.compiled_median_ci_ms)}, eager "
        f"{_median(metrics.eager, timing.eager_median_ci_ms)}; speedup {speedup:.2f}x.\n{noise}",
        suggestion=f"Read the other findings first (launch-bound graphs, graph breaks, recompiles), then try {tools}.",
    )


def no_significant_difference(inputs: FindingInputs) -> Finding | None:
    """The speedup's interval contains 1: within the run's noise, compiled and eager are equally fast."""
    metrics, timing = inputs.manifest.metrics, inputs.timing or TimingSummary()
    speedup, interval, eager, compiled = metrics.speedup, timing.speedup_ci, metrics.eager, metrics.compiled
    if speedup is None or interval is None or eager is None or compiled is None or not interval.contains(1.0):
        return None
    return Finding(
        rule="no-significant-difference",
        severity="info",
        title=f"No significant difference between compiled and eager (speedup {speedup:.2f}x)",
        evidence=f"Speedup {speedup:.2f}x, {_interval(interval, 'x')}: the interval contains 1, so this run "
        "cannot tell compiled from eager.\n"
        f"Median step: compiled {_median(compiled, timing.compiled_median_ci_ms)}, eager "
        f"{_median(eager, timing.eager_median_ci_ms)}.\n"
        f"Run-to-run noise (coefficient of variation of the blocks): eager {_cv(timing.eager_cv)}, compiled "
        f"{_cv(timing.compiled_cv)}; {_blocks(eager, compiled)}.",
        suggestion="Time more blocks (`profile.steps`) or longer ones (`profile.block_steps`) to narrow the "
        "interval, and time on a quieter machine (no other jobs on the GPU or the CPU) to lower the noise. If the "
        "interval stays around 1, compiling does not pay off for this model as configured.",
    )


def noisy_host(inputs: FindingInputs) -> Finding | None:
    """The host's CPU speed varied while steps were timed (the host probe's CV above `NOISY_HOST_CV`)."""
    metrics, timing = inputs.manifest.metrics, inputs.timing or TimingSummary()
    probe, cv = metrics.host_probe_ms, timing.host_cv
    if cv is None or cv <= NOISY_HOST_CV or not probe:
        return None
    ordered = sorted(probe)
    moved = (
        f" The steps moved with it: the rank correlation of the probe with the pair of blocks timed after it is "
        f"{timing.host_correlation:.2f}."
        if timing.host_correlation is not None and timing.host_correlation >= 0.3
        else ""
    )
    return Finding(
        rule="noisy-host",
        severity="warning",
        title=f"The host's CPU speed varied while steps were timed (CV {cv * 100:.0f} %)",
        evidence=f"A fixed CPU workload, timed before each of the {len(probe)} pairs of blocks and outside them, "
        f"took {format_ms(ordered[0])} to {format_ms(ordered[-1])} ms (median {format_ms(ordered[len(ordered) // 2])}"
        f" ms, CV {cv * 100:.0f} %; a quiet machine stays within a few per cent).{moved}\n"
        f"Launch-bound steps are CPU time: their medians carry the host's noise, and the same recipe timed again "
        f"on this host may differ by more than this run's intervals show.",
        suggestion="Compare eager and compiled within one run (its speedup pairs blocks timed side by side), and "
        "compare runs only on a quiet machine (no other jobs on its CPUs) or across several runs. CUDA graphs "
        '(`mode="reduce-overhead"`) take most CPU time out of a step, and the host\'s noise with it.',
    )


def _other_modes(compile_: CompileOptions, cuda: bool) -> str:
    """The compile modes worth trying next, leaving out what the run used."""
    options = []
    if cuda and not compile_.uses_cudagraphs:
        options.append('`mode="reduce-overhead"` (CUDA graphs) when graphs are launch-bound')
    if not compile_.uses_max_autotune:
        options.append('`mode="max-autotune"`' + (" otherwise" if options else ""))
    return ", ".join(options) if options else "a profile of the slowest kernels (below) to see what eager does better"


def _interval(interval: Interval, unit: str) -> str:
    """`95 % interval 0.91–0.96x` (unit `x`), `95 % interval 0.116–0.119 ms` (unit ` ms`)."""
    low, high = (format_ms(v) if unit == " ms" else f"{v:.2f}" for v in (interval.low, interval.high))
    return f"{100 * interval.level:.0f} % interval {low}–{high}{unit}"


def _median(times: StepTimes, interval: Interval | None) -> str:
    """The median with its interval, else with its inter-quartile range."""
    if interval is None:
        return f"{format_ms(times.median_ms)} ms (IQR {format_ms(times.q1_ms)}–{format_ms(times.q3_ms)} ms)"
    return f"{format_ms(times.median_ms)} ms ({_interval(interval, ' ms')})"


def _cv(cv: float | None) -> str:
    return "unknown" if cv is None else f"{100 * cv:.1f} %"


def _blocks(eager: StepTimes, compiled: StepTimes) -> str:
    """How many blocks each side timed, of how many steps (both sides time blocks of the same size)."""
    n, m = len(eager.samples_ms), len(compiled.samples_ms)
    steps = "1 step" if eager.block_steps == 1 else f"{eager.block_steps} steps"
    return f"{n} blocks of {steps} each" if n == m else f"{n} eager and {m} compiled blocks of {steps}"
