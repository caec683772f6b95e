"""Compiled versions at run time: each `Torch-Compiled Region` a graph's calls ran in, and each version's calls and
time (`reportgen.analyze.frames`)."""

from __future__ import annotations

from pydantic import Field

from reportgen.bundle.base import BundleModel

__all__ = ["GraphRegion", "VersionRuntime"]


class GraphRegion(BundleModel):
    """A graph's calls inside one `Torch-Compiled Region` (one compiled version of a frame)."""

    region: str = Field(description="The region's name, `Torch-Compiled Region: <frame>/<compile>`.")
    calls: int
    kernel_time_us: float = Field(description="Device (or self CPU) time of the kernels those calls launched.")


class VersionRuntime(BundleModel):
    """One compiled version of a frame at run time (`reportgen.analyze.frames`)."""

    compile_id: str = Field(description="Dynamo's `<frame>/<compile>`.")
    function: str | None = Field(description="The frame's function and location; None: not in the diagnostics.")
    reason: str | None = Field(
        default=None, description="For a recompile, the guard of an earlier version that failed."
    )
    calls: int = Field(description="Calls in the profiled steps.")
    device_time_us: float = Field(
        description="Device (or self CPU) time of the kernels its graphs launched in the profiled steps, backward "
        "included (joined to its forward by the wrappers' AOT ID)."
    )
    graphs: list[str] = Field(default_factory=list, description="Labels of the graphs it ran.")
