"""analysis.json: what `reportgen.analyze` derived from a bundle's trace, modules and capture."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.attribution import KernelOrigin, ProvenanceSummary
from reportgen.bundle.base import SCHEMA_VERSION, BundleModel, GraphKind
from reportgen.bundle.distributed import DistributedAnalysis
from reportgen.bundle.figures import Figures
from reportgen.bundle.frames import GraphRegion, VersionRuntime
from reportgen.bundle.sources import ModuleIndex
from reportgen.bundle.timing import TimingSummary

__all__ = [
    "ANALYSIS_REVISION",
    "Analysis",
    "BusySource",
    "Finding",
    "GraphAnalysis",
    "GraphKernel",
    "IdleHistogram",
    "Kernel",
    "KernelCost",
    "KernelTable",
    "PeakBandwidth",
    "RegionEvidence",
    "Roof",
    "StepAnalysis",
]


ROOF_TARGET = 0.8
"""What a well-tuned kernel reaches: this share of its roof (cuBLAS GEMMs of large shapes reach 70-90 %)."""


class KernelCost(BundleModel):
    """The FLOPs and least bytes of a kernel's launches over the profiled steps, from the ops that launched them
    (`reportgen.analyze.costs`): a matrix product, convolution or attention op's cost is shared, in proportion to
    their time, among the kernels it launched that do its arithmetic (not layout transforms, fills, elementwise)."""

    flops: float = Field(description="FLOPs over the profiled steps (a multiply-add is 2).")
    bytes: float | None = Field(default=None, description="Least bytes moved (inputs read and outputs written once).")
    dtype: str = Field(description="The dtype of the products, as the profiler names it (`c10::BFloat16`, `float`).")
    ops: list[str] = Field(description="The ops the FLOPs come from (`aten::mm`, `aten::convolution`, ...).")
    estimated: bool = Field(
        default=False,
        description="FLOPs and bytes are Inductor's estimates for a Triton template (`kernel_flop`, `kernel_num_gb`), "
        "not counted from recorded shapes.",
    )
    bound_tflops: float | None = Field(
        default=None,
        description="The roof at its arithmetic intensity: the lower of its dtype's peak and intensity x the memory "
        "peak (`Analysis.roof`); None where the GPU or the dtype has no peak in the table.",
    )
    bound: Literal["compute", "memory"] | None = Field(default=None, description="Which roof `bound_tflops` is.")

    def achieved_tflops(self, time_us: float) -> float | None:
        """FLOP/s over `time_us` (the row's time), in TFLOP/s."""
        return self.flops / (time_us * 1e6) if time_us > 0 else None

    def time_left_us(self, time_us: float) -> float:
        """Time beyond what these FLOPs would take at `ROOF_TARGET` of the roof (0 when under, or without one)."""
        if not self.bound_tflops:
            return 0.0
        return max(time_us - self.flops / (ROOF_TARGET * self.bound_tflops * 1e6), 0.0)


class _Moves:
    """`bytes_moved` of a kernel row with a `cost`, `recorded_bytes` and an `estimated_bytes`."""

    cost: KernelCost | None
    estimated_bytes: float | None
    recorded_bytes: float | None

    @property
    def bytes_moved(self) -> tuple[float, bool] | None:
        """(bytes over the profiled steps, whether Inductor estimated them): the cost's, else a copy's or fill's
        recorded bytes, else the estimate."""
        if self.cost is not None and self.cost.bytes is not None:
            return self.cost.bytes, self.cost.estimated
        if self.recorded_bytes is not None:
            return self.recorded_bytes, False
        return None if self.estimated_bytes is None else (self.estimated_bytes, True)


_ESTIMATED_BYTES = (
    "Where no cost is known: Inductor's estimate of the bytes a Triton kernel moved over the profiled steps "
    "(`kernel_num_gb` x launches)."
)
_RECORDED_BYTES = "A copy's or fill's bytes over the profiled steps, as the profiler recorded each (`args.bytes`)."


class Kernel(_Moves, BundleModel):
    """One kernel (or CPU op on CPU runs), aggregated by name over the profiled steps."""

    name: str
    category: str
    device_time_us: float = Field(description="Total device (or self CPU) time over the profiled steps.")
    count: int
    share: float = Field(description="Fraction of the table's total time, 0..1.")
    cost: KernelCost | None = Field(default=None, description="FLOPs and bytes, where an op of known cost ran it.")
    estimated_bytes: float | None = Field(default=None, description=_ESTIMATED_BYTES)
    recorded_bytes: float | None = Field(default=None, description=_RECORDED_BYTES)

    @property
    def mean_us(self) -> float:
        """Mean time per launch."""
        return self.device_time_us / self.count if self.count else 0.0


class KernelTable(BundleModel):
    """Kernels sorted by time, descending."""

    device: Literal["cuda", "cpu"]
    profiled_steps: int
    total_us: float
    kernels: list[Kernel]

    def category_totals_us(self) -> list[tuple[str, float]]:
        """(category, summed time) of the table's kernels, longest first."""
        totals: dict[str, float] = {}
        for kernel in self.kernels:
            totals[kernel.category] = totals.get(kernel.category, 0.0) + kernel.device_time_us
        return sorted(totals.items(), key=lambda item: item[1], reverse=True)


BusySource = Literal["-p", "union"]
"""Which definition a busy % follows: `wrapper.py -p`'s, or the union of kernel intervals."""


class GraphKernel(_Moves, BundleModel):
    """One kernel (or CPU op on CPU runs) of one compiled graph, aggregated by name over the profiled steps.

    Kernel numbering restarts in every graph, so a kernel is identified by (graph, name).
    """

    graph: int | None = Field(description="Graph number (`GraphAnalysis.graph`); None = outside compiled regions.")
    name: str
    category: str
    device_time_us: float = Field(description="Total device (or self CPU) time over the profiled steps.")
    count: int
    share: float = Field(description="Fraction of this graph's kernel time, 0..1.")
    source: str | None = Field(default=None, description="Bundle path of the kernel's module, when known.")
    source_nodes: list[str] = Field(default_factory=list, description="Inductor's topologically sorted FX nodes.")
    aten_ops: list[str] = Field(default_factory=list, description="The original ATen ops the kernel fuses.")
    origins: list[KernelOrigin] = Field(
        default_factory=list, description="Where its time comes from in the model (provenance), largest share first."
    )
    cost: KernelCost | None = Field(
        default=None, description="Its share of the kernel table row's FLOPs and bytes (by launches), with its roof."
    )
    estimated_bytes: float | None = Field(default=None, description=_ESTIMATED_BYTES)
    recorded_bytes: float | None = Field(default=None, description=_RECORDED_BYTES)

    @property
    def mean_us(self) -> float:
        """Mean time per launch."""
        return self.device_time_us / self.count if self.count else 0.0


class GraphRoof(BundleModel):
    """How near the GPU's roof a graph's kernels of known FLOPs run (`reportgen.analyze.roofline`)."""

    kernels: int = Field(description="Its kernels of known FLOPs.")
    time_us: float = Field(description="Their time over the profiled steps.")
    share_of_roof: float | None = Field(
        default=None, description="Their achieved share of their roof, 0..1, weighted by time; None: no roof known."
    )
    time_left_us: float | None = Field(
        default=None, description="Time beyond what they would take at `ROOF_TARGET` of their roof; None: no roof."
    )


class GraphAnalysis(BundleModel):
    """Where one compiled graph's time goes, from the kernels launched inside its calls.

    A kernel belongs to the compiled-graph call (`## Call CompiledFxGraph <key> ##`, else
    `CompiledFunction[Backward]` / `Torch-Compiled Region`) enclosing its launch on the launching thread;
    see `reportgen.analyze.regions` for the rules.
    """

    graph: int | None = Field(description="Number in order of first call in the trace; None = outside graphs.")
    label: str = Field(description='E.g. "forward (graph 0)", "outside compiled regions".')
    key: str | None = Field(description="The CompiledFxGraph key, else the Torch-Compiled Region name.")
    kind: GraphKind
    wrapper: str | None = Field(default=None, description="Bundle path of the graph's compiled wrapper module.")
    calls: int = Field(description="Calls over the profiled steps.")
    wall_us: float = Field(
        description="Sum of those calls' windows: each call's CPU span, stretched to its first kernel's start and "
        "last kernel's end (under CUDA graphs the span is only the replay's launch); busy union's denominator."
    )
    kernel_time_us: float = Field(description="Device (or self CPU) time of the kernels launched by the calls.")
    busy_union_percent: float | None = Field(
        default=None,
        description="Union of the kernel intervals of each call ÷ the call's window [min(call span start, "
        "first kernel start), max(call span end, last kernel end)], both summed over calls, x 100. "
        "None without kernels or calls.",
    )
    busy_seed_percent: float | None = Field(
        default=None,
        description="`wrapper.py -p`'s 'Percent of time when GPU is busy': per-call device time of the graph "
        "run alone ÷ its unprofiled wall time per call, x 100 (no overlap correction; may exceed 100).",
    )
    seed_categories_percent: dict[str, float] = Field(
        default_factory=dict,
        description="The same per seed bucket: pointwise, reduction, persistent_reduction, other.",
    )
    unprofiled_wall_ms: float | None = Field(
        default=None, description="The unprofiled wall time per call that `busy_seed_percent` divides by."
    )
    unprofiled_rounds_ms: list[float] = Field(
        default_factory=list, description="Every round of that timing (the median is `unprofiled_wall_ms`)."
    )

    @property
    def headline_busy(self) -> tuple[float | None, BusySource]:
        """The busy % pages lead with: PyTorch's own `wrapper.py -p` definition where it was measured (GPU
        runs), else the union of kernel intervals in the calls."""
        if self.busy_seed_percent is not None:
            return self.busy_seed_percent, "-p"
        return self.busy_union_percent, "union"

    @property
    def in_step_busy(self) -> tuple[float | None, BusySource]:
        """The busy % inside the model's own steps (union) when known, else `-p`: what launch-boundness is
        judged on, since the graph run alone (-p) runs its calls back to back and hides the Python between."""
        if self.busy_union_percent is not None:
            return self.busy_union_percent, "union"
        return self.busy_seed_percent, "-p"

    categories_us: dict[str, float] = Field(default_factory=dict, description="Kernel time per category.")
    kernels: list[GraphKernel] = Field(default_factory=list, description="Sorted by time, descending.")
    roof: GraphRoof | None = Field(default=None, description="Its kernels of known FLOPs against the roof.")
    regions: list[GraphRegion] = Field(
        default_factory=list,
        description="The compiled versions its calls ran in (forward and inference graphs; a backward graph runs "
        "on the autograd thread, outside any region), in order of first call.",
    )


class StepAnalysis(BundleModel):
    """Device busy time of one profiled step, over a window; the steps' windows never overlap.

    A kernel belongs to the step its launch lies in (`kernel_time_us`). Window k runs from the end of window
    k-1 (the first from its `ProfilerStep#N` span start, or its first kernel's start if earlier; a step whose
    span starts after window k-1 ends starts there) to its span's end or the end of the last kernel launched
    in it, whichever is later, and never before its own start. With `prof.step()`'s back-to-back spans the
    windows tile the profiled steps' time, so no moment counts twice when the GPU lags the CPU. Busy is the
    union of all device work inside the window, clipped to it, whichever step launched it: the GPU still
    running step k-1's kernels keeps step k busy. Without step markers the whole trace is one window (step -1).
    """

    step: int = Field(description="N of `ProfilerStep#N`; -1 = the trace has no step markers (whole trace).")
    window: Literal["step", "whole trace"] = Field(
        default="step",
        description="`step`: the step window above; `whole trace`: no step markers, one window from the first "
        "CPU event or kernel to the last end (CPU-only time before the first kernel counts as idle).",
    )
    window_start_us: float = Field(default=0.0, description="Window start, on the trace's clock.")
    wall_us: float = Field(description="Window length.")
    kernel_time_us: float = Field(description="Sum of the durations of the kernels launched in the step.")
    busy_union_us: float = Field(description="Union of all kernel intervals inside the window (no double counting).")
    busy_percent: float = Field(description="busy_union_us ÷ wall_us x 100.")
    idle_us: float = Field(description="wall_us - busy_union_us: the window's uncovered stretches.")
    gap_count: int = Field(description="Number of uncovered stretches (idle gaps) in the window.")
    note: str | None = Field(
        default=None,
        description="Why the window is doubtful (plain text), e.g. kernels covering under 10 % of it; None if not.",
    )


class IdleHistogram(BundleModel):
    """Idle gaps of all profiled steps by length: counts[i] gaps with edges_us[i] <= length < edges_us[i+1].

    Gaps are taken over adjoining step windows together: a gap across a step boundary counts once, whole.
    """

    edges_us: list[float] = Field(description="Bin edges; the last one is a large number standing for +inf.")
    counts: list[int]
    total_idle_us: float = Field(description="Sum of the gaps: the steps' idle_us summed.")


class Finding(BundleModel):
    """Something worth acting on, found by a rule of `reportgen.analyze.findings` from the run's numbers.

    `evidence` and `suggestion` are plain text: one paragraph per line, a line starting with `- ` is a list
    item, and text between backticks is code (the renderer escapes everything else).
    """

    rule: str = Field(description="The rule that fired, e.g. `launch-bound`.")
    severity: Literal["info", "warning", "problem"]
    title: str
    evidence: str = Field(description="The numbers that made the rule fire.")
    suggestion: str = Field(description="What to try next.")


class RegionEvidence(BundleModel):
    """What the profiled trace itself shows about compiled regions (see `reportgen.analyze.evidence`)."""

    compiled_regions: int = Field(description="Distinct `Torch-Compiled Region: <frame>/<compile>` names.")
    nested_regions: int = Field(
        description="Region events starting inside another region event on the same thread "
        "(a resumed frame after a graph break runs inside the frame that broke)."
    )
    compiled_function_blocks_per_step: float | None = Field(
        default=None,
        description="`CompiledFunction` (forward) events per profiled step; None without `ProfilerStep#N` spans.",
    )


ANALYSIS_REVISION = 14
"""What today's analysis stores; an analysis.json of an earlier revision is stale and analysed again.

1: kernels, graphs, steps, findings; 2: the compiled-module index and the peak bandwidth too;
3: timing statistics (intervals, noise) and step windows that partition the timeline; 4: the host's noise
(the host probe's CV and its correlation with the steps) and the noisy-host finding; 5: kernel provenance (each
kernel row's module and line, time per module and per line) and the findings that name them; 6: the repeatable
figures (device time and counts per profiled step, eager and compiled: `figures`); 7: FLOPs and bytes of the
kernel rows whose launching op has a known cost (`Kernel.cost`); 8: that cost goes to the kernels that do the
op's arithmetic only (not the layout transforms, fills and elementwise kernels beside them); 9: runtime per
compiled version (`versions`, `GraphAnalysis.regions`), each graph kernel's share of its row's cost, Inductor's
estimates for Triton templates (`KernelCost.estimated`) and Triton kernels' bytes (`estimated_bytes`); 10: per-rank
overlap of a distributed run (`distributed`); 11: its collectives' data and bus bandwidth, each rank's waiting;
12: copies' and fills' recorded bytes (`recorded_bytes`); 13: a rank's overlap and calls count only the GPU
work launched while profiling (as HTA does); 14: graph breaks in the DDP or FSDP wrapper's own code are by design."""


class Roof(BundleModel):
    """The GPU's peaks the kernel rows are held to (`reportgen.analyze.gpu_peaks`)."""

    model: str = Field(description="The table's GPU model, e.g. `H100 SXM`.")
    memory_tbps: float
    source: str = Field(description="The datasheet the figures come from.")
    tf32_matmul: bool | None = Field(default=None, description="float32 products held to the TF32 peak.")
    tf32_cudnn: bool | None = Field(default=None, description="float32 convolutions held to the TF32 peak.")
    compute_tflops: dict[str, float] = Field(
        default_factory=dict,
        description="Each dtype's dense peak (profiler dtype names; `float` as its matrix products are held).",
    )


class PeakBandwidth(BundleModel):
    """The memory bandwidth a kernel's GB/s is compared against."""

    gbps: float
    source: Literal["theoretical", "measured"] = Field(
        description="`theoretical`: the GPU's DRAM peak; `measured`: the run's device-to-device copy."
    )


class Analysis(BundleModel):
    """analysis.json: what `reportgen.analyze` derived from the trace and modules."""

    schema_version: Literal[1] = SCHEMA_VERSION
    revision: int = Field(default=1, description="`ANALYSIS_REVISION` of the analysis that wrote it.")
    kernels: KernelTable
    graphs: list[GraphAnalysis] = Field(default_factory=list, description="Compiled graphs, then outside (if any).")
    steps: list[StepAnalysis] = Field(default_factory=list)
    idle: IdleHistogram | None = None
    timeline: list[tuple[float, float]] = Field(
        default_factory=list,
        description="Merged busy intervals (us from the window start) of one representative step (median wall).",
    )
    regions: RegionEvidence | None = Field(default=None, description="Compiled-region evidence from the trace.")
    findings: list[Finding] = Field(
        default_factory=list, description="What the rules of `reportgen.analyze.findings` found, in rule order."
    )
    sources: ModuleIndex | None = Field(default=None, description="Where each compiled graph's kernels are defined.")
    peak: PeakBandwidth | None = Field(default=None, description="The peak that kernels' GB/s is compared against.")
    roof: Roof | None = Field(
        default=None, description="The GPU's peaks the kernels' FLOPs are held to; None: unknown."
    )
    timing: TimingSummary | None = Field(default=None, description="Intervals and noise of the step times.")
    provenance: ProvenanceSummary | None = Field(
        default=None, description="Kernel time per module and per source line; None = provenance not captured."
    )
    figures: Figures | None = Field(
        default=None, description="Device figures and counts per profiled step, eager and compiled (what repeats)."
    )
    versions: list[VersionRuntime] = Field(
        default_factory=list, description="Each compiled version of each frame: its calls and device time."
    )
    distributed: DistributedAnalysis | None = Field(
        default=None, description="Per-rank overlap, for a distributed run."
    )

    @property
    def stale(self) -> bool:
        """Whether an earlier revision of the analysis wrote it (analyse the bundle again)."""
        return self.revision < ANALYSIS_REVISION
