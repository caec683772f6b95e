"""provenance.json: where each compiled graph's kernels come from in the user's model (written by the run).

For every compiled graph the run captured, the call sites of its wrapper in call order: the kernel or extern
call, the post-grad FX nodes it computes, and their `nn.Module` path and source line. A bundle without the
file (older runs, a warm Inductor cache that skipped the capture) renders as "not captured".
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import SCHEMA_VERSION, BundleModel, GraphKind

__all__ = [
    "CallSite",
    "GraphProvenance",
    "Provenance",
    "ProvenanceMethod",
    "SourceFrame",
]

ProvenanceMethod = Literal["debug-handles", "source-nodes", "none"]
"""How kernels were tied to FX nodes: Inductor's provenance debug handles (every call site, C++ kernels
included), the wrapper's `Source Nodes` comments (GPU kernels and extern calls only), or not at all."""


class SourceFrame(BundleModel):
    """One frame of an FX node's `stack_trace`."""

    file: str
    line: int = Field(ge=0)
    function: str = ""

    @property
    def location(self) -> str:
        """`file:line`."""
        return f"{self.file}:{self.line}"


class CallSite(BundleModel):
    """One kernel launch or extern call of a compiled graph's wrapper, and where in the model it comes from."""

    kernel: str = Field(description="The name the wrapper calls: `triton_poi_fused_add_0`, `extern_kernels.mm`.")
    handle: int | None = Field(default=None, description="Inductor's provenance debug handle, when it wrote one.")
    nodes: list[str] = Field(default_factory=list, description="The post-grad FX nodes the call computes.")
    module_path: str | None = Field(
        default=None,
        description="Dotted path of the innermost `nn.Module` most of those nodes ran in (`blocks.3.1.conv_dw`); "
        "'' = the compiled model itself; None = unknown.",
    )
    module_class: str | None = Field(default=None, description="That module's class, e.g. `torch.nn.Conv2d`.")
    modules: list[str] = Field(
        default_factory=list, description="Every module path the nodes ran in (a fused kernel may span several)."
    )
    frame: SourceFrame | None = Field(
        default=None, description="The innermost user-visible frame (outside torch) of the chosen module's nodes."
    )
    stack: list[SourceFrame] = Field(default_factory=list, description="That node's stack, outermost first.")


class GraphProvenance(BundleModel):
    """The call sites of one compiled graph's wrapper."""

    wrapper: str = Field(description="Bundle path of the wrapper module.")
    kind: GraphKind
    sites: list[CallSite] = Field(default_factory=list, description="In call order.")


class Provenance(BundleModel):
    """provenance.json: the provenance table of a run."""

    schema_version: Literal[1] = SCHEMA_VERSION
    method: ProvenanceMethod
    torch_version: str = ""
    notes: list[str] = Field(default_factory=list, description="What could not be captured, and why.")
    graphs: list[GraphProvenance] = Field(default_factory=list, description="In wrapper (compile) order.")

    def graph(self, wrapper: str) -> GraphProvenance | None:
        """The provenance of the graph whose wrapper is at bundle path `wrapper`."""
        return next((g for g in self.graphs if g.wrapper == wrapper), None)
