"""Render stage: bundles → MyST pages, chart images and reproducer notebooks, ready for Sphinx.

Render formats what a bundle holds; it does not analyse (every number comes from analysis.json,
capture.json and the manifest). Layout written under `reports_dir` (see `render.report`)::

    index.md              table of all reports (+ warnings for unreadable bundles)
    <bundle>/index.md     one report page, its charts, recipe copy, source pages and downloads
    .reportgen-render.json  what the last build rendered: only bundles that changed are rendered again
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reportgen.render.comparison import (
        COMPARISON_HEADERS,
        COMPARISON_KERNEL_ROWS,
        metric_cells,
        pct_text,
        percent_text,
        seconds_text,
        us_text,
        verdict_text,
    )
    from reportgen.render.comparison_text import (
        COMPARISON_COUNT_ROWS,
        COUNT_CHANGE_HEADERS,
        MetricGroup,
        count_change_cells,
        metric_groups,
    )
    from reportgen.render.findings import findings_text
    from reportgen.render.graphs import graph_kernels_text
    from reportgen.render.incremental import render_site_pages
    from reportgen.render.index import BrokenBundle, index_entry, overview_page
    from reportgen.render.markup import CHART_CLASS, MISSING, escape_md, list_table
    from reportgen.render.notebook import Headline, comparison_table
    from reportgen.render.pages import ChartFiles, kernels_text, report_page
    from reportgen.render.redactions import redacted, redacted_bundle, redactions_section
    from reportgen.render.report import draw_charts, inductor_sections, leading_sections
    from reportgen.render.trends import trend_chart
    from reportgen.render.variants import variants_section

_HOMES = {
    "BrokenBundle": "index",
    "CHART_CLASS": "markup",
    "COMPARISON_COUNT_ROWS": "comparison_text",
    "COMPARISON_HEADERS": "comparison",
    "COMPARISON_KERNEL_ROWS": "comparison",
    "COUNT_CHANGE_HEADERS": "comparison_text",
    "ChartFiles": "pages",
    "findings_text": "findings",
    "graph_kernels_text": "graphs",
    "kernels_text": "pages",
    "variants_section": "variants",
    "Headline": "notebook",
    "MISSING": "markup",
    "MetricGroup": "comparison_text",
    "comparison_table": "notebook",
    "count_change_cells": "comparison_text",
    "draw_charts": "report",
    "escape_md": "markup",
    "index_entry": "index",
    "inductor_sections": "report",
    "leading_sections": "report",
    "list_table": "markup",
    "metric_cells": "comparison",
    "metric_groups": "comparison_text",
    "overview_page": "index",
    "pct_text": "comparison",
    "percent_text": "comparison",
    "redacted": "redactions",
    "redacted_bundle": "redactions",
    "redactions_section": "redactions",
    "render_site_pages": "incremental",
    "report_page": "pages",
    "seconds_text": "comparison",
    "trend_chart": "trends",
    "us_text": "comparison",
    "verdict_text": "comparison",
}
"""Where each name lives: imported on first use, so that a reader of one page (the Sphinx extension, the CLI's
`compare`) does not load matplotlib and every renderer at import."""


def __getattr__(name: str) -> object:
    if name in _HOMES:
        return getattr(importlib.import_module(f"reportgen.render.{_HOMES[name]}"), name)
    raise AttributeError(name)


__all__ = [
    "CHART_CLASS",
    "COMPARISON_COUNT_ROWS",
    "COMPARISON_HEADERS",
    "COMPARISON_KERNEL_ROWS",
    "COUNT_CHANGE_HEADERS",
    "MISSING",
    "BrokenBundle",
    "ChartFiles",
    "Headline",
    "MetricGroup",
    "comparison_table",
    "count_change_cells",
    "draw_charts",
    "escape_md",
    "findings_text",
    "graph_kernels_text",
    "index_entry",
    "inductor_sections",
    "kernels_text",
    "leading_sections",
    "list_table",
    "metric_cells",
    "metric_groups",
    "overview_page",
    "pct_text",
    "percent_text",
    "redacted",
    "redacted_bundle",
    "redactions_section",
    "render_site_pages",
    "report_page",
    "seconds_text",
    "trend_chart",
    "us_text",
    "variants_section",
    "verdict_text",
]
