"""Bundles → a tree of MyST pages and chart images, ready for Sphinx.

Layout written under `reports_dir`::

    index.md              table of all reports (+ warnings for unreadable bundles)
    <bundle>/index.md     one report page
    <bundle>/*.png        its charts
    <bundle>/recipe.yaml  copy of the bundle's recipe file
    <bundle>/modules/     one page per compiled wrapper (render.sources)
    <bundle>/kernels/     source pages of the kernels that took most time
    <bundle>/reproduce.ipynb  downloads (render.downloads), with trace.json.gz, modules.tar.gz, manifest.json
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from reportgen.bundle import (
    RECIPE_FILE,
    Bundle,
    Capture,
    GraphModule,
    RunStatus,
    iter_bundles,
    load_bundle,
    read_log_tail,
    read_recipe_text,
    replace_dir,
)
from reportgen.errors import BundleError, SiteError
from reportgen.formats import kernel_source, read_module
from reportgen.render.autotune import autotune_section
from reportgen.render.charts import category_chart, speedup_chart, step_time_chart, top_kernels_chart
from reportgen.render.downloads import downloads_section, write_downloads
from reportgen.render.findings import findings_section, regions_section
from reportgen.render.graph_charts import bandwidth_chart, graph_categories_chart, idle_histogram_chart, timeline_chart
from reportgen.render.graphs import busy_section, graph_kernels_section, kernel_benchmarks_section
from reportgen.render.markup import figure
from reportgen.render.pages import BrokenBundle, ChartFiles, index_page, report_page
from reportgen.render.redactions import redacted, redacted_bundle, redactions_section
from reportgen.render.sources import (
    SourcePages,
    kernel_docname,
    kernel_page,
    select_kernels,
    sources_section,
    wrapper_docname,
    wrapper_page,
)
from reportgen.render.variants import variants_section

__all__ = ["draw_charts", "inductor_sections", "leading_sections", "render_site_pages"]

logger = logging.getLogger(__name__)

TOP_KERNELS_PNG = "top_kernels.png"
CATEGORIES_PNG = "categories.png"
STEP_TIMES_PNG = "step_times.png"
GRAPHS_PNG = "graph_categories.png"
TIMELINE_PNG = "timeline.png"
IDLE_PNG = "idle_gaps.png"
BANDWIDTH_PNG = "bandwidth.png"
SPEEDUPS_PNG = "speedups.png"


def draw_charts(bundle: Bundle, page_dir: Path) -> ChartFiles:
    """Draw the charts the bundle has data for into `page_dir`."""
    metrics = bundle.manifest.metrics
    step_times = None
    if metrics.eager is not None or metrics.compiled is not None:
        step_times = step_time_chart(metrics, page_dir / STEP_TIMES_PNG).name
    analysis = bundle.analysis
    if analysis is None or not analysis.kernels.kernels:
        return ChartFiles(step_times=step_times)
    graphs = [g for g in analysis.graphs if g.kernels]
    wall = max((s.wall_us for s in analysis.steps), default=0.0)
    benchmarks = bundle.capture.kernel_benchmarks if bundle.capture else []
    peak = analysis.peak
    return ChartFiles(
        top_kernels=top_kernels_chart(analysis.kernels, page_dir / TOP_KERNELS_PNG).name,
        categories=category_chart(analysis.kernels, page_dir / CATEGORIES_PNG).name,
        step_times=step_times,
        graph_categories=graph_categories_chart(graphs, page_dir / GRAPHS_PNG).name if graphs else None,
        timeline=timeline_chart(analysis.timeline, wall, page_dir / TIMELINE_PNG).name if analysis.timeline else None,
        idle=idle_histogram_chart(analysis.idle, page_dir / IDLE_PNG).name if analysis.idle else None,
        bandwidth=bandwidth_chart(benchmarks, peak.gbps if peak else None, page_dir / BANDWIDTH_PNG).name
        if benchmarks
        else None,
    )


def leading_sections(bundle: Bundle) -> list[str]:
    """Findings come first on a report page."""
    if bundle.analysis is None:
        return []
    return [findings_section(bundle.analysis.findings)]


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
        graph_kernels_section(analysis, bundle.manifest, sources, chart=charts.graph_categories, figure=figure),
        kernel_benchmarks_section(capture.kernel_benchmarks, analysis.peak, capture, charts.bandwidth, figure),
        autotune_section(capture.autotune),
    ]


def _write_page(page_dir: Path, docname: str, text: str) -> None:
    path = page_dir / f"{docname}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _render_sources(bundle: Bundle, page_dir: Path) -> SourcePages:
    """Write the wrapper and kernel source pages of `bundle` under `page_dir`."""
    index = bundle.analysis.sources if bundle.analysis else None
    if index is None:
        return SourcePages(bundle_name=bundle.name, wrappers=(), kernels=frozenset())
    wrappers = {g.graph: text for g in index.graphs if (text := read_module(bundle.path, g.wrapper_path)) is not None}
    graphs: dict[int, GraphModule] = {g.graph: g for g in index.graphs if g.graph in wrappers}
    ranked = [k.name for k in bundle.analysis.kernels.kernels] if bundle.analysis else None
    written: set[tuple[int, str]] = set()
    for kernel in select_kernels(index, ranked):
        if kernel.graph not in graphs or (source := kernel_source(bundle.path, kernel, wrappers[kernel.graph])) is None:
            continue
        _write_page(
            page_dir, kernel_docname(kernel.graph, kernel.name), kernel_page(kernel, graphs[kernel.graph], source)
        )
        written.add((kernel.graph, kernel.name))
    pages = SourcePages(
        bundle_name=bundle.name,
        wrappers=tuple((g.graph, g.kind, wrapper_docname(g)) for g in graphs.values()),
        kernels=frozenset(written),
    )
    for graph in graphs.values():
        _write_page(page_dir, wrapper_docname(graph), wrapper_page(graph, wrappers[graph.graph], pages))
    return pages


def _render_report(bundle: Bundle, page_dir: Path, siblings: Sequence[Bundle] = ()) -> Path:
    """Write one report page, its charts, its recipe copy and its downloads into `page_dir`."""
    page_dir.mkdir(parents=True)
    bundle = redacted_bundle(bundle)
    recipe_yaml = redacted(read_recipe_text(bundle.path))
    if recipe_yaml is not None:
        (page_dir / RECIPE_FILE).write_text(recipe_yaml, encoding="utf-8")
    log_tail = None
    if bundle.manifest.status is not RunStatus.ok:
        log_tail = redacted(read_log_tail(bundle.path, bundle.manifest.log_file))
    sources = _render_sources(bundle, page_dir)
    charts = draw_charts(bundle, page_dir)
    downloads = write_downloads(bundle, page_dir, recipe_yaml)
    page = report_page(
        bundle,
        charts,
        recipe_yaml=recipe_yaml,
        log_tail=log_tail,
        leading_sections=leading_sections(bundle),
        inductor_sections=[variants_section(bundle, siblings), *inductor_sections(bundle, charts, sources)],
        trailing_sections=[redactions_section(bundle.manifest), downloads_section(downloads)],
    )
    if section := sources_section(sources):
        page = f"{page.rstrip()}\n\n{section}\n"
    index = page_dir / "index.md"
    index.write_text(page, encoding="utf-8")
    return index


def _draw_speedups(bundles: Sequence[Bundle], out_dir: Path) -> str | None:
    """The index's speedup chart, when at least one ok run has a speedup."""
    speedups = [
        (b.name, speedup)
        for b in bundles
        if b.manifest.status is RunStatus.ok and (speedup := b.manifest.metrics.speedup) is not None
    ]
    return speedup_chart(speedups, out_dir / SPEEDUPS_PNG).name if speedups else None


def _render_all(results_dir: Path, out_dir: Path) -> list[Path]:
    """Render every bundle and the index into the empty directory `out_dir`.

    :returns: the pages written, relative to `out_dir`
    """
    bundles: list[Bundle] = []
    broken: list[BrokenBundle] = []
    for bundle_dir in iter_bundles(results_dir):
        try:
            bundles.append(load_bundle(bundle_dir))
        except BundleError as exc:
            logger.warning("skipping unreadable bundle %s", exc)
            broken.append(BrokenBundle(name=bundle_dir.name, error=str(exc)))
    variants: dict[str, list[Bundle]] = {}
    for bundle in bundles:
        if bundle.manifest.variant is not None:
            variants.setdefault(bundle.manifest.recipe.name, []).append(bundle)
    pages = []
    for bundle in bundles:
        siblings = variants.get(bundle.manifest.recipe.name, []) if bundle.manifest.variant else []
        pages.append(_render_report(bundle, out_dir / bundle.name, siblings).relative_to(out_dir))
    chart = _draw_speedups(bundles, out_dir)
    (out_dir / "index.md").write_text(index_page(bundles, broken, chart), encoding="utf-8")
    return [Path("index.md"), *pages]


def render_site_pages(results_dir: Path, reports_dir: Path) -> list[Path]:
    """Render all bundles of `results_dir` into `reports_dir`, replacing it atomically.

    An unreadable bundle becomes a warning on the index and does not stop the others.

    :returns: the Markdown pages written (the index first), at their final paths
    """
    pages = replace_dir(reports_dir, lambda out_dir: _render_all(results_dir, out_dir), SiteError, "the report pages")
    return [reports_dir / page for page in pages]
