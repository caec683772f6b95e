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
from reportgen.sphinx_ext.directives import PerfChart, PerfReport, PerfSummary
from reportgen.sphinx_ext.myst import SectionsToRubrics
from reportgen.sphinx_ext.overview import PerfOverview
from reportgen.sphinx_ext.trend import PerfTrend

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

__all__ = ["setup"]


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directives, the ``reportgen_bundle_root`` option and the rubric transform."""
    app.setup_extension("myst_parser")
    app.add_config_value("reportgen_bundle_root", "", "env", types=frozenset({str}))
    app.add_directive("perf-report", PerfReport)
    app.add_directive("perf-summary", PerfSummary)
    app.add_directive("perf-chart", PerfChart)
    app.add_directive("perf-trend", PerfTrend)
    app.add_directive("perf-overview", PerfOverview)
    app.add_transform(SectionsToRubrics)
    return {"version": __version__, "parallel_read_safe": True, "parallel_write_safe": True}
