"""Kernel time attributed to the user's code: what `reportgen.analyze` derives from provenance.json."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import BundleModel
from reportgen.bundle.provenance import ProvenanceMethod

__all__ = ["KernelOrigin", "LineTime", "ModuleTime", "OriginMatch", "ProvenanceSummary"]

OriginMatch = Literal["kernel", "op"]
"""`kernel`: the row's kernel is a call site of the wrapper; `op`: an extern kernel (cuBLAS, cuDNN, ATen),
tied to the wrapper's extern calls of its kind (GEMM, convolution, attention, other) and shared among them."""


class KernelOrigin(BundleModel):
    """Where a share of a kernel row's time comes from."""

    module_path: str | None = Field(description="'' = the compiled model's own forward; None = unknown.")
    module_class: str | None = None
    file: str | None = None
    line: int | None = None
    function: str | None = None
    share: float = Field(ge=0, le=1, description="Fraction of the row's time, 0..1.")
    match: OriginMatch

    @property
    def location(self) -> str | None:
        """`file:line`, when known."""
        return None if self.file is None or self.line is None else f"{self.file}:{self.line}"


class ModuleTime(BundleModel):
    """Kernel time of one `nn.Module` path, its submodules included (rolled up the module tree)."""

    path: str = Field(description="Dotted path; '' = the whole model.")
    module_class: str | None = None
    forward_us: float = Field(description="Forward (and inference) graphs, over the profiled steps.")
    backward_us: float
    self_us: float = Field(description="Time attributed to this module itself, not to a submodule.")

    @property
    def total_us(self) -> float:
        """Forward plus backward."""
        return self.forward_us + self.backward_us


class LineTime(BundleModel):
    """Kernel time of one source line (the innermost user-visible frame of the kernels' FX nodes)."""

    file: str
    line: int
    function: str = ""
    module_path: str | None = Field(default=None, description="The module most of that time ran in.")
    forward_us: float
    backward_us: float

    @property
    def total_us(self) -> float:
        """Forward plus backward."""
        return self.forward_us + self.backward_us


class ProvenanceSummary(BundleModel):
    """Compiled graphs' kernel time per module and per source line; `None` in `Analysis` = not captured."""

    method: ProvenanceMethod
    notes: list[str] = Field(default_factory=list)
    compiled_us: float = Field(
        description="Kernel time of the compiled graphs (outside compiled regions excluded; on CPU runs, Inductor's "
        "kernels and GEMM, convolution and attention ops, not the runtime wrapper's bookkeeping ops)."
    )
    module_us: float = Field(description="Of which attributed to a module path.")
    line_us: float = Field(description="Of which attributed to a user-visible `file:line`.")
    modules: list[ModuleTime] = Field(default_factory=list, description="Every path and its ancestors, by time.")
    lines: list[LineTime] = Field(default_factory=list, description="By time, descending.")

    @property
    def module_share(self) -> float:
        """Fraction of compiled kernel time attributed to a module path."""
        return self.module_us / self.compiled_us if self.compiled_us > 0 else 0.0

    @property
    def line_share(self) -> float:
        """Fraction of compiled kernel time attributed to a source line."""
        return self.line_us / self.compiled_us if self.compiled_us > 0 else 0.0
