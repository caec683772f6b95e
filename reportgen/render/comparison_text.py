"""How a comparison writes its numbers, on the site and in `reportgen compare` (pure): values with their
intervals, changes, verdict cells, and the metrics grouped by kind (device figures, counts, wall figures, other)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from reportgen.bundle import Comparison, CountChange, FigureKind, MetricChange, format_ms
from reportgen.render.markup import MISSING

__all__ = [
    "COMPARISON_COUNT_ROWS",
    "COMPARISON_HEADERS",
    "COUNT_CHANGE_HEADERS",
    "MetricGroup",
    "change_text",
    "count_change_cells",
    "count_text",
    "metric_cells",
    "metric_groups",
    "metric_kind",
    "moved_text",
    "pct_text",
    "percent_text",
    "seconds_text",
    "us_text",
]

COMPARISON_HEADERS = ["metric", "before [95 % CI]", "after [95 % CI]", "change", "verdict"]
"""The wall figures' table (and any table of a comparison written before figures had kinds)."""
COMPARISON_COUNT_ROWS = 10
"""Op and kernel names listed under the counts, largest change first: what stands behind a changed count (the
comparison keeps a few dozen; the rest are counted)."""
COUNT_CHANGE_HEADERS = ["side", "what", "name", "before", "after", "change"]

_LEGACY_KINDS: dict[str, FigureKind] = {
    "device time per step": "device",
    "compile time": "other",
    "peak memory, compiled": "other",
}
"""The kinds of the metrics of comparisons written before figures had kinds (their `kind` reads `wall`)."""
_QUIET_VERDICTS = frozenset({"not measured", "not judged", "host changed", "host or between-process"})
"""Verdicts that say themselves why the figure cannot fail the comparison (no `(not gated)` after them)."""


@dataclass(frozen=True)
class MetricGroup:
    """The metrics of one kind, as one table under a heading."""

    kind: FigureKind
    title: str
    about: str
    headers: list[str]
    metrics: list[MetricChange]


_GROUPS: tuple[tuple[FigureKind, str, str, list[str]], ...] = (
    (
        "device",
        "Device figures",
        "The GPU's own clock per profiled step (CPU time on CPU runs): they repeat from run to run of the same "
        "code. Brackets: the lowest and highest single step.",
        ["figure", "before [steps]", "after [steps]", "change", "verdict"],
    ),
    (
        "count",
        "Counts per step",
        "Exact for a given code and input, whatever the host does: any growth beyond the threshold regresses.",
        ["count", "before", "after", "change", "verdict"],
    ),
    (
        "wall",
        "Wall figures (host-dependent)",
        "What the user waits for, moved by the host's CPU speed and by the variation between processes (the host "
        "probe times a fixed CPU workload): judged only over several pooled runs a side, and a move while no "
        "device figure or count moved is the host's or between processes, not failing.",
        COMPARISON_HEADERS,
    ),
    ("other", "Compile time and memory", "Not gated.", ["figure", "before", "after", "change", "verdict"]),
)
"""Each kind's heading, explanation and table headers, in the order pages and `reportgen compare` show them."""


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


def count_text(value: float | None, sign: str = "") -> str:
    """A count per step: `645`, `12.5` (a mean over steps that differ), `+2` with `sign="+"`."""
    if value is None:
        return MISSING
    return f"{value:{sign},.0f}" if float(value).is_integer() else f"{value:{sign},.1f}"


def metric_kind(m: MetricChange) -> FigureKind:
    """The metric's kind; a comparison written before kinds existed is read by the metric's name."""
    return _LEGACY_KINDS.get(m.name, "wall") if m.kind == "wall" else m.kind


def metric_groups(c: Comparison) -> list[MetricGroup]:
    """The comparison's metrics by kind (device figures, counts, wall figures, other), groups without one left out."""
    groups = [
        MetricGroup(kind, title, about, headers, [m for m in c.metrics if metric_kind(m) == kind])
        for kind, title, about, headers in _GROUPS
    ]
    return [g for g in groups if g.metrics]


def _number(x: float, unit: str) -> str:
    if unit == "ms":
        return format_ms(x)
    if unit == "x":
        return f"{x:.3f}"
    return count_text(x) if unit == "" else f"{x:.2f}"


def _value(value: float | None, ci: tuple[float, float] | None, unit: str) -> str:
    if value is None:
        return MISSING
    text = f"{_number(value, unit)}{unit}" if unit in ("x", "") else f"{_number(value, unit)} {unit}"
    return text + (f" [{_number(ci[0], unit)}–{_number(ci[1], unit)}]" if ci else "")


def _change_cell(m: MetricChange) -> str:
    """The change in percent; a count's with its difference per step (`+23.1 % (+12)`, `— (+2)` from none)."""
    if m.unit != "" or m.before is None or m.after is None:
        return change_text(m)
    return "none" if m.after == m.before else f"{change_text(m)} ({count_text(m.after - m.before, '+')})"


def metric_cells(m: MetricChange) -> list[str]:
    """A metric's row: name, before and after with their intervals, change, verdict (plain text: escape it)."""
    quiet = m.gated or m.verdict in _QUIET_VERDICTS
    return [
        m.name,
        _value(m.before, m.before_ci, m.unit),
        _value(m.after, m.after_ci, m.unit),
        _change_cell(m),
        m.verdict + ("" if quiet else " (not gated)"),
    ]


def moved_text(m: MetricChange, text: Callable[[str], str]) -> str:
    """`compiled median +9.3 %`; a count with its values: `kernel launches per step, compiled +23.1 % (13 → 16)`."""
    moved = f"{text(m.name)} {change_text(m)}"
    if m.unit == "" and m.before is not None and m.after is not None:
        moved += f" ({count_text(m.before)} → {count_text(m.after)})"
    return moved


def count_change_cells(x: CountChange, name: Callable[[str], str], text: Callable[[str], str]) -> list[str]:
    """An op's or kernel's row: side, what, its name (through `name`), before and after per step, change (through
    `text`)."""
    change = f"{pct_text(x.before, x.after)} ({count_text(x.after - x.before, '+')})"
    return [text(x.side), text(x.what), name(x.name), *map(text, (count_text(x.before), count_text(x.after), change))]
