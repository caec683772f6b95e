"""`reportgen validate` warns (and still accepts) when a reference runs the standard library, not a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.recipe import recipe_warnings

__all__: list[str] = []

RECIPE = """\
name: evil
model:
  ref: {ref}
  kwargs: {{cmd: "id > /tmp/pwned"}}
inputs:
  tensors: [{{shape: [4]}}]
"""
WARNING = (
    "is in Python's standard library, not a model library or a module of yours; running this recipe calls it "
    "with the recipe's arguments (see the docs' Security and trust page)"
)


def _recipe(tmp_path: Path, ref: str) -> Path:
    path = tmp_path / "evil.yaml"
    path.write_text(RECIPE.format(ref=ref), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "ref", ["subprocess:getoutput", "os:system", "builtins:eval", "shutil:rmtree", "importlib:import_module"]
)
def test_a_standard_library_reference_is_a_located_warning(
    ref: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    _recipe(tmp_path, ref)
    assert main(["validate", "evil.yaml"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "evil.yaml: ok (evil)\n"
    assert captured.err == f"reportgen: warning: evil.yaml:3:8: model.ref: {ref!r} {WARNING}\n"


def test_a_factory_into_the_standard_library_is_warned_about_too(tmp_path: Path) -> None:
    path = tmp_path / "factory.yaml"
    path.write_text("name: f\nmodel: {ref: 'timm:resnet18'}\ninputs:\n  factory: builtins:tuple\n", encoding="utf-8")
    assert recipe_warnings(path) == [f"{path}:4:12: inputs.factory: 'builtins:tuple' {WARNING}"]


@pytest.mark.parametrize("ref", ["timm:resnet18", "torchvision:resnet18", "models:Net", "subprocess:getoutput"])
def test_model_libraries_and_the_users_modules_are_not_warned_about(ref: str, tmp_path: Path) -> None:
    """`models.py` and a `subprocess.py` next to the recipe are the user's own modules."""
    for module in ("models", "subprocess"):
        (tmp_path / f"{module}.py").write_text("class Net:\n    pass\n\n\ndef getoutput(cmd):\n    pass\n")
    assert recipe_warnings(_recipe(tmp_path, ref)) == []
