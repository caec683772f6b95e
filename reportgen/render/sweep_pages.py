"""A run's place among its siblings: the variants table, or for a sweep point the link to the sweep's page, which the
sweep's first point (by name) writes into its own directory with its charts."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from reportgen.bundle import Bundle, ordered, point_figures, series, sweep_axes, write_if_changed
from reportgen.render.markup import ORPHAN, page_name
from reportgen.render.sweep import SWEEP_PAGE, sweep_link_section, sweep_page
from reportgen.render.sweep_charts import sweep_chart
from reportgen.render.variants import variants_section

__all__ = ["group_section"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_]+")


def group_section(bundle: Bundle, siblings: Sequence[Bundle], page_dir: Path) -> tuple[str, list[str]]:
    """The section about the run's siblings, and the files written for it (relative to `page_dir`)."""
    if not bundle.manifest.point:
        return variants_section(bundle, siblings), []
    members = sorted((b for b in siblings if b.manifest.point), key=lambda b: b.name)
    if bundle.name not in {b.name for b in members}:  # a kept earlier run: the latest runs make the sweep
        return sweep_link_section(point_figures(bundle), None, 0), []
    points = ordered([point_figures(b) for b in members])
    leader = members[0].name
    section = sweep_link_section(point_figures(bundle), leader, len(points))
    if bundle.name != leader:
        return section, []
    prefix = f"{page_name(bundle.name)}-sweep-"
    charts = {}
    recompiles = "dynamic" in sweep_axes(points)
    for axis in sweep_axes(points):
        name = f"{prefix}{_UNSAFE.sub('_', axis)}.png"
        charts[axis] = sweep_chart(series(points, axis), axis, page_dir / name, recompiles=recompiles).name
    text = sweep_page(bundle.manifest.recipe.display_title, points, charts)
    write_if_changed(page_dir / f"{SWEEP_PAGE}.md", f"{ORPHAN}\n\n{text}".encode())
    return section, [f"{SWEEP_PAGE}.md", *charts.values()]
