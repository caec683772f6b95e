"""How a run was kept apart from the other runs on its host, and what else ran while it measured."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import BundleModel

__all__ = ["ConcurrentRun", "Isolation", "RunPhase"]

RunPhase = Literal["preparing", "measuring"]
"""A run's phases as other runs on its host see them: `preparing` (model, warm-ups, compile) and `measuring`
(step timing, the profiled steps, graph and kernel benchmarks)."""


class ConcurrentRun(BundleModel):
    """Another run on the same host whose activity overlapped this run's measurements."""

    name: str = Field(description="Its bundle name.")
    pid: int = Field(description="Its child process.")
    devices: str | None = Field(default=None, description="Its CUDA_VISIBLE_DEVICES.")
    cpus: list[int] = Field(default_factory=list, description="The cores it was pinned to (empty: not pinned).")
    phases: list[RunPhase] = Field(description="Its phases during this run's measurements.")


class Isolation(BundleModel):
    """What kept this run's measurements apart from the host's other runs, and what overlapped them anyway."""

    devices: str | None = Field(default=None, description="CUDA_VISIBLE_DEVICES the run's child saw.")
    cpus: list[int] = Field(
        default_factory=list, description="The cores the run's processes were pinned to (empty: not pinned)."
    )
    compile_threads: int | None = Field(default=None, description="TORCHINDUCTOR_COMPILE_THREADS, when set.")
    timing_lock: bool = Field(
        default=False,
        description="Whether the measurements held the host-wide timing lock (no two runs measure at once).",
    )
    lock_wait_s: float = Field(default=0.0, description="Seconds the run waited for the timing lock.")
    measured_s: float | None = Field(default=None, description="Seconds the measurements took.")
    concurrent: list[ConcurrentRun] = Field(
        default_factory=list, description="Other runs on the host active during this run's measurements."
    )
    windows: int = Field(
        default=0,
        description="Timed windows the run held: each timed part (a pair of step blocks, the profiled steps, a "
        "graph's timing or profile, a kernel benchmark) alone on the host.",
    )
    window_s: float = Field(default=0.0, description="Seconds inside those windows.")
    gpu_windows: int = Field(
        default=0,
        description="GPU-only windows the run held: each of Inductor's own GPU benchmarks during the compile, in "
        "its turn with the others' windows, the runs that may share its GPU paused.",
    )
    gpu_window_s: float = Field(default=0.0, description="Seconds inside those GPU-only windows.")
    window_wait_s: float = Field(
        default=0.0, description="Seconds waited for either kind of window (the lock, the coordinator)."
    )
    coordinated: bool = Field(
        default=False,
        description="Whether a coordinator granted the windows, one at a time, with the host's other runs paused.",
    )
    paused: dict[str, float] = Field(
        default_factory=dict, description="Each run the coordinator paused during this run's windows → seconds."
    )
    drain_s: float = Field(
        default=0.0,
        description="Seconds waited at the start of windows for a paused run's queued GPU work to leave the GPU "
        "this run shared with it (`--runs-per-gpu`).",
    )
    others_cpu_s: float = Field(
        default=0.0,
        ge=0.0,
        description="CPU seconds that processes other than this run's used while its coordinated windows (GPU-only "
        "ones aside) were open (the host's /proc/stat less the holder's line, 10 ms ticks): ~0 when they had the "
        "host.",
    )
    runs_cpu_s: float = Field(
        default=0.0,
        ge=0.0,
        description="Of `others_cpu_s`, the seconds of the host's other runs (their whole process trees, which the "
        "coordinator paused): 0 when pausing them worked; the rest is processes reportgen does not run.",
    )
    stolen_s: float = Field(
        default=0.0, ge=0.0, description="Seconds the hypervisor stole from the host's CPUs during those windows."
    )
    window_cpu: int | None = Field(
        default=None,
        description="The CPU each timed window's thread ran on alone, as the coordinator asked (windows paired "
        "across processes then see the same vCPU); None: not pinned.",
    )
    notes: list[str] = Field(default_factory=list, description="Why an isolation asked for was not in effect.")

    @property
    def measured_alone(self) -> bool:
        """Whether no other run measured while this one did: by construction when every timed part was a
        window under the host's lock or a coordinator (no two windows overlap; a coordinator also pauses the
        others), else when no other run was in its measuring phase."""
        if (self.coordinated or self.timing_lock) and self.windows > 0 and not self.notes:
            return True
        return not any("measuring" in other.phases for other in self.concurrent)
