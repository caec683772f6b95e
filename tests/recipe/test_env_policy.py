"""The recipe env policy: the run's own variables, Inductor's switches and loader variables.

The table of Inductor variables is checked against the installed torch's sources (read, not imported:
the recipe layer never imports torch), so a rename in torch shows here.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from reportgen.recipe import Recipe, env_policy_markdown
from reportgen.recipe.env_policy import (
    INDUCTOR_VALUES,
    LOADER_FAMILIES,
    LOADER_VARIABLES,
    RUN_OWNED,
    EntryError,
    env_value_problem,
    loader_variable,
)

__all__: list[str] = []

BASE = {"name": "tiny", "model": {"ref": "m:Net"}, "inputs": {"tensors": [{"shape": [4]}]}}
CONFIG_FILES = ("_inductor/config.py", "_functorch/config.py", "compiler/config.py")


@pytest.fixture(scope="module")
def torch_config_text() -> str:
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations
    root = Path(next(iter(spec.submodule_search_locations)))
    return "\n".join((root / name).read_text(encoding="utf-8") for name in CONFIG_FILES)


@pytest.mark.parametrize("name", sorted(INDUCTOR_VALUES))
def test_every_inductor_variable_is_read_by_the_installed_torch(name: str, torch_config_text: str) -> None:
    assert f'"{name}"' in torch_config_text


@pytest.mark.parametrize("name", sorted(n for n, a in INDUCTOR_VALUES.items() if a.pattern == "[01]"))
def test_switches_are_read_as_one_or_zero(name: str, torch_config_text: str) -> None:
    """`os.environ.get(NAME...) == "1"`, or a `Config(env_name_...)` (which reads "1" and "0")."""
    compared = re.search(rf'"{name}"[^\n]*\)\s*==\s*"1"', torch_config_text)
    config = re.search(rf'env_name_(force|default)=\[?\s*"{name}"', torch_config_text)
    assert compared or config


def test_the_gemm_backends_are_those_torch_lists(torch_config_text: str) -> None:
    listed = re.search(r"# Possible choices are combinations of: (.*)\.", torch_config_text)
    assert listed is not None
    torch_names = {n.strip().upper() for n in listed.group(1).split(",")}
    accepted = INDUCTOR_VALUES["TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"]
    assert all(accepted.accepts(n) for n in torch_names) and not accepted.accepts("FASTEST")
    assert accepted.accepts("aten,triton")  # torch upper-cases the value


def test_whole_numbers_are_taken_as_their_digits() -> None:
    recipe = Recipe.model_validate({**BASE, "env": {"TORCHINDUCTOR_MAX_AUTOTUNE": 1, "TORCHINDUCTOR_FREEZING": 0}})
    assert recipe.env == {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHINDUCTOR_FREEZING": "0"}


@pytest.mark.parametrize("value", [True, False, 1.1, 511.0], ids=repr)
def test_booleans_and_fractions_are_not_turned_into_text(value: object) -> None:
    """`True` used to become "1" and 1.1 "1.1": the value a recipe meant is not known, so it is refused."""
    with pytest.raises(ValueError, match=r"env var TORCH_LOGS must be a string, not a (boolean|number); quote it"):
        Recipe.model_validate({**BASE, "env": {"TORCH_LOGS": value}})


def test_a_loader_variable_listed_in_allow_env_is_set() -> None:
    recipe = Recipe.model_validate(
        {
            **BASE,
            "allow_env": ["LD_PRELOAD", "PATH"],
            "env": {"LD_PRELOAD": "/usr/lib/libjemalloc.so"},
            "variants": [{"name": "fast", "env": {"PATH": "/opt/cuda/bin:/usr/bin"}}],
        }
    )
    assert recipe.for_variant(recipe.variants[0]).env == {
        "LD_PRELOAD": "/usr/lib/libjemalloc.so",
        "PATH": "/opt/cuda/bin:/usr/bin",
    }


@pytest.mark.parametrize("name", sorted(RUN_OWNED))
def test_no_recipe_sets_what_the_run_owns(name: str) -> None:
    problem = env_value_problem(name, "/etc")
    assert problem is not None and problem.startswith(f"env var {name} is set by reportgen for every run")
    with pytest.raises(ValueError, match=name):
        Recipe.model_validate({**BASE, "allow_env": list(LOADER_VARIABLES), "env": {name: "/etc"}})


def test_nul_bytes_are_refused_in_any_variable() -> None:
    assert env_value_problem("TORCH_LOGS", "a\0b") == (
        "env var TORCH_LOGS contains a NUL byte, which no environment can hold; remove it"
    )


def test_an_entry_error_is_a_value_error() -> None:
    assert isinstance(EntryError("x", ("A",), at_key=True), ValueError)


def test_the_docs_tables_name_every_variable() -> None:
    markdown = env_policy_markdown()
    for name in (*RUN_OWNED, *INDUCTOR_VALUES, *LOADER_VARIABLES):
        assert f"| `{name}` |" in markdown
    for family in LOADER_FAMILIES:
        assert f"| `{family.pattern.replace('|', chr(92) + '|')}` |" in markdown


PROGRAM_OR_LIBRARY = [
    # compilers and toolchains: Inductor compiles every CPU kernel with $CXX
    *("CC", "CXX", "CPP", "LD", "AR", "NVCC", "PYTORCH_NVCC", "CUDAHOSTCXX", "CUDACXX", "HIPCC"),
    *("CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "NVCC_APPEND_FLAGS", "NVCC_PREPEND_FLAGS", "TORCH_NVCC_FLAGS"),
    *("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT", "ROCM_HOME", "ROCM_PATH", "HIP_PATH", "CCACHE_PREFIX", "CCACHE_DIR"),
    # Triton's programs, libraries and imported classes
    *("TRITON_PTXAS_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH", "TRITON_LIBCUDA_PATH"),
    *("TRITON_LIBDEVICE_PATH", "TRITON_HOME", "TRITON_CACHE_MANAGER", "TRITON_REMOTE_CACHE_BACKEND", "TRITON_DUMP_DIR"),
    # torch: programs, paths, imported code, remote caches, compiler settings
    *("TORCH_CUSTOM_PYTHONPATH", "TORCHINDUCTOR_CUTLASS_DIR", "TORCHINDUCTOR_CK_DIR", "TORCH_EXTENSIONS_DIR"),
    *("TORCHINDUCTOR_REDIS_HOST", "TORCHINDUCTOR_REDIS_URL", "TORCH_COMPILE_OVERRIDE_INDUCTOR_CONFIGS", "TORCH_HOME"),
    *("TORCH_COMPILE_DEBUG_DIR", "TORCHINDUCTOR_PROFILE_OUTPUT", "TORCH_TRACE", "TORCH_LOGS_OUT"),
    # the C library and the loader
    *("LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_BIND_NOW", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES"),
    *("RESOLV_HOST_CONF", "GLIBC_TUNABLES", "DYLD_INSERT_LIBRARIES", "CUDA_INJECTION64_PATH", "HSA_TOOLS_LIB"),
    # Python, shells, git, pip, MPI, NCCL, OpenSSL, downloads
    *("PYTHONHOME", "PYTHONSTARTUP", "PYTHONUSERBASE", "PYTHONBREAKPOINT", "PYTHONWARNINGS", "PYTHONPYCACHEPREFIX"),
    *("PYTHONEXECUTABLE", "PYTHONINSPECT", "BASH_ENV", "ENV", "SHELL", "IFS", "PS4", "PROMPT_COMMAND", "PATH"),
    *("GIT_SSH", "GIT_SSH_COMMAND", "GIT_EXEC_PATH", "GIT_CONFIG_GLOBAL", "PIP_INDEX_URL", "PIP_CONFIG_FILE"),
    *("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_PROFILER_PLUGIN", "OPAL_PREFIX"),
    *("OPENSSL_CONF", "OPENSSL_MODULES", "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "TMPDIR", "MPLCONFIGDIR"),
    *("HF_HOME", "HF_ENDPOINT", "HF_HUB_CACHE", "TRANSFORMERS_CACHE"),
]
"""Variables that choose a program, a library, Python code, or a file the run reads or writes."""

HARMLESS = [
    *("TORCH_LOGS", "TORCH_COMPILE_DEBUG", "TORCHDYNAMO_VERBOSE", "TORCH_CUDA_ARCH_LIST", "OMP_NUM_THREADS"),
    *("PYTORCH_CUDA_ALLOC_CONF", "CUBLAS_WORKSPACE_CONFIG", "NCCL_DEBUG", "CUDA_LAUNCH_BLOCKING", "PYTHONHASHSEED"),
    *("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_COMPILE_THREADS", "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS"),
    *("TORCHINDUCTOR_CPP_WRAPPER", "TORCHINDUCTOR_AUTOGRAD_CACHE", "TORCH_COMPILE_DISABLE"),
]
"""Variables recipes set to tune or observe a run: no opt-in."""


@pytest.mark.parametrize("name", PROGRAM_OR_LIBRARY)
def test_what_chooses_a_program_or_library_needs_allow_env(name: str) -> None:
    with pytest.raises(ValueError, match=f"env var {name} .*; list it in allow_env to set it on purpose"):
        Recipe.model_validate({**BASE, "env": {name: "/tmp/x"}})
    with pytest.raises(ValueError, match=f"env var {name} .*; list it in allow_env to set it on purpose"):
        Recipe.model_validate({**BASE, "variants": [{"name": "v", "env": {name: "/tmp/x"}}]})
    recipe = Recipe.model_validate({**BASE, "allow_env": [name], "env": {name: "/tmp/x"}})
    assert recipe.env == {name: "/tmp/x"}


@pytest.mark.parametrize("name", HARMLESS)
def test_what_tunes_a_run_needs_no_opt_in(name: str) -> None:
    value = "ATEN,TRITON" if name == "TORCHINDUCTOR_MAX_AUTOTUNE_GEMM_BACKENDS" else "1"
    assert Recipe.model_validate({**BASE, "env": {name: value}}).env == {name: value}
    with pytest.raises(ValueError, match=f"'{name}' needs no opt-in"):
        Recipe.model_validate({**BASE, "allow_env": [name]})


@pytest.mark.parametrize("name", ["LD_PRELOAD\n", "CXX\n", " CXX", "cxx"])
def test_allow_env_names_a_variable_whole(name: str) -> None:
    with pytest.raises(ValueError, match="needs no opt-in"):
        Recipe.model_validate({**BASE, "allow_env": [name]})


def test_every_path_program_or_server_torch_reads_needs_allow_env(torch_config_text: str) -> None:
    """Read from the installed torch's sources: a variable named for a path, directory, file, program, host or
    URL (`TORCHINDUCTOR_CUTLASS_DIR`, `TORCHINDUCTOR_REDIS_HOST`, `PYTORCH_NVCC`) is a loader variable."""
    names = set(re.findall(r'"((?:TORCH|PYTORCH|TRITON)[A-Z0-9_]*)"', torch_config_text))
    telling = re.compile(r".*(PATH|DIR|HOME|_FILE|_HOST|_URL|NVCC|_CMD)")
    found = sorted(n for n in names if telling.fullmatch(n) and n not in RUN_OWNED)
    assert len(found) >= 5
    assert [n for n in found if loader_variable(n) is None] == []
