"""capture.json: what the run's process measured beyond step times (graph and kernel benchmarks, diagnostics)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from reportgen.bundle.base import SCHEMA_VERSION, BundleModel, GraphKind

__all__ = [
    "AUTOTUNE_TEMPLATE_PREFIXES",
    "TUNING",
    "AutotuneChoice",
    "AutotuneOp",
    "Capture",
    "CompileDiagnostics",
    "GraphBenchmark",
    "GraphBreak",
    "KernelBenchmark",
    "KernelLaunch",
    "Recompile",
    "Tuning",
    "reason_headline",
]


class GraphBenchmark(BundleModel):
    """A compiled graph's wrapper run on its own, as `python wrapper.py -p` does, in the run's process.

    The wrapper's own harness (`get_args()` + `benchmark_compiled_module`) is timed unprofiled
    (median per call over `times` x `repeat`, in rounds; the median round counts), then
    `profiled_calls` calls are recorded with torch.profiler into `trace_file`. No second
    compilation: the modules are already loaded.
    """

    graph: int = Field(description="Index of the wrapper in compile order.")
    wrapper: str = Field(description="Bundle path of the wrapper module.")
    kind: GraphKind
    wall_ms_per_call: float = Field(
        description="Unprofiled wall time per call: the median round (older bundles: the fastest)."
    )
    rounds_ms: list[float] = Field(
        default_factory=list,
        description="Each round's median wall time per call (`torch.median` of its `repeat` timings, as `-p` takes "
        "it: the lower middle one).",
    )
    reps_ms: list[list[float]] = Field(
        default_factory=list,
        description="Each round's `repeat` timings of `times` calls, ms per call; the rounds took turns timing by "
        "timing (older bundles: none).",
    )
    first_wall_ms: float | None = Field(
        default=None,
        description="The fresh process's first `times` x `repeat` calls, before any warm-up: the only "
        "measurement `python wrapper.py -p` makes (loading, allocation and clock ramp-up included).",
    )
    times: int
    repeat: int
    profiled_calls: int
    trace_file: str | None = None


class KernelBenchmark(BundleModel):
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


class AutotuneChoice(BundleModel):
    """One candidate max-autotune timed for one operation, as Inductor logged it."""

    name: str = Field(description="Choice name: `triton_mm_12`, `cpp_CppMicroGemmFP32Vec_0`, or an extern (`mm`).")
    ms: float | None = Field(description="Its benchmark time; None when it failed (logged as inf or 0).")
    description: str = Field(default="", description="Template parameters (block sizes, stages, warps).")

    @property
    def is_template(self) -> bool:
        """A generated kernel rather than an extern library call."""
        return self.name.startswith(AUTOTUNE_TEMPLATE_PREFIXES)


class AutotuneOp(BundleModel):
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


Tuning = Literal["tuned", "cached", "single", "unknown"]
"""How a Triton kernel's launch config was chosen: benchmarked in the run's process on its first call (`tuned`: each
process may choose another), read from Inductor's autotune cache (`cached`: the same config in every run on that
cache), its only config (`single`), or not said (`unknown`: a torch that keeps no autotune cache state)."""
TUNING: dict[str, Tuning] = {"miss": "tuned", "hit": "cached", "only 1 config": "single"}
"""Inductor's autotune cache states (`CachingAutotuner.autotune_cache_info`) and what each says (`Tuning`)."""


class KernelLaunch(BundleModel):
    """A Triton kernel as the run launched it: its config, and how Inductor chose it."""

    kernel: str = Field(description="The kernel's name in its compiled module (`triton_red_fused_...`).")
    source: str = Field(description="Its source file's name (the hash of its code): the same kernel in any run.")
    config: str = Field(description="The config it launched with, as Triton writes it (block sizes, warps, stages).")
    tuning: Tuning = Field(description="How the config was chosen.")
    configs: int = Field(ge=0, description="The candidate configs Inductor had for it.")
    tuning_ms: float = Field(default=0.0, ge=0, description="Milliseconds this process spent benchmarking them.")


class GraphBreak(BundleModel):
    """A Dynamo graph break: why, and where in user code."""

    reason: str
    location: str | None = None
    count: int = 1


class Recompile(BundleModel):
    """A recompilation and the guard that failed."""

    frame: str
    reason: str


class CompiledVersion(BundleModel):
    """One version of a frame Dynamo compiled (a compile, or a recompile of the same frame)."""

    compile_id: str = Field(description="Dynamo's `<frame>/<compile>`, as in `Torch-Compiled Region: 0/1`.")
    function: str = Field(description="The frame's function and where it starts (`forward (recipes/models.py:12)`).")
    reason: str | None = Field(
        default=None, description="For a recompile, the guard of an earlier version that failed (torch ≥ 2.7)."
    )


class CompileDiagnostics(BundleModel):
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
    versions: list[CompiledVersion] = Field(
        default_factory=list, description="Every frame version compiled, in compile order (`CompilationMetrics`)."
    )


class Capture(BundleModel):
    """capture.json: what the run's process measured beyond step times (GPU/Inductor specific)."""

    schema_version: Literal[1] = SCHEMA_VERSION
    graph_benchmarks: list[GraphBenchmark] = Field(default_factory=list)
    kernel_benchmarks: list[KernelBenchmark] = Field(default_factory=list)
    autotune: list[AutotuneOp] = Field(
        default_factory=list, description="Operations max-autotune benchmarked, from Inductor's `AUTOTUNE` log."
    )
    diagnostics: CompileDiagnostics = Field(default_factory=CompileDiagnostics)
    launches: list[KernelLaunch] = Field(
        default_factory=list,
        description="Each Triton kernel's launch config after the warm-ups (before timing), by kernel name.",
    )
    copy_bandwidth_gbps: float | None = Field(
        default=None, description="Measured device-to-device copy bandwidth (bytes read + written)."
    )
    tf32_matmul: bool | None = Field(
        default=None,
        description="float32 matrix products could run in TF32 (`torch.get_float32_matmul_precision()` not "
        "`highest`), read after the model ran; None: not recorded.",
    )
    tf32_cudnn: bool | None = Field(
        default=None, description="float32 convolutions could run in TF32 (`torch.backends.cudnn.allow_tf32`)."
    )
    notes: list[str] = Field(default_factory=list, description="Capture steps that were skipped, and why.")


def reason_headline(reason: str) -> str:
    """The informative first line of a Dynamo reason: the first non-empty line that is not the generic
    "Encountered graph break when attempting to trace ..." header (that header when nothing else is left)."""
    lines = [line.strip() for line in reason.splitlines() if line.strip()]
    if not lines:
        return ""
    return next((line for line in lines if not line.startswith("Encountered graph break")), lines[0])
