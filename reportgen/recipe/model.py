"""The typed recipe model (format v1).

Every field is declared once, with its type, default and help text; the JSON schema,
the docs table and validation all derive from these classes.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator

from reportgen.recipe.base import (
    AMP,
    BACKEND_RE,
    MAX_BATCH_SIZE,
    MAX_RANDOM_HIGH,
    MAX_TENSOR_DIMS,
    MAX_TIMEOUT_S,
    MODEL_REF_RE,
    NAME_RE,
    CompileMode,
    DType,
    Strict,
)
from reportgen.recipe.checks import STORED_CONTEXT, env_values, printable
from reportgen.recipe.checks import stored as _stored
from reportgen.recipe.distributed import Distributed
from reportgen.recipe.env_policy import EntryError, loader_variable
from reportgen.recipe.variants import Sweep, Variant

__all__ = [
    "AMP",
    "DEFAULT_DEVICE_THRESHOLD",
    "DEFAULT_REGRESSION_THRESHOLD",
    "MAX_BATCH_SIZE",
    "MAX_TIMEOUT_S",
    "RECIPE_FORMAT",
    "STORED_CONTEXT",
    "CompileOptions",
    "CpuOverrides",
    "InputSpec",
    "Inputs",
    "ModelSpec",
    "ProfileSettings",
    "Recipe",
    "Sweep",
    "TensorSpec",
    "Variant",
]

RECIPE_FORMAT: Final = 1
DEFAULT_REGRESSION_THRESHOLD: Final = 0.05
"""A headline metric must move by more than this fraction (and beyond its intervals) to count as a regression."""
DEFAULT_DEVICE_THRESHOLD: Final = 0.02
"""Device time repeats within a fraction of a percent (step times: within tens of percent), so a 5 % matmul fails."""


class ModelSpec(Strict):
    """Which model to build."""

    ref: str = Field(
        description="`timm:<name>`, `torchvision:<name>` or `module.path:callable` "
        "(a factory returning an nn.Module or a callable; modules are looked up next to "
        "the recipe first)."
    )
    kwargs: dict[str, object] = Field(default_factory=dict, description="Keyword arguments passed to the factory.")

    @field_validator("ref")
    @classmethod
    def _check_ref(cls, value: str) -> str:
        if not MODEL_REF_RE.fullmatch(value):
            raise ValueError("expected 'timm:<name>', 'torchvision:<name>' or 'module.path:callable'")
        return value

    @property
    def source(self) -> str:
        """`timm`, `torchvision` or `python`."""
        prefix = self.ref.split(":", 1)[0]
        return prefix if prefix in ("timm", "torchvision") else "python"


class TensorSpec(Strict):
    """One random input tensor."""

    shape: list[Annotated[int, Field(ge=1, le=1 << 20)]] = Field(
        max_length=MAX_TENSOR_DIMS,
        description="Shape per sample (the batch dimension is prepended when `batch_size` is set).",
    )
    dtype: DType = Field(default="float32", description="Element type.")
    requires_grad: bool = Field(default=False, description="Track gradients for this input.")
    high: int = Field(default=2, ge=1, le=MAX_RANDOM_HIGH, description="Exclusive upper bound for integer inputs.")


class Inputs(Strict):
    """Model inputs: random tensors, or a factory."""

    batch_size: Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)] | None = Field(
        default=None, description="Batch size prepended to every tensor shape; none = shapes as given."
    )
    tensors: list[TensorSpec] = Field(default_factory=list, description="Positional input tensors.")
    batch_cycle: list[Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)]] = Field(
        default_factory=list,
        description="Batch sizes used in turn, one per step (input shapes change: shows recompiles); "
        "overrides `batch_size`.",
    )
    factory: str | None = Field(
        default=None,
        description="`module:callable` called as `factory(batch_size=..., device=..., **kwargs)` "
        "returning a tuple of inputs (instead of `tensors`).",
    )
    kwargs: dict[str, object] = Field(default_factory=dict, description="Arguments for `factory`.")

    @model_validator(mode="after")
    def _one_source(self) -> Inputs:
        if self.factory is None and not self.tensors:
            raise ValueError("expected 'tensors' (a list of tensor specs) or 'factory'")
        if self.factory is not None and self.tensors:
            raise ValueError("give either 'tensors' or 'factory', not both")
        if self.factory is not None and not MODEL_REF_RE.fullmatch(self.factory):
            raise ValueError("'factory' must be 'module.path:callable'")
        numel_limit = 1 << 34
        for spec in self.tensors:
            numel = self.batch_size or 1
            for dim in spec.shape:
                numel *= dim
            if numel > numel_limit:
                raise ValueError(f"tensor of shape {spec.shape} has {numel} elements (limit {numel_limit})")
        return self


InputSpec = Inputs


class CompileOptions(Strict):
    """Arguments of `torch.compile`."""

    backend: Annotated[str, Field(pattern=BACKEND_RE)] = Field(default="inductor", description="Compiler backend.")
    mode: CompileMode = Field(default="default", description="Compile mode.")
    fullgraph: bool = Field(default=False, description="Fail on graph breaks.")
    dynamic: bool | None = Field(default=None, description="Dynamic shapes (none = automatic).")

    @property
    def uses_cudagraphs(self) -> bool:
        """Whether Inductor replays the compiled graphs as CUDA graphs in this mode."""
        return self.mode in ("reduce-overhead", "max-autotune")

    @property
    def uses_max_autotune(self) -> bool:
        """Whether the mode turns on max-autotune (and with it coordinate-descent tuning)."""
        return self.mode in ("max-autotune", "max-autotune-no-cudagraphs")


class ProfileSettings(Strict):
    """How steps are timed and profiled."""

    warmup: Annotated[int, Field(ge=0, le=1000)] = Field(
        default=3, description="Untimed steps before timing (each of eager and compiled)."
    )
    steps: Annotated[int, Field(ge=1, le=10000)] = Field(
        default=10,
        description="Timed samples of each of eager and compiled: blocks of `block_steps` steps, eager and "
        "compiled blocks alternating.",
    )
    block_steps: Annotated[int, Field(ge=1, le=1000)] = Field(
        default=5,
        description="Steps per timed block, run back to back as a training loop runs them and synchronised "
        "once at the block's end; a sample is the block's time ÷ `block_steps`.",
    )
    profiled_steps: Annotated[int, Field(ge=1, le=100)] = Field(
        default=3, description="Compiled steps recorded by torch.profiler."
    )
    provenance: bool = Field(
        default=True,
        description="Record each compiled kernel's FX nodes, `nn.Module` path and source line while compiling "
        "(a read-only post-grad pass and Inductor's basic provenance tracking).",
    )


RESERVED_PAGE_NAMES = frozenset({"index", "genindex", "search", "searchindex", "py-modindex", "objects"})
"""Names Sphinx or the reports index use next to the report pages."""
SOURCE_SUFFIXES = frozenset({".md", ".rst", ".txt", ".ipynb", ".html", ".inv", ".js"})
"""A bundle named like a source or output file would collide with one."""


class CpuOverrides(Strict):
    """Settings that replace the recipe's when the run lands on the CPU."""

    batch_size: Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)] | None = Field(
        default=None, description="Batch size on CPU."
    )
    amp: AMP | None = Field(default=None, description="AMP dtype on CPU.")
    profile: ProfileSettings | None = Field(default=None, description="Profile settings on CPU.")


class Recipe(Strict):
    """A reportgen recipe: one model, its inputs, and how to compile, time and profile it."""

    format: Literal[1] = Field(default=RECIPE_FORMAT, description="Recipe format version.")
    name: Annotated[str, Field(pattern=NAME_RE)] = Field(
        description="Identifier: lower-case letters, digits, `_`, `-`, `.`; names the bundle. No `--` (it joins "
        "a recipe and its variant in bundle names) and none of the site's own page names."
    )
    title: Annotated[str, Field(min_length=1, max_length=200)] | None = Field(
        default=None, description="Page title (defaults to the name)."
    )
    description: str = Field(default="", max_length=10000, description="Free text shown on the page.")
    model: ModelSpec
    inputs: Inputs
    task: Literal["train", "infer"] = Field(
        default="infer", description="`train` = forward + backward; `infer` = forward under inference_mode."
    )
    amp: AMP = Field(default="none", description="Autocast dtype.")
    device: Literal["auto", "cuda", "cpu"] = Field(
        default="auto", description="`auto` = cuda when available, else cpu."
    )
    compile: CompileOptions = Field(default_factory=CompileOptions)
    cudnn_benchmark: bool = Field(
        default=False,
        description="`torch.backends.cudnn.benchmark` for the eager and compiled runs. Off by default, as in "
        "PyTorch and in Inductor's `wrapper.py -p`: when on, each new convolution shape is tuned at its first "
        "call, which adds minutes to the first steps of a model with many conv shapes.",
    )
    env: dict[str, str] = Field(
        default_factory=dict,
        description="Environment variables set before torch is imported (TORCH*, TORCHINDUCTOR*, ...). The "
        "run's own (`TORCHINDUCTOR_CACHE_DIR`, `PYTHONPATH`, ...) cannot be set, Inductor's switches must hold "
        "values Inductor accepts, and loader variables need `allow_env` (see the tables below).",
    )
    allow_env: list[str] = Field(
        default_factory=list,
        description="Loader variables (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `PATH`, `PYTHONSTARTUP`, ...) that `env` "
        "and the variants' `env` may set: each puts code or libraries into the run's processes, so it is named "
        "here on purpose.",
    )
    profile: ProfileSettings = Field(default_factory=ProfileSettings)
    timeout_s: Annotated[float, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)] = Field(
        default=1800, description="Wall-clock limit for the whole run, in seconds."
    )
    cpu: CpuOverrides = Field(default_factory=CpuOverrides)
    distributed: Distributed | None = Field(default=None, description="Run on several ranks of this host (DDP, FSDP2).")
    regression_threshold: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)] = Field(
        default=DEFAULT_REGRESSION_THRESHOLD,
        description="How far (a fraction: 0.05 = 5 %) a count per step, or with 3 runs a side a step time beyond "
        "both sides' 95 % intervals, must grow to regress in `reportgen compare` and the `regressions` finding.",
    )
    device_regression_threshold: Annotated[float, Field(gt=0, le=10, allow_inf_nan=False)] = Field(
        default=DEFAULT_DEVICE_THRESHOLD,
        description="How far (a fraction) device time per step must grow, beyond both runs' step ranges, to regress.",
    )

    variants: list[Variant] = Field(
        default_factory=list,
        description="Compile variants compared side by side (e.g. default, reduce-overhead, max-autotune); "
        "none = one run with `compile` as given.",
    )
    sweep: Sweep | None = Field(
        default=None,
        description="A grid of runs over batch sizes, dtypes, modes and switches; its points run as variants.",
    )

    @field_validator("env", mode="before")
    @classmethod
    def _check_env(cls, value: object) -> object:
        return env_values(value)

    @field_validator("allow_env")
    @classmethod
    def _only_loader_variables(cls, value: list[str], info: ValidationInfo) -> list[str]:
        if _stored(info):
            return value
        for index, name in enumerate(value):
            if loader_variable(name) is None:
                raise EntryError(
                    f"{name!r} needs no opt-in; allow_env lists only loader variables, which choose a program, "
                    "a library, Python code or a file (see the recipe docs' tables)",
                    (index,),
                    at_key=False,
                )
        return value

    @model_validator(mode="after")
    def _nccl_needs_gpus(self) -> Recipe:
        if self.distributed is not None and self.distributed.backend == "nccl" and self.device == "cpu":
            message = "backend 'nccl' needs GPUs; this recipe runs on the CPU (use 'gloo')"
            raise EntryError(message, ("distributed", "backend"), at_key=False)
        return self

    @model_validator(mode="after")
    def _loader_variables_opted_in(self, info: ValidationInfo) -> Recipe:
        if _stored(info):
            return self
        envs: list[tuple[tuple[str | int, ...], dict[str, str]]] = [(("env",), self.env)]
        envs += [(("variants", i, "env"), v.env) for i, v in enumerate(self.variants)]
        envs += [(("sweep", "env"), dict.fromkeys(self.sweep.env, ""))] if self.sweep is not None else []
        for where, env in envs:
            for name in env:
                chooses = loader_variable(name)
                if chooses is not None and name not in self.allow_env:
                    raise EntryError(
                        f"env var {name} {chooses}; list it in allow_env to set it on purpose",
                        (*where, name),
                        at_key=True,
                    )
        return self

    @field_validator("title")
    @classmethod
    def _printable_title(cls, value: str | None, info: ValidationInfo) -> str | None:
        return value if value is None or _stored(info) else printable(value, lines=False)

    @field_validator("description")
    @classmethod
    def _printable_description(cls, value: str, info: ValidationInfo) -> str:
        return value if _stored(info) else printable(value, lines=True)

    @field_validator("name")
    @classmethod
    def _bundle_safe_name(cls, value: str) -> str:
        if "--" in value:
            raise ValueError(f"{value!r} contains '--', which joins a recipe and its variant in bundle names")
        stem, _, suffix = value.partition(".")
        if stem in RESERVED_PAGE_NAMES or f".{suffix}" in SOURCE_SUFFIXES:
            raise ValueError(f"{value!r} is a name of the site's own pages or sources; choose another")
        return value

    @model_validator(mode="after")
    def _sweep_alone(self) -> Recipe:
        if self.sweep is not None and self.variants:
            raise EntryError(
                "a recipe has variants or a sweep, not both (sweep `mode` instead)", ("sweep",), at_key=True
            )
        if handmade := [i for i, v in enumerate(self.variants) if v.point]:
            raise EntryError("`point` is set by a sweep, not by hand", ("variants", handmade[0], "point"), at_key=True)
        if self.sweep is not None and self.sweep.batch_size and self.inputs.batch_cycle:
            message = "sweep.batch_size replaces inputs.batch_size; it cannot sweep a recipe that cycles batch sizes"
            raise EntryError(message, ("sweep", "batch_size"), at_key=True)
        return self

    @field_validator("variants")
    @classmethod
    def _unique_variants(cls, value: list[Variant]) -> list[Variant]:
        names = [v.name for v in value]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"variant names must be unique; repeated: {', '.join(duplicates)}")
        return value

    def bundle_name(self, variant: Variant | None) -> str:
        """`<name>` without variants, `<name>--<variant>` with."""
        return self.name if variant is None else f"{self.name}--{variant.name}"

    def for_variant(self, variant: Variant) -> Recipe:
        """The recipe as `variant` runs it: compile options, inputs, AMP and env overridden, no variants left."""
        overrides = {k: getattr(variant, k) for k in ("mode", "fullgraph", "dynamic", "backend")}
        update = {k: v for k, v in overrides.items() if v is not None or (k == "dynamic" and k in variant.point)}
        changed: dict[str, object] = {"compile": self.compile.model_copy(update=update), "variants": [], "sweep": None}
        if variant.batch_size is not None:  # a swept batch size holds on the CPU too
            changed["inputs"] = self.inputs.model_copy(update={"batch_size": variant.batch_size})
            changed["cpu"] = self.cpu.model_copy(update={"batch_size": None})
        if variant.amp is not None:
            changed["amp"] = variant.amp
            changed["cpu"] = changed.get("cpu", self.cpu).model_copy(update={"amp": None})  # type: ignore[attr-defined]
        return self.model_copy(update={**changed, "env": {**self.env, **variant.env}})

    @property
    def runs(self) -> list[Variant]:
        """What running the recipe runs: its variants, or its sweep's points (none: the recipe as written)."""
        return list(self.variants) if self.variants else self.sweep.variants() if self.sweep is not None else []

    @property
    def display_title(self) -> str:
        """The title, or the name when there is none."""
        return self.title or self.name

    def for_device(self, device: str) -> Recipe:
        """The recipe as it runs on `device` (CPU overrides applied)."""
        if device != "cpu":
            return self
        update: dict[str, object] = {}
        if self.cpu.amp is not None:
            update["amp"] = self.cpu.amp
        if self.cpu.profile is not None:
            update["profile"] = self.cpu.profile
        if self.cpu.batch_size is not None:
            update["inputs"] = self.inputs.model_copy(update={"batch_size": self.cpu.batch_size})
        return self.model_copy(update=update) if update else self
