"""manifest.json: what ran, where, how it ended, and its headline numbers."""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import Field, field_validator

from reportgen.bundle.base import SCHEMA_VERSION, BundleModel, RunStatus
from reportgen.bundle.distributed import DistributedRun
from reportgen.bundle.isolation import Isolation
from reportgen.bundle.layout import LOG_FILE
from reportgen.bundle.names import name_problem
from reportgen.bundle.steps import StepTimes
from reportgen.recipe import Recipe

__all__ = [
    "Environment",
    "GpuInfo",
    "HostInfo",
    "InductorCache",
    "Manifest",
    "Metrics",
    "ModuleFile",
    "Redaction",
    "StepTimes",
    "Versions",
]


_POINT_AXIS = re.compile(r"batch_size|amp|mode|dynamic|env\.[A-Z_][A-Z0-9_]{0,127}")
"""A sweep point's axes (`recipe.variants.SWEEP_AXES`, then `env.<NAME>`)."""
_MAX_POINT_VALUE = 200


class Versions(BundleModel):
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


class GpuInfo(BundleModel):
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


class HostInfo(BundleModel):
    """The machine the run's child ran on."""

    cpu: str
    cpu_count: int
    memory_bytes: int | None = None


class Environment(BundleModel):
    """Where the run happened."""

    device: Literal["cuda", "cpu"]
    device_name: str
    versions: Versions
    host: HostInfo
    gpus: list[GpuInfo] = Field(default_factory=list)
    env: dict[str, str] = Field(
        default_factory=dict, description="Allowlisted env vars in effect (secrets never recorded)."
    )


class Metrics(BundleModel):
    """Headline numbers of a run."""

    eager: StepTimes | None = None
    compiled: StepTimes | None = None
    host_probe_ms: list[float] = Field(
        default_factory=list,
        description="Milliseconds of a fixed pure-Python workload timed before each pair of timed blocks, outside "
        "them: the host CPU's speed at that moment (launch-bound steps are CPU time).",
    )
    compile_time_s: float | None = Field(default=None, description="First compiled call, wall time.")
    eager_first_call_s: float | None = None
    peak_memory_eager_bytes: int | None = None
    peak_memory_compiled_bytes: int | None = None
    stages_s: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds each stage of the run's child took, in the order they ran (environment, model, "
        "eager warm-up, compile, timing, profile, graph and kernel benchmarks, ...).",
    )

    @property
    def speedup(self) -> float | None:
        """median(eager) / median(compiled)."""
        if self.eager is None or self.compiled is None or self.compiled.median_ms <= 0:
            return None
        speedup = self.eager.median_ms / self.compiled.median_ms
        return speedup if math.isfinite(speedup) else None  # a tiny compiled median overflows


class ModuleFile(BundleModel):
    """A compiled module copied out of the run's Inductor cache."""

    path: str = Field(description="Path inside the bundle, e.g. `modules/wrappers/cabc.py`.")
    kind: Literal["wrapper", "kernel"]
    order: int = Field(description="Creation order in the run (wrappers: 0 = first compiled graph).")
    size_bytes: int


class Redaction(BundleModel):
    """Credentials taken out of what a run wrote: how many of one kind, in one place (never the values)."""

    kind: str = Field(description="What was redacted, e.g. `password in a URL`, `Hugging Face token`.")
    where: str = Field(description="Where: a file of the bundle (`run.log`, `modules/`), `error` or `recipe`.")
    count: int = Field(ge=1)


InductorCache = Literal["fresh", "kept-empty", "kept-warm"]
"""Where a run's Inductor cache came from (see `Manifest.inductor_cache`)."""


class Manifest(BundleModel):
    """manifest.json: what ran, where, how it ended, and its headline numbers."""

    schema_version: Literal[1] = SCHEMA_VERSION
    name: str = Field(description="Bundle name: the recipe name, or `<recipe>--<variant>`.")

    @field_validator("name")
    @classmethod
    def _bundle_name(cls, value: str) -> str:
        """The name a page links and the history looks up: a bundle name (`bundle.names`), as every run writes."""
        if (problem := name_problem(value)) is not None:
            raise ValueError(problem)
        return value

    variant: str | None = Field(default=None, description="The recipe variant this run compiled, if any.")
    variant_description: str = Field(default="", description="That variant's description in the recipe.")
    point: dict[str, str] = Field(
        default_factory=dict, description="A sweep point's value on each swept axis (`batch_size`, `mode`, `env.X`)."
    )

    @field_validator("point")
    @classmethod
    def _sweep_axes(cls, value: dict[str, str]) -> dict[str, str]:
        """A bundle from elsewhere names only the sweep's axes, with short one-line values (they label pages)."""
        for axis, label in value.items():
            if _POINT_AXIS.fullmatch(axis) is None or len(label) > _MAX_POINT_VALUE or "\n" in label:
                raise ValueError(f"point: {axis[:80]!r} is not a sweep axis with a one-line value")
        return value

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
    git_commit: str | None = Field(
        default=None,
        description="`HEAD` of the git repository holding the recipe file as the run ended, `+dirty` when "
        "tracked files had changed; None outside a repository.",
    )
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
    eager_trace_file: str | None = Field(
        default=None, description="The profiled eager steps' trace (`trace-eager.json.gz`); None before issue 27."
    )
    log_file: str = LOG_FILE
    capture_file: str | None = Field(default=None, description="`capture.json`, when the run wrote one.")
    redactions: list[Redaction] = Field(
        default_factory=list, description="Credentials redacted from the bundle before it was written."
    )
    isolation: Isolation | None = Field(
        default=None, description="How the run was kept apart from the host's other runs; None: not recorded."
    )
    distributed: DistributedRun | None = Field(default=None, description="Each rank's record, for a distributed run.")
