"""The reports index: one table row per bundle, kept between builds so that a rebuild reads no bundle that
did not change (`render.incremental`), the speedup chart and warnings for unreadable bundles (pure)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

from reportgen.bundle import Analysis, Bundle, Comparison, RunStatus, format_ms
from reportgen.render.comparison import COMPARE_PAGE, since_previous
from reportgen.render.markup import (
    HISTORY_PAGE,
    MISSING,
    code_span,
    escape_md,
    figure,
    list_table,
    page_link,
    page_name,
    plural,
)
from reportgen.render.pages import report_title
from reportgen.render.sweep import SWEEP_PAGE
from reportgen.render.timing_text import speedup_text

__all__ = ["OVERVIEW_FILE", "BrokenBundle", "IndexEntry", "index_entry", "index_page", "overview_page"]

OVERVIEW_FILE = "overview.inc"
"""Beside the reports index: the state of every run, which a site's front page includes (`{include}`). Not a
source suffix, so Sphinx builds no page of it, whatever a project's `conf.py` excludes."""
_OVERVIEW_HEADER = ["Report", "Status", "Device time per step", "Step (wall)", "Speedup", "Since previous", "Trend"]
_RANKS = ("failed", "regressed", "changed", "ok")
"""How the overview orders its rows: failures first, then regressions, then runs whose figures moved, then the rest."""

_GRAPH_KINDS = {"forward": "fwd", "backward": "bwd", "inference": "infer"}
_HEADER = [
    "Report", "Model", "Device", "Torch", "Date", "Speedup", "Busy (%)", "Compile", "Status", "Trend", "Since previous",
]  # fmt: skip


@dataclass(frozen=True)
class BrokenBundle:
    """A bundle that could not be read, listed on the index as a warning.

    :param name: the bundle's directory name
    :param error: why it could not be read
    """

    name: str
    error: str


@dataclass(frozen=True)
class IndexEntry:
    """What the index shows of one bundle.

    :param name: the bundle's directory name (its report page is `<name>/index`)
    :param row: the cells of its row in the index table (MyST)
    :param speedup: its bar in the speedup chart: ok runs with a speedup only
    """

    name: str
    row: tuple[str, ...]
    speedup: float | None = None
    rank: int = len(_RANKS) - 1
    """Its place on the overview (`_RANKS`)."""
    overview: tuple[str, ...] = ()
    """Its row on the overview (links relative to the site's root)."""


def _date(timestamp: str) -> str:
    """The date part of an ISO 8601 timestamp."""
    try:
        return dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        return escape_md(timestamp[:10]) or MISSING


def _busy(analysis: Analysis | None) -> str:
    """Headline busy % (`GraphAnalysis.headline_busy`) of the forward, backward and inference graphs, e.g.
    `fwd 36, bwd 34`."""
    by_kind: dict[str, list[str]] = {}
    for graph in analysis.graphs if analysis else []:
        short = _GRAPH_KINDS.get(graph.kind)
        busy, _ = graph.headline_busy
        if short is not None and busy is not None:
            by_kind.setdefault(short, []).append(f"{busy:.0f}")
    # No-break spaces: a narrow cell wraps between graph kinds, not inside one.
    return ", ".join(f"{kind}\u00a0{'/'.join(values)}" for kind, values in by_kind.items()) or MISSING


def index_entry(
    bundle: Bundle, sparkline: str | None = None, comparison: Comparison | None = None, pages: str | None = "reports"
) -> IndexEntry:
    """The index row of `bundle` and its speedup.

    :param sparkline: its sparkline's file in its page directory (two runs or more), linked to its trend page
    :param comparison: its comparison with the run before
    :param pages: where its overview row links to (its report page `<pages>/<name>/index.md`); None: no links (a
        site that embeds the overview has no report pages)
    """
    manifest = bundle.manifest
    env, metrics = manifest.environment, manifest.metrics
    torch = env.versions.torch if env else None
    status = manifest.status.value
    ok = manifest.status is RunStatus.ok
    page = page_name(bundle.name)
    row = (
        page_link(escape_md(report_title(manifest)), f"{page}/index"),
        code_span(manifest.recipe.model.ref, break_after=":"),
        escape_md(env.device_name) if env else manifest.recipe.device,
        escape_md(torch) if torch else MISSING,
        _date(manifest.started_at),
        speedup_text(metrics),
        _busy(bundle.analysis),
        f"{metrics.compile_time_s:.1f} s" if metrics.compile_time_s is not None else MISSING,
        status if ok else f"**{status}**",
        page_link(f"![trend of {escape_md(bundle.name)}](<{page}/{sparkline}>)", f"{page}/{HISTORY_PAGE}")
        if sparkline
        else MISSING,
        page_link(since_previous(comparison), f"{page}/{COMPARE_PAGE}") if comparison else MISSING,
    )
    return IndexEntry(
        name=bundle.name,
        row=row,
        speedup=metrics.speedup if ok else None,
        rank=_rank(ok, comparison),
        overview=_overview_row(bundle, sparkline, comparison, pages),
    )


def _rank(ok: bool, comparison: Comparison | None) -> int:
    if not ok:
        return _RANKS.index("failed")
    if comparison is not None and comparison.comparable and comparison.regressions:
        return _RANKS.index("regressed")
    moved = comparison is not None and any(m.gated and m.verdict in ("improved", "changed") for m in comparison.metrics)
    return _RANKS.index("changed" if moved else "ok")


def _overview_row(
    bundle: Bundle, sparkline: str | None, comparison: Comparison | None, pages: str | None
) -> tuple[str, ...]:
    """Status, what repeats (device time per step), the wall figures and the change since the run before."""
    manifest, page = bundle.manifest, f"{pages}/{page_name(bundle.name)}"
    title = escape_md(report_title(manifest))
    figures = bundle.analysis.figures if bundle.analysis else None
    device = figures.compiled.device_ms if figures and figures.compiled else None
    compiled = manifest.metrics.compiled
    status = manifest.status.value
    return (
        page_link(title, f"{page}/index") if pages else title,
        status if manifest.status is RunStatus.ok else f"**{status}**",
        f"{format_ms(device)} ms" if device is not None else MISSING,
        f"{format_ms(compiled.median_ms)} ms" if compiled else MISSING,
        speedup_text(manifest.metrics),
        (page_link(since_previous(comparison), f"{page}/{COMPARE_PAGE}") if pages else since_previous(comparison))
        if comparison
        else MISSING,
        page_link(f"![trend of {escape_md(bundle.name)}](<{page}/{sparkline}>)", f"{page}/{HISTORY_PAGE}")
        if sparkline and pages
        else MISSING,
    )


def overview_page(entries: Sequence[IndexEntry], broken: Sequence[BrokenBundle] = (), title: bool = True) -> str:
    """The state of every run for a site's front page: failures, then regressions, then the rest, by name; links
    are relative to the site's root (where `reports/` is).

    :param title: lead with a `## State of the runs` heading (a site's front page; the directive has none)
    """
    counts = {rank: sum(1 for e in entries if e.rank == i) for i, rank in enumerate(_RANKS)}
    summary = ", ".join(f"{n} {rank}" for rank, n in counts.items() if n) or "no runs yet"
    unread = f"; {plural(len(broken), 'bundle')} could not be read (see the reports index)" if broken else ""
    parts = [f"{plural(len(entries), 'run')}: {summary}{unread}."]
    if title:
        parts.insert(0, "## State of the runs")
    rows = [e.overview for e in sorted(entries, key=lambda e: (e.rank, e.name)) if e.overview]
    if rows:
        parts.append(f"````{{container}} reportgen-index\n{list_table(_OVERVIEW_HEADER, rows)}\n````")
        parts.append(
            "Device time per step: the compiled steps' kernel time, which repeats from run to run on a GPU; step "
            "(wall): the compiled median, host-dependent; since previous: against the run before, the figure that "
            "regressed, else the compiled device time's change (links to the comparison)."
        )
    return "\n\n".join(parts) + "\n"


def _index_table(entries: Sequence[IndexEntry]) -> str:
    table = list_table(_HEADER, [e.row for e in entries])
    note = (
        "Busy: per compiled graph (fwd, bwd, infer), PyTorch's `wrapper.py -p` definition where it was measured "
        "(GPU runs), else the union of the graph's kernel intervals over its calls' wall span; "
        "compile: first-call compile time; trend: compiled median step time over the kept runs (links to the "
        "trend page); since previous: against the run before, the figure that regressed, else the compiled device "
        "time's change (the compiled median's for runs without device figures) (links to the comparison)."
    )
    return f"````{{container}} reportgen-index\n{table}\n````\n\n{note}"


def _broken_entry(broken: BrokenBundle) -> str:
    return f"```{{warning}}\nBundle {code_span(broken.name)} could not be read: {escape_md(broken.error)}\n```"


def _sweeps_section(sweeps: Sequence[tuple[str, str]]) -> str:
    """Links to the sweeps' pages (`<first point's page>/sweep`), each named by its recipe."""
    links = ", ".join(page_link(code_span(recipe), f"{page}/{SWEEP_PAGE}") for page, recipe in sweeps)
    return f"## Sweeps\n\nEach sweep has a page of curves over its points, which are rows above: {links}."


def index_page(
    entries: Sequence[IndexEntry],
    broken: Sequence[BrokenBundle] = (),
    speedup_chart: str | None = None,
    sweeps: Sequence[tuple[str, str]] = (),
) -> str:
    """The reports index: a summary table linking every report page, a chart, and warnings.

    Report pages (`<bundle name>/index` relative to the index) are in no toctree: they are `orphan`
    pages reached from this table, so adding or removing one changes no other page's navigation and
    Sphinx rewrites only the pages that changed.

    :param speedup_chart: the speedup chart's file name next to the index, when one was drawn
    :param sweeps: (page directory, recipe name) of each sweep's first point, whose directory holds the sweep's page
    """
    parts = ["# Reports"]
    parts.append(_index_table(entries) if entries else "No reports yet.")
    if sweeps:
        parts.append(_sweeps_section(sweeps))
    if speedup_chart:
        parts.append(
            figure(
                speedup_chart,
                "Speedup of torch.compile per run",
                "Right of the dashed line (1×), the compiled model is faster than eager.",
            )
        )
    parts.extend(_broken_entry(b) for b in broken)
    return "\n\n".join(parts) + "\n"
