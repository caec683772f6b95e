"""Runs of one recipe: its variants (named ways to compile it) and its sweep (a grid of points, each a variant).

A sweep point is a `Variant` named by its values (`bs8-def`), so it runs, is stored, kept in the history and compared
as any variant is: its bundle is `<recipe>--<point>`.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from typing import Annotated, Final

from pydantic import Field, field_validator, model_validator

from reportgen.recipe.base import AMP, BACKEND_RE, MAX_BATCH_SIZE, VARIANT_NAME_RE, CompileMode, Strict
from reportgen.recipe.checks import env_values, printable
from reportgen.recipe.env_policy import EntryError

__all__ = ["DEFAULT_MAX_POINTS", "MAX_POINTS", "SWEEP_AXES", "SWEEP_PAGE", "Sweep", "SweepPoint", "Variant"]

DEFAULT_MAX_POINTS: Final = 32
"""A sweep larger than this is refused unless the recipe raises `sweep.max_points`: each point is a whole run."""
MAX_POINTS: Final = 1024
"""The most `sweep.max_points` may ask for."""
SWEEP_AXES: Final = ("batch_size", "amp", "mode", "dynamic")
"""The sweep's named axes, in the order points are named and laid out (then each swept env var, by name)."""
_MODE_CODES = {"default": "def", "reduce-overhead": "ro", "max-autotune": "ma", "max-autotune-no-cudagraphs": "manc"}
_DYNAMIC_CODES = {True: "dyn", False: "static", None: "dynauto"}
_ENV_PREFIX = "TORCHINDUCTOR_"
SWEEP_PAGE: Final = "sweep"
"""The page of a recipe's sweep: no variant may be called so."""


class Variant(Strict):
    """One way to run the recipe; each variant runs in its own process and cache."""

    name: Annotated[str, Field(pattern=VARIANT_NAME_RE)] = Field(
        description="Identifier (lower-case letters, digits, `_`, `-`); the bundle is `<recipe>--<variant>`."
    )
    description: str = Field(default="", max_length=2000, description="Shown in the comparison.")
    mode: CompileMode | None = Field(default=None, description="Overrides `compile.mode`.")
    fullgraph: bool | None = Field(default=None, description="Overrides `compile.fullgraph`.")
    dynamic: bool | None = Field(default=None, description="Overrides `compile.dynamic`.")
    backend: Annotated[str, Field(pattern=BACKEND_RE)] | None = Field(
        default=None, description="Overrides `compile.backend`."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Env vars added to (or replacing) the recipe's.")
    batch_size: Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)] | None = Field(
        default=None, description="Overrides `inputs.batch_size` (and `cpu.batch_size`)."
    )
    amp: AMP | None = Field(default=None, description="Overrides `amp` (and `cpu.amp`).")
    point: dict[str, str] = Field(
        default_factory=dict, description="A sweep point's value on each swept axis (set by the sweep, not by hand)."
    )

    @field_validator("env", mode="before")
    @classmethod
    def _check_env(cls, value: object) -> object:
        return env_values(value)

    @field_validator("description")
    @classmethod
    def _printable_description(cls, value: str) -> str:
        return printable(value, lines=True)

    @field_validator("name")
    @classmethod
    def _not_a_page(cls, value: str) -> str:
        if value == SWEEP_PAGE:
            raise ValueError(f"{value!r} names the sweep's own page; choose another")
        return value


class SweepPoint(Strict):
    """One listed point of a sweep (values left out are the recipe's; leave `dynamic` out for automatic)."""

    batch_size: Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)] | None = None
    amp: AMP | None = None
    mode: CompileMode | None = None
    dynamic: bool | None = None
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("env", mode="before")
    @classmethod
    def _check_env(cls, value: object) -> object:
        return env_values(value)


class Sweep(Strict):
    """A grid of runs of one recipe: every combination of the axes' values, or the listed `points`."""

    batch_size: list[Annotated[int, Field(ge=1, le=MAX_BATCH_SIZE)]] = Field(
        default_factory=list, description="Batch sizes (`inputs.batch_size`)."
    )
    amp: list[AMP] = Field(default_factory=list, description="Autocast dtypes.")
    mode: list[CompileMode] = Field(default_factory=list, description="Compile modes.")
    dynamic: list[bool | None] = Field(default_factory=list, description="`dynamic` values (null: automatic).")
    env: dict[str, list[str]] = Field(
        default_factory=dict, description="Env vars (e.g. Inductor switches), each with its values."
    )
    points: list[SweepPoint] = Field(default_factory=list, description="Listed points instead of a grid.")
    max_points: Annotated[int, Field(ge=1, le=MAX_POINTS)] = Field(
        default=DEFAULT_MAX_POINTS, description=f"Refuse more points than this (raise it, up to {MAX_POINTS}, to ask)."
    )

    @field_validator("env", mode="before")
    @classmethod
    def _check_env(cls, value: object) -> object:
        if isinstance(value, dict):
            for name, values in value.items():
                if not isinstance(values, list) or not values:
                    raise EntryError("expected a non-empty list of values", (name,), at_key=False)
                for index, one in enumerate(values):
                    try:
                        env_values({name: one})
                    except EntryError as exc:
                        raise EntryError(str(exc), (name, index), at_key=False) from None
        return value

    @model_validator(mode="after")
    def _a_grid_or_points(self) -> Sweep:
        axes = [self.batch_size, self.amp, self.mode, self.dynamic, *self.env.values()]
        if self.points and any(axes):
            raise ValueError("give the axes (a grid) or `points`, not both")
        if not self.points and not any(axes):
            raise ValueError("a sweep needs at least one axis (batch_size, amp, mode, dynamic, env) or `points`")
        for name, values in (("batch_size", self.batch_size), ("amp", self.amp), ("mode", self.mode)):
            if len(set(values)) != len(values):
                raise EntryError(f"repeated values in sweep.{name}", (name,), at_key=False)
        if (size := self.size) > self.max_points:
            raise ValueError(
                f"the sweep has {size} points, more than max_points ({self.max_points}); each is a whole run: "
                "raise max_points to run them all"
            )
        return self

    @property
    def size(self) -> int:
        """How many points it runs."""
        if self.points:
            return len(self.points)
        sizes = [len(self.batch_size), len(self.amp), len(self.mode), len(self.dynamic)]
        return math.prod(size for size in [*sizes, *map(len, self.env.values())] if size)

    def variants(self) -> list[Variant]:
        """Each point as a variant named by its values, in grid order (the first axis varies slowest)."""
        swept = bool(self.dynamic)  # listed points: a point's `dynamic` counts when it is not null
        return [_variant(point, swept or point.dynamic is not None) for point in self._points()]

    def _points(self) -> list[SweepPoint]:
        if self.points:
            return list(self.points)
        names = [n for n in SWEEP_AXES if getattr(self, n)]  # `dynamic: [null]` is swept: its list is not empty
        env_names = sorted(self.env)
        axes = [getattr(self, n) for n in names] + [self.env[n] for n in env_names]
        found = []
        for values in itertools.product(*axes):
            fields = dict(zip(names, values[: len(names)], strict=True))
            env = dict(zip(env_names, values[len(names) :], strict=True))
            found.append(SweepPoint.model_validate({**fields, "env": env}))
        return found

    @property
    def swept(self) -> list[str]:
        """The axes that vary, in layout order (`env.<NAME>` for an env var)."""
        if self.points:
            fields = [name for name in SWEEP_AXES if len({getattr(p, name) for p in self.points}) > 1]
            names = sorted({n for p in self.points for n in p.env})
            return fields + [f"env.{n}" for n in names if len({p.env.get(n) for p in self.points}) > 1]
        named = [name for name in SWEEP_AXES if getattr(self, name)]
        return named + [f"env.{name}" for name in sorted(self.env)]


def _labels(point: SweepPoint, dynamic: bool) -> dict[str, str]:
    """The point's value on each axis it sets; `dynamic`: whether `dynamic` is swept (its null then means automatic)."""
    labels = {}
    if point.batch_size is not None:
        labels["batch_size"] = str(point.batch_size)
    if point.amp is not None:
        labels["amp"] = point.amp
    if point.mode is not None:
        labels["mode"] = point.mode
    if dynamic:
        labels["dynamic"] = "auto" if point.dynamic is None else str(point.dynamic).lower()
    labels.update({f"env.{name}": value for name, value in sorted(point.env.items())})
    return labels


def _code(axis: str, value: str) -> str:
    if axis == "batch_size":
        return f"bs{value}"
    if axis == "mode":
        return _MODE_CODES[value]
    if axis == "dynamic":
        return _DYNAMIC_CODES[{"true": True, "false": False, "auto": None}[value]]
    if axis.startswith("env."):
        short = axis[4:].removeprefix(_ENV_PREFIX).lower()
        return "".join(c if c.isalnum() or c == "_" else "_" for c in f"{short}{value.lower()}")
    return value


def _variant(point: SweepPoint, dynamic: bool) -> Variant:
    """The point as a variant: named by its values' codes (`bs8-bf16-ro`), or by their hash when that is too long."""
    labels = _labels(point, dynamic)
    name = "-".join(_code(axis, value) for axis, value in labels.items()) or "point"
    if len(name) > 32 or not name[0].isalnum():
        name = "p-" + hashlib.sha256(repr(sorted(labels.items())).encode()).hexdigest()[:10]
    description = ", ".join(f"{axis} {value}" for axis, value in labels.items())
    return Variant(
        name=name,
        description=description,
        mode=point.mode,
        dynamic=point.dynamic,
        env=point.env,
        batch_size=point.batch_size,
        amp=point.amp,
        point=labels,
    )
