"""MyST text of a sweep: its page (findings, one chart per axis, a row per point linking its report) and the short
section each point's page carries instead of the variants table."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from reportgen.bundle import Interval, PointFigures, format_ms, sweep_axes, sweep_findings
from reportgen.recipe import SWEEP_PAGE
from reportgen.render.findings import findings_text
from reportgen.render.markup import MISSING, code_span, escape_md, figure, list_table, page_link, page_name, plural

__all__ = ["SWEEP_PAGE", "sweep_link_section", "sweep_page"]


def _ms(value: float | None, band: Interval | None) -> str:
    if value is None:
        return MISSING
    return f"{format_ms(value)} ({MISSING if band is None else f'{format_ms(band.low)}–{format_ms(band.high)}'})"


def _ratio(value: float | None, band: Interval | None = None) -> str:
    if value is None:
        return MISSING
    return f"{value:.2f}×" + (f" ({band.low:.2f}–{band.high:.2f})" if band is not None else "")


def _rate(value: float | None) -> str:
    return f"{value:,.0f}" if value is not None else MISSING


def _row(point: PointFigures, axes: Sequence[str], link: bool) -> list[str]:
    eager, compiled = point.throughput
    label = escape_md(point.name.partition("--")[2] or point.name)
    return [
        page_link(label, f"../{page_name(point.name)}/index") if link else label,
        *(escape_md(point.point.get(axis, MISSING)) for axis in axes),
        point.status.value,
        _ms(point.eager_ms, point.eager_ci),
        _ms(point.compiled_ms, point.compiled_ci),
        _ratio(point.speedup, point.speedup_ci),
        _ratio(point.device_speedup),
        f"{_rate(eager)} / {_rate(compiled)}",
        f"{point.peak_compiled_bytes / 2**30:.2f}" if point.peak_compiled_bytes else MISSING,
        f"{point.compile_s:.1f}" if point.compile_s is not None else MISSING,
        str(point.recompiles) if point.recompiles is not None else MISSING,
    ]


def sweep_page(title: str, points: Sequence[PointFigures], charts: Mapping[str, str], link: bool = True) -> str:
    """The sweep's page: what was swept, its findings, a chart per axis (`charts`: axis -> file), every point."""
    axes = sweep_axes(points)
    header = [
        "Point", *map(escape_md, axes), "Status", "Eager ms (95 % interval)", "Compiled ms (95 % interval)", "Speedup (interval)",
        "Device speedup", "Samples/s eager / compiled", "Peak memory (GiB)", "Compile (s)", "Recompiles",
    ]  # fmt: skip
    swept = ", ".join(code_span(axis) for axis in axes) or "nothing (one point)"
    blocks = [
        f"# {escape_md(title if 'sweep' in title.lower() else f'{title}: sweep')}",
        f"{plural(len(points), 'point')} over {swept}; each point ran in its own process with its own eager "
        "baseline, so each speedup is that point's eager against its compiled steps. Step times are medians with "
        "their 95 % bootstrap intervals; throughput is the batch over the median step.",
        "## Findings",
        findings_text(sweep_findings(points)),
    ]
    for axis in axes:
        if axis in charts:
            blocks.append(
                figure(charts[axis], f"The sweep against {escape_md(axis)}", f"Every metric against {code_span(axis)}, "
                "a line per combination of the other axes; an x marks a point that did not finish.")
            )  # fmt: skip
    blocks += ["## Points", list_table(header, [_row(p, axes, link) for p in points])]
    return "\n\n".join(blocks) + "\n"


def sweep_link_section(point: PointFigures, leader: str | None, size: int) -> str:
    """ "## Sweep": which point this run is, and a link to the sweep's page (in `leader`'s directory; None: a kept
    earlier run, whose sweep is the latest runs')."""
    values = ", ".join(f"{escape_md(axis)} {code_span(value)}" for axis, value in point.point.items())
    if leader is None:
        return (
            f"## Sweep\n\nThis earlier run was one point of a sweep ({values}); the latest runs' pages link the sweep."
        )
    link = page_link("the sweep's page", f"../{page_name(leader)}/{SWEEP_PAGE}")
    return f"## Sweep\n\nThis run is one point of a sweep of {plural(size, 'point')} ({values}): {link} has the curves."
