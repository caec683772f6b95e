"""Tests of reportgen.render.notebook: the reproducer notebook, built from canned and real bundles."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest

from reportgen.bundle import Manifest, load_bundle, read_manifest, read_recipe_text
from reportgen.recipe import find_local_modules
from reportgen.render.notebook import Headline, comparison_table, reproducer_notebook

MakeBundle = Callable[..., Path]


@pytest.fixture(scope="module")
def cpu_bundle(addmul_history: Path) -> Path:
    """A real bundle of `addmul.yaml`, run on the CPU (`reportgen run`; shared, joined to a recorded history)."""
    return addmul_history / "addmul"


def _sources(notebook: nbformat.NotebookNode, cell_type: str) -> list[str]:
    return [cell.source for cell in notebook.cells if cell.cell_type == cell_type]


def _python_manifest(manifest: Manifest, ref: str, recipe_path: str) -> Manifest:
    recipe = manifest.recipe.model_copy(update={"model": manifest.recipe.model.model_copy(update={"ref": ref})})
    return manifest.model_copy(update={"recipe": recipe, "recipe_path": recipe_path})


def test_headline_and_comparison_table(tmp_path: Path, make_bundle: MakeBundle) -> None:
    manifest = read_manifest(make_bundle(tmp_path, "mixnet"))
    headline = Headline.from_manifest(manifest)
    assert headline == Headline(
        status="ok",
        device="cuda (NVIDIA H100 80GB HBM3)",
        torch="2.11.0+cu130",
        eager_ms=120.0,
        compiled_ms=80.0,
        speedup=1.5,
        compile_s=160.0,
    )
    assert eval(headline.literal(), {"Headline": Headline}) == headline
    table = comparison_table(headline, Headline(status="failed", device="cpu"))
    lines = table.splitlines()
    assert lines[0].split() == ["original", "reproduced"]
    assert "eager median (ms)     120.000" in table
    assert lines[-2].split() == ["speedup", "1.50x", "—"]
    assert lines[-1].split() == ["compile", "time", "(s)", "160.0", "—"]


def test_notebook_of_a_canned_timm_bundle(tmp_path: Path, make_bundle: MakeBundle) -> None:
    bundle = load_bundle(make_bundle(tmp_path, "mixnet", title="Mixnet <L>"))
    notebook = reproducer_notebook(bundle.manifest, "name: mixnet\n")
    nbformat.validate(notebook)
    markdown, code = _sources(notebook, "markdown"), _sources(notebook, "code")
    assert markdown[0].startswith("# Reproduce: Mixnet \\<L\\>\n")
    assert "| eager median (ms)    | 120.000" in markdown[0]
    assert code[0] == "%%writefile recipe.yaml\nname: mixnet"
    assert "VARIANT = None" in code[1]
    assert "speedup=1.5," in code[2]
    assert not any("was not found" in text for text in markdown)
    assert [cell.id for cell in notebook.cells] == [f"cell-{n}" for n in range(len(notebook.cells))]


def test_notebook_says_when_the_local_module_is_missing(tmp_path: Path, make_bundle: MakeBundle) -> None:
    manifest = read_manifest(make_bundle(tmp_path, "mlp"))
    gone = _python_manifest(manifest, "models:TinyMLP", str(tmp_path / "gone" / "recipe.yaml"))
    notes = [text for text in _sources(reproducer_notebook(gone, "name: mlp\n"), "markdown") if "`models`" in text]
    assert notes == [
        "The recipe imports `models`, which was not found (the original recipe file is gone), so this notebook "
        "does not include it: the run imports it from the installed packages. Install it, or put its file next "
        "to this notebook."
    ]


def test_find_local_modules_next_to_a_relative_recipe_path(tmp_path: Path, make_bundle: MakeBundle) -> None:
    (tmp_path / "recipes" / "pkg").mkdir(parents=True)
    (tmp_path / "recipes" / "recipe.yaml").write_text("name: mlp\n")
    (tmp_path / "recipes" / "pkg" / "models.py").write_text("class TinyMLP: ...\n")
    manifest = _python_manifest(
        read_manifest(make_bundle(tmp_path, "mlp")), "pkg.models:TinyMLP", "recipes/recipe.yaml"
    )
    modules = find_local_modules(manifest.recipe, manifest.recipe_path, base_dir=tmp_path)
    assert modules.recipe_dir == tmp_path / "recipes"
    assert [(m.path, m.source) for m in modules.found] == [("pkg/models.py", "class TinyMLP: ...\n")]
    assert modules.missing == ()
    code = _sources(reproducer_notebook(manifest, "name: mlp\n", base_dir=tmp_path), "code")
    assert code[1:3] == [
        "import os\n\nos.makedirs('pkg', exist_ok=True)",
        "%%writefile pkg/models.py\nclass TinyMLP: ...",
    ]


def test_notebook_embeds_the_recipe_and_its_module(cpu_bundle: Path) -> None:
    manifest = read_manifest(cpu_bundle)
    notebook = reproducer_notebook(manifest, read_recipe_text(cpu_bundle) or "")
    code = _sources(notebook, "code")
    assert code[0].startswith("%%writefile recipe.yaml\nname: addmul\n")
    assert code[1].startswith("%%writefile tiny_models.py\n")
    assert "class AddMul(nn.Module):" in code[1]


@pytest.mark.slow
def test_notebook_runs_and_prints_old_and_new_numbers(cpu_bundle: Path, tmp_path: Path) -> None:
    from nbclient import NotebookClient

    manifest = read_manifest(cpu_bundle)
    notebook = reproducer_notebook(manifest, read_recipe_text(cpu_bundle) or "")
    client = NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp_path}})
    client.execute()
    outputs = "".join(
        out.get("text", "") for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs
    )
    assert "addmul: ok in " in outputs
    assert (tmp_path / "results" / "addmul" / "manifest.json").is_file()
    table = outputs[outputs.index("original") :].splitlines()
    assert table[0].split() == ["original", "reproduced"]
    new = read_manifest(tmp_path / "results" / "addmul")
    assert new.metrics.eager is not None and manifest.metrics.eager is not None
    eager = next(line for line in table if line.startswith("eager median (ms)")).split()[3:]
    assert eager == [f"{manifest.metrics.eager.median_ms:.3f}", f"{new.metrics.eager.median_ms:.3f}"]


def test_credentials_in_the_recipe_and_its_modules_are_not_embedded(tmp_path: Path, make_bundle: MakeBundle) -> None:
    token = "ghp_" + "Ab12" * 9
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "recipe.yaml").write_text("name: mlp\n")
    (tmp_path / "recipes" / "models.py").write_text(f'KEY = "{token}"\nURL = "https://u:pw-123@mirror.example/"\n')
    manifest = _python_manifest(read_manifest(make_bundle(tmp_path, "mlp")), "models:TinyMLP", "recipes/recipe.yaml")
    recipe_yaml = "name: mlp\ndescription: from https://bob:hunter22@weights.example/x\n"
    code = _sources(reproducer_notebook(manifest, recipe_yaml, base_dir=tmp_path), "code")
    assert code[:2] == [
        "%%writefile recipe.yaml\nname: mlp\ndescription: from https://bob:[redacted]@weights.example/x",
        '%%writefile models.py\nKEY = "[redacted]"\nURL = "https://u:[redacted]@mirror.example/"',
    ]


def test_a_site_notebook_embeds_only_the_bundles_own_copies(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A bundle from elsewhere names a recipe path on the building machine: nothing there is embedded."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "recipe.yaml").write_text("name: mlp\n")
    (outside / "models.py").write_text("PLAN = 'outside the bundle'\n")
    bundle = make_bundle(tmp_path / "results", "mlp")
    manifest = _python_manifest(read_manifest(bundle), "models:TinyMLP", str(outside / "recipe.yaml"))

    def code() -> list[str]:
        return _sources(reproducer_notebook(manifest, "name: mlp\n", bundle_dir=bundle), "code")

    assert not any("outside the bundle" in cell for cell in code())
    (bundle / "recipe_modules").mkdir()
    (bundle / "recipe_modules" / "models.py").symlink_to(outside / "models.py")
    assert not any("outside the bundle" in cell for cell in code())  # a link out is not followed
    (bundle / "recipe_modules" / "models.py").unlink()
    (bundle / "recipe_modules" / "models.py").write_text("class TinyMLP: ...\n")
    assert "%%writefile models.py\nclass TinyMLP: ..." in code()
