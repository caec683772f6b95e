"""Kernel provenance, captured in the run's child: each compiled kernel's FX nodes, `nn.Module` and source line.

Like `run/inductor.py`, this module holds private FX/Inductor access, each piece degrading to "nothing found":

- a read-only post-grad pass (`torch._inductor.config.post_grad_custom_post_pass`, chained after one the user
  set) keeps a reference to every compiled graph's post-grad FX graph, whose nodes carry `nn_module_stack`
  (forward) or `fwd_nn_module_stack` (backward) and `stack_trace`; FX-graph-cache hits skip it;
- with `torch._inductor.config.trace.provenance_tracking_level` (torch ≥ 2.9) set to 2 ("basic": no extra
  pre-grad tracking), Inductor fills `torch._inductor.debug._inductor_triton_kernel_to_post_grad_node_info`
  (`<kernel>:<handle>` → post-grad node names; a new dict per compiled graph, which the pass keeps) and writes
  each call site's handle into the wrapper, C++ kernels included;
- without it, GPU kernels and extern calls are joined through the wrapper's `Source Nodes` comments (node
  names or their pre-grad `from_node` names); C++ kernels stay unattributed, and a note says so.

A graph resolved here is also kept in the run's Inductor cache (`reportgen-provenance/<wrapper sha256>.json`):
a later run on a kept cache (`--inductor-cache`) whose FX-graph-cache hits skip the pass finds the table of the
identical wrapper there, so warm compiles keep their provenance.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from reportgen.bundle import (
    CallSite,
    GraphProvenance,
    ModuleFile,
    Provenance,
    ProvenanceMethod,
    SourceFrame,
    write_if_changed,
)
from reportgen.formats import WrapperSite, module_path, parse_stack, parse_wrapper, user_frame, wrapper_sites

__all__ = ["STORE_DIR", "ProvenanceRecorder", "resolve_site"]

_PASS_ID = "reportgen-provenance-1"
STORE_DIR = "reportgen-provenance"
"""Under an Inductor cache dir: each resolved graph's provenance, by its wrapper's sha256."""
_BASIC_LEVEL = 2
_HIDDEN_DIRS = (str(Path(torch.__file__).parent) + os.sep,)


@dataclass
class _Captured:
    """One compiled graph as the pass saw it: the FX graph, and Inductor's kernel → node table of its compile."""

    graph: Any
    kernels: dict[str, list[str]] | None
    by_name: dict[str, Any] = field(default_factory=dict)
    by_origin: dict[str, list[Any]] = field(default_factory=dict)

    def index(self) -> None:
        """Nodes by name and by their first `from_node` name (what `Source Nodes` comments list)."""
        for node in self.graph.nodes:
            self.by_name[node.name] = node
            origins = node.meta.get("from_node") or []
            first = getattr(origins[0], "name", None) if origins else None
            if isinstance(first, str):
                self.by_origin.setdefault(first, []).append(node)

    def nodes(self, site: WrapperSite) -> list[Any]:
        """The FX nodes of a call site: by its handle when Inductor tracked it, else by the comment's names."""
        if site.handle is not None and self.kernels is not None:
            names: Sequence[str] = self.kernels.get(f"{site.kernel}:{site.handle}", [])
            return [self.by_name[name] for name in names if name in self.by_name]
        found = []
        for name in site.source_nodes:
            found.extend([self.by_name[name]] if name in self.by_name else self.by_origin.get(name, []))
        return found


def _debug_kernels() -> dict[str, list[str]] | None:
    """Inductor's kernel → post-grad node table of the compile in progress (a new dict per compiled graph)."""
    try:
        from torch._inductor import debug
    except ImportError:
        return None
    table = getattr(debug, "_inductor_triton_kernel_to_post_grad_node_info", None)
    return table if isinstance(table, dict) else None


def _make_pass(recorder: ProvenanceRecorder, previous: Any) -> Any:
    """A post-grad pass that runs `previous` (the user's) first, then records the graph; None if unsupported."""
    try:
        from torch._inductor.custom_graph_pass import CustomGraphPass
    except ImportError:
        return None

    class RecordingPass(CustomGraphPass):
        def __call__(self, graph: Any) -> None:
            if previous is not None:
                previous(graph)
            recorder.captured.append(_Captured(graph, _debug_kernels() if recorder.tracking else None))

        def uuid(self) -> Any:
            if previous is None:
                return _PASS_ID
            inner = previous.uuid() if callable(getattr(previous, "uuid", None)) else None
            return None if inner is None else (_PASS_ID, inner)

    return RecordingPass()


class ProvenanceRecorder:
    """Install the recording pass (and basic provenance tracking) before the first compile; `table` resolves."""

    def __init__(self) -> None:
        self.captured: list[_Captured] = []
        self.notes: list[str] = []
        self.tracking = False
        self._restore: list[tuple[Any, str, Any]] = []

    def start(self) -> ProvenanceRecorder:
        try:
            from torch._inductor import config
        except ImportError:
            self.notes.append("provenance not captured: torch._inductor.config is missing")
            return self
        recording = _make_pass(self, getattr(config, "post_grad_custom_post_pass", None))
        if recording is None or not hasattr(config, "post_grad_custom_post_pass"):
            self.notes.append(f"provenance not captured: torch {torch.__version__} has no post-grad custom pass")
            return self
        self._set(config, "post_grad_custom_post_pass", recording)
        level = getattr(config.trace, "provenance_tracking_level", None)
        if isinstance(level, int):
            self.tracking = True
            if level == 0:
                self._set(config.trace, "provenance_tracking_level", _BASIC_LEVEL)
        else:
            self.notes.append(
                f"torch {torch.__version__} has no provenance tracking level: C++ kernels get no module or line"
            )
        return self

    def _set(self, owner: Any, name: str, value: Any) -> None:
        self._restore.append((owner, name, getattr(owner, name)))
        setattr(owner, name, value)

    def finish(self) -> None:
        """Put back what `start` changed; later compiles (recompiles) are not recorded."""
        for owner, name, value in reversed(self._restore):
            setattr(owner, name, value)
        self._restore.clear()

    def table(self, files: Sequence[ModuleFile], out_dir: Path, store: Path | None = None) -> Provenance:
        """Resolve every copied wrapper's call sites against the recorded graphs; frees the graphs.

        :param store: where resolved graphs are kept by wrapper hash (see the module's docstring); a wrapper no
            recorded graph matches is looked up there
        """
        notes = list(self.notes)
        graphs: list[GraphProvenance] = []
        wrappers = sorted((f for f in files if f.kind == "wrapper"), key=lambda f: f.order)
        for captured in self.captured:
            captured.index()
        used: set[int] = set()
        reused = 0
        for position, wrapper in enumerate(wrappers):
            raw = (out_dir / wrapper.path).read_bytes()
            text, digest = raw.decode("utf-8", errors="replace"), hashlib.sha256(raw).hexdigest()
            sites = wrapper_sites(text)
            match = _match(self.captured, sites, position, used)
            if match is None:
                kept = _load_kept(store, digest)
                if kept is None:
                    notes.append(f"{wrapper.path}: no recorded graph matches it (cached compile?)")
                    continue
                graphs.append(kept.model_copy(update={"wrapper": wrapper.path}))
                reused += 1
                continue
            used.add(match)
            resolved = [resolve_site(site, self.captured[match].nodes(site)) for site in sites]
            graph = GraphProvenance(wrapper=wrapper.path, kind=parse_wrapper(text).kind, sites=resolved)
            graphs.append(graph)
            _keep(store, digest, graph)
        if reused:
            notes.append(
                f"{reused} of {len(wrappers)} graphs were Inductor cache hits: their provenance is the one recorded "
                "by the compile that filled the cache (same wrapper code)"
            )
        if not self.captured and not reused and wrappers:
            notes.append("provenance not captured: no compiled graph reached the recording pass (cache hits?)")
        self.captured.clear()
        method = _method(graphs, self.tracking)
        return Provenance(method=method, torch_version=torch.__version__, notes=notes, graphs=graphs)


def _load_kept(store: Path | None, digest: str) -> GraphProvenance | None:
    """The graph kept for the wrapper with this sha256, if any (an unreadable entry counts as none)."""
    if store is None:
        return None
    try:
        return GraphProvenance.model_validate_json((store / f"{digest}.json").read_bytes())
    except (OSError, ValueError):
        return None


def _keep(store: Path | None, digest: str, graph: GraphProvenance) -> None:
    """Keep a resolved graph for later runs on this cache; best effort (a read-only cache keeps nothing)."""
    if store is None:
        return
    with contextlib.suppress(OSError):
        write_if_changed(store / f"{digest}.json", graph.model_dump_json().encode())


def _method(graphs: Sequence[GraphProvenance], tracking: bool) -> ProvenanceMethod:
    if not graphs:
        return "none"
    handled = any(site.handle is not None for graph in graphs for site in graph.sites)
    return "debug-handles" if tracking and handled else "source-nodes"


def _match(captured: Sequence[_Captured], sites: Sequence[WrapperSite], position: int, used: set[int]) -> int | None:
    """The recorded graph of a wrapper: the one whose kernel table holds all its handles, else by compile order."""
    handles = {f"{site.kernel}:{site.handle}" for site in sites if site.handle is not None}
    if handles:
        for index, graph in enumerate(captured):
            if index not in used and graph.kernels and handles <= graph.kernels.keys():
                return index
    unused = [index for index in range(len(captured)) if index not in used]
    return position if position in unused else None


def _module(node: Any) -> tuple[str, str] | None:
    """(module path, class) of the innermost `nn.Module` a node ran in (forward meta, else backward's)."""
    stack = node.meta.get("nn_module_stack") or node.meta.get("fwd_nn_module_stack")
    if not isinstance(stack, dict) or not stack:
        return None
    value = list(stack.values())[-1]
    if not isinstance(value, tuple) or len(value) != 2:
        return None
    raw, cls = value
    name = f"{cls.__module__}.{cls.__qualname__}" if isinstance(cls, type) else str(cls)
    return module_path(str(raw)), name


def _extern_op(kernel: str) -> str | None:
    """The ATen op an extern call runs: `extern_kernels.mm` → `mm`, `torch.ops.aten.convolution_backward.default`
    → `convolution_backward`; None for Inductor's own kernels."""
    if kernel.startswith(("triton_", "cpp_")):
        return None
    parts = [part for part in kernel.split(".") if part not in ("extern_kernels", "torch", "ops", "aten", "default")]
    return parts[0] if parts else None


def _primary(site: WrapperSite, nodes: Sequence[Any]) -> Sequence[Any]:
    """An extern call's own node(s) (its origins also list the pointwise ops fused into its inputs), else all."""
    op = _extern_op(site.kernel)
    own = [node for node in nodes if op and f".{op}." in f".{node.target}."] if op else []
    return own or nodes


def resolve_site(site: WrapperSite, nodes: Sequence[Any]) -> CallSite:
    """A call site with the module most of its nodes ran in, and that module's most common user frame."""
    nodes = _primary(site, nodes)
    modules = [(node, found) for node in nodes if (found := _module(node)) is not None]
    base = CallSite(kernel=site.kernel, handle=site.handle, nodes=[node.name for node in nodes])
    if not modules and not nodes:
        return base
    counts = Counter(found for _, found in modules)
    # Nodes that ran in no submodule ran in the compiled model's own `forward` (path '').
    chosen: tuple[str, str | None] = counts.most_common(1)[0][0] if counts else ("", None)
    members = [node for node, found in modules if found == chosen] if counts else list(nodes)
    stacks = [parse_stack(node.meta.get("stack_trace")) for node in members]
    frames = [(user_frame(stack, _HIDDEN_DIRS), stack) for stack in stacks]
    located = Counter((frame.file, frame.line) for frame, _ in frames if frame is not None)
    frame: SourceFrame | None = None
    stack: list[SourceFrame] = []
    if located:
        where = located.most_common(1)[0][0]
        frame, stack = next((f, s) for f, s in frames if f is not None and (f.file, f.line) == where)
    return base.model_copy(
        update={
            "module_path": chosen[0],
            "module_class": chosen[1],
            "modules": list(dict.fromkeys(path for _, (path, _) in modules)),
            "frame": frame,
            "stack": stack,
        }
    )
