"""A distributed run's record: what each rank's process measured (manifest) and what its trace shows (analysis)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from reportgen.bundle.base import BundleModel
from reportgen.bundle.steps import StepTimes

__all__ = [
    "RANKS_DIR",
    "CollectiveRow",
    "DistributedAnalysis",
    "DistributedRun",
    "RankOverlap",
    "RankRun",
    "RankStatus",
    "Straggler",
    "rank_dir",
]

RANKS_DIR: Final = "ranks"
"""The bundle's folder of per-rank files: `ranks/<rank>/` (rank 0's trace is the bundle's own `trace.json.gz`)."""
RankStatus = Literal["running", "ok", "failed", "oom"]


def rank_dir(rank: int) -> str:
    """The bundle-relative folder of one rank's files."""
    return f"{RANKS_DIR}/{rank}"


class RankRun(BundleModel):
    """What one rank's process recorded (`ranks/<rank>/rank.json`, gathered into the manifest)."""

    rank: int = Field(ge=0)
    status: RankStatus = Field(description="`running`: it ended without saying how (stopped when another failed).")
    stage: str = Field(description="The last stage it completed.")
    error: str | None = Field(default=None, description="Its exception, when it raised.")
    failed_at: float | None = Field(default=None, description="Unix time of its failure: the first one is the cause.")
    eager: StepTimes | None = None
    compiled: StepTimes | None = None
    peak_memory_bytes: int | None = Field(default=None, description="Peak device memory of its compiled steps.")
    trace_file: str | None = Field(default=None, description="Its profiled compiled steps (bundle-relative).")
    graphs: list[str] = Field(
        default_factory=list, description="The compiled wrapper modules it loaded (Inductor's file names), sorted."
    )
    graph_digests: list[str] = Field(
        default_factory=list,
        description="A digest of each wrapper's source with its device index and cache names blanked out, sorted: "
        "equal on ranks that compiled the same graphs (each rank's own GPU index is in its wrappers).",
    )


class DistributedRun(BundleModel):
    """How the run was spread, and each rank's record."""

    world_size: int = Field(ge=1)
    strategy: Literal["ddp", "fsdp2"]
    backend: str
    ranks: list[RankRun] = Field(default_factory=list)
    splits: list[str] = Field(
        default_factory=list, description="What DDPOptimizer logged of its graph splits (buckets), rank 0's."
    )

    @property
    def failed_rank(self) -> RankRun | None:
        """The rank that failed first (the others were stopped, or failed because it did)."""
        failed = [r for r in self.ranks if r.status in ("failed", "oom")]
        return min(failed, key=lambda r: (r.failed_at is None, r.failed_at or 0.0, r.rank)) if failed else None

    def graph_keys(self) -> list[list[str]]:
        """Each rank's compiled graphs as compared: device-neutral digests when every rank recorded them, else the
        wrappers' names."""
        digests = all(r.graph_digests for r in self.ranks)
        return [r.graph_digests if digests else r.graphs for r in self.ranks]

    @property
    def same_graphs(self) -> bool | None:
        """Whether every rank compiled the same graphs (None: a rank recorded none): by their device-neutral digests
        when every rank recorded them, else by the wrappers' names (equal only on one device type, e.g. CPU ranks)."""
        sets = [tuple(keys) for keys in self.graph_keys()]
        if not sets or any(not s for s in sets):
            return None
        return len(set(sets)) == 1


class RankOverlap(BundleModel):
    """One rank's profiled compiled steps: compute against communication on its device's timeline (per step)."""

    rank: int
    steps: int = Field(description="Profiled steps the figures are averaged over.")
    compute_us: float = Field(description="Union of the compute work's intervals, per step.")
    communication_us: float = Field(description="Union of the collectives' intervals, per step.")
    overlapped_us: float = Field(description="Communication time during which compute ran too, per step.")
    span_us: float = Field(description="Step duration (the profiler's step spans), per step.")
    waiting_us: float | None = Field(
        default=None,
        description="Communication time spent waiting for the other ranks to reach the same collectives, per step "
        "(its kernels' time beyond each call's shortest copy on any rank); None when the ranks' calls do not pair up.",
    )
    compute_strip: list[tuple[float, float]] = Field(
        default_factory=list, description="Compute's merged intervals in the first profiled step, from its start (us)."
    )
    communication_strip: list[tuple[float, float]] = Field(
        default_factory=list, description="Communication's merged intervals in that step, from its start (us)."
    )

    @property
    def exposed_us(self) -> float:
        """Communication time with no compute beside it: what it adds to the step."""
        return self.communication_us - self.overlapped_us

    @property
    def overlap_percent(self) -> float | None:
        """Share of communication time overlapped by compute (HTA's communication/computation overlap)."""
        return 100.0 * self.overlapped_us / self.communication_us if self.communication_us > 0 else None

    @property
    def busy_percent(self) -> float | None:
        """Share of the step in which compute or communication ran."""
        busy = self.compute_us + self.communication_us - self.overlapped_us
        return 100.0 * busy / self.span_us if self.span_us > 0 else None


class CollectiveRow(BundleModel):
    """One kind of collective (all_reduce, all_gather, reduce_scatter, ...) over all ranks' profiled steps."""

    kind: str
    calls: int = Field(description="Calls per step per rank.")
    time_us: float = Field(description="Device time per step per rank.")
    bytes: float | None = Field(
        default=None, description="Data per step per rank, nccl-tests' size S summed (None: the trace records none)."
    )
    bus_gbps: float | None = Field(
        default=None,
        description="Bus bandwidth (GB/s, nccl-tests' convention) over each call's shortest copy on any rank: "
        "the transfer without the wait.",
    )


class Straggler(BundleModel):
    """The slowest rank against the fastest, by their compiled step-time medians."""

    rank: int
    fastest_rank: int
    excess_percent: float = Field(description="How much longer its median step took than the fastest rank's.")
    separated: bool = Field(description="Whether their inter-quartile ranges are disjoint (not the host's noise).")


class DistributedAnalysis(BundleModel):
    """Per-rank overlap, the collectives, and the straggler."""

    ranks: list[RankOverlap] = Field(default_factory=list)
    collectives: list[CollectiveRow] = Field(default_factory=list)
    straggler: Straggler | None = None
    notes: list[str] = Field(default_factory=list, description="Ranks whose trace could not be read, and why.")
