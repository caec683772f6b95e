"""One bundle → its report page, chart images, source pages and downloads, ready for Sphinx.

Layout written under `reports_dir` (`render.incremental` decides which bundles to render)::

    index.md              table of all reports (+ warnings for unreadable bundles)
    <bundle>/index.md     one report page (an orphan: reached from the index table, in no toctree)
    <bundle>/<bundle>-*.png  its charts
    <bundle>/recipe.yaml  copy of the bundle's recipe file
    <bundle>/modules/     one page per compiled wrapper (render.sources)
    <bundle>/kernels/     source pages of the kernels that took most time
    <bundle>/reproduce.ipynb  downloads (render.downloads), with trace.json.gz, modules.tar.gz, manifest.json
    <bundle>/history.md   its kept runs over time (render.trends), with two runs or more
    <bundle>/compare.md   its comparison with the run before (render.comparison), when it has one
    <bundle>~<run id>/    the report of a kept earlier run, laid out as above
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import (
    HISTORY_DIR,
    RECIPE_FILE,
    Analysis,
    Bundle,
    Capture,
    Comparison,
    GraphModule,
    ReadBudget,
    RunRecord,
    RunStatus,
    load_bundle,
    read_comparison,
    read_log_tail,
    read_recipe_text,
    write_if_changed,
)
from reportgen.errors import BundleError
from reportgen.formats import kernel_source, read_module
from reportgen.render.autotune import autotune_section, launch_section
from reportgen.render.charts import (
    category_chart,
    module_time_chart,
    speedup_chart,
    step_time_chart,
    top_kernels_chart,
)
from reportgen.render.comparison import COMPARE_PAGE, comparison_page, regression_finding
from reportgen.render.distributed import distributed_section, rank_docname, rank_page
from reportgen.render.downloads import downloads_section, write_downloads
from reportgen.render.findings import findings_section, regions_section
from reportgen.render.graph_charts import (
    bandwidth_chart,
    graph_categories_chart,
    idle_histogram_chart,
    ranks_chart,
    timeline_chart,
)
from reportgen.render.graphs import busy_section, graph_kernels_section, kernel_benchmarks_section
from reportgen.render.index import BrokenBundle, IndexEntry, index_entry
from reportgen.render.markup import HISTORY_PAGE, ORPHAN, escape_md, figure, page_link, page_name
from reportgen.render.pages import ChartFiles, report_page, report_title
from reportgen.render.provenance import provenance_section
from reportgen.render.redactions import redacted, redacted_bundle, redactions_section
from reportgen.render.roofline_chart import roofline_chart
from reportgen.render.sources import (
    SourcePages,
    kernel_docname,
    kernel_page,
    select_kernels,
    sources_section,
    wrapper_docname,
    wrapper_page,
)
from reportgen.render.sweep_pages import group_section
from reportgen.render.trends import history_page, history_section, sparkline, trend_chart
from reportgen.render.versions import versions_section

__all__ = [
    "MODULES_PNG",
    "SPEEDUPS_PNG",
    "RenderedReport",
    "draw_charts",
    "draw_speedups",
    "inductor_sections",
    "leading_sections",
    "remove_stale",
    "render_report",
]

logger = logging.getLogger(__name__)

TOP_KERNELS_PNG = "top_kernels.png"
CATEGORIES_PNG = "categories.png"
STEP_TIMES_PNG = "step_times.png"
GRAPHS_PNG = "graph_categories.png"
TIMELINE_PNG = "timeline.png"
IDLE_PNG = "idle_gaps.png"
BANDWIDTH_PNG = "bandwidth.png"
SPEEDUPS_PNG = "speedups.png"
MODULES_PNG = "modules.png"
ROOFLINE_PNG = "roofline.png"
GRAPH_ROOFLINE_PNG = "roofline-graph-{}.png"
RANKS_PNG = "ranks.png"


def draw_charts(bundle: Bundle, page_dir: Path, prefix: str = "") -> ChartFiles:
    """Draw the charts the bundle has data for into `page_dir`.

    :param prefix: put before each file name; the site uses `<bundle>-`, since Sphinx copies every image into
        one folder and numbers equal names in the order it reads pages (which `-j` makes vary)
    """

    def path(name: str) -> Path:
        return page_dir / f"{prefix}{name}"

    metrics = bundle.manifest.metrics
    step_times = None
    if metrics.eager is not None or metrics.compiled is not None:
        step_times = step_time_chart(metrics, path(STEP_TIMES_PNG)).name
    analysis = bundle.analysis
    if analysis is None or not analysis.kernels.kernels:
        return ChartFiles(step_times=step_times)
    graphs = [g for g in analysis.graphs if g.kernels]
    wall = max((s.wall_us for s in analysis.steps), default=0.0)
    benchmarks = bundle.capture.kernel_benchmarks if bundle.capture else []
    peak = analysis.peak.gbps if analysis.peak else None
    return ChartFiles(
        top_kernels=top_kernels_chart(analysis.kernels, path(TOP_KERNELS_PNG)).name,
        categories=category_chart(analysis.kernels, path(CATEGORIES_PNG)).name,
        step_times=step_times,
        graph_categories=graph_categories_chart(graphs, path(GRAPHS_PNG)).name if graphs else None,
        timeline=timeline_chart(analysis.timeline, wall, path(TIMELINE_PNG)).name if analysis.timeline else None,
        idle=idle_histogram_chart(analysis.idle, path(IDLE_PNG)).name if analysis.idle else None,
        bandwidth=bandwidth_chart(benchmarks, peak, path(BANDWIDTH_PNG)).name if benchmarks else None,
        modules=module_time_chart(analysis.provenance, path(MODULES_PNG)).name if analysis.provenance else None,
        roofline=_roofline(analysis, path(ROOFLINE_PNG)),
        graph_rooflines=_graph_rooflines(analysis, lambda n: path(GRAPH_ROOFLINE_PNG.format(n))),
        ranks=ranks_chart(analysis.distributed.ranks, path(RANKS_PNG)).name
        if analysis.distributed and analysis.distributed.ranks
        else None,
    )


def _roofline(analysis: Analysis, path: Path) -> str | None:
    """The roofline chart when the run's GPU has a roof and a kernel has FLOPs."""
    if analysis.roof is None or not any(row.cost is not None for row in analysis.kernels.kernels):
        return None
    return roofline_chart(analysis.kernels.kernels, analysis.roof, path).name


def _graph_rooflines(analysis: Analysis, path: Callable[[int], Path]) -> dict[str, str] | None:
    """A roofline per compiled graph with a counted kernel, when the run's GPU has a roof."""
    roof = analysis.roof
    if roof is None:
        return None
    found = {
        str(graph.graph): roofline_chart(graph.kernels, roof, path(graph.graph), graph.label).name
        for graph in analysis.graphs
        if graph.graph is not None and any(kernel.cost is not None for kernel in graph.kernels)
    }
    return found or None


def leading_sections(
    bundle: Bundle, comparison: Comparison | None = None, charts: ChartFiles | None = None, links: bool = True
) -> list[str]:
    """A distributed run's ranks, then the findings, come first on a report page (a regression against the run
    before leads them). `links`: the ranks link their pages (a site's; not an embedding page's)."""
    regression = regression_finding(comparison) if comparison is not None else None
    findings = [*([regression] if regression else []), *(bundle.analysis.findings if bundle.analysis else [])]
    analysis = bundle.analysis.distributed if bundle.analysis else None
    ranks = distributed_section(bundle.manifest.distributed, analysis, links, charts.ranks if charts else None)
    return [ranks, *([findings_section(findings)] if bundle.analysis is not None or findings else [])]


def inductor_sections(bundle: Bundle, charts: ChartFiles, sources: SourcePages | None) -> list[str]:
    """GPU busy, compile diagnostics, kernels per graph, kernel benchmarks and autotuning choices."""
    analysis = bundle.analysis
    capture = bundle.capture or Capture()
    if analysis is None:  # a failed run may still have tuned operations before it ended
        return [autotune_section(capture.autotune)]
    diagnostics = capture.diagnostics
    return [
        busy_section(analysis, charts.timeline, charts.idle, figure),
        regions_section(analysis.regions, diagnostics),
        versions_section(analysis.versions, analysis.kernels.device, analysis.kernels.profiled_steps),
        graph_kernels_section(
            analysis,
            bundle.manifest,
            sources,
            chart=charts.graph_categories,
            figure=figure,
            rooflines=charts.graph_rooflines,
        ),
        provenance_section(analysis, charts.modules, figure),
        kernel_benchmarks_section(capture.kernel_benchmarks, analysis.peak, capture, charts.bandwidth, figure),
        autotune_section(capture.autotune),
        launch_section(capture.launches),
    ]


def _write_page(page_dir: Path, docname: str, text: str) -> str:
    """Write page `docname` under `page_dir` unless it holds that text; returns its file name relative to `page_dir`."""
    write_if_changed(page_dir / f"{docname}.md", text.encode())
    return f"{docname}.md"


def _render_sources(bundle: Bundle, page_dir: Path) -> tuple[SourcePages, list[str]]:
    """Write the wrapper and kernel source pages of `bundle` under `page_dir`; the pages and their files."""
    index = bundle.analysis.sources if bundle.analysis else None
    if index is None:
        return SourcePages(bundle_name=bundle.name, wrappers=(), kernels=frozenset()), []
    budget = ReadBudget(bundle.path, "the source pages")
    wrappers = {
        g.graph: text for g in index.graphs if (text := read_module(bundle.path, g.wrapper_path, budget)) is not None
    }
    graphs: dict[int, GraphModule] = {g.graph: g for g in index.graphs if g.graph in wrappers}
    ranked = [k.name for k in bundle.analysis.kernels.kernels] if bundle.analysis else None
    written: set[tuple[int, str]] = set()
    files = []
    for kernel in select_kernels(index, ranked):
        if kernel.graph not in graphs:
            continue
        if (source := kernel_source(bundle.path, kernel, wrappers[kernel.graph], budget)) is None:
            continue
        page = kernel_page(kernel, graphs[kernel.graph], source)
        files.append(_write_page(page_dir, kernel_docname(kernel.graph, kernel.name), page))
        written.add((kernel.graph, kernel.name))
    pages = SourcePages(
        bundle_name=bundle.name,
        wrappers=tuple((g.graph, g.kind, wrapper_docname(g)) for g in graphs.values()),
        kernels=frozenset(written),
    )
    for graph in graphs.values():
        files.append(_write_page(page_dir, wrapper_docname(graph), wrapper_page(graph, wrappers[graph.graph], pages)))
    return pages, files


def _write_report(
    bundle: Bundle,
    page_dir: Path,
    siblings: Sequence[Bundle],
    runs: Sequence[RunRecord] = (),
    comparison: Comparison | None = None,
) -> tuple[set[str], str | None]:
    """Write one report page, its charts, its recipe copy, its source pages and its downloads into `page_dir`,
    leaving files that already hold the right bytes alone; returns their names relative to `page_dir`, and the
    sparkline's for the index (None with fewer than two runs)."""
    page_dir.mkdir(parents=True, exist_ok=True)
    bundle = redacted_bundle(bundle)
    recipe_yaml = redacted(read_recipe_text(bundle.path))
    if recipe_yaml is not None:
        write_if_changed(page_dir / RECIPE_FILE, recipe_yaml.encode())
    log_tail = None
    if bundle.manifest.status is not RunStatus.ok:
        log_tail = redacted(read_log_tail(bundle.path, bundle.manifest.log_file))
    sources, files = _render_sources(bundle, page_dir)
    charts = draw_charts(bundle, page_dir, prefix=f"{page_name(bundle.name)}-")
    downloads = write_downloads(bundle, page_dir, recipe_yaml)
    history_files, spark = _write_history(bundle, page_dir, runs, comparison)
    group, group_files = group_section(bundle, siblings, page_dir)
    page = report_page(
        bundle,
        charts,
        recipe_yaml=recipe_yaml,
        log_tail=log_tail,
        leading_sections=[*_kept_run_note(bundle, runs), *leading_sections(bundle, comparison, charts)],
        inductor_sections=[group, *inductor_sections(bundle, charts, sources)],
        trailing_sections=[
            history_section(runs, comparison),
            redactions_section(bundle.manifest),
            downloads_section(downloads),
        ],
    )
    files.extend([*_write_rank_pages(bundle, page_dir), *group_files])
    if section := sources_section(sources):
        page = f"{page.rstrip()}\n\n{section}\n"
    files.append(_write_page(page_dir, "index", f"{ORPHAN}\n\n{page}"))
    files.extend(charts.names())
    files.extend(d.file for d in downloads)
    files.extend(history_files)
    return set(files), spark


def _write_rank_pages(bundle: Bundle, page_dir: Path) -> list[str]:
    """One page per rank of a distributed run (none otherwise)."""
    run = bundle.manifest.distributed
    if run is None:
        return []
    overlaps = (
        {o.rank: o for o in bundle.analysis.distributed.ranks}
        if bundle.analysis and bundle.analysis.distributed
        else {}
    )
    title = report_title(bundle.manifest)
    return [
        _write_page(page_dir, rank_docname(r.rank), f"{ORPHAN}\n\n{rank_page(title, r, overlaps.get(r.rank))}")
        for r in run.ranks
    ]


def _comparison(bundle: Bundle) -> Comparison | None:
    try:
        return read_comparison(bundle.path)
    except BundleError as exc:
        logger.warning("%s: comparison left out: %s", bundle.name, exc)
        return None


def _kept_run_note(bundle: Bundle, runs: Sequence[RunRecord]) -> list[str]:
    """On the report of a kept earlier run: which run it is, and a link to the latest."""
    home = bundle.path.parent
    if runs or home.name != bundle.manifest.name or home.parent.name != HISTORY_DIR:  # the latest run
        return []
    latest = page_link(escape_md(bundle.manifest.name), f"../{page_name(home.name)}/index")
    return [f"```{{note}}\nAn earlier run, kept in the history of {latest}.\n```"]


def _write_history(
    bundle: Bundle, page_dir: Path, runs: Sequence[RunRecord], comparison: Comparison | None
) -> tuple[list[str], str | None]:
    """The trend page and sparkline (two runs or more) and the comparison page; their files and the sparkline's."""
    files: list[str] = []
    spark = None
    if len(runs) >= 2:
        chart = trend_chart(runs, page_dir / f"{page_name(bundle.name)}-history.png").name
        spark = sparkline(runs, page_dir / f"{page_name(bundle.name)}-spark.png").name
        files += [
            chart,
            spark,
            _write_page(page_dir, HISTORY_PAGE, history_page(report_title(bundle.manifest), runs, chart)),
        ]
    if comparison is not None:
        files.append(_write_page(page_dir, COMPARE_PAGE, comparison_page(comparison, report_title(bundle.manifest))))
    return files, spark


@dataclass(frozen=True)
class RenderedReport:
    """A bundle rendered into its page directory.

    :param entry: its row on the reports index
    :param files: every file of its page directory, relative to it (anything else there was removed)
    """

    entry: IndexEntry
    files: tuple[str, ...]


def _load_siblings(bundle: Bundle, sibling_dirs: Sequence[Path]) -> list[Bundle]:
    siblings = []
    for path in sibling_dirs:
        try:
            siblings.append(bundle if path == bundle.path else load_bundle(path))
        except BundleError:
            continue  # the index says why; the variants table leaves it out
    return siblings


def render_report(
    bundle_dir: Path, sibling_dirs: Sequence[Path], page_dir: Path, runs: Sequence[RunRecord] = ()
) -> RenderedReport | BrokenBundle:
    """Render one bundle into `page_dir` (in place: unchanged files keep their mtime; stale ones go).

    :param sibling_dirs: the bundles of the other variants of its recipe (with its own), for the variants table
    :param runs: its kept runs, oldest first (the history index's records), for the History section
    :returns: what the index shows of it, or why it could not be read
    """
    try:
        bundle = load_bundle(bundle_dir)
    except BundleError as exc:
        logger.warning("skipping unreadable bundle %s", exc)
        return BrokenBundle(name=bundle_dir.name, error=str(exc))
    comparison = _comparison(bundle)  # read once: the page, its comparison page and its index row
    files, spark = _write_report(bundle, page_dir, _load_siblings(bundle, sibling_dirs), runs, comparison)
    remove_stale(page_dir, files)
    return RenderedReport(entry=index_entry(bundle, spark, comparison), files=tuple(sorted(files)))


def remove_stale(root: Path, keep: set[str]) -> None:
    """Remove every file under `root` whose relative path is not in `keep`, then the folders left empty."""
    for path in sorted(root.rglob("*"), reverse=True):
        relative = path.relative_to(root).as_posix()
        if path.is_dir() and not path.is_symlink():
            if not any(path.iterdir()):
                path.rmdir()
        elif relative not in keep:
            path.unlink()


def draw_speedups(speedups: Sequence[tuple[str, float]], out_dir: Path) -> str | None:
    """The index's speedup chart, when at least one ok run has a speedup."""
    return speedup_chart(speedups, out_dir / SPEEDUPS_PNG).name if speedups else None
