"""The layout-copy finding: copy and layout kernels taking a large share of a compiled graph, and where they come
from in the model (kernel provenance)."""

from __future__ import annotations

import re

from reportgen.bundle import Analysis, Finding, GraphAnalysis, GraphKernel

__all__ = ["COPY_SHARE", "layout_copies"]

COPY_SHARE = 0.05
"""A graph whose copy/layout kernels take more than this share of its kernel time gets the finding."""

_COPY_NAME = re.compile(r"elementwise_kernel|copy|contiguous|tensorTransform|transpose", re.I)
_LAYOUT_OPS = frozenset({"aten.clone", "aten.copy_", "aten.permute", "aten.transpose", "aten.view", "aten.t"})
_PLACES = 5


def _is_copy(kernel: GraphKernel) -> bool:
    if kernel.category in ("memcpy",):
        return True
    if kernel.name.startswith("triton_"):
        return bool(kernel.aten_ops) and set(kernel.aten_ops) <= _LAYOUT_OPS
    return kernel.category in ("aten_native", "cpp_fused", "other") and bool(_COPY_NAME.search(kernel.name))


def _places(kernels: list[GraphKernel]) -> list[str]:
    """`module` at `file:line` of the copies, by time, as list items."""
    times: dict[tuple[str, str], float] = {}
    for kernel in kernels:
        for origin in kernel.origins:
            module = origin.module_path if origin.module_path else "(model)"
            where = origin.location or "line unknown"
            key = (module if origin.module_path is not None else "module unknown", where)
            times[key] = times.get(key, 0.0) + kernel.device_time_us * origin.share
    ranked = sorted(times.items(), key=lambda item: -item[1])[:_PLACES]
    return [f"- `{module}` at `{where}`: {us / 1000:.2f} ms" for (module, where), us in ranked]


def _graph_evidence(graph: GraphAnalysis) -> list[str] | None:
    copies = [k for k in graph.kernels if _is_copy(k)]
    copy_us = sum(k.device_time_us for k in copies)
    if graph.kernel_time_us <= 0 or copy_us / graph.kernel_time_us <= COPY_SHARE:
        return None
    launches = sum(k.count for k in copies)
    lines = [
        f"{graph.label}: {len(copies)} copy/layout kernels, {launches} launches, {copy_us / 1000:.2f} ms "
        f"({100 * copy_us / graph.kernel_time_us:.1f} % of the graph's kernel time); largest "
        f"`{copies[0].name[:80]}`."
    ]
    places = _places(copies)
    return lines + (["They come from:", *places] if places else ["Where they come from was not captured."])


def layout_copies(analysis: Analysis) -> Finding | None:
    """Copies and layout changes (`aten::copy_`, `contiguous`, `elementwise_kernel`, clone-only Triton kernels)
    above `COPY_SHARE` of a compiled graph, naming the modules and lines they come from."""
    evidence: list[str] = []
    for graph in analysis.graphs:
        if graph.graph is not None and (found := _graph_evidence(graph)):
            evidence += found
    if not evidence:
        return None
    return Finding(
        rule="layout-copies",
        severity="warning",
        title="Copy and layout kernels take a large share of a compiled graph",
        evidence="\n".join(evidence),
        suggestion="Keep tensors in the layout the next op wants (e.g. `channels_last` for convolutions, "
        "`contiguous()` once instead of per call) at the lines above; a copy launched inside an extern op "
        "(`convolution_backward`) points at the layout of that op's inputs.",
    )
