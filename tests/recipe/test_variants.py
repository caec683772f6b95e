from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.errors import RecipeError
from reportgen.recipe import load_recipe

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"
REPO_RECIPES = Path(__file__).resolve().parents[2] / "recipes"


def test_a_variant_overrides_compile_options_and_env() -> None:
    recipe = load_recipe(RECIPES / "addmul_variants.yaml")
    default, fullgraph = recipe.variants
    assert recipe.bundle_name(default) == "addmul_variants--default"
    applied = recipe.for_variant(fullgraph)
    assert applied.compile.fullgraph is True and applied.compile.mode == "default"
    assert applied.env == {"TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1", "TORCHINDUCTOR_SIZE_ASSERTS": "0"}
    assert applied.variants == [] and applied.name == recipe.name


def test_mixnet_l_compares_default_reduce_overhead_and_max_autotune() -> None:
    recipe = load_recipe(REPO_RECIPES / "mixnet_l.yaml")
    modes = [recipe.for_variant(v).compile.mode for v in recipe.variants]
    assert modes == ["default", "reduce-overhead", "max-autotune"]


def test_variant_names_must_be_unique(tmp_path: Path) -> None:
    text = (RECIPES / "addmul_variants.yaml").read_text().replace("name: fullgraph", "name: default")
    (tmp_path / "tiny_models.py").write_text("class AddMul: ...\n")
    (tmp_path / "r.yaml").write_text(text)
    with pytest.raises(RecipeError, match="variant names must be unique; repeated: default"):
        load_recipe(tmp_path / "r.yaml")
