"""The figures a run repeats, kept apart from the host-dependent ones (`analysis.json` `figures`).

Three kinds of figures describe a run, and pages, the history and `reportgen compare` keep them apart:

- *device figures*: GPU kernel time and GPU-active time per profiled step, eager and compiled: the GPU's own
  clock, which the host's CPU speed does not move (on CPU runs they are CPU time, host-dependent);
- *counts* per profiled step (kernels, launches, runtime API calls, ATen ops, host↔device copies, compiled graphs
  entered): exact for a given code and input, whatever the host does;
- *wall figures* (`Metrics`: step times, wall speedup, busy %): the user's experience, host-dependent.
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import Field

from reportgen.bundle.base import BundleModel

__all__ = ["COUNTS", "CountName", "FigureKind", "Figures", "StepFigures"]

FigureKind = Literal["device", "count", "wall", "other"]
"""Which kind a compared figure is (`MetricChange.kind`): `other` is neither gated nor host-judged."""

CountName = Literal["kernels", "launches", "runtime_calls", "syncs", "memcpy_calls", "copies", "aten_ops", "graphs"]

COUNTS: dict[CountName, str] = {
    "kernels": "kernels run",
    "launches": "kernel launches",
    "runtime_calls": "CUDA runtime and driver calls",
    "syncs": "synchronisations",
    "memcpy_calls": "memcpy calls",
    "copies": "host↔device copies",
    "aten_ops": "ATen ops dispatched",
    "graphs": "compiled graphs entered",
}
"""Every count a run records per profiled step, and the words pages use for it (declared once):

- `kernels`: GPU kernels that ran, launched in the step (a CUDA-graph replay's kernels included);
- `launches`: the host's launch calls (`cudaLaunchKernel`, `cuLaunchKernel`, `cudaGraphLaunch`, ...): a replayed
  CUDA graph is one launch;
- `runtime_calls`: all CUDA runtime and driver API calls; `syncs` and `memcpy_calls` are those that synchronise
  (`*Synchronize`) or copy (`*Memcpy*`);
- `copies`: host-to-device and device-to-host copies that ran on the GPU;
- `aten_ops`: ATen ops dispatched (`aten::*` CPU ops, nested ones included);
- `graphs`: compiled graphs called (Inductor's `## Call CompiledFxGraph` spans, else AOTAutograd's forward and
  backward spans)."""

GPU_COUNTS: frozenset[CountName] = frozenset(
    {"kernels", "launches", "runtime_calls", "syncs", "memcpy_calls", "copies"}
)
"""The counts a CPU-only trace cannot have (no CUDA activity): recorded as absent, not zero."""


class StepFigures(BundleModel):
    """Device figures and counts of one side (eager or compiled) over its profiled steps, one entry per step."""

    profiled_steps: int = Field(description="Steps with a `ProfilerStep#N` span (1: the whole trace, unmarked).")
    device_us: list[float] = Field(
        description="Per step: device time of the kernels (and copies, memsets) launched in it; on CPU runs the "
        "self CPU time of its ops."
    )
    active_us: list[float] = Field(
        description="Per step: the union of all device work inside the step's window (`StepAnalysis.busy_union_us`)."
    )
    counts: dict[CountName, list[int]] = Field(
        default_factory=dict, description="Per step, each count of `COUNTS` the trace can have."
    )
    aten_ops: dict[str, float] = Field(
        default_factory=dict, description="ATen ops dispatched per step, by op name (what a changed count names)."
    )
    kernels: dict[str, float] = Field(default_factory=dict, description="Kernels run per step, by kernel name.")

    def count(self, name: CountName) -> float | None:
        """The count per step (mean over the profiled steps); None when the trace cannot have it."""
        values = self.counts.get(name)
        return sum(values) / len(values) if values else None

    @property
    def device_ms(self) -> float | None:
        """Median device time per step, ms."""
        return statistics.median(self.device_us) / 1e3 if self.device_us else None

    @property
    def device_range_ms(self) -> tuple[float, float] | None:
        """(lowest, highest) device time of one step, ms: the interval device figures are judged with."""
        return (min(self.device_us) / 1e3, max(self.device_us) / 1e3) if self.device_us else None

    @property
    def active_ms(self) -> float | None:
        """Median GPU-active time per step, ms."""
        return statistics.median(self.active_us) / 1e3 if self.active_us else None


class Figures(BundleModel):
    """A run's repeatable figures: eager's (from its own profiled steps) and compiled's."""

    device: Literal["cuda", "cpu"]
    eager: StepFigures | None = Field(
        default=None, description="None: the run profiled no eager steps (bundles of reportgen before issue 27)."
    )
    compiled: StepFigures | None = None

    @property
    def device_speedup(self) -> float | None:
        """Eager device time per step ÷ compiled's: what torch.compile saves on the GPU alone."""
        eager = self.eager.device_ms if self.eager else None
        compiled = self.compiled.device_ms if self.compiled else None
        return eager / compiled if eager and compiled else None
