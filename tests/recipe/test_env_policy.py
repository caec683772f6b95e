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
from reportgen.recipe.env_policy import INDUCTOR_VALUES, LOADER_VARIABLES, RUN_OWNED, EntryError, env_value_problem

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


def test_yaml_booleans_are_accepted_switch_values() -> None:
    recipe = Recipe.model_validate({**BASE, "env": {"TORCHINDUCTOR_MAX_AUTOTUNE": True, "TORCHINDUCTOR_FREEZING": 0}})
    assert recipe.env == {"TORCHINDUCTOR_MAX_AUTOTUNE": "1", "TORCHINDUCTOR_FREEZING": "0"}


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
