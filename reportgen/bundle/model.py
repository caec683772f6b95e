"""The bundle data model: what one recipe run leaves on disk, read by every later stage.

A bundle is a directory::

    <results>/<bundle-name>/
        manifest.json      Manifest (this module), schema-versioned
        analysis.json      Analysis (kernel table, ...), written by `reportgen.analyze`
        recipe.yaml        the recipe file as the user wrote it
        trace.json.gz      torch.profiler chrome trace of the profiled compiled steps
        run.log            the run's stdout + stderr
        modules/           compiled wrapper modules and kernel sources (see ModuleFile)
"""

from __future__ import annotations

from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from reportgen.recipe.model import Recipe

__all__ = [
    "SCHEMA_VERSION",
    "Analysis",
    "AutotuneChoice",
    "AutotuneOp",
    "Capture",
    "CompileDiagnostics",
    "Environment",
    "Finding",
    "GpuInfo",
    "GraphAnalysis",
    "GraphBenchmark",
    "GraphBreak",
    "GraphKernel",
    "GraphKind",
    "HostInfo",
    "IdleHistogram",
    "InductorCache",
    "Kernel",
    "KernelBenchmark",
    "KernelTable",
    "Manifest",
    "Metrics",
    "ModuleFile",
    "Recompile",
    "RegionEvidence",
    "RunStatus",
    "StepAnalysis",
    "StepTimes",
    "Versions",
]

SCHEMA_VERSION = 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunStatus(str, Enum):
    """How a run ended."""

    ok = "ok"
    failed = "failed"
    timeout = "timeout"
    oom = "oom"
    killed = "killed"


class Versions(_Model):
    """Software versions seen by the run's child process."""

    python: str
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None
    cudnn: str | None = None
    driver: str | None = None
    timm: str | None = None
    torchvision: str | None = None
    reportgen: str
    platform: str


class GpuInfo(_Model):
    """Properties of one visible GPU."""

    index: int
    name: str
    total_memory_bytes: int
    multiprocessor_count: int
    capability: str
    l2_cache_bytes: int | None = None
    peak_bandwidth_gbps: float | None = Field(
        default=None, description="Theoretical DRAM bandwidth, when the device reports it."
    )


class HostInfo(_Model):
    """The machine the run's child ran on."""

    cpu: str
    cpu_count: int
    memory_bytes: int | None = None


class Environment(_Model):
    """Where the run happened."""

    device: Literal["cuda", "cpu"]
    device_name: str
    versions: Versions
    host: HostInfo
    gpus: list[GpuInfo] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="Allowlisted env vars in effect (secrets never recorded)."
    )


class StepTimes(_Model):
    """Wall times of timed steps, synchronised, in milliseconds."""

    samples_ms: list[float]
    median_ms: float
    q1_ms: float
    q3_ms: float
    min_ms: float
    max_ms: float

    @property
    def iqr_ms(self) -> float:
        """Inter-quartile range."""
        return self.q3_ms - self.q1_ms


class Metrics(_Model):
    """Headline numbers of a run."""

    eager: StepTimes | None = None
    compiled: StepTimes | None = None
    compile_time_s: float | None = Field(default=None, description="First compiled call, wall time.")
    eager_first_call_s: float | None = None
    peak_memory_eager_bytes: int | None = None
    peak_memory_compiled_bytes: int | None = None

    @property
    def speedup(self) -> float | None:
        """median(eager) / median(compiled)."""
        if self.eager is None or self.compiled is None or self.compiled.median_ms <= 0:
            return None
        return self.eager.median_ms / self.compiled.median_ms


class ModuleFile(_Model):
    """A compiled module copied out of the run's Inductor cache."""

    path: str = Field(description="Path inside the bundle, e.g. `modules/wrappers/cabc.py`.")
    kind: Literal["wrapper", "kernel"]
    order: int = Field(description="Creation order in the run (wrappers: 0 = first compiled graph).")
    size_bytes: int


GraphKind = Literal["forward", "backward", "inference", "unknown"]


class GraphBenchmark(_Model):
    """A compiled graph's wrapper run on its own, as `python wrapper.py -p` does, in the run's process.

    The wrapper's own harness (`get_args()` + `benchmark_compiled_module`) is timed unprofiled
    (median per call over `times` x `repeat`, in rounds; the fastest round counts), then
    `profiled_calls` calls are recorded with torch.profiler into `trace_file`. No second
    compilation: the modules are already loaded.
    """

    graph: int = Field(description="Index of the wrapper in compile order.")
    wrapper: str = Field(description="Bundle path of the wrapper module.")
    kind: GraphKind
    wall_ms_per_call: float = Field(description="Unprofiled wall time per call: the fastest round.")
    rounds_ms: list[float] = Field(
        default_factory=list, description="Each round's median wall time per call, in the order measured."
    )
    times: int
    repeat: int
    profiled_calls: int
    trace_file: str | None = None


class KernelBenchmark(_Model):
    """One Triton kernel timed with its own harness (TORCHINDUCTOR_BENCHMARK_KERNEL=1)."""

    graph: int
    name: str
    module: str = Field(description="Bundle path of the kernel module.")
    ms: float
    num_gb: float | None = Field(default=None, description="Inductor's estimate of GB moved per call.")

    @property
    def bandwidth_gbps(self) -> float | None:
        """GB/s achieved, from Inductor's byte estimate."""
        return self.num_gb / (self.ms / 1e3) if self.num_gb and self.ms > 0 else None


AUTOTUNE_TEMPLATE_PREFIXES = ("triton_", "cpp_", "cuda_", "cutlass", "rocm_", "ck_", "decompose_k")
"""Choice names of generated kernels (templates); any other choice is an extern (ATen/cuBLAS/cuDNN/oneDNN) call."""


class AutotuneChoice(_Model):
    """One candidate max-autotune timed for one operation, as Inductor logged it."""

    name: str = Field(description="Choice name: `triton_mm_12`, `cpp_CppMicroGemmFP32Vec_0`, or an extern (`mm`).")
    ms: float | None = Field(description="Its benchmark time; None when it failed (logged as inf or 0).")
    description: str = Field(default="", description="Template parameters (block sizes, stages, warps).")

    @property
    def is_template(self) -> bool:
        """A generated kernel rather than an extern library call."""
        return self.name.startswith(AUTOTUNE_TEMPLATE_PREFIXES)


class AutotuneOp(_Model):
    """One operation autotuned by max-autotune: its inputs and the fastest choices, fastest first."""

    op: str = Field(description="Operation: `mm`, `addmm`, `convolution`, `packed_linear`, ...")
    sizes: str = Field(description="Input sizes as logged, e.g. `64x1536, 1536x1000`.")
    strides: str | None = None
    dtypes: str | None = None
    choices: list[AutotuneChoice] = Field(description="The logged (top) choices, fastest first; the first won.")
    num_choices: int | None = Field(default=None, description="Choices benchmarked (more than logged, at times).")
    benchmark_s: float | None = Field(default=None, description="Seconds spent benchmarking the choices.")
    precompile_s: float | None = Field(default=None, description="Seconds spent compiling the choices.")

    @property
    def winner(self) -> AutotuneChoice | None:
        """The chosen (fastest) candidate."""
        return self.choices[0] if self.choices else None

    @property
    def tuning_s(self) -> float:
        """Seconds spent benchmarking and precompiling the choices (0 when not logged)."""
        return (self.benchmark_s or 0.0) + (self.precompile_s or 0.0)

    @property
    def extern_ms(self) -> float | None:
        """Time of the fastest extern (library) choice among those logged."""
        return next((c.ms for c in self.choices if not c.is_template and c.ms), None)


class GraphBreak(_Model):
    """A Dynamo graph break: why, and where in user code."""

    reason: str
    location: str | None = None
    count: int = 1


class Recompile(_Model):
    """A recompilation and the guard that failed."""

    frame: str
    reason: str


class CompileDiagnostics(_Model):
    """What Dynamo/AOTAutograd/Inductor reported about compilation."""

    graph_breaks: list[GraphBreak] = Field(default_factory=list)
    recompiles: list[Recompile] = Field(default_factory=list)
    unique_graphs: int | None = None
    graph_ops: list[int] = Field(default_factory=list, description="FX nodes (call ops) per captured graph.")
    compile_phases_s: dict[str, float] = Field(
        default_factory=dict, description="Seconds per compile phase (dynamo, aot, inductor, codegen, ...)."
    )
    cache: dict[str, int] = Field(default_factory=dict, description="Compile cache hit/miss counters.")
    cudagraphs: Literal["used", "skipped", "off"] = "off"
    cudagraph_skip_reasons: list[str] = Field(default_factory=list)


class Capture(_Model):
    """capture.json: what the run's process measured beyond step times (GPU/Inductor specific)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    graph_benchmarks: list[GraphBenchmark] = Field(default_factory=list)
    kernel_benchmarks: list[KernelBenchmark] = Field(default_factory=list)
    autotune: list[AutotuneOp] = Field(
        default_factory=list, description="Operations max-autotune benchmarked, from Inductor's `AUTOTUNE` log."
    )
    diagnostics: CompileDiagnostics = Field(default_factory=CompileDiagnostics)
    copy_bandwidth_gbps: float | None = Field(
        default=None, description="Measured device-to-device copy bandwidth (bytes read + written)."
    )
    notes: list[str] = Field(default_factory=list, description="Capture steps that were skipped, and why.")


InductorCache = Literal["fresh", "kept-empty", "kept-warm"]
"""Where a run's Inductor cache came from (see `Manifest.inductor_cache`)."""


class Manifest(_Model):
    """manifest.json: what ran, where, how it ended, and its headline numbers."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = Field(description="Bundle name: the recipe name, or `<recipe>--<variant>`.")
    variant: str | None = Field(default=None, description="The recipe variant this run compiled, if any.")
    variant_description: str = Field(default="", description="That variant's description in the recipe.")
    inductor_cache: InductorCache = Field(
        default="fresh",
        description="`fresh`: a private Inductor cache, empty at the start (a cold compile); `kept-empty`: a cache "
        "kept between runs (`--inductor-cache`), empty at the start (cold too); `kept-warm`: a kept cache that "
        "held earlier runs' files, so the compile may be warm.",
    )
    recipe: Recipe = Field(
        description="The recipe as this run used it (variant applied, device overrides not applied)."
    )
    recipe_sha256: str
    recipe_path: str
    status: RunStatus
    exit_code: int | None = None
    error: str | None = Field(default=None, description="One-paragraph error, for failed runs.")
    started_at: str
    finished_at: str
    wall_time_s: float
    environment: Environment | None = None
    metrics: Metrics = Field(default_factory=Metrics)
    modules: list[ModuleFile] = Field(default_factory=list)
    trace_file: str | None = None
    log_file: str = "run.log"
    capture_file: str | None = Field(default=None, description="`capture.json`, when the run wrote one.")


class Kernel(_Model):
    """One kernel (or CPU op on CPU runs), aggregated by name over the profiled steps."""

    name: str
    category: str
    device_time_us: float = Field(description="Total device (or self CPU) time over the profiled steps.")
    count: int
    share: float = Field(description="Fraction of the table's total time, 0..1.")

    @property
    def mean_us(self) -> float:
        """Mean time per launch."""
        return self.device_time_us / self.count if self.count else 0.0


class KernelTable(_Model):
    """Kernels sorted by time, descending."""

    device: Literal["cuda", "cpu"]
    profiled_steps: int
    total_us: float
    kernels: list[Kernel]


class GraphKernel(_Model):
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

    @property
    def mean_us(self) -> float:
        """Mean time per launch."""
        return self.device_time_us / self.count if self.count else 0.0


class GraphAnalysis(_Model):
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
        default_factory=list, description="Every round of that timing (the fastest is `unprofiled_wall_ms`)."
    )
    categories_us: dict[str, float] = Field(default_factory=dict, description="Kernel time per category.")
    kernels: list[GraphKernel] = Field(default_factory=list, description="Sorted by time, descending.")


class StepAnalysis(_Model):
    """Device busy time of one profiled step.

    The step's window is its CPU-side `ProfilerStep#N` span, extended to the end of the last kernel launched
    inside it; a kernel belongs to the step its launch lies in.
    """

    step: int = Field(description="N of `ProfilerStep#N`; -1 = the trace has no step markers (whole trace).")
    wall_us: float = Field(description="Window length.")
    kernel_time_us: float = Field(description="Sum of kernel durations (concurrent streams add up).")
    busy_union_us: float = Field(description="Union of the kernel intervals (no double counting).")
    busy_percent: float = Field(description="busy_union_us ÷ wall_us x 100.")
    idle_us: float = Field(description="wall_us - busy_union_us: the window's uncovered stretches.")
    gap_count: int = Field(description="Number of uncovered stretches (idle gaps) in the window.")


class IdleHistogram(_Model):
    """Idle gaps of all profiled steps by length: counts[i] gaps with edges_us[i] <= length < edges_us[i+1]."""

    edges_us: list[float] = Field(description="Bin edges; the last one is a large number standing for +inf.")
    counts: list[int]
    total_idle_us: float


class Finding(_Model):
    """Something worth acting on, found by a rule of `reportgen.analyze.findings` from the run's numbers.

    `evidence` and `suggestion` are plain text: one paragraph per line, a line starting with `- ` is a list
    item, and text between backticks is code (the renderer escapes everything else).
    """

    rule: str = Field(description="The rule that fired, e.g. `launch-bound`.")
    severity: Literal["info", "warning", "problem"]
    title: str
    evidence: str = Field(description="The numbers that made the rule fire.")
    suggestion: str = Field(description="What to try next.")


class RegionEvidence(_Model):
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


class Analysis(_Model):
    """analysis.json: what `reportgen.analyze` derived from the trace and modules."""

    schema_version: Literal[1] = SCHEMA_VERSION
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
