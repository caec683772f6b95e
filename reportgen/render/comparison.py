"""A bundle's comparison with the run before it (`comparison.json`): the verdict, its page, its line on the index
and the report, and the `regressions` finding (pure); the number formats, which `reportgen compare` prints with
too, are `render.comparison_text`'s.

A comparison keeps three kinds of figures apart: device figures (the GPU's clock: they repeat), counts (exact for
a given code) and wall figures (host-dependent). The verdict names the figure that moved, its kind, and the ops
and kernels behind it; it says when the wall figures were not judged, or moved while the code did not."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from reportgen.bundle import MIN_WALL_RUNS, Comparison, CountChange, Finding, KernelChange, MetricChange
from reportgen.escape import one_line
from reportgen.render.comparison_text import (
    COMPARISON_COUNT_ROWS,
    COMPARISON_HEADERS,
    COUNT_CHANGE_HEADERS,
    change_text,
    count_change_cells,
    count_text,
    metric_cells,
    metric_groups,
    metric_kind,
    moved_text,
    pct_text,
    percent_text,
    seconds_text,
    us_text,
)
from reportgen.render.markup import MISSING, ORPHAN, code_span, escape_md, list_table

__all__ = [
    "COMPARE_PAGE",
    "COMPARISON_COUNT_ROWS",
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
VERDICT_NAMES = 3
"""Ops or kernels the verdict sentence names behind a moved figure (the page's tables list more)."""
FINDING_NAMES = 5
"""Ops and kernels the `regressions` finding lists behind the figures that regressed."""

Text = Callable[[str], str]
"""Writes what a bundle says for one target (`reportgen.escape`): MyST, Markdown, the terminal, a finding."""


def verdict_text(c: Comparison, bold: str = "**", text: Text = escape_md, name: Text = code_span) -> str:
    """A few sentences: the figures that regressed (each with its kind) or that none did, the ops and kernels
    behind a moved count or device time, and what the wall figures did (not judged, or moved without the code).

    :param text: writes a metric's or graph's name as prose for the target: MyST text by default
    :param name: writes an op's or kernel's name for the target: a MyST code span by default
    """
    sentences = [_headline(c, bold, text), *_behind(c, text, name, VERDICT_NAMES), _cpu_words(c), *_wall_words(c, text)]
    return " ".join(s for s in sentences if s)


def _cpu_words(c: Comparison) -> str:
    """Device figures of a CPU run are CPU time, which the host moves: shown, not judged."""
    if any(metric_kind(m) == "device" and m.verdict == "not judged" for m in c.metrics):
        return "Device figures not judged: on a CPU run they are CPU time, which the host's speed moves."
    return ""


def _device_threshold(c: Comparison) -> float:
    return c.threshold if c.device_threshold is None else c.device_threshold


def _why(c: Comparison, m: MetricChange) -> str:
    """Why a moved figure counts: its kind and what it moved beyond."""
    kind = metric_kind(m)
    if kind == "device":
        return f"a device figure: beyond {percent_text(_device_threshold(c))} and outside the profiled steps' range"
    if kind == "count":
        values = f"{count_text(m.before)} → {count_text(m.after)}; "
        return f"{values}a count: exact for a given code, beyond {percent_text(c.threshold)}"
    if kind == "wall":
        return (
            f"a wall figure, host-dependent: beyond {percent_text(c.threshold)} and outside the 95 % intervals, "
            f"{_runs_text(c)}"
        )
    return f"beyond {percent_text(c.threshold)}"


def _regressed(c: Comparison, m: MetricChange, text: Text) -> str:
    """`kernel launches per step, compiled +23.1 % (13 → 16; a count: exact for a given code, beyond 5 %)`."""
    return f"{text(m.name)} {change_text(m)} ({_why(c, m)})"


def _headline(c: Comparison, bold: str, text: Text) -> str:
    if regressed := c.regressions:
        return f"{bold}Regressed{bold}: " + "; ".join(_regressed(c, m, text) for m in regressed) + "."
    if (shift := _legacy_host_shift(c)) is not None:
        return (
            f"{bold}Not judged{bold}: the host's CPU speed differed between the runs (a fixed CPU workload took "
            f"{100 * shift:+.1f} % as long), beyond {percent_text(c.threshold)}; this comparison was made before "
            "device figures and counts were judged."
        )
    judged = _judged(c)
    if not judged:
        return (
            f"{bold}Not judged{bold}: neither device figures nor counts on both sides, and no wall figure judged "
            f"({_runs_text(c)})."
        )
    head = f"{bold}No regression{bold}: {', '.join(judged)}."
    return (
        head + _listed(c, "improved", "Improved", text) + _listed(c, "changed", "Changed, within the threshold", text)
    )


def _judged(c: Comparison) -> list[str]:
    """What the gate judged, by kind, and that it did not regress."""
    kinds = {metric_kind(m) for m in c.metrics if m.gated}
    pct = percent_text(c.threshold)
    words = {
        "device": f"device time per step within {percent_text(_device_threshold(c))} or the profiled steps' range",
        "count": f"no count grew beyond {pct}",
        "wall": f"wall figures within {pct} or the 95 % intervals ({_runs_text(c)})",
    }
    return [text for kind, text in words.items() if kind in kinds]


def _listed(c: Comparison, verdict: str, label: str, text: Text) -> str:
    moved = [m for m in c.metrics if m.gated and m.verdict == verdict]
    return f" {label}: {'; '.join(moved_text(m, text) for m in moved)}." if moved else ""


def _legacy_host_shift(c: Comparison) -> float | None:
    """The host probe's change in a comparison written before issue 27 whose host moved (`host changed`)."""
    probe = next((m for m in c.metrics if m.name.startswith("host probe")), None)
    return probe.change if probe is not None and probe.verdict == "host changed" else None


def _count_change_text(x: CountChange, name: Text) -> str:
    return f"{name(x.name)} ({x.what}, {x.side}) {count_text(x.before)} → {count_text(x.after)} per step"


def _kernel_change_text(k: KernelChange, text: Text, name: Text) -> str:
    how = f"{k.kind} {pct_text(k.before_us, k.after_us)}" if k.kind in ("slower", "faster") else k.kind
    return f"{name(k.name)} ({text(k.graph)}) {how}"


def _moved(c: Comparison) -> list[MetricChange]:
    return [m for m in c.metrics if m.gated and m.verdict in ("regressed", "improved", "changed")]


def _behind_counts(c: Comparison) -> list[CountChange]:
    """The op and kernel names whose count changed, on the sides where a count moved."""
    sides = {m.side for m in _moved(c) if metric_kind(m) == "count"}
    return [x for x in c.count_changes if x.side in sides]


def _behind_device(c: Comparison) -> list[KernelChange]:
    """The kernel diff, largest change first, when a device figure regressed or improved."""
    if not any(metric_kind(m) == "device" and m.verdict != "changed" for m in _moved(c)):
        return []
    return _largest(c.kernels)


def _largest(kernels: list[KernelChange]) -> list[KernelChange]:
    return sorted(kernels, key=lambda k: -abs((k.after_us or 0.0) - (k.before_us or 0.0)))


def _some(items: Sequence[str], total: int) -> str:
    return ", ".join(items) + (f" and {total - len(items)} more" if total > len(items) else "")


def _behind(c: Comparison, text: Text, name: Text, limit: int) -> list[str]:
    out = []
    if counts := _behind_counts(c):
        shown = [_count_change_text(x, name) for x in counts[:limit]]
        out.append(f"Behind the counts: {_some(shown, len(counts))}.")
    if kernels := _behind_device(c):
        shown = [_kernel_change_text(k, text, name) for k in kernels[:limit]]
        out.append(f"Behind the device time: {_some(shown, len(kernels))}.")
    return out


def _wall_words(c: Comparison, text: Text) -> list[str]:
    """What the wall figures did: moved while the code did not (the host's or between processes), not judged."""
    wall = [m for m in c.metrics if metric_kind(m) == "wall"]
    probe = next((m for m in wall if m.name.startswith("host probe")), None)
    probe_moved = probe is not None and probe.verdict == "host or between-process"
    out = []
    if hosty := [m for m in wall if m.verdict == "host or between-process" and m is not probe]:
        out.append(
            f"{'; '.join(moved_text(m, text) for m in hosty)} moved while no device figure or count did: the host's "
            "CPU speed or the variation between processes, not the code (not failing)"
            + (f"; the host probe moved {change_text(probe)}." if probe is not None and probe_moved else ".")
        )
    elif probe is not None and probe_moved:
        out.append(f"The host probe moved {change_text(probe)}: the host's CPU speed differed between the runs.")
    if any(m.verdict == "not judged" for m in wall):
        out.append(
            f"Wall figures (host-dependent) not judged: {_runs_text(c)}, under {MIN_WALL_RUNS} runs a side for their "
            "intervals to cover the variation between processes; each side pools the kept runs of its identity, so "
            "run the recipe again."
        )
    return out


def _runs_text(c: Comparison) -> str:
    """How many runs each side's step times pool: `1 run before, 3 runs after`."""

    def runs(n: int) -> str:
        return f"{n} run{'s' if n != 1 else ''}"

    return f"{runs(1 + len(c.before.pooled))} before, {runs(1 + len(c.after.pooled))} after"


def since_previous(c: Comparison) -> str:
    """A short MyST line for the index: the figure that regressed (the compiled side's first), else the compiled
    device time's change (the compiled median's for comparisons without device figures), and the verdict."""
    if c.comparable and c.regressions:
        first = min(c.regressions, key=lambda m: m.side != "compiled")
        return f"{escape_md(first.name)} {change_text(first)}, **regressed**"  # a name read from the bundle
    device = next(
        (m for m in c.metrics if metric_kind(m) == "device" and m.side == "compiled" and m.unit == "ms"), None
    )
    if device is not None and device.change is not None:
        lead = f"compiled device time {change_text(device)}"
    else:
        compiled = next((m for m in c.metrics if m.name == "compiled median"), None)
        lead = f"compiled {change_text(compiled) if compiled is not None else MISSING}"
    return f"{lead}, {'ok' if c.comparable else 'not comparable'}"


def _finding_name(name: str) -> str:
    """A name in a finding's evidence: a code span (the finding convention), its backticks dropped."""
    return f"`{one_line(name.replace('`', ''))}`"


def regression_finding(c: Comparison) -> Finding | None:
    """The report's `regressions` finding: a gated figure regressed against the comparable run before; it names
    the figures, their kind, and the ops and kernels behind them."""
    if not (c.comparable and c.regressions):
        return None
    lines = [
        f"Compared with the run of {one_line(c.before.started_at or 'unknown date')} "
        f"(torch {one_line(c.before.torch or '?')}): "
        + "; ".join(_regressed(c, m, one_line) for m in c.regressions)
        + ".",
    ]
    lines += [f"- {_count_change_text(x, _finding_name)}" for x in _behind_counts(c)[:FINDING_NAMES]]
    slower_run = any(metric_kind(m) != "count" for m in c.regressions)  # device or wall time, not only counts
    slower = [k for k in _largest(c.kernels) if k.kind in ("slower", "added")] if slower_run else []
    lines += [f"- {_kernel_change_text(k, one_line, _finding_name)}" for k in slower[:FINDING_NAMES]]
    lines += _wall_words(c, one_line)
    return Finding(
        rule="regressions",
        severity="problem",
        title="Slower than the previous run" if slower_run else "More work per step than the previous run",
        evidence="\n".join(lines),
        suggestion="Open the comparison page for the kernel-level diff and the ops and kernels whose counts "
        "changed. Device figures and counts repeat from run to run of the same code whatever the host does: a "
        "change there is the code's, torch's or the input's.",
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


def _count_changes(c: Comparison) -> list[str]:
    """The ops and kernels whose count per step changed, under the counts table."""
    if not c.count_changes:
        return []
    rows = [count_change_cells(x, code_span, escape_md) for x in c.count_changes[:COMPARISON_COUNT_ROWS]]
    more = len(c.count_changes) - COMPARISON_COUNT_ROWS
    return [
        "### Ops and kernels whose count changed",
        list_table(COUNT_CHANGE_HEADERS, rows),
        *([f"… and {more} more."] if more > 0 else []),
    ]


def _metric_sections(c: Comparison) -> list[str]:
    """A table per kind of figure: device figures, counts (with the names behind them), wall figures, other."""
    parts = []
    for group in metric_groups(c):
        rows = [[escape_md(cell) for cell in metric_cells(m)] for m in group.metrics]
        parts += [f"## {group.title}", group.about, list_table(group.headers, rows)]
        if group.kind == "count":
            parts += _count_changes(c)
    return parts


def _categories(c: Comparison) -> list[str]:
    if not c.categories:
        return []
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
    return ["## Device time per step by category", list_table(["graph", "category", "before", "after", "change"], rows)]


def comparison_page(c: Comparison, title: str) -> str:
    """The comparison's page: the verdict, a table per kind of figure, categories, kernels, compile phases."""
    side = [f"{escape_md(s.started_at or MISSING)}, torch {escape_md(s.torch or '?')}" for s in (c.before, c.after)]
    parts = [
        ORPHAN,
        f"# {escape_md(title)}: compared with the run before",
        f"Before: {side[0]}. After (this report): {side[1]}. [Back to the report](index.md)",
        verdict_text(c),
        *_metric_sections(c),
        *_categories(c),
        "## Kernels that changed",
    ]
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
