"""The recipe reference tables are derived from the pydantic fields, complete and well-formed."""

from __future__ import annotations

import re

import pytest
from pydantic import BaseModel

from reportgen.recipe import Distributed, Sweep, SweepPoint, recipe_reference_markdown
from reportgen.recipe.model import (
    CompileOptions,
    CpuOverrides,
    Inputs,
    ModelSpec,
    ProfileSettings,
    Recipe,
    TensorSpec,
    Variant,
)

MODELS: tuple[type[BaseModel], ...] = (
    Recipe, ModelSpec, Inputs, TensorSpec, CompileOptions, ProfileSettings, CpuOverrides, Distributed, Variant, Sweep,
    SweepPoint
)  # fmt: skip


@pytest.fixture(scope="module")
def markdown() -> str:
    return recipe_reference_markdown()


def test_one_section_per_model_in_order(markdown: str) -> None:
    headings = re.findall(r"^## (\w+)$", markdown, flags=re.MULTILINE)
    assert headings == [model.__name__ for model in MODELS]


@pytest.mark.parametrize("model", MODELS, ids=lambda model: model.__name__)
def test_every_field_has_a_row(markdown: str, model: type[BaseModel]) -> None:
    section = markdown.split(f"## {model.__name__}\n", 1)[1].split("\n## ", 1)[0]
    keys = re.findall(r"^\| `(\w+)` \|", section, flags=re.MULTILINE)
    assert keys == list(model.model_fields)


def test_rows_have_four_cells(markdown: str) -> None:
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    assert rows
    for row in rows:
        assert len(re.findall(r"(?<!\\)\|", row)) == 5, row


def test_links_point_at_targets(markdown: str) -> None:
    targets = set(re.findall(r"^\((recipe-reference-\w+)\)=$", markdown, flags=re.MULTILINE))
    links = set(re.findall(r"\]\(#([\w-]+)\)", markdown))
    assert targets == {f"recipe-reference-{model.__name__.lower()}" for model in MODELS}
    assert links <= targets


@pytest.mark.parametrize(
    "row",
    [
        "| `name` | string (matching `^[a-z0-9][a-z0-9_.-]{0,63}$`) | *required* | "
        "Identifier: lower-case letters, digits, `_`, `-`, `.`; names the bundle. No `--` (it joins a recipe and its "
        "variant in bundle names) and none of the site's own page names. |",
        '| `task` | one of `train`, `infer` | `"infer"` | '
        "`train` = forward + backward; `infer` = forward under inference_mode. |",
        "| `model` | [ModelSpec](#recipe-reference-modelspec) | *required* | Which model to build. |",
        "| `timeout_s` | number (> 0, ≤ 86400) | `1800` | Wall-clock limit for the whole run, in seconds. |",
        "| `batch_size` | integer (≥ 1, ≤ 65536) or null | `null` | "
        "Batch size prepended to every tensor shape; none = shapes as given. |",
        "| `tensors` | list of [TensorSpec](#recipe-reference-tensorspec) | `[]` | Positional input tensors. |",
        "| `allow_env` | list of string | `[]` | Loader variables (`LD_PRELOAD`, `LD_LIBRARY_PATH`, `PATH`, "
        "`PYTHONSTARTUP`, ...) that `env` and the variants' `env` may set: each puts code or libraries into the "
        "run's processes, so it is named here on purpose. |",
        "| `profile` | [ProfileSettings](#recipe-reference-profilesettings) or null | `null` | "
        "Profile settings on CPU. |",
    ],
)
def test_row_content(markdown: str, row: str) -> None:
    assert row in markdown.splitlines()


def test_nested_models_say_where_they_are_used(markdown: str) -> None:
    assert "One random input tensor. Used at: `inputs.tensors[]`." in markdown
    assert "How steps are timed and profiled. Used at: `profile`, `cpu.profile`." in markdown
