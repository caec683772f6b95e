"""MyST text of kernel provenance: a kernel row's module and line, device time per module and per source line.

Pure functions of the bundle model; `render.report` places the section after the kernels per graph.
"""

from __future__ import annotations

from reportgen.bundle import Analysis, KernelOrigin, ProvenanceSummary
from reportgen.render.markup import MISSING, SORTABLE, code_span, escape_md, list_table, location_span

__all__ = ["origin_cells", "provenance_section"]

_TOP_MODULES = 25
_TOP_LINES = 25
ROOT_LABEL = "(model)"
"""How the compiled model's own `forward` (module path '') is shown."""


def _module(path: str | None) -> str:
    return MISSING if path is None else code_span(path) if path else ROOT_LABEL


def origin_cells(origins: list[KernelOrigin]) -> tuple[str, str]:
    """(module, file:line) cells of a kernel row: its largest share, and how many other places share it."""
    if not origins:
        return MISSING, MISSING
    top = origins[0]
    more = f" (+{len(origins) - 1})" if len(origins) > 1 else ""
    approx = " ≈" if top.match == "op" else ""
    where = MISSING if top.file is None else location_span(f"{top.file}:{top.line}")
    return _module(top.module_path) + more + approx, where


def _ms(us: float) -> str:
    return f"{us / 1000:.3f}"


def _modules_table(summary: ProvenanceSummary) -> str:
    rows = [
        [
            _module(row.path),
            escape_md(row.module_class or MISSING),
            _ms(row.forward_us),
            _ms(row.backward_us),
            _ms(row.total_us),
            _ms(row.self_us),
            f"{100 * row.total_us / summary.compiled_us:.1f}" if summary.compiled_us else MISSING,
        ]
        for row in summary.modules[:_TOP_MODULES]
    ]
    if not rows:  # an empty list-table is a Sphinx error
        return "No kernel time was attributed to a module."
    header = ["Module", "Class", "Forward (ms)", "Backward (ms)", "Total (ms)", "Self (ms)", "Share (%)"]
    return list_table(header, rows, "Device time per module (submodules included)", classes=SORTABLE)


def _lines_table(summary: ProvenanceSummary) -> str:
    rows = [
        [
            location_span(f"{row.file}:{row.line}"),
            code_span(row.function) if row.function else MISSING,
            _module(row.module_path),
            _ms(row.forward_us),
            _ms(row.backward_us),
            f"{100 * row.total_us / summary.compiled_us:.1f}" if summary.compiled_us else MISSING,
        ]
        for row in summary.lines[:_TOP_LINES]
    ]
    if not rows:
        return "No kernel time was attributed to a source line."
    header = ["Line", "Function", "Module", "Forward (ms)", "Backward (ms)", "Share (%)"]
    return list_table(header, rows, "Device time per source line", classes=SORTABLE)


def provenance_section(analysis: Analysis, chart: str | None = None, figure: object = None) -> str:
    """Where compiled kernel time comes from in the model; says so when provenance was not captured."""
    summary = analysis.provenance
    parts = ["## Device time per module and source line"]
    if summary is None:
        parts.append("Kernel provenance was not captured for this run (an older run, or `profile.provenance: false`).")
        return "\n\n".join(parts)
    parts.append(
        f"{100 * summary.module_share:.1f} % of the compiled graphs' kernel time is attributed to an `nn.Module` "
        f"path and {100 * summary.line_share:.1f} % to a source line (the innermost frame outside torch), from the "
        f"FX nodes each kernel computes (method: {code_span(summary.method)}). Extern kernels (cuBLAS, cuDNN, ATen; marked "
        "≈ in the kernel tables) share their time evenly among the graph's extern calls of their kind."
    )
    parts += [f"- {escape_md(note)}" for note in summary.notes]
    if chart and figure is not None:
        parts.append(figure(chart, "Device time per module", "Top modules by device time, forward and backward."))  # type: ignore[operator]
    parts += [_modules_table(summary), _lines_table(summary)]
    return "\n\n".join(parts)
