"""A `Comparison` as text (a terminal) or Markdown (a pull request comment); the site's page is
`reportgen.render`'s, with the same numbers and verdict.

`reportgen.render` is imported when a comparison is formatted, not with this module: `reportgen run` keeps each
bundle's comparison through this package and must not load matplotlib or nbformat (a GPU host may lack them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from types import ModuleType

from reportgen.bundle import Comparison, KernelChange
from reportgen.escape import markdown_code, markdown_text, terminal_text

__all__ = ["to_markdown", "to_text"]


@dataclass(frozen=True)
class _Target:
    """How one output writes what the bundles say (`reportgen.escape`): names, prose, and table cells of each."""

    markdown: bool
    name: Callable[[str], str]
    text: Callable[[str], str]
    name_cell: Callable[[str], str]
    text_cell: Callable[[str], str]


_TERMINAL = _Target(
    markdown=False,
    name=partial(terminal_text, single_line=True),
    text=partial(terminal_text, single_line=True),
    name_cell=partial(terminal_text, single_line=True),
    text_cell=partial(terminal_text, single_line=True),
)
_MARKDOWN = _Target(
    markdown=True,
    name=markdown_code,
    text=markdown_text,
    name_cell=partial(markdown_code, table=True),
    text_cell=partial(markdown_text, table=True),
)


def to_text(comparisons: list[Comparison]) -> str:
    """For a terminal: what the bundles say is shown on one line each, its control characters made visible."""
    return "\n\n".join(_render(c, _TERMINAL) for c in comparisons)


def to_markdown(comparisons: list[Comparison]) -> str:
    """GitHub-flavoured Markdown, fit to paste into a pull request: names as code spans, other text escaped (no
    HTML, link, image, fence, table break, mention or issue reference from a bundle)."""
    return "\n\n".join(_render(c, _MARKDOWN) for c in comparisons)


def _render(c: Comparison, t: _Target) -> str:
    from reportgen import render as r

    fmt = "github" if t.markdown else "simple"
    parts = [
        f"{'## ' if t.markdown else ''}{t.name(c.name)}: {_side(t, c.before.torch, c.before.device)} → "
        f"{_side(t, c.after.torch, c.after.device)}",
        r.verdict_text(c, "**" if t.markdown else "", t.text, t.name),
        *_metrics(r, c, t, fmt),
    ]
    if c.categories:
        rows = [
            [
                t.name_cell(x.graph),
                t.name_cell(x.category),
                r.us_text(x.before_us),
                r.us_text(x.after_us),
                r.pct_text(x.before_us, x.after_us),
            ]
            for x in c.categories
        ]
        parts += [
            _heading("Device time per step by category", t.markdown),
            _table(rows, ["graph", "category", "before", "after", "change"], fmt),
        ]
    parts += [_heading("Kernels that changed", t.markdown), _kernels(r, c.kernels, c.threshold, t, fmt)]
    if c.launch_changes:
        rows = [[t.name_cell(x.kernel), t.name_cell(x.before), t.name_cell(x.after), " → ".join(x.tuning)]
                for x in c.launch_changes]  # fmt: skip
        parts += [
            _heading("Launch configs that changed (same kernel code, another config)", t.markdown),
            _table(rows, ["kernel", "before", "after", "chosen"], fmt),
        ]
    if c.compile_phases_s:
        rows = [[t.name_cell(p), r.seconds_text(a), r.seconds_text(b)] for p, (a, b) in c.compile_phases_s.items()]
        parts += [_heading("Compile phases (s)", t.markdown), _table(rows, ["phase", "before", "after"], fmt)]
    parts.append(
        f"Graph breaks {c.graph_breaks[0]} → {c.graph_breaks[1]}; recompiles {c.recompiles[0]} → {c.recompiles[1]}."
    )
    parts += [f"Note: {t.text(note)}" for note in c.notes]
    return "\n\n".join(parts)


def _metrics(r: ModuleType, c: Comparison, t: _Target, fmt: str) -> list[str]:
    """A table per kind of figure under its heading (device figures, counts, wall figures, other), and under the
    counts the ops and kernels whose count changed."""
    parts = []
    for group in r.metric_groups(c):
        rows = [[t.text_cell(cell) for cell in r.metric_cells(m)] for m in group.metrics]
        parts += [_heading(group.title, t.markdown), _table(rows, group.headers, fmt)]
        if group.kind == "count" and c.count_changes:
            changes = c.count_changes[: r.COMPARISON_COUNT_ROWS]
            rows = [r.count_change_cells(x, t.name_cell, t.text_cell) for x in changes]
            more = len(c.count_changes) - len(changes)
            parts += [
                _heading("Ops and kernels whose count changed", t.markdown),
                _table(rows, r.COUNT_CHANGE_HEADERS, fmt) + (f"\n\n… and {more} more." if more > 0 else ""),
            ]
    return parts


def _kernels(r: ModuleType, kernels: list[KernelChange], threshold: float, t: _Target, fmt: str) -> str:
    if not kernels:
        return f"None beyond {r.percent_text(threshold)} (kernels under 0.5 % of their graph's time are left out)."
    rows = [
        [
            t.name_cell(k.graph),
            t.name_cell(k.name),
            t.name_cell(k.category),
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


def _side(t: _Target, torch: str | None, device: str | None) -> str:
    return f"torch {t.text(torch or '?')} on {t.text(device or '?')}"
