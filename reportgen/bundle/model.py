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
    "Environment",
    "GpuInfo",
    "HostInfo",
    "Kernel",
    "KernelTable",
    "Manifest",
    "Metrics",
    "ModuleFile",
    "RunStatus",
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


class Manifest(_Model):
    """manifest.json: what ran, where, how it ended, and its headline numbers."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = Field(description="Bundle name (the recipe name).")
    recipe: Recipe = Field(description="The recipe as validated (device overrides not applied).")
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


class Analysis(_Model):
    """analysis.json: what `reportgen.analyze` derived from the trace and modules."""

    schema_version: Literal[1] = SCHEMA_VERSION
    kernels: KernelTable
