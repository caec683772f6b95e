"""Sphinx extension that embeds reports, summaries and charts of bundles in any Sphinx project.

It renders from bundles on disk only (never runs a workload, never imports torch)::

    extensions = ["reportgen.sphinx"]   # conf.py; loads myst_parser too

    ```{perf-report} ../results/resnet50
    ```

    ```{perf-trend} ../results/resnet50
    ```

    ```{perf-overview} ../results
    ```
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from reportgen import __version__
from reportgen.sphinx_ext.directives import (
    PerfChart,
    PerfFindings,
    PerfKernels,
    PerfReport,
    PerfSummary,
    PerfVariants,
)
from reportgen.sphinx_ext.myst import SectionsToRubrics
from reportgen.sphinx_ext.overview import PerfOverview
from reportgen.sphinx_ext.trend import PerfTrend

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

__all__ = ["setup"]


ASSETS = ("reportgen-embed.css", "reportgen.js")
"""What the extension adds to an HTML build (from `reportgen.site.STATIC_DIR`): theme-neutral CSS that keeps wide
tables in the host's column, and the JS that sorts and filters kernel tables."""


def _add_assets(app: Sphinx) -> None:
    """Link the extension's CSS and JS into HTML pages (unless `reportgen_assets = False`, or the host lists them)."""
    if not app.config.reportgen_assets or app.builder.format != "html":
        return
    from reportgen.site import STATIC_DIR

    if str(STATIC_DIR) not in map(str, app.config.html_static_path):
        app.config.html_static_path.append(str(STATIC_DIR))
    listed = {str(f[0] if isinstance(f, tuple) else f) for f in [*app.config.html_css_files, *app.config.html_js_files]}
    for name in ASSETS:
        if name in listed:
            continue
        if name.endswith(".css"):
            app.add_css_file(name)
        else:
            app.add_js_file(name, loading_method="defer")


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directives, the ``reportgen_bundle_root`` option and the rubric transform."""
    app.setup_extension("myst_parser")
    app.add_config_value("reportgen_bundle_root", "", "env", types=frozenset({str}))
    app.add_directive("perf-report", PerfReport)
    app.add_directive("perf-summary", PerfSummary)
    app.add_directive("perf-kernels", PerfKernels)
    app.add_directive("perf-findings", PerfFindings)
    app.add_directive("perf-variants", PerfVariants)
    app.add_directive("perf-chart", PerfChart)
    app.add_directive("perf-trend", PerfTrend)
    app.add_directive("perf-overview", PerfOverview)
    app.add_transform(SectionsToRubrics)
    app.add_config_value("reportgen_assets", True, "html", types=frozenset({bool}))
    app.connect("builder-inited", _add_assets)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
