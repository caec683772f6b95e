"""A bundle's comparison with the run before it (`comparison.json`): its page, its line on the index and the
report, and the `regressions` finding; the number formats `reportgen compare` prints with (pure)."""

from __future__ import annotations

from collections.abc import Callable

from reportgen.bundle import Comparison, Finding, KernelChange, MetricChange, format_ms
from reportgen.escape import one_line
from reportgen.render.markup import MISSING, ORPHAN, code_span, escape_md, list_table

__all__ = [
    "COMPARE_PAGE",
    "COMPARISON_HEADERS",
    "COMPARISON_KERNEL_ROWS",
    "change_text",
    "comparison_page",
    "metric_cells",
    "pct_text",
    "percent_text",
    "regression_finding",
    "seconds_text",
    "since_previous",
    "us_text",
    "verdict_text",
]

COMPARE_PAGE = "compare"
"""The comparison's page, next to the report (`<bundle>/compare.md`)."""
COMPARISON_KERNEL_ROWS = 20
"""Kernel changes listed per comparison, largest first; the rest are counted."""
COMPARISON_HEADERS = ["metric", "before [95 % CI]", "after [95 % CI]", "change", "verdict"]


def percent_text(fraction: float) -> str:
    return f"{100 * fraction:g} %"


def change_text(m: MetricChange) -> str:
    return MISSING if m.change is None else f"{100 * m.change:+.1f} %"


def pct_text(before: float | None, after: float | None) -> str:
    if before is None or after is None or before == 0:
        return MISSING
    return f"{100 * (after / before - 1):+.1f} %"


def us_text(value: float | None) -> str:
    return MISSING if value is None else f"{value:,.1f} µs"


def seconds_text(value: float | None) -> str:
    return MISSING if value is None else f"{value:.2f}"


def _value(value: float | None, ci: tuple[float, float] | None, unit: str) -> str:
    if value is None:
        return MISSING

    def number(x: float) -> str:
        return format_ms(x) if unit == "ms" else f"{x:.3f}" if unit == "x" else f"{x:.2f}"

    text = f"{number(value)}{unit}" if unit == "x" else f"{number(value)} {unit}"
    return text + (f" [{number(ci[0])}–{number(ci[1])}]" if ci else "")


def metric_cells(m: MetricChange) -> list[str]:
    """A headline metric's row: name, before and after with their intervals, change, verdict."""
    return [
        m.name,
        _value(m.before, m.before_ci, m.unit),
        _value(m.after, m.after_ci, m.unit),
        change_text(m),
        m.verdict + ("" if m.gated else " (not gated: no interval)" if m.verdict != "not measured" else ""),
    ]


def verdict_text(c: Comparison, bold: str = "**", text: Callable[[str], str] = escape_md) -> str:
    """One sentence: what regressed (and whether the device agrees), why nothing was judged, or no regression.

    :param text: writes a metric's name for the target (`reportgen.escape`): MyST text by default
    """
    if regressed := c.regressions:
        what = ", ".join(f"{text(m.name)} {change_text(m)}" for m in regressed)
        caution = _host_moved(c) + _host_side(c)
        beyond = percent_text(c.threshold)
        return (
            f"{bold}Regressed{bold}: {what} (beyond {beyond} and outside the 95 % intervals; {_runs_text(c)}).{caution}"
        )
    if (shift := _host_shift(c)) is not None:
        return (
            f"{bold}Not judged{bold}: the host's CPU speed differed between the runs (a fixed CPU workload took "
            f"{100 * shift:+.1f} % as long), beyond {percent_text(c.threshold)}; a step time that moved no further than "
            "that may explain is not judged (launch-bound steps are CPU time). Compare runs made on a quiet machine."
        )
    return f"{bold}No regression{bold} beyond {percent_text(c.threshold)} and the 95 % intervals ({_runs_text(c)})."


def _host_shift(c: Comparison) -> float | None:
    """The host probe's change when it moved beyond the threshold (its verdict `host changed`), else None."""
    probe = next((m for m in c.metrics if m.name.startswith("host probe")), None)
    return probe.change if probe is not None and probe.verdict == "host changed" else None


def _host_moved(c: Comparison) -> str:
    """When the host probe moved too: the step times were judged beyond what the host's change may explain."""
    if (shift := _host_shift(c)) is None:
        return ""
    return (
        f" The host's CPU speed changed too (a fixed CPU workload took {100 * shift:+.1f} % as long): the "
        "step times moved beyond what that may explain."
    )


def _host_side(c: Comparison) -> str:
    """When step times regressed but device time per step did not move: where the change must be, and what to do."""
    device = next((m for m in c.metrics if m.name == "device time per step"), None)
    if device is None or device.change is None or abs(device.change) > c.threshold:
        return ""
    pooled = c.before.pooled and c.after.pooled
    return (
        f" Device time per step moved {change_text(device)}: the change is on the host side (Python, launches) or "
        "variation between processes, which "
        + (
            "the pooled runs did not show."
            if pooled
            else "one run's intervals do not cover; run the recipe again: each side pools the runs of one recipe, "
            "torch, device and commit kept in its results directory."
        )
    )


def _runs_text(c: Comparison) -> str:
    """How many runs each side's step times pool: `1 run before, 3 runs after`."""

    def runs(n: int) -> str:
        return f"{n} run{'s' if n != 1 else ''}"

    return f"{runs(1 + len(c.before.pooled))} before, {runs(1 + len(c.after.pooled))} after"


def since_previous(c: Comparison) -> str:
    """A short MyST line for the index: the compiled step time's change and the verdict, linked to the page."""
    compiled = next((m for m in c.metrics if m.name == "compiled median"), None)
    change = change_text(compiled) if compiled is not None else MISSING
    verdict = "not comparable" if not c.comparable else "**regressed**" if c.regressions else "ok"
    return f"compiled {change}, {verdict}"


def regression_finding(c: Comparison) -> Finding | None:
    """The report's `regressions` finding: a gated headline metric regressed against the comparable run before."""
    if not (c.comparable and c.regressions):
        return None
    lines = [
        f"Compared with the run of {one_line(c.before.started_at or 'unknown date')} "
        f"(torch {one_line(c.before.torch or '?')}): "
        + ", ".join(f"{one_line(m.name)} {change_text(m)}" for m in c.regressions)
        + f", beyond {percent_text(c.threshold)} and outside the 95 % intervals ({_runs_text(c)})."
        + _host_moved(c)
        + _host_side(c),
    ]
    slower = [k for k in c.kernels if k.kind in ("slower", "added")][:5]
    lines += [
        f"- `{one_line(k.name).replace('`', '')}` ({one_line(k.graph)}): {k.kind}, {pct_text(k.before_us, k.after_us)}"
        for k in slower
    ]
    return Finding(
        rule="regressions",
        severity="problem",
        title="Slower than the previous run",
        evidence="\n".join(lines),
        suggestion="Open the comparison page for the kernel-level diff; run the recipe again to rule out a noisy "
        "host or process: the gate pools the kept runs of one recipe, torch, device and commit on each side, so a "
        "spread between them reads as noise.",
    )


def _kernel_rows(kernels: list[KernelChange]) -> list[list[str]]:
    return [
        [
            escape_md(k.graph),
            code_span(k.name),
            escape_md(k.category),
            k.kind,
            us_text(k.before_us),
            us_text(k.after_us),
            pct_text(k.before_us, k.after_us),
        ]
        for k in kernels[:COMPARISON_KERNEL_ROWS]
    ]


def comparison_page(c: Comparison, title: str) -> str:
    """The comparison's page: headline metrics with their intervals, categories, kernels, compile phases."""
    side = [f"{escape_md(s.started_at or MISSING)}, torch {escape_md(s.torch or '?')}" for s in (c.before, c.after)]
    parts = [
        ORPHAN,
        f"# {escape_md(title)}: compared with the run before",
        f"Before: {side[0]}. After (this report): {side[1]}. [Back to the report](index.md)",
        verdict_text(c),
        list_table(COMPARISON_HEADERS, [[escape_md(cell) for cell in metric_cells(m)] for m in c.metrics]),
    ]
    if c.categories:
        rows = [
            [
                escape_md(x.graph),
                escape_md(x.category),
                us_text(x.before_us),
                us_text(x.after_us),
                pct_text(x.before_us, x.after_us),
            ]
            for x in c.categories
        ]
        parts += [
            "## Device time per step by category",
            list_table(["graph", "category", "before", "after", "change"], rows),
        ]
    parts.append("## Kernels that changed")
    if c.kernels:
        headers = ["graph", "kernel", "category", "how", "before", "after", "change"]
        parts.append(list_table(headers, _kernel_rows(c.kernels)))
        if (more := len(c.kernels) - COMPARISON_KERNEL_ROWS) > 0:
            parts.append(f"… and {more} more.")
    else:
        parts.append(
            f"None beyond {percent_text(c.threshold)} (kernels under 0.5 % of their graph's time are left out)."
        )
    if c.compile_phases_s:
        rows = [[escape_md(p), seconds_text(a), seconds_text(b)] for p, (a, b) in c.compile_phases_s.items()]
        parts += ["## Compile phases (s)", list_table(["phase", "before", "after"], rows)]
    parts.append(
        f"Graph breaks {c.graph_breaks[0]} → {c.graph_breaks[1]}; recompiles {c.recompiles[0]} → {c.recompiles[1]}."
    )
    parts += [f"Note: {escape_md(note)}" for note in c.notes]
    return "\n\n".join(parts) + "\n"
