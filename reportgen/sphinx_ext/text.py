"""MyST text of the embedded report and summary table: pure functions of the bundle model."""

from __future__ import annotations

import re

from reportgen.bundle import Bundle, StepTimes
from reportgen.render import (
    MISSING,
    ChartFiles,
    escape_md,
    findings_text,
    graph_kernels_text,
    kernels_text,
    list_table,
    redactions_section,
    report_page,
    variants_section,
)

__all__ = ["findings_of", "kernels_of", "report_text", "summary_table", "variants_of"]


def kernels_of(bundle: Bundle, top: int, graph: int | None) -> str:
    """The `top` longest kernels of `bundle`, or of its compiled graph number `graph`.

    :raises LookupError: when the bundle has no such graph
    """
    analysis = bundle.analysis
    if graph is None:
        return kernels_text(analysis.kernels if analysis else None, top, analysis.roof if analysis else None)
    graphs = {g.graph: g for g in analysis.graphs if g.graph is not None} if analysis else {}
    if graph not in graphs:
        known = ", ".join(map(str, sorted(graphs))) or "none"
        raise LookupError(f"bundle {bundle.name!r} has no compiled graph {graph} (its graphs: {known})")
    return graph_kernels_text(graphs[graph], bundle.manifest, None, top)


def findings_of(bundle: Bundle) -> str:
    """What the analysis found in `bundle`, one admonition each."""
    return findings_text(bundle.analysis.findings if bundle.analysis else [])


def variants_of(bundle: Bundle, siblings: list[Bundle]) -> str:
    """The variants table of `bundle`'s recipe ('' with fewer than two), without its heading and links; the
    kernel diffs' headings start at the top level (the directive makes them rubrics)."""
    text = variants_section(bundle, siblings, links=False).removeprefix("## Variants").lstrip("\n")
    return re.sub(r"^### ", "# ", text, flags=re.MULTILINE)


def _step(times: StepTimes | None) -> str:
    if times is None:
        return MISSING
    return f"{times.median_ms:.3f} ms (IQR {times.q1_ms:.3f}–{times.q3_ms:.3f})"


def summary_table(bundle: Bundle) -> str:
    """A two-column table: status, device, torch, step times, speedup and compile time of `bundle`."""
    manifest = bundle.manifest
    metrics, env = manifest.metrics, manifest.environment
    title = manifest.recipe.display_title + (f" — {manifest.variant}" if manifest.variant else "")
    speedup = metrics.speedup
    rows = [
        ["Status", f"**{manifest.status.value}**"],
        ["Device", escape_md(env.device_name) if env else f"{manifest.recipe.device} (not probed)"],
        ["Torch", escape_md(env.versions.torch) if env and env.versions.torch else MISSING],
        ["Eager step (median)", _step(metrics.eager)],
        ["Compiled step (median)", _step(metrics.compiled)],
        ["Speedup", f"{speedup:.2f}×" if speedup is not None else MISSING],
        ["Compile time", f"{metrics.compile_time_s:.1f} s" if metrics.compile_time_s is not None else MISSING],
    ]
    return list_table(["Metric", "Value"], rows, escape_md(title))


def report_text(
    bundle: Bundle, charts: ChartFiles, *, recipe_yaml: str | None, log_tail: str | None, max_kernels: int
) -> str:
    """The report page of `bundle` as the site renders it, less its links to other pages.

    Variant comparisons and kernel source pages need the site's page tree and are left out.

    :param charts: chart file names, relocated after parsing
    :param recipe_yaml: the recipe text; when given, the page links a copy named ``recipe.yaml``
    :param log_tail: the end of the run's log, shown for runs that did not end ok
    """
    from reportgen.render import inductor_sections, leading_sections  # matplotlib and every renderer: when drawn

    return report_page(
        bundle,
        charts,
        recipe_yaml=recipe_yaml,
        log_tail=log_tail,
        max_kernels=max_kernels,
        leading_sections=leading_sections(bundle, charts=charts, links=False),
        inductor_sections=inductor_sections(bundle, charts, None),
        trailing_sections=[redactions_section(bundle.manifest)],
    )
