"""What a recipe's `env` may set, declared once: validation (`model.py`) and the docs table follow from it.

Three kinds of variable are special. The run's own (`RUN_OWNED`) are set by the launcher for every
run and cannot be overridden: a recipe that moved the Inductor cache would make "cold compile" untrue.
Inductor's switches (`INDUCTOR_VALUES`) are checked against what Inductor accepts: it reads
``TORCHINDUCTOR_MAX_AUTOTUNE=maybe`` as off, silently. Loader variables (`LOADER_VARIABLES`, and every
name of a `LOADER_FAMILIES` family) choose which programs, libraries or Python code the run's processes
run, or files they read and write (`CXX` is the compiler Inductor runs for every CPU kernel); a recipe
sets them only when it lists them in `allow_env`.
The recipe layer never imports torch; `tests/recipe/test_env_policy.py` checks the table against the
installed torch's sources.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

__all__ = [
    "HOST_KEPT",
    "INDUCTOR_VALUES",
    "LOADER_FAMILIES",
    "LOADER_VARIABLES",
    "RUN_OWNED",
    "Accepted",
    "EntryError",
    "Family",
    "env_policy_markdown",
    "env_value_problem",
    "loader_variable",
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

HOST_KEPT: Final[Mapping[str, str]] = {
    "NCCL_NVLS_ENABLE": "NCCL's NVLink SHARP (multicast); `0` on hosts where multicast can take shared GPUs out of service",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "multicast in torch's symmetric memory; `1` on the same hosts",
    "NVSHMEM_DISABLE_NVLS": "NVLink SHARP in NVSHMEM; `1` on the same hosts",
}
"""Host safety settings: where reportgen's own environment sets one, every process of every run gets that value,
whatever the recipe's `env` says (`run/launcher.py:child_env`); where it does not, a recipe may set it."""

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
    "CC": "chooses the C compiler (Inductor's C++ wrapper, Triton's launcher stubs)",
    "CXX": "chooses the C++ compiler Inductor runs for every CPU kernel and C++ wrapper",
    "CPP": "chooses the C preprocessor",
    "LD": "chooses the linker",
    "AR": "chooses the archiver of build steps",
    "AS": "chooses the assembler",
    "NVCC": "chooses the CUDA compiler",
    "PYTORCH_NVCC": "chooses the CUDA compiler torch runs",
    "CUDACXX": "chooses the CUDA compiler of build steps",
    "CUDAHOSTCXX": "chooses the host compiler nvcc runs",
    "HIPCC": "chooses the ROCm compiler",
    "TRITON_CACHE_MANAGER": "imports a Python class (`module:Class`) that manages Triton's cache",
    "TRITON_REMOTE_CACHE_BACKEND": "imports a Python class (`module:Class`) that fetches compiled Triton kernels",
    "TORCH_TRACE": "chooses where torch writes its structured compile trace",
    "HF_ENDPOINT": "chooses the server model weights are downloaded from",
    "HF_HUB_CACHE": "chooses where downloaded model weights are read from",
    "HUGGINGFACE_HUB_CACHE": "chooses where downloaded model weights are read from",
    "TRANSFORMERS_CACHE": "chooses where downloaded model weights are read from",
    "PYTHONHOME": "chooses the Python standard library the run imports",
    "PYTHONSTARTUP": "runs a Python file in interactive sessions",
    "PYTHONUSERBASE": "chooses the user site-packages the run imports from",
    "PYTHONPLATLIBDIR": "chooses the Python library directory",
    "PYTHONINSPECT": "leaves an interactive prompt after the run",
    "PYTHONBREAKPOINT": "imports and calls a function at every breakpoint()",
    "PYTHONWARNINGS": "may import modules named in its warning filters",
    "PYTHONEXECUTABLE": "chooses the interpreter Python reports as its own (macOS)",
    "BASH_ENV": "runs a file in every shell the run starts",
    "ENV": "runs a file in every shell the run starts",
    "SHELL": "chooses the shell programs start commands with",
    "IFS": "changes how every shell the run starts splits words",
    "PS4": "is expanded (and so may run commands) by every traced shell",
    "HOME": "chooses the configuration files programs read (~/.gitconfig, ~/.config, ~/.cache)",
    "TMPDIR": "chooses where compiled kernels and libraries are written and loaded from",
    "TMP": "chooses where temporary files are written and loaded from",
    "TEMP": "chooses where temporary files are written and loaded from",
    "HOSTALIASES": "chooses the host names the C library resolves",
    "RESOLV_HOST_CONF": "chooses the resolver configuration the C library reads",
    "OPENSSL_CONF": "chooses the OpenSSL configuration, which can load engines (shared libraries)",
    "PAGER": "chooses a program the run may start",
    "EDITOR": "chooses a program the run may start",
    "VISUAL": "chooses a program the run may start",
    "BROWSER": "chooses a program the run may start",
}
"""Variables, named one by one, that choose a program, a library, an imported class or a file the run reads or
writes: allowed only when listed in `allow_env`. `LOADER_FAMILIES` adds every name of the same families."""


@dataclass(frozen=True)
class Family:
    """A family of variable names, by full-match pattern, and what its members choose."""

    pattern: str
    chooses: str
    examples: str


LOADER_FAMILIES: Final[tuple[Family, ...]] = (
    Family(
        r".*(_LIBS?|_LIBRARY|_LIBRARIES|_PLUGINS?|_PRELOAD|INJECTION.*)",
        "a library to load",
        "HSA_TOOLS_LIB, NCCL_NET_PLUGIN, CUDA_INJECTION64_PATH",
    ),
    Family(r".*PATH", "a search path or a file", "LD_LIBRARY_PATH, GCONV_PATH, LOCPATH, TRITON_PTXAS_PATH"),
    Family(
        r".*(HOME|_ROOT|DIRS?|PREFIX)",
        "an installation, configuration or cache directory",
        "CUDA_HOME, ROCM_ROOT, TORCH_EXTENSIONS_DIR, MPLCONFIGDIR, PYTHONPYCACHEPREFIX",
    ),
    Family(
        r".*(_EXECUTABLE|_EXE|_BIN|_CMD|_COMMAND|_PROGRAM|_SHELL|_COMPILER)",
        "a program to run",
        "PROMPT_COMMAND, CMAKE_CXX_COMPILER",
    ),
    Family(r".*(_MODULES?|_CLASS|_HOOKS?|_CALLBACK)", "Python code to import", "OPENSSL_MODULES"),
    Family(
        r".*_CONFIGS",
        "settings that include the compiler",
        "TORCH_COMPILE_OVERRIDE_INDUCTOR_CONFIGS (it can set cpp.cxx)",
    ),
    Family(r".*FLAGS", "compiler or linker flags (-B, -fplugin=)", "CFLAGS, LDFLAGS, NVCC_APPEND_FLAGS"),
    Family(r".*(_FILE|_OUTPUT|_OUT)", "a file to read or write", "NCCL_CONF_FILE, TORCH_LOGS_OUT"),
    Family(
        r".*(_HOST|_URL|_ENDPOINT)",
        "a server compiled kernels or weights come from",
        "TORCHINDUCTOR_REDIS_HOST, TORCHINDUCTOR_REDIS_URL",
    ),
    Family(
        r"(LD|DYLD|GIT|PIP|GLIBC|CCACHE|SCCACHE|DISTCC|OMPI_MCA|OPAL|PMIX|BASH_FUNC)_.*",
        "settings of the dynamic loader, git, pip, the C library, compiler wrappers or MPI",
        "LD_BIND_NOW, GIT_SSH, GLIBC_TUNABLES, CCACHE_PREFIX, OMPI_MCA_mca_base_component_path",
    ),
)
"""Families of names that choose what runs or what it reads: a name of one is a loader variable too, unless it is
the run's own or an Inductor switch. Wide on purpose: a false alarm costs one `allow_env` entry, a miss runs code."""


def loader_variable(name: str) -> str | None:
    """What `name` chooses when it is a loader variable (named in `LOADER_VARIABLES`, or of a `LOADER_FAMILIES`
    family, and neither the run's own nor an Inductor switch); None for any other variable."""
    if name in RUN_OWNED or name in INDUCTOR_VALUES:
        return None
    if name in LOADER_VARIABLES:
        return LOADER_VARIABLES[name]
    family = next((f for f in LOADER_FAMILIES if re.fullmatch(f.pattern, name)), None)
    return None if family is None else f"chooses {family.chooses} for the run"


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
    lines += [
        "Kept as the host sets them: where reportgen's own environment sets one, every process of every run gets "
        "that value whatever the recipe says (a recipe sets them only where the host does not):",
        "",
        "| variable | what it controls |",
        "| --- | --- |",
        *(f"| `{name}` | {why} |" for name, why in HOST_KEPT.items()),
        "",
    ]
    lines += ["Checked against the values Inductor reads as meant:", "", "| variable | accepted values |"]
    lines += ["| --- | --- |", *(f"| `{name}` | {a.words} |" for name, a in INDUCTOR_VALUES.items()), ""]
    lines += [
        "Choose a program, a library, Python code or a file the run reads or writes (loader variables); a recipe "
        "sets them only when it names them in `allow_env` (e.g. `allow_env: [LD_PRELOAD]`):",
        "",
        "| variable | what it does |",
        "| --- | --- |",
        *(f"| `{name}` | {why} |" for name, why in LOADER_VARIABLES.items()),
        "",
        "Every name of these families is a loader variable too (unless it is one of the two tables above):",
        "",
        "| names (full match) | choose | for example |",
        "| --- | --- | --- |",
        *(f"| `{_cell(f.pattern)}` | {f.chooses} | {f.examples} |" for f in LOADER_FAMILIES),
    ]
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    """`|` escaped for a Markdown table cell (a pattern's alternatives)."""
    return text.replace("|", "\\|")
