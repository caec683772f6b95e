"""A recipe's sweep (reportgen.recipe.variants): its points, their names, the limit, and located errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reportgen.errors import RecipeError
from reportgen.recipe import Recipe, load_recipe

__all__: list[str] = []

BASE = {"name": "sw", "model": {"ref": "models:TinyMLP"}, "inputs": {"batch_size": 4, "tensors": [{"shape": [8]}]}}


def _recipe(**fields: object) -> Recipe:
    return Recipe.model_validate({**BASE, **fields})


def test_a_grid_runs_every_combination_named_by_its_values_first_axis_slowest() -> None:
    recipe = _recipe(sweep={"batch_size": [8, 64], "mode": ["default", "reduce-overhead"], "amp": ["bf16"]})
    runs = recipe.runs
    assert [v.name for v in runs] == ["bs8-bf16-def", "bs8-bf16-ro", "bs64-bf16-def", "bs64-bf16-ro"]
    assert runs[1].point == {"batch_size": "8", "amp": "bf16", "mode": "reduce-overhead"}
    assert runs[1].description == "batch_size 8, amp bf16, mode reduce-overhead"
    assert recipe.sweep is not None and recipe.sweep.size == 4 and recipe.sweep.swept == ["batch_size", "amp", "mode"]


def test_a_point_runs_with_its_batch_size_amp_mode_and_env_also_on_the_cpu() -> None:
    recipe = _recipe(
        cpu={"batch_size": 2, "amp": "none"},
        sweep={"batch_size": [16], "amp": ["fp16"], "env": {"TORCHINDUCTOR_MAX_AUTOTUNE": ["0", "1"]}},
    )
    point = recipe.runs[1]
    assert point.name == "bs16-fp16-max_autotune1"
    runs = recipe.for_variant(point)
    assert runs.inputs.batch_size == 16 and runs.amp == "fp16" and runs.env["TORCHINDUCTOR_MAX_AUTOTUNE"] == "1"
    on_cpu = runs.for_device("cpu")
    assert on_cpu.inputs.batch_size == 16 and on_cpu.amp == "fp16"  # the CPU overrides do not undo the point
    assert runs.sweep is None and runs.variants == []


def test_dynamic_null_is_a_value_of_its_own() -> None:
    recipe = _recipe(compile={"dynamic": True}, sweep={"dynamic": [None, False]})
    auto, static = recipe.runs
    assert (auto.name, static.name) == ("dynauto", "static")
    assert recipe.for_variant(auto).compile.dynamic is None and recipe.for_variant(static).compile.dynamic is False


def test_listed_points_and_a_name_too_long_for_a_bundle() -> None:
    recipe = _recipe(
        sweep={
            "points": [
                {"batch_size": 8, "mode": "default"},
                {"batch_size": 128, "mode": "max-autotune-no-cudagraphs", "env": {"TORCHINDUCTOR_COORDINATE_DESCENT_TUNING": "1"}},
            ]
        }
    )  # fmt: skip
    first, second = recipe.runs
    assert first.name == "bs8-def"
    assert second.name.startswith("p-") and len(second.name) == 12  # the values' hash: stable across runs
    assert _recipe(sweep=recipe.sweep.model_dump()).runs[1].name == second.name  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("sweep", "expected"),
    [
        ({"batch_size": [1, 2, 3, 4, 5, 6], "mode": ["default", "max-autotune"], "amp": ["none", "fp16", "bf16"]},
         "sweep: the sweep has 36 points, more than max_points (32); each is a whole run: raise max_points"),
        ({"points": [{"batch_size": 2}], "mode": ["default"]}, "sweep: give the axes (a grid) or `points`, not both"),
        ({"max_points": 4}, "sweep: a sweep needs at least one axis"),
        ({"batch_size": [8, 8]}, "sweep: repeated values in sweep.batch_size"),
        ({"mode": ["fast"]}, "sweep.mode[0]: expected one of 'default', 'reduce-overhead'"),
        ({"env": {"TORCHINDUCTOR_MAX_AUTOTUNE": ["2"]}}, "sweep.env: env var TORCHINDUCTOR_MAX_AUTOTUNE: expected '0' or '1'"),
        ({"batch_size": [0]}, "sweep.batch_size[0]: must be at least 1"),
    ],
)  # fmt: skip
def test_a_bad_sweep_is_located(tmp_path: Path, sweep: dict[str, object], expected: str) -> None:
    import yaml

    path = tmp_path / "sw.yaml"
    text = yaml.safe_dump({**BASE, "device": "cpu", "task": "train", "sweep": sweep}, sort_keys=False)
    path.write_text(text)
    (tmp_path / "models.py").write_text("class TinyMLP: ...\n")
    with pytest.raises(RecipeError) as caught:
        load_recipe(path)
    sweep_line = text.splitlines().index("sweep:") + 1
    located = re.search(r"sw\.yaml:(\d+):(\d+): (.*)", str(caught.value), re.S)
    assert located is not None and int(located.group(1)) >= sweep_line, str(caught.value)  # at the sweep or in it
    assert located.group(3).startswith(expected), str(caught.value)


def test_a_sweep_with_variants_or_a_batch_cycle_is_refused() -> None:
    with pytest.raises(ValueError, match="variants or a sweep, not both"):
        _recipe(variants=[{"name": "a"}], sweep={"mode": ["default"]})
    with pytest.raises(ValueError, match="cannot sweep a recipe that cycles batch sizes"):
        Recipe.model_validate(
            {**BASE, "inputs": {"batch_cycle": [2, 4], "tensors": [{"shape": [8]}]}, "sweep": {"batch_size": [8]}}
        )
    with pytest.raises(ValueError, match="set by a sweep, not by hand"):
        _recipe(variants=[{"name": "a", "point": {"batch_size": "8"}}])
    with pytest.raises(ValueError, match="names the sweep's own page"):
        _recipe(variants=[{"name": "sweep"}])


def test_a_loader_variable_in_a_sweep_needs_allow_env() -> None:
    with pytest.raises(ValueError, match="list it in allow_env"):
        _recipe(sweep={"env": {"LD_PRELOAD": ["/x.so"]}})
    assert len(_recipe(allow_env=["LD_PRELOAD"], sweep={"env": {"LD_PRELOAD": ["/x.so", "/y.so"]}}).runs) == 2
