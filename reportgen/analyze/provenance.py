"""Kernel provenance joined with the trace: each kernel row's module and line, time per module and per line.

A row whose kernel the wrapper calls by name (Triton, C++) takes the call sites of that name; its time is shared
evenly among them (Inductor reuses one kernel for identical code, so the calls cost alike). An extern kernel
(cuBLAS, cuDNN, ATen: named by the library, not the wrapper) takes the graph's extern calls of its kind (GEMM,
convolution, attention, other; an ATen kernel with no extern call of its kind, every extern call, since ATen ops
launch copies inside) and shares its time evenly among them: its module is right when one kind of call sits in
one module, approximate otherwise (`KernelOrigin.match` says which).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reportgen.analyze.join import kernel_lookup_name
from reportgen.bundle import (
    CallSite,
    GraphAnalysis,
    GraphKernel,
    GraphProvenance,
    KernelOrigin,
    LineTime,
    ModuleTime,
    OriginMatch,
    Provenance,
    ProvenanceSummary,
)

__all__ = ["attribute_kernels", "op_kind"]

_OP_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("attention", re.compile(r"(?i)attention|sdpa|flash")),
    ("conv", re.compile(r"(?i)conv")),
    ("gemm", re.compile(r"(?i)(?<![a-z])(mm|addmm|bmm|baddbmm|matmul|linear|_addmm_activation|addmv|mv)\b|gemm")),
)
_CATEGORY_KINDS = {"attention": "attention", "conv": "conv", "extern_gemm": "gemm"}
_KERNEL_PREFIXES = ("triton_", "cpp_")


def op_kind(name: str) -> str:
    """The kind of an extern call or ATen op: attention, conv, gemm or other."""
    short = name.removeprefix("extern_kernels.").removeprefix("torch.ops.").removeprefix("aten.")
    short = short.removeprefix("aten::")
    return next((kind for kind, pattern in _OP_KINDS if pattern.search(short)), "other")


def _counted(kernel: GraphKernel, device: str) -> bool:
    """Whether a row is kernel work: on GPU runs all device activity; on CPU runs Inductor's C++ kernels and
    GEMM, convolution and attention ops (not the runtime wrapper's bookkeeping ops)."""
    name = kernel_lookup_name(kernel.name)
    return device == "cuda" or name.startswith(_KERNEL_PREFIXES) or op_kind(name) != "other"


def _sites(kernel: GraphKernel, graph: GraphProvenance, device: str) -> tuple[list[CallSite], OriginMatch]:
    """The call sites a kernel row's time comes from, and how they were matched."""
    name = kernel_lookup_name(kernel.name)
    named = [site for site in graph.sites if site.kernel == name]
    if named or name.startswith(_KERNEL_PREFIXES) or not _counted(kernel, device):
        return named, "kernel"
    kind = _CATEGORY_KINDS.get(kernel.category) or op_kind(name)
    externs = [site for site in graph.sites if not site.kernel.startswith(_KERNEL_PREFIXES)]
    sites = [site for site in externs if op_kind(site.kernel) == kind]
    if not sites and kind == "other":
        # An ATen kernel no extern call of its own kind explains runs inside one of the others: mixnet_l's 540
        # `elementwise_kernel` copies (17 % of its backward graph, H100) are `aten::contiguous` inside
        # `aten::convolution_backward`.
        sites = externs
    return sites, "op"


def _origins(sites: Sequence[CallSite], match: OriginMatch) -> list[KernelOrigin]:
    """Sites merged by (module, line), each with its share of the row, largest first."""
    shares: dict[tuple[str | None, str | None, int | None], KernelOrigin] = {}
    for site in sites:
        frame = site.frame
        key = (site.module_path, frame.file if frame else None, frame.line if frame else None)
        previous = shares.get(key)
        share = (previous.share if previous else 0.0) + 1 / len(sites)
        shares[key] = KernelOrigin(
            module_path=site.module_path,
            module_class=site.module_class,
            file=frame.file if frame else None,
            line=frame.line if frame else None,
            function=frame.function if frame else None,
            share=min(share, 1.0),
            match=match,
        )
    return sorted(shares.values(), key=lambda origin: -origin.share)


def _with_origins(graph: GraphAnalysis, provenance: Provenance, device: str) -> GraphAnalysis:
    found = provenance.graph(graph.wrapper) if graph.wrapper else None
    if found is None:
        return graph
    kernels = [k.model_copy(update={"origins": _origins(*_sites(k, found, device))}) for k in graph.kernels]
    return graph.model_copy(update={"kernels": kernels})


def _ancestors(path: str) -> list[str]:
    """'' and every prefix of a dotted path, the path included: `a.b` → ['', 'a', 'a.b']."""
    parts = path.split(".") if path else []
    return [""] + [".".join(parts[: i + 1]) for i in range(len(parts))]


class _Totals:
    """Running sums of kernel time per module (rolled up) and per line."""

    def __init__(self) -> None:
        self.modules: dict[str, list[float]] = {}  # path -> [forward, backward, self]
        self.classes: dict[str, str | None] = {}
        self.lines: dict[tuple[str, int], list[float]] = {}  # -> [forward, backward]
        self.line_info: dict[tuple[str, int], tuple[str, dict[str | None, float]]] = {}
        self.module_us = self.line_us = 0.0

    def add(self, origin: KernelOrigin, time_us: float, backward: bool) -> None:
        side = 1 if backward else 0
        if origin.module_path is not None:
            self.module_us += time_us
            self.classes.setdefault(origin.module_path, origin.module_class)
            for path in _ancestors(origin.module_path):
                sums = self.modules.setdefault(path, [0.0, 0.0, 0.0])
                sums[side] += time_us
            self.modules[origin.module_path][2] += time_us
        if origin.file is not None and origin.line is not None:
            self.line_us += time_us
            key = (origin.file, origin.line)
            self.lines.setdefault(key, [0.0, 0.0])[side] += time_us
            _, by_module = self.line_info.setdefault(key, (origin.function or "", {}))
            by_module[origin.module_path] = by_module.get(origin.module_path, 0.0) + time_us

    def module_rows(self) -> list[ModuleTime]:
        rows = [
            ModuleTime(path=path, module_class=self.classes.get(path), forward_us=f, backward_us=b, self_us=s)
            for path, (f, b, s) in self.modules.items()
        ]
        return sorted(rows, key=lambda row: (-row.total_us, row.path))

    def line_rows(self) -> list[LineTime]:
        rows = []
        for (file, line), (forward, backward) in self.lines.items():
            function, by_module = self.line_info[(file, line)]
            module = max(by_module, key=lambda path: by_module[path])
            rows.append(
                LineTime(
                    file=file,
                    line=line,
                    function=function,
                    module_path=module,
                    forward_us=forward,
                    backward_us=backward,
                )
            )
        return sorted(rows, key=lambda row: (-row.total_us, row.file, row.line))


def attribute_kernels(
    graphs: Sequence[GraphAnalysis], provenance: Provenance | None, device: str
) -> tuple[list[GraphAnalysis], ProvenanceSummary | None]:
    """Graphs whose kernel rows carry their origins, and the time per module and line; None without provenance.

    :param device: `cuda` or `cpu`: which rows are kernel work (`compiled_us`, see `_counted`)
    """
    if provenance is None:
        return list(graphs), None
    out = [_with_origins(graph, provenance, device) for graph in graphs]
    totals = _Totals()
    compiled_us = 0.0
    for graph in out:
        if graph.graph is None:
            continue
        for kernel in graph.kernels:
            compiled_us += kernel.device_time_us if _counted(kernel, device) else 0.0
            for origin in kernel.origins:
                totals.add(origin, kernel.device_time_us * origin.share, graph.kind == "backward")
    summary = ProvenanceSummary(
        method=provenance.method,
        notes=list(provenance.notes),
        compiled_us=compiled_us,
        module_us=min(totals.module_us, compiled_us),
        line_us=min(totals.line_us, compiled_us),
        modules=totals.module_rows(),
        lines=totals.line_rows(),
    )
    return out, summary
