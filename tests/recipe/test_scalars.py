"""Plain YAML scalars that readers read differently: no recipe value is silently coerced.

An env value (or any string field) that loads is exactly the text written in the file; a number that
loads was written in decimal. Everything else is a located error that says how to quote it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reportgen.errors import RecipeError
from reportgen.recipe import load_recipe

__all__: list[str] = []

GOOD = """\
name: tiny
model:
  ref: models:TinyMLP
inputs:
  batch_size: 4
  tensors:
    - shape: [16]
"""
COERCED = [
    *("0777", "0o17", "010", "on", "off", "On", "OFF", "yes", "no", "Yes", "NO", "y", "n", "Y", "N", "true", "False"),
    *("1.10", "1.0", "1.", ".5", "1e5", "1E5", "1.0e+5", "1:30", "1:30:00", "1:30.5", "0x1F", "0x1f", "0b101"),
    *("+1", "-1", "+0", "1_000", "1_0.5", "09", "~", "null", "Null", "NULL", ".inf", "-.inf", ".NaN", ".nan", "="),
    *("2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5"),
]
"""Plain scalars a YAML reader (1.1, as PyYAML, or 1.2) reads as something other than the text shown."""
TEXT = ["recompiles", "+dynamo,recompiles", "expandable_segments:True", "1.2.3", "v1", "0.1.0-rc1", "ATEN,TRITON"]
"""Plain scalars every reader reads as text."""


@pytest.fixture
def recipe_dir(tmp_path: Path) -> Path:
    (tmp_path / "models.py").write_text("class TinyMLP: ...\n")
    return tmp_path


def _load(directory: Path, text: str) -> object:
    path = directory / "recipe.yaml"
    path.write_text(GOOD + text, encoding="utf-8")
    return load_recipe(path)


def _error(directory: Path, text: str) -> str:
    with pytest.raises(RecipeError) as info:
        _load(directory, text)
    return str(info.value)


@pytest.mark.parametrize("plain", COERCED)
@pytest.mark.parametrize(
    ("template", "where"),
    [
        ("env:\n  MY_VAR: {}\n", ":9:11: env.MY_VAR: "),
        ("variants:\n  - name: fast\n    env:\n      MY_VAR: {}\n", ":11:15: variants[0].env.MY_VAR: "),
        ("title: {}\n", ":8:8: title: "),
        ("allow_env: [{}]\n", ":8:13: allow_env[0]: "),
        ("description: {}\n", ":8:14: description: "),
        ("compile:\n  backend: {}\n", ":9:12: compile.backend: "),
    ],
    ids=["env", "variant-env", "title", "allow_env", "description", "backend"],
)
def test_a_coerced_plain_scalar_in_a_string_field_is_a_located_error(
    recipe_dir: Path, plain: str, template: str, where: str
) -> None:
    if plain in ("~", "null", "Null", "NULL") and where.endswith("title: "):
        recipe = _load(recipe_dir, template.format(plain))  # null is the title's default: no coercion
        assert recipe.title is None  # type: ignore[attr-defined]
        return
    message = _error(recipe_dir, template.format(plain))
    assert where in message
    assert message.endswith(f"(quote it: '{plain}')")


@pytest.mark.parametrize("plain", COERCED)
def test_the_quoted_value_is_kept_as_written(recipe_dir: Path, plain: str) -> None:
    for quoted in (f"'{plain}'", f'"{plain}"', f"!!str {plain}"):
        recipe = _load(recipe_dir, f"env:\n  MY_VAR: {quoted}\n")
        assert recipe.env == {"MY_VAR": plain}  # type: ignore[attr-defined]


@pytest.mark.parametrize("plain", ["0", "1", "8", "16", "1800", "123456789012345678901234567890", *TEXT])
def test_decimal_digits_and_plain_text_are_kept_as_written(recipe_dir: Path, plain: str) -> None:
    recipe = _load(recipe_dir, f"env:\n  MY_VAR: {plain}\n")
    assert recipe.env == {"MY_VAR": plain}  # type: ignore[attr-defined]


def test_an_empty_env_value_says_how_to_write_one(recipe_dir: Path) -> None:
    assert _error(recipe_dir, "env:\n  MY_VAR:\n").endswith(
        ":9:10: env.MY_VAR: has no value (YAML reads it as null) (write '' for an empty value)"
    )
    assert _load(recipe_dir, "env:\n  MY_VAR: ''\n").env == {"MY_VAR": ""}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        (GOOD + "timeout_s: 1:30\n", ":8:12: timeout_s: 1:30 is a base-60 number", "90"),
        (GOOD + "timeout_s: 0x3C\n", ":8:12: timeout_s: 0x3C is a hexadecimal number", "60"),
        (GOOD + "profile: {steps: 010}\n", ":8:18: profile.steps: 010 is an octal number", "8"),
        (GOOD + "profile: {warmup: 0b10}\n", ":8:19: profile.warmup: 0b10 is a binary number", "2"),
        (
            GOOD.replace("  batch_size: 4\n", "  batch_cycle: [1_6]\n"),
            ":5:17: inputs.batch_cycle[0]: 1_6 is a number with '_' separators",
            "16",
        ),
        (
            GOOD.replace("TinyMLP\n", "TinyMLP\n  kwargs: {width: 0100}\n"),
            ":4:19: model.kwargs.width: 0100 is an octal number",
            "64",
        ),
    ],
    ids=["base-60", "hexadecimal", "octal", "binary", "underscores", "factory-argument"],
)
def test_a_number_not_in_decimal_is_a_located_error(recipe_dir: Path, text: str, where: str, expected: str) -> None:
    path = recipe_dir / "recipe.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecipeError) as info:
        load_recipe(path)
    message = str(info.value)
    assert where in message
    assert message.endswith(f"(write {expected}, or quote it to make it text)")


@pytest.mark.parametrize("line", ["timeout_s: 90", "timeout_s: 90.5", "timeout_s: 1.5e+2", "profile: {steps: 10}"])
def test_decimal_numbers_load(recipe_dir: Path, line: str) -> None:
    _load(recipe_dir, line + "\n")


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(plain=st.text(alphabet="0123456789abexnoyfNOYTtrulsi.:+-_~=", min_size=1, max_size=8))
def test_an_env_value_that_loads_is_the_text_written(recipe_dir: Path, plain: str) -> None:
    """The property behind every case above: whatever a plain env value is, it loads as written or not at all."""
    try:
        recipe = _load(recipe_dir, f"env:\n  MY_VAR: {plain}\n")
    except RecipeError:
        return
    assert recipe.env == {"MY_VAR": plain}  # type: ignore[attr-defined]
