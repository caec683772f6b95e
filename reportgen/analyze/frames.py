"""Runtime per compiled version: how often each version Dynamo compiled of each frame ran in the profiled steps,
and the device time of the kernels it launched, beside the guard whose failure made it (issue 31, item 4).

A version is a `Torch-Compiled Region: <frame>/<compile>`. A forward or inference graph's calls run inside one
(`GraphAnalysis.regions`); a backward graph runs on the autograd thread, outside any region, and is joined to its
forward through their wrappers' `# AOT ID` (`3_forward`, `3_backward`), its time shared among the forward's
versions by their calls. Identical graphs of several frames (the resume functions after equal graph breaks) share
one wrapper file each way, kept from different compiles (`1_forward`, `3_backward`): a backward left unjoined goes
to the one unjoined forward graph with as many calls (each forward call has its backward call), if there is one.
Versions come from the compile diagnostics (`CompiledVersion`, with the function and the failed guard); a region
in the trace that the diagnostics do not name is listed too, its function unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from reportgen.bundle import CompiledVersion, GraphAnalysis, ModuleIndex, VersionRuntime
from reportgen.formats import REGION_PREFIX

__all__ = ["version_runtimes"]


def _compile_id(region: str) -> str:
    """`0/1` of `Torch-Compiled Region: 0/1`."""
    return region[len(REGION_PREFIX) :].lstrip(": ").strip() if region.startswith(REGION_PREFIX) else region


def _aot_ids(index: ModuleIndex | None) -> dict[str, tuple[str, str]]:
    """(AOT number, kind) of each wrapper path: (`3`, `backward`) for `# AOT ID: ['3_backward']`."""
    found = {}
    for module in index.graphs if index is not None else []:
        number, _, kind = (module.info.aot_id or "").partition("_")
        if number and kind:
            found[module.wrapper_path] = (number, kind)
    return found


def version_runtimes(
    graphs: Sequence[GraphAnalysis], index: ModuleIndex | None, compiled: Sequence[CompiledVersion]
) -> list[VersionRuntime]:
    """Every compiled version, in compile order (then versions only the trace shows): calls, device time, graphs."""
    calls: dict[str, int] = {}
    time_us: dict[str, float] = {}
    labels: dict[str, list[str]] = {}
    forward_regions: dict[str, list[tuple[str, int]]] = {}  # AOT number -> (compile id, calls) of its forward

    aot_ids = _aot_ids(index)

    def add(compile_id: str, graph: GraphAnalysis, kernel_us: float) -> None:
        time_us[compile_id] = time_us.get(compile_id, 0.0) + kernel_us
        if graph.label not in labels.setdefault(compile_id, []):
            labels[compile_id].append(graph.label)

    def share(graph: GraphAnalysis, shares: list[tuple[str, int]]) -> None:
        """Give a backward graph's time to its forward's versions, by their calls."""
        total = sum(n for _, n in shares)
        for compile_id, n in shares:
            add(compile_id, graph, graph.kernel_time_us * (n / total if total else 1 / len(shares)))

    backwards: list[tuple[str, GraphAnalysis]] = []  # (AOT number, graph)
    for graph in graphs:
        aot = aot_ids.get(graph.wrapper or "")
        for region in graph.regions:
            compile_id = _compile_id(region.region)
            calls[compile_id] = max(calls.get(compile_id, 0), region.calls)
            add(compile_id, graph, region.kernel_time_us)
            if aot is not None and aot[1] == "forward":
                forward_regions.setdefault(aot[0], []).append((_compile_id(region.region), region.calls))
        if aot is not None and aot[1] == "backward" and not graph.regions:
            backwards.append((aot[0], graph))
    joined: set[str] = set()
    unjoined = []
    for number, graph in backwards:
        if number in forward_regions:
            joined.add(number)
            share(graph, forward_regions[number])
        else:
            unjoined.append(graph)
    spare = {n: shares for n, shares in forward_regions.items() if n not in joined}
    for graph in unjoined:
        matches = [n for n, shares in spare.items() if sum(calls for _, calls in shares) == graph.calls]
        if len(matches) == 1:
            share(graph, spare.pop(matches[0]))
    named = {version.compile_id: version for version in compiled}
    order = [*named, *(compile_id for compile_id in calls if compile_id not in named)]
    return [
        VersionRuntime(
            compile_id=compile_id,
            function=named[compile_id].function if compile_id in named else None,
            reason=named[compile_id].reason if compile_id in named else None,
            calls=calls.get(compile_id, 0),
            device_time_us=time_us.get(compile_id, 0.0),
            graphs=labels.get(compile_id, []),
        )
        for compile_id in order
    ]
