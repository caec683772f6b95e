"""Index a bundle's compiled modules: (graph, kernel name) -> where its source is.

Kernel names restart at 0 in every compiled graph, so kernels are keyed by (graph, name), the
graph being the wrapper's position in compile order (`ModuleFile.order`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from reportgen.analyze.modules import KernelSource, WrapperInfo, WrapperKind, parse_wrapper
from reportgen.bundle.model import ModuleFile

__all__ = ["GraphModule", "IndexedKernel", "ModuleIndex", "module_index"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphModule:
    """One compiled graph's wrapper.

    :param graph: index of the wrapper in compile order
    :param wrapper_path: bundle path of the wrapper, e.g. `modules/wrappers/cabc.py`
    :param info: what the wrapper defines and calls
    """

    graph: int
    wrapper_path: str
    info: WrapperInfo

    @property
    def kind(self) -> WrapperKind:
        """forward, backward or inference."""
        return self.info.kind

    @property
    def stem(self) -> str:
        """The wrapper's file name without `.py`."""
        return PurePosixPath(self.wrapper_path).stem


@dataclass(frozen=True)
class IndexedKernel:
    """A kernel of one graph and where its source lies in the bundle.

    :param graph: index of its wrapper
    :param source: its definition in the wrapper
    :param module_path: bundle path of its copied kernel module (`modules/kernels/<basename>`),
        None when the bundle holds no such file (C++ kernels: the source is in the wrapper only)
    """

    graph: int
    source: KernelSource
    module_path: str | None

    @property
    def name(self) -> str:
        """The kernel's name in its wrapper."""
        return self.source.name


@dataclass(frozen=True)
class ModuleIndex:
    """The wrappers of a bundle and their kernels.

    :param graphs: readable wrappers, in compile order
    :param kernels: every kernel, keyed by (graph, name)
    """

    graphs: tuple[GraphModule, ...] = ()
    kernels: Mapping[tuple[int, str], IndexedKernel] = field(default_factory=dict)

    @property
    def kinds(self) -> dict[int, WrapperKind]:
        """Wrapper kind per graph index."""
        return {g.graph: g.kind for g in self.graphs}

    def graph(self, graph: int) -> GraphModule | None:
        """The wrapper of graph `graph`, if it was readable."""
        return next((g for g in self.graphs if g.graph == graph), None)

    def kernel(self, graph: int, name: str) -> IndexedKernel | None:
        """Kernel `name` of graph `graph`."""
        return self.kernels.get((graph, name))

    def find(self, name: str) -> list[IndexedKernel]:
        """Kernel `name` in every graph that defines it, in graph order."""
        return [k for k in self.iter_kernels() if k.name == name]

    def iter_kernels(self) -> Iterator[IndexedKernel]:
        """All kernels: graph by graph, in definition order."""
        return iter(self.kernels.values())


def _read_wrapper(bundle_dir: Path, module: ModuleFile) -> str | None:
    try:
        return (bundle_dir / module.path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        logger.warning("cannot read compiled wrapper %s: %s", bundle_dir / module.path, exc)
        return None


def module_index(bundle_dir: Path, modules: Sequence[ModuleFile]) -> ModuleIndex:
    """Parse the bundle's wrappers and match each kernel to its copied kernel module.

    Kernel modules are matched by the basename of the wrapper's `# kernel path:` comment. An
    unreadable wrapper is left out (with a warning); the graphs after it keep their indices.

    :param bundle_dir: the bundle directory
    :param modules: `Manifest.modules`
    """
    wrappers = sorted((m for m in modules if m.kind == "wrapper"), key=lambda m: m.order)
    kernel_files = {PurePosixPath(m.path).name: m.path for m in modules if m.kind == "kernel"}
    graphs: list[GraphModule] = []
    kernels: dict[tuple[int, str], IndexedKernel] = {}
    for graph, wrapper in enumerate(wrappers):
        source = _read_wrapper(bundle_dir, wrapper)
        if source is None:
            continue
        info = parse_wrapper(source)
        graphs.append(GraphModule(graph=graph, wrapper_path=wrapper.path, info=info))
        for kernel in info.kernels:
            module_path = kernel_files.get(kernel.kernel_path) if kernel.kernel_path else None
            kernels[(graph, kernel.name)] = IndexedKernel(graph=graph, source=kernel, module_path=module_path)
    return ModuleIndex(graphs=tuple(graphs), kernels=kernels)
