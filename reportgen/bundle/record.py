"""A run's identity and headline numbers, as the history index keeps them (one row per bundle)."""

from __future__ import annotations

import statistics

from pydantic import BaseModel, ConfigDict, Field

from reportgen.bundle.base import BundleModel
from reportgen.bundle.figures import Figures
from reportgen.bundle.manifest import Manifest

__all__ = ["AnalysisHead", "RunRecord"]


class _View(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class _GraphHead(_View):
    label: str
    busy_union_percent: float | None = None
    busy_seed_percent: float | None = None


class _KernelsHead(_View):
    kernels: list[object]


class AnalysisHead(_View):
    """The few numbers of an analysis.json the history keeps per run, read without validating the rest
    (an analysis of a large model holds megabytes of kernel rows)."""

    graphs: list[_GraphHead] = []
    kernels: _KernelsHead | None = None
    figures: Figures | None = None

    def busy_percent(self) -> dict[str, float]:
        """Headline busy % per compiled graph (`-p` where measured, else the union; see `GraphAnalysis`)."""
        out = {}
        for graph in self.graphs:
            busy = graph.busy_seed_percent if graph.busy_seed_percent is not None else graph.busy_union_percent
            if busy is not None:
                out[graph.label] = busy
        return out


class RunRecord(BundleModel):
    """What makes a run's numbers comparable with another's, and those numbers."""

    path: str = Field(description="The bundle directory.")
    name: str = Field(description="Bundle name: `<recipe>` or `<recipe>--<variant>`.")
    recipe: str
    variant: str | None = None
    status: str
    started_at: str
    recipe_sha256: str
    model: str
    torch: str | None = None
    triton: str | None = None
    cuda: str | None = None
    driver: str | None = None
    device: str | None = Field(default=None, description="cuda or cpu; None when the run never probed it.")
    device_name: str | None = Field(default=None, description="The GPU model (or the CPU on CPU runs).")
    cpu: str | None = None
    inductor_cache: str = "fresh"
    eager_ms: float | None = None
    compiled_ms: float | None = None
    eager_iqr_ms: tuple[float, float] | None = Field(default=None, description="Eager's inter-quartile range.")
    compiled_iqr_ms: tuple[float, float] | None = Field(default=None, description="Compiled's inter-quartile range.")
    host_probe_ms: float | None = Field(default=None, description="Median of the host probe: the CPU's speed.")
    speedup: float | None = None
    compile_s: float | None = None
    peak_memory_compiled_bytes: int | None = None
    git_commit: str | None = Field(default=None, description="The recipe's git commit (`+dirty` with changes).")
    busy_percent: dict[str, float] = Field(default_factory=dict, description="Headline busy % per compiled graph.")
    kernel_count: int | None = Field(default=None, description="Distinct kernels in the profiled steps.")
    device_eager_ms: float | None = Field(
        default=None, description="Device time per profiled step, eager (median; `Figures`): what repeats."
    )
    device_compiled_ms: float | None = Field(default=None, description="Device time per profiled step, compiled.")
    launches_compiled: float | None = Field(default=None, description="Kernel launches per profiled step, compiled.")
    aten_ops_compiled: float | None = Field(
        default=None, description="ATen ops dispatched per profiled step, compiled."
    )
    graphs_compiled: float | None = Field(default=None, description="Compiled graphs entered per profiled step.")
    wall_time_s: float | None = Field(
        default=None, description="The whole run, start to end (what a scheduler plans by)."
    )

    @property
    def identity(self) -> tuple[str | None, ...]:
        """What two runs share when their step times may be pooled: bundle, recipe file, device model, torch,
        triton and the recipe's git commit."""
        return (self.name, self.recipe_sha256, self.device_name, self.torch, self.triton, self.git_commit)

    @classmethod
    def from_manifest(cls, manifest: Manifest, path: str, head: AnalysisHead | None = None) -> RunRecord:
        """The record of the bundle at `path` with this manifest (and its analysis's head, when analysed)."""
        env, metrics = manifest.environment, manifest.metrics
        versions = env.versions if env else None
        figures = head.figures if head else None
        eager, compiled = (figures.eager, figures.compiled) if figures else (None, None)
        return cls(
            path=path,
            name=manifest.name,
            recipe=manifest.recipe.name,
            variant=manifest.variant,
            status=manifest.status.value,
            started_at=manifest.started_at,
            recipe_sha256=manifest.recipe_sha256,
            model=manifest.recipe.model.ref,
            torch=versions.torch if versions else None,
            triton=versions.triton if versions else None,
            cuda=versions.cuda if versions else None,
            driver=versions.driver if versions else None,
            device=env.device if env else None,
            device_name=env.device_name if env else None,
            cpu=env.host.cpu if env else None,
            inductor_cache=manifest.inductor_cache,
            eager_ms=metrics.eager.median_ms if metrics.eager else None,
            compiled_ms=metrics.compiled.median_ms if metrics.compiled else None,
            eager_iqr_ms=(metrics.eager.q1_ms, metrics.eager.q3_ms) if metrics.eager else None,
            compiled_iqr_ms=(metrics.compiled.q1_ms, metrics.compiled.q3_ms) if metrics.compiled else None,
            host_probe_ms=statistics.median(metrics.host_probe_ms) if metrics.host_probe_ms else None,
            speedup=metrics.speedup,
            compile_s=metrics.compile_time_s,
            peak_memory_compiled_bytes=metrics.peak_memory_compiled_bytes,
            git_commit=manifest.git_commit,
            busy_percent=head.busy_percent() if head else {},
            kernel_count=len(head.kernels.kernels) if head and head.kernels else None,
            device_eager_ms=eager.device_ms if eager else None,
            device_compiled_ms=compiled.device_ms if compiled else None,
            launches_compiled=compiled.count("launches") if compiled else None,
            aten_ops_compiled=compiled.count("aten_ops") if compiled else None,
            graphs_compiled=compiled.count("graphs") if compiled else None,
            wall_time_s=manifest.wall_time_s,
        )
