"""What a recipe's `env` may set, declared once: validation (`model.py`) and the docs table follow from it.

Three kinds of variable are special. The run's own (`RUN_OWNED`) are set by the launcher for every
run and cannot be overridden: a recipe that moved the Inductor cache would make "cold compile" untrue.
Inductor's switches (`INDUCTOR_VALUES`) are checked against what Inductor accepts: it reads
``TORCHINDUCTOR_MAX_AUTOTUNE=maybe`` as off, silently. Loader variables (`LOADER_VARIABLES`) put code
or libraries into the run's processes; a recipe sets them only when it lists them in `allow_env`.
The recipe layer never imports torch; `tests/recipe/test_env_policy.py` checks the table against the
installed torch's sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "INDUCTOR_VALUES",
    "LOADER_VARIABLES",
    "RUN_OWNED",
    "Accepted",
    "EntryError",
    "env_policy_markdown",
    "env_value_problem",
]


class EntryError(ValueError):
    """A problem with one entry of a mapping: the loader locates it at `path` below the failing field.

    :param path: keys from the field (or model) that raised it down to the entry
    :param at_key: locate the entry's key rather than its value
    """

    def __init__(self, message: str, path: tuple[str | int, ...], *, at_key: bool) -> None:
        super().__init__(message)
        self.path = path
        self.at_key = at_key


@dataclass(frozen=True)
class Accepted:
    """The values an Inductor variable accepts: a full-match pattern and its words for messages and docs."""

    pattern: str
    words: str

    def accepts(self, value: str) -> bool:
        """Whether Inductor reads `value` as meant."""
        return re.fullmatch(self.pattern, value) is not None


_SWITCH = Accepted(r"[01]", "'0' or '1' (Inductor reads anything but '1' as off)")
_GEMM_BACKEND = r"(?i:ATEN|TRITON|CUTLASS|CUTEDSL|NVGEMM|CK|CKTILE|CPP)"

RUN_OWNED: Final[Mapping[str, str]] = {
    "TORCHINDUCTOR_CACHE_DIR": "the run's own Inductor cache, kept between runs only with --inductor-cache",
    "TRITON_CACHE_DIR": "Triton's cache, inside the run's Inductor cache",
    "PYTHONPATH": "the child's import path, reportgen's own",
    "PYTHONUNBUFFERED": "the order of the run log's lines",
    "MPLBACKEND": "plotting without a display",
    "CUDA_VISIBLE_DEVICES": "the GPU a run is pinned to",
}
"""Set by the launcher for every run (`run/launcher.py:_child_env`); a recipe cannot override them."""

INDUCTOR_VALUES: Final[Mapping[str, Accepted]] = {
    "TORCHINDUCTOR_MAX_AUTOTUNE": _SWITCH,
    "TORCHINDUCTOR_MAX_AUTOTUNE_POINTWISE": _SWITCH,
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM": _SWITCH,
    "TORCHINDUCTOR_COORDINATE_DESCENT_TUNING": _SWITCH,
    "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": _SWITCH,
    "TORCHINDUCTOR_BENCHMARK_KERNEL": _SWITCH,
    "TORCHINDUCTOR_FREEZING": _SWITCH,
    "TORCHINDUCTOR_CPP_WRAPPER": _SWITCH,
    "TORCHINDUCTOR_LAYOUT_OPTIMIZATION": _SWITCH,
    "TORCHINDUCTOR_CPP_ENABLE_KERNEL_PROFILE": _SWITCH,
    "TORCHINDUCTOR_FX_GRAPH_CACHE": _SWITCH,
    "TORCHINDUCTOR_AUTOGRAD_CACHE": _SWITCH,
    "TORCHINDUCTOR_FORCE_DISABLE_CACHES": _SWITCH,
    "TORCHINDUCTOR_COMPILE_THREADS": Accepted(r"[1-9][0-9]{0,3}", "a whole number of threads, 1 or more"),
    "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS": Accepted(
        rf"{_GEMM_BACKEND}(,{_GEMM_BACKEND})*",
        "a comma-separated list of ATEN, TRITON, CUTLASS, CUTEDSL, NVGEMM, CK, CKTILE, CPP",
    ),
}
"""Inductor variables reportgen's reports depend on, with the values Inductor reads as meant."""

LOADER_VARIABLES: Final[Mapping[str, str]] = {
    "LD_PRELOAD": "loads a shared library into every process of the run",
    "LD_LIBRARY_PATH": "chooses the shared libraries (CUDA, cuDNN, NCCL) the run loads",
    "LD_AUDIT": "loads an auditing library into every process of the run",
    "DYLD_INSERT_LIBRARIES": "loads a shared library into every process of the run (macOS)",
    "DYLD_LIBRARY_PATH": "chooses the shared libraries the run loads (macOS)",
    "PATH": "chooses the programs the run starts (compilers, nvcc, ptxas)",
    "PYTHONHOME": "chooses the Python standard library the run imports",
    "PYTHONSTARTUP": "runs a Python file in interactive sessions",
    "PYTHONUSERBASE": "chooses the user site-packages the run imports from",
    "PYTHONPLATLIBDIR": "chooses the Python library directory",
    "PYTHONINSPECT": "leaves an interactive prompt after the run",
    "PYTHONBREAKPOINT": "imports and calls a function at every breakpoint()",
    "PYTHONWARNINGS": "may import modules named in its warning filters",
    "BASH_ENV": "runs a file in every shell the run starts",
    "ENV": "runs a file in every shell the run starts",
}
"""Variables that put code or libraries into the run's processes: allowed only when listed in `allow_env`."""


def env_value_problem(name: str, value: str) -> str | None:
    """What is wrong with `name=value` wherever it is set in a recipe, or None."""
    if "\0" in value:
        return f"env var {name} contains a NUL byte, which no environment can hold; remove it"
    if name in RUN_OWNED:
        return f"env var {name} is set by reportgen for every run: {RUN_OWNED[name]}; remove it from the recipe"
    accepted = INDUCTOR_VALUES.get(name)
    if accepted is not None and not accepted.accepts(value):
        return f"env var {name}: expected {accepted.words}, got {value!r}"
    return None


def env_policy_markdown() -> str:
    """MyST tables of the three kinds of special variable, for the recipe reference."""
    lines = ["Set by reportgen for every run; a recipe's `env` cannot set them:", "", "| variable | what it is |"]
    lines += ["| --- | --- |", *(f"| `{name}` | {why} |" for name, why in RUN_OWNED.items()), ""]
    lines += ["Checked against the values Inductor reads as meant:", "", "| variable | accepted values |"]
    lines += ["| --- | --- |", *(f"| `{name}` | {a.words} |" for name, a in INDUCTOR_VALUES.items()), ""]
    lines += [
        "Put code or libraries into the run's processes; a recipe sets them only when it names them in "
        "`allow_env` (e.g. `allow_env: [LD_PRELOAD]`):",
        "",
        "| variable | what it does |",
        "| --- | --- |",
        *(f"| `{name}` | {why} |" for name, why in LOADER_VARIABLES.items()),
    ]
    return "\n".join(lines) + "\n"
