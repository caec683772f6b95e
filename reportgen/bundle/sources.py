"""The index of a bundle's compiled modules, stored in analysis.json: (graph, kernel) -> where its source is.

Kernel names restart at 0 in every compiled graph, so kernels are keyed by (graph, name), the graph
being the wrapper's position in compile order (`ModuleFile.order`). `reportgen.formats` builds it
from the wrappers' text; the analysis stores it so that later stages never parse a module again.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cached_property
from pathlib import PurePosixPath
from typing import Literal

from pydantic import Field

from reportgen.bundle.base import BundleModel

__all__ = ["GraphModule", "IndexedKernel", "KernelBackend", "KernelSource", "ModuleIndex", "WrapperInfo", "WrapperKind"]

WrapperKind = Literal["forward", "backward", "inference"]
KernelBackend = Literal["triton", "cpp", "other"]


class KernelSource(BundleModel):
    """One kernel defined in a wrapper."""

    name: str = Field(description="The kernel's name in the wrapper, e.g. `triton_poi_fused__to_copy_0`.")
    backend: KernelBackend = Field(
        description="`async_compile.triton` -> triton, `cpp_pybinding` -> cpp, anything else -> other."
    )
    kernel_path: str | None = Field(description="File name of the kernel module (`# kernel path:`), basename only.")
    source_nodes: list[str] = Field(description="FX nodes of the user's graph fused into the kernel.")
    aten_ops: list[str] = Field(description="The ATen ops they came from, e.g. `aten.convolution`.")
    line: int = Field(description="1-based line of the definition in the wrapper.")
    end_line: int = Field(description="Line closing the embedded source (`'''`); `line` for one-line definitions.")


class WrapperInfo(BundleModel):
    """What one wrapper (compiled graph module) defines and calls."""

    kind: WrapperKind = Field(
        description="From the names `call` unpacks its args into: `tangents_*` -> backward, `primals_*` -> "
        "forward, otherwise inference (no unpacking: the `# AOT ID` comment decides)."
    )
    kernels: list[KernelSource] = Field(description="Kernel definitions in file order.")
    extern_calls: list[str] = Field(
        description="Extern kernels and ATen ops the wrapper's code calls, in order of first call, e.g. "
        "`extern_kernels.convolution`, `torch.ops.aten.convolution_backward.default`."
    )
    extern_call_counts: dict[str, int] = Field(default_factory=dict, description="Call sites of each of them.")
    aot_id: str | None = Field(default=None, description="The `# AOT ID` of the first line, e.g. `0_forward`.")


class GraphModule(BundleModel):
    """One compiled graph's wrapper."""

    graph: int = Field(description="Index of the wrapper in compile order.")
    wrapper_path: str = Field(description="Bundle path of the wrapper, e.g. `modules/wrappers/cabc.py`.")
    info: WrapperInfo

    @property
    def kind(self) -> WrapperKind:
        """forward, backward or inference."""
        return self.info.kind

    @property
    def stem(self) -> str:
        """The wrapper's file name without `.py`."""
        return PurePosixPath(self.wrapper_path).stem


class IndexedKernel(BundleModel):
    """A kernel of one graph and where its source lies in the bundle."""

    graph: int = Field(description="Index of its wrapper.")
    source: KernelSource = Field(description="Its definition in the wrapper.")
    module_path: str | None = Field(
        description="Bundle path of its copied kernel module (`modules/kernels/<basename>`); None when the bundle "
        "holds no such file (C++ kernels: the source is in the wrapper only)."
    )
    num_gb: float | None = Field(
        default=None, description="Inductor's estimate of GB moved per call (`kernel_num_gb`), Triton kernels only."
    )
    flop: int | None = Field(
        default=None,
        description="Inductor's estimate of FLOPs per call (`kernel_flop`): a Triton template's matrix product; 0 or "
        "None for most other kernels.",
    )
    dtype: str | None = Field(default=None, description="The dtype of its signature's first pointer (`c10::Half`).")

    @property
    def name(self) -> str:
        """The kernel's name in its wrapper."""
        return self.source.name


class ModuleIndex(BundleModel):
    """The wrappers of a bundle and their kernels."""

    graphs: list[GraphModule] = Field(default_factory=list, description="Readable wrappers, in compile order.")
    kernels: list[IndexedKernel] = Field(
        default_factory=list, description="Every kernel: graph by graph, in definition order."
    )

    @cached_property
    def _by_key(self) -> dict[tuple[int, str], IndexedKernel]:
        return {(k.graph, k.name): k for k in self.kernels}

    @cached_property
    def _by_name(self) -> dict[str, list[IndexedKernel]]:
        found: dict[str, list[IndexedKernel]] = {}
        for kernel in self.kernels:
            found.setdefault(kernel.name, []).append(kernel)
        return found

    @property
    def kinds(self) -> dict[int, WrapperKind]:
        """Wrapper kind per graph index."""
        return {g.graph: g.kind for g in self.graphs}

    def graph(self, graph: int) -> GraphModule | None:
        """The wrapper of graph `graph`, if it was readable."""
        return next((g for g in self.graphs if g.graph == graph), None)

    def kernel(self, graph: int, name: str) -> IndexedKernel | None:
        """Kernel `name` of graph `graph`."""
        return self._by_key.get((graph, name))

    def find(self, name: str) -> list[IndexedKernel]:
        """Kernel `name` in every graph that defines it, in graph order (a lookup: a render asks for every name of
        the kernel table, which a bundle made elsewhere may make 250,000 long)."""
        return list(self._by_name.get(name, ()))

    def iter_kernels(self) -> Iterator[IndexedKernel]:
        """All kernels: graph by graph, in definition order."""
        return iter(self.kernels)
