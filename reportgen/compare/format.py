"""A `Comparison` as text (a terminal) or Markdown (a pull request comment); the site's page is
`reportgen.render`'s, with the same numbers and verdict.

`reportgen.render` is imported when a comparison is formatted, not with this module: `reportgen run` keeps each
bundle's comparison through this package and must not load matplotlib or nbformat (a GPU host may lack them).
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from reportgen.bundle import Comparison, KernelChange

__all__ = ["to_markdown", "to_text"]


def to_text(comparisons: list[Comparison]) -> str:
    """For a terminal."""
    return "\n\n".join(_render(c, markdown=False) for c in comparisons)


def to_markdown(comparisons: list[Comparison]) -> str:
    """GitHub-flavoured Markdown, fit to paste into a pull request."""
    return "\n\n".join(_render(c, markdown=True) for c in comparisons)


def _render(c: Comparison, markdown: bool) -> str:
    from reportgen import render as r

    fmt = "github" if markdown else "simple"
    code = _code if markdown else (lambda text: text)
    parts = [
        f"{'## ' if markdown else ''}{code(c.name)}: {_side(c.before.torch, c.before.device)} → "
        f"{_side(c.after.torch, c.after.device)}",
        r.verdict_text(c, "**" if markdown else ""),
        _table([r.metric_cells(m) for m in c.metrics], r.COMPARISON_HEADERS, fmt),
    ]
    if c.categories:
        rows = [
            [
                code(x.graph),
                x.category,
                r.us_text(x.before_us),
                r.us_text(x.after_us),
                r.pct_text(x.before_us, x.after_us),
            ]
            for x in c.categories
        ]
        parts += [
            _heading("Device time per step by category", markdown),
            _table(rows, ["graph", "category", "before", "after", "change"], fmt),
        ]
    parts += [_heading("Kernels that changed", markdown), _kernels(r, c.kernels, c.threshold, code, fmt)]
    if c.compile_phases_s:
        rows = [[p, r.seconds_text(a), r.seconds_text(b)] for p, (a, b) in c.compile_phases_s.items()]
        parts += [_heading("Compile phases (s)", markdown), _table(rows, ["phase", "before", "after"], fmt)]
    parts.append(
        f"Graph breaks {c.graph_breaks[0]} → {c.graph_breaks[1]}; recompiles {c.recompiles[0]} → {c.recompiles[1]}."
    )
    parts += [f"Note: {note}" for note in c.notes]
    return "\n\n".join(parts)


def _kernels(r: ModuleType, kernels: list[KernelChange], threshold: float, code: Callable[[str], str], fmt: str) -> str:
    if not kernels:
        return f"None beyond {r.percent_text(threshold)} (kernels under 0.5 % of their graph's time are left out)."
    rows = [
        [
            k.graph,
            code(k.name),
            k.category,
            k.kind,
            r.us_text(k.before_us),
            r.us_text(k.after_us),
            r.pct_text(k.before_us, k.after_us),
        ]
        for k in kernels[: r.COMPARISON_KERNEL_ROWS]
    ]
    table = _table(rows, ["graph", "kernel", "category", "how", "before", "after", "change"], fmt)
    more = len(kernels) - r.COMPARISON_KERNEL_ROWS
    return table + (f"\n\n… and {more} more." if more > 0 else "")


def _heading(text: str, markdown: bool) -> str:
    return f"### {text}" if markdown else f"{text}:"


def _table(rows: list[list[str]], headers: list[str], fmt: str) -> str:
    from tabulate import tabulate

    return str(tabulate(rows, headers=headers, tablefmt=fmt, disable_numparse=True))


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def _side(torch: str | None, device: str | None) -> str:
    return f"torch {torch or '?'} on {device or '?'}"
