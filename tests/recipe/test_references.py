"""Static `module:callable` checks: modules are found without importing anything, names are read with ast."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from reportgen.recipe.references import bound_names, check_reference, find_module_spec

MODULE_SOURCE = """\
import os.path
import numpy as np
from collections import OrderedDict as Ordered
from typing import *  # noqa

CONSTANT = 1
first, (second, *rest) = 1, (2, 3)
annotated: int = 3
only_annotated: int
obj.attribute = 4
items[0] = 5


def factory(): ...


async def async_factory(): ...


class Net:
    inner = 1

    def method(self):
        global from_function
        from_function = 1


if True:
    in_if = 1
else:
    in_else = 1
try:
    import fast_thing as in_try
except ImportError as in_handler:
    in_except = None
finally:
    in_finally = 1
for loop_var in range(2):
    in_loop = 1
with open(__file__) as handle:
    in_with = 1
"""


def test_bound_names_at_top_level() -> None:
    names = bound_names(ast.parse(MODULE_SOURCE))
    expected = {
        "os", "np", "Ordered", "*", "CONSTANT", "first", "second", "rest", "annotated", "only_annotated",
        "factory", "async_factory", "Net", "in_if", "in_else", "in_try", "in_handler", "in_except",
        "in_finally", "loop_var", "in_loop", "handle", "in_with",
    }  # fmt: skip
    assert names == expected


@pytest.fixture
def search_dir(tmp_path: Path) -> Path:
    """A recipe directory with a module, and a package whose `__init__` must never run."""
    (tmp_path / "models.py").write_text("def make_net(): ...\n")
    package = tmp_path / "zoo"
    (package / "vision").mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('imported!')\n")
    (package / "vision" / "__init__.py").write_text("raise RuntimeError('imported!')\n")
    (package / "vision" / "nets.py").write_text("class ResNet: ...\n")
    return tmp_path


def test_finds_module_next_to_the_recipe(search_dir: Path) -> None:
    spec = find_module_spec("models", search_dir)
    assert spec is not None
    assert spec.origin == str(search_dir / "models.py")
    assert check_reference("models:make_net", field="model.ref", search_dir=search_dir) is None


def test_dotted_module_is_found_without_importing_its_packages(search_dir: Path) -> None:
    assert check_reference("zoo.vision.nets:ResNet", field="model.ref", search_dir=search_dir) is None
    assert not any(name.startswith("zoo") for name in sys.modules)


def test_missing_submodule(search_dir: Path) -> None:
    assert check_reference("zoo.audio:Net", field="model.ref", search_dir=search_dir) == (
        "model.ref: cannot find module 'zoo.audio' (looked next to the recipe and on sys.path)"
    )


def test_submodule_of_a_plain_module(search_dir: Path) -> None:
    assert check_reference("models.sub:Net", field="inputs.factory", search_dir=search_dir) == (
        "inputs.factory: cannot find module 'models.sub' (looked next to the recipe and on sys.path)"
    )


def test_missing_callable(search_dir: Path) -> None:
    assert check_reference("zoo.vision.nets:VGG", field="model.ref", search_dir=search_dir) == (
        f"model.ref: module 'zoo.vision.nets' ({search_dir / 'zoo' / 'vision' / 'nets.py'}) defines no 'VGG'; "
        "expected a factory function or nn.Module class"
    )


def test_module_on_sys_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "site"
    elsewhere.mkdir()
    (elsewhere / "shared_models.py").write_text("Net = object\n")
    monkeypatch.syspath_prepend(str(elsewhere))
    recipe_dir = tmp_path / "recipes"
    recipe_dir.mkdir()
    assert check_reference("shared_models:Net", field="model.ref", search_dir=recipe_dir) is None


def test_recipe_directory_comes_before_sys_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "site"
    elsewhere.mkdir()
    (elsewhere / "models.py").write_text("Net = object\n")
    monkeypatch.syspath_prepend(str(elsewhere))
    recipe_dir = tmp_path / "recipes"
    recipe_dir.mkdir()
    (recipe_dir / "models.py").write_text("Other = object\n")
    assert check_reference("models:Net", field="model.ref", search_dir=recipe_dir) == (
        f"model.ref: module 'models' ({recipe_dir / 'models.py'}) defines no 'Net'; "
        "expected a factory function or nn.Module class"
    )


def test_standard_library_module_is_checked(tmp_path: Path) -> None:
    assert check_reference("json:loads", field="model.ref", search_dir=tmp_path) is None
    message = check_reference("json:nothing_here", field="model.ref", search_dir=tmp_path)
    assert message is not None
    assert message.endswith("defines no 'nothing_here'; expected a factory function or nn.Module class")


@pytest.mark.parametrize("ref", ["timm:resnet50", "torchvision:resnet18", "sys:exit"])
def test_external_and_builtin_references_pass(tmp_path: Path, ref: str) -> None:
    assert check_reference(ref, field="model.ref", search_dir=tmp_path) is None


@pytest.mark.parametrize(
    "source",
    ["from elsewhere import *\n", "def __getattr__(name): ...\n"],
    ids=["star-import", "module-getattr"],
)
def test_dynamic_modules_are_accepted(tmp_path: Path, source: str) -> None:
    (tmp_path / "dynamic.py").write_text(source)
    assert check_reference("dynamic:Anything", field="model.ref", search_dir=tmp_path) is None


def test_module_with_a_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def make(:\n")
    assert check_reference("broken:make", field="model.ref", search_dir=tmp_path) == (
        f"model.ref: module 'broken' ({tmp_path / 'broken.py'}) cannot be parsed at line 1: invalid syntax"
    )


def test_path_is_shown_relative_to_the_working_directory(search_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(search_dir)
    assert check_reference("models:Nope", field="model.ref", search_dir=Path()) == (
        "model.ref: module 'models' (models.py) defines no 'Nope'; expected a factory function or nn.Module class"
    )
