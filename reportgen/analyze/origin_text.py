"""Where in the model a finding's kernels come from: text the findings add from kernel provenance."""

from __future__ import annotations

from reportgen.bundle import Analysis, GraphAnalysis, GraphKernel, Manifest

__all__ = ["benchmark_place", "short_kernel_modules"]

_MODULES_LISTED = 5


def _place(kernel: GraphKernel) -> str | None:
    """` From `module` at `file:line`.` for a kernel's largest share, or None without provenance."""
    if not kernel.origins:
        return None
    top = kernel.origins[0]
    module = top.module_path if top.module_path else "(model)"
    where = f" at `{top.location}`" if top.location else ""
    shared = f" (and {len(kernel.origins) - 1} more)" if len(kernel.origins) > 1 else ""
    return f" From `{module}`{where}{shared}."


def benchmark_place(analysis: Analysis, manifest: Manifest, graph: int, name: str) -> str:
    """Where a benchmarked kernel (wrapper order `graph`, kernel `name`) comes from; '' when unknown."""
    wrapper = next((m.path for m in manifest.modules if m.kind == "wrapper" and m.order == graph), None)
    for candidate in analysis.graphs:
        if candidate.wrapper == wrapper:
            kernel = next((k for k in candidate.kernels if k.name == name), None)
            return (_place(kernel) or "") if kernel else ""
    return ""


def short_kernel_modules(graph: GraphAnalysis, mean_us: float) -> str:
    """`Short kernels come from: `blocks.2` (120 launches), …` for kernels with a mean under `mean_us`; '' when
    no short kernel has an origin. Modules are the second level of the path (`blocks.2`), where blocks repeat."""
    launches: dict[str, float] = {}
    for kernel in graph.kernels:
        if kernel.mean_us >= mean_us:
            continue
        for origin in kernel.origins:
            if origin.module_path is None:
                continue
            module = ".".join(origin.module_path.split(".")[:2]) or "(model)"
            launches[module] = launches.get(module, 0.0) + kernel.count * origin.share
    ranked = sorted(launches.items(), key=lambda item: (-item[1], item[0]))[:_MODULES_LISTED]
    if not ranked:
        return ""
    listed = ", ".join(f"`{module}` ({count / max(graph.calls, 1):.0f} per call)" for module, count in ranked)
    return f" Short kernels are launched most from: {listed}."
