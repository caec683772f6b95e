"""Tests of reportgen.reproduce and `reportgen reproduce`: re-run a bundle's recipe, compare numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from reportgen.bundle import read_manifest
from reportgen.errors import BundleError
from reportgen.reproduce import reproduce, stage_recipe

MakeBundle = Callable[..., Path]
ROOT = Path(__file__).resolve().parents[1]
RECIPES = ROOT / "tests" / "data" / "recipes"


def _cli(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "reportgen", *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def variant_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real CPU bundle of one variant of `addmul_variants.yaml` (recipe path relative to the work dir).

    Only that variant runs (`--variant`): the tests read no other bundle, and reproducing reads only its own."""
    work = tmp_path_factory.mktemp("work")
    (work / "recipes").mkdir()
    for name in ("addmul_variants.yaml", "tiny_models.py"):
        (work / "recipes" / name).write_text((RECIPES / name).read_text())
    proc = _cli("run", "recipes/addmul_variants.yaml", "--variant", "fullgraph", "-o", "results", cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return work / "results" / "addmul_variants--fullgraph"


@pytest.mark.slow
def test_cli_reproduces_a_variant_and_prints_both_columns(variant_bundle: Path) -> None:
    work = variant_bundle.parents[1]
    proc = _cli("reproduce", variant_bundle.relative_to(work), cwd=work)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    new_dir = work / "results-repro" / "addmul_variants--fullgraph"
    old, new = read_manifest(variant_bundle), read_manifest(new_dir)
    assert new.variant == "fullgraph" and new.recipe.compile.fullgraph
    assert new.recipe_path == "results-repro/.reproduce/addmul_variants--fullgraph/recipe.yaml"
    assert (new_dir / "analysis.json").is_file()
    lines = proc.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.split() == ["original", "reproduced"]))
    rows = {line[:22].strip(): line[22:].split() for line in lines[header + 2 :]}
    assert old.metrics.compiled is not None and new.metrics.compiled is not None
    assert rows["compiled median (ms)"] == [
        f"{old.metrics.compiled.median_ms:.3f}",
        f"{new.metrics.compiled.median_ms:.3f}",
    ]
    assert rows["status"] == ["ok", "ok"]
    assert set(rows) == {
        "status",
        "device",
        "torch",
        "eager median (ms)",
        "compiled median (ms)",
        "speedup",
        "compile time (s)",
    }


def test_stage_recipe_copies_the_recipe_and_its_local_module(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "models.py").write_text("class TinyMLP: ...\n")
    (tmp_path / "recipes" / "mlp.yaml").write_text("name: mlp\n")
    original = read_manifest(bundle_dir)
    recipe = original.recipe.model_copy(
        update={"model": original.recipe.model.model_copy(update={"ref": "models:TinyMLP"})}
    )
    original = original.model_copy(update={"recipe": recipe, "recipe_path": str(tmp_path / "recipes" / "mlp.yaml")})
    notes: list[str] = []
    staged = stage_recipe(bundle_dir, original, tmp_path / "stage", notes.append)
    assert staged == tmp_path / "stage" / "recipe.yaml"
    assert staged.read_text() == (bundle_dir / "recipe.yaml").read_text()
    assert (tmp_path / "stage" / "models.py").read_text() == "class TinyMLP: ...\n"
    assert notes == []
    gone = original.model_copy(update={"recipe_path": str(tmp_path / "gone.yaml")})
    stage_recipe(bundle_dir, gone, tmp_path / "stage2", notes.append)
    assert notes == [f"note: module 'models' was not found next to {tmp_path / 'gone.yaml'}; it must be importable"]


def test_reproduce_refuses_to_replace_the_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    with pytest.raises(BundleError) as info:
        reproduce(bundle_dir, tmp_path / "results")
    assert info.value.message == "the new bundle would replace the one being reproduced"
    assert info.value.hint == "pass another -o"


def test_reproduce_without_recipe_file(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    (bundle_dir / "recipe.yaml").unlink()
    proc = _cli("reproduce", bundle_dir, "-o", tmp_path / "repro", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"reportgen: error: {bundle_dir}: missing recipe.yaml (re-run the recipe with `reportgen run`)\n"
    )


def _renamed(bundle_dir: Path, name: str) -> None:
    path = bundle_dir / "manifest.json"
    path.write_text(json.dumps({**json.loads(path.read_text()), "name": name}))


@pytest.mark.parametrize("name", ["../../X", "../X", "ABSOLUTE", "a/../../X", ".reproduce", "..", "a\nb"])
def test_reproduce_writes_nothing_outside_its_output_for_a_hostile_name(
    tmp_path: Path, make_bundle: MakeBundle, name: str
) -> None:
    """A manifest named `../../X` (or an absolute path) had its recipe and modules written there before the
    recipe was parsed: the name is refused first, and nothing is written anywhere."""
    work = tmp_path / "work"
    bundle_dir = make_bundle(work / "results", "mixnet")
    target = tmp_path / "abs-target"
    _renamed(bundle_dir, str(target) if name == "ABSOLUTE" else name)
    out = work / "deep" / "out"
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(BundleError, match="is not a bundle name"):  # refused as the manifest is read
        reproduce(bundle_dir, out, notify=lambda _: None)
    assert sorted(tmp_path.rglob("*")) == before  # not even -o was created
    proc = _cli("reproduce", bundle_dir, "-o", out, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "is not a bundle name" in proc.stderr
    assert not target.exists() and not (work / "X").exists() and not (tmp_path / "X").exists()


def test_staging_follows_no_link_out_of_the_output(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A `.reproduce` (or its bundle directory) that is a link to elsewhere is refused, not written through."""
    bundle_dir = make_bundle(tmp_path / "results", "mixnet")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "out"
    out.mkdir()
    (out / ".reproduce").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(BundleError, match="symbolic link"):
        reproduce(bundle_dir, out, notify=lambda _: None)
    assert list(elsewhere.iterdir()) == []
