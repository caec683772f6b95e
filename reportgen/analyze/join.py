"""Join trace-side graphs with the compiled modules: each graph's wrapper, each kernel's source and ATen ops.

Graphs in the trace are numbered in order of first call; wrappers in compile order. They are
matched by kind and rank: the n-th forward graph called ↔ the n-th forward wrapper compiled
(likewise backward, inference); `match_by_kind` also pairs graphs with their benchmarks.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol, TypeVar

from reportgen.bundle import GraphAnalysis, GraphKernel, GraphModule, ModuleIndex

__all__ = ["kernel_lookup_name", "match_by_kind", "match_wrappers", "with_sources"]


class _Kinded(Protocol):
    @property
    def kind(self) -> str: ...


_Item = TypeVar("_Item", bound=_Kinded)

_CPP_GRAPH_PREFIX = re.compile(r"^graph_\d+_(?=cpp_)")


def kernel_lookup_name(name: str) -> str:
    """The name a kernel has in its wrapper (profiled C++ kernels carry a `graph_<n>_` prefix)."""
    return _CPP_GRAPH_PREFIX.sub("", name)


def match_by_kind(graphs: Sequence[GraphAnalysis], items: Sequence[_Item]) -> dict[int, _Item]:
    """Trace graph number → item (wrapper, benchmark) of the same kind and rank; `items` in compile order."""
    by_kind: dict[str, list[_Item]] = {}
    for item in items:
        by_kind.setdefault(item.kind, []).append(item)
    matches: dict[int, _Item] = {}
    seen: dict[str, int] = {}
    for number, kind in sorted((g.graph, g.kind) for g in graphs if g.graph is not None):
        rank = seen.get(kind, 0)
        seen[kind] = rank + 1
        if rank < len(by_kind.get(kind, [])):
            matches[number] = by_kind[kind][rank]
    return matches


def match_wrappers(graphs: Sequence[GraphAnalysis], index: ModuleIndex) -> dict[int, GraphModule]:
    """Trace graph number → its wrapper, by kind and rank."""
    return match_by_kind(graphs, index.graphs)


def _kernel_with_source(kernel: GraphKernel, module: GraphModule, index: ModuleIndex) -> GraphKernel:
    found = index.kernel(module.graph, kernel_lookup_name(kernel.name))
    if found is None:
        return kernel
    return kernel.model_copy(
        update={
            "source": found.module_path or module.wrapper_path,
            "source_nodes": list(found.source.source_nodes),
            "aten_ops": list(found.source.aten_ops),
        }
    )


def with_sources(graphs: Sequence[GraphAnalysis], index: ModuleIndex) -> list[GraphAnalysis]:
    """Graphs with `wrapper` set and their kernels' `source`, `source_nodes` and `aten_ops` filled in."""
    matches = match_wrappers(graphs, index)
    out = []
    for graph in graphs:
        module = matches.get(graph.graph) if graph.graph is not None else None
        if module is None:
            out.append(graph)
            continue
        kernels = [_kernel_with_source(k, module, index) for k in graph.kernels]
        out.append(graph.model_copy(update={"wrapper": module.wrapper_path, "kernels": kernels}))
    return out
