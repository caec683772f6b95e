"""A `Comparison` as text (a terminal) or Markdown (a pull request comment)."""

from __future__ import annotations

from tabulate import tabulate

from reportgen.bundle import format_ms
from reportgen.compare.model import Comparison, KernelChange, MetricChange

__all__ = ["KERNEL_ROWS", "to_markdown", "to_text"]

KERNEL_ROWS = 20
"""Kernel changes listed per comparison, largest first; the rest are counted."""


def to_text(comparisons: list[Comparison]) -> str:
    """For a terminal."""
    return "\n\n".join(_render(c, markdown=False) for c in comparisons)


def to_markdown(comparisons: list[Comparison]) -> str:
    """GitHub-flavoured Markdown, fit to paste into a pull request."""
    return "\n\n".join(_render(c, markdown=True) for c in comparisons)


def _render(c: Comparison, markdown: bool) -> str:
    fmt = "github" if markdown else "simple"
    code = _code if markdown else (lambda text: text)
    parts = [
        f"{'## ' if markdown else ''}{code(c.name)}: {_side(c.before.torch, c.before.device)} → "
        f"{_side(c.after.torch, c.after.device)}",
        _verdict(c, markdown),
        _table(
            [_metric_row(m) for m in c.metrics],
            ["metric", "before [95 % CI]", "after [95 % CI]", "change", "verdict"],
            fmt,
        ),
    ]
    if c.categories:
        rows = [
            [code(x.graph), x.category, _us(x.before_us), _us(x.after_us), _pct(x.before_us, x.after_us)]
            for x in c.categories
        ]
        parts += [
            _heading("Device time per step by category", markdown),
            _table(rows, ["graph", "category", "before", "after", "change"], fmt),
        ]
    parts += [_heading("Kernels that changed", markdown), _kernels(c.kernels, c.threshold, code, fmt)]
    if c.compile_phases_s:
        rows = [[p, _s(a), _s(b)] for p, (a, b) in c.compile_phases_s.items()]
        parts += [_heading("Compile phases (s)", markdown), _table(rows, ["phase", "before", "after"], fmt)]
    parts.append(
        f"Graph breaks {c.graph_breaks[0]} → {c.graph_breaks[1]}; recompiles {c.recompiles[0]} → {c.recompiles[1]}."
    )
    parts += [f"Note: {note}" for note in c.notes]
    return "\n\n".join(parts)


def _verdict(c: Comparison, markdown: bool) -> str:
    bold = "**" if markdown else ""
    regressed = [m for m in c.metrics if m.verdict == "regressed" and m.gated]
    if regressed:
        what = ", ".join(f"{m.name} {_change(m)}" for m in regressed)
        device = next((m for m in c.metrics if m.name == "device time per step"), None)
        caution = (
            f" Device time per step moved {_change(device)}: the change is on the host side (Python, launches) "
            "or variation between processes, which a run's own intervals do not cover; confirm with another run."
            if device is not None and device.change is not None and abs(device.change) <= c.threshold
            else ""
        )
        return (
            f"{bold}Regressed{bold}: {what} (beyond {_percent(c.threshold)} and outside the 95 % intervals).{caution}"
        )
    host = next((m for m in c.metrics if m.verdict == "host changed"), None)
    shift = next((m.change for m in c.metrics if m.name.startswith("host probe")), None)
    if host is not None and shift is not None:
        return (
            f"{bold}Not judged{bold}: the host's CPU speed differed between the runs (a fixed CPU workload took "
            f"{100 * shift:+.1f} % as long), beyond {_percent(c.threshold)}; launch-bound step times move with it. "
            "Compare runs made on a quiet machine."
        )
    return f"{bold}No regression{bold} beyond {_percent(c.threshold)} and the 95 % intervals."


def _metric_row(m: MetricChange) -> list[str]:
    return [
        m.name,
        _value(m.before, m.before_ci, m.unit),
        _value(m.after, m.after_ci, m.unit),
        _change(m),
        m.verdict + ("" if m.gated else " (not gated: no interval)" if m.verdict != "not measured" else ""),
    ]


def _kernels(kernels: list[KernelChange], threshold: float, code: object, fmt: str) -> str:
    if not kernels:
        return f"None beyond {_percent(threshold)} (kernels under 0.5 % of their graph's time are left out)."
    rows = [
        [k.graph, code(k.name), k.category, k.kind, _us(k.before_us), _us(k.after_us), _pct(k.before_us, k.after_us)]  # type: ignore[operator]
        for k in kernels[:KERNEL_ROWS]
    ]
    table = _table(rows, ["graph", "kernel", "category", "", "before", "after", "change"], fmt)
    more = len(kernels) - KERNEL_ROWS
    return table + (f"\n\n… and {more} more." if more > 0 else "")


def _heading(text: str, markdown: bool) -> str:
    return f"### {text}" if markdown else f"{text}:"


def _table(rows: list[list[str]], headers: list[str], fmt: str) -> str:
    return str(tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True))


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _side(torch: str | None, device: str | None) -> str:
    return f"torch {torch or '?'} on {device or '?'}"


def _value(value: float | None, ci: tuple[float, float] | None, unit: str) -> str:
    if value is None:
        return "—"

    def number(x: float) -> str:
        return format_ms(x) if unit == "ms" else f"{x:.3f}" if unit == "x" else f"{x:.2f}"

    text = f"{number(value)}{unit}" if unit == "x" else f"{number(value)} {unit}"
    return text + (f" [{number(ci[0])}–{number(ci[1])}]" if ci else "")


def _change(m: MetricChange) -> str:
    return "—" if m.change is None else f"{100 * m.change:+.1f} %"


def _pct(before: float | None, after: float | None) -> str:
    if before is None or after is None or before == 0:
        return "—"
    return f"{100 * (after / before - 1):+.1f} %"


def _us(value: float | None) -> str:
    return "—" if value is None else f"{value:,.1f} µs"


def _s(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def _percent(fraction: float) -> str:
    return f"{100 * fraction:g} %"
