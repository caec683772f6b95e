"""`pip install reportgen` with no extras, in a fresh virtual environment, as a team's docs build gets it."""

from __future__ import annotations

import shutil
import subprocess
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "tests" / "data" / "bundles" / "fused_add_mul"


def _pip(python: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(python), "-m", "pip", *args], capture_output=True, text=True, check=False)


@pytest.mark.slow
def test_a_docs_only_install_has_no_torch_and_still_embeds_a_gpu_bundle(tmp_path: Path) -> None:
    venv.EnvBuilder(with_pip=True).create(tmp_path / "venv")
    python = tmp_path / "venv" / "bin" / "python"
    source = tmp_path / "src"  # a copy: building the wheel leaves nothing in the checkout
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".nox", ".git", "tests", "docs", "results*", ".*"))
    installed = _pip(python, "install", "--quiet", "--disable-pip-version-check", str(source))
    assert installed.returncode == 0, installed.stdout + installed.stderr
    names = {line.split("==")[0].lower() for line in _pip(python, "freeze").stdout.split()}
    assert "reportgen" in names and "sphinx" in names
    assert not names & {"torch", "triton", "furo"}, sorted(names)
    assert not any(name.startswith("nvidia-") for name in names), sorted(names)
    assert _pip(python, "check").returncode == 0  # nothing it requires is missing

    # The extension, added in one line, draws a page from a GPU bundle.
    project = tmp_path / "docs"
    project.mkdir()
    (project / "conf.py").write_text('extensions = ["reportgen.sphinx"]\n', encoding="utf-8")
    shutil.copytree(BUNDLE, project / "fused_add_mul")
    (project / "index.md").write_text("# Perf\n\n```{perf-report} fused_add_mul\n```\n", encoding="utf-8")
    built = subprocess.run(
        [str(python), "-m", "sphinx", "-W", "-q", "-b", "html", str(project), str(tmp_path / "html")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    html = (tmp_path / "html" / "index.html").read_text(encoding="utf-8")
    assert "triton_poi_fused_add_mul_0" in html and "NVIDIA H200" in html

    # A command that runs recipes says which extra it needs, and nothing else happens.
    recipe = ROOT / "recipes" / "quickstart.yaml"
    ran = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "reportgen"), "run", str(recipe), "-o", str(tmp_path / "results")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "pip install 'reportgen[run]'" in ran.stderr and "torch" in ran.stderr
    assert not (tmp_path / "results").exists()


def test_the_extras_are_declared_once() -> None:
    """pyproject's extras bring the modules `pins.EXTRAS` names (the CLI's messages come from there)."""
    import tomllib

    from reportgen.pins import EXTRAS

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = " ".join(project["dependencies"])
    for extra, module in EXTRAS.items():
        assert any(req.startswith(module) for req in project["optional-dependencies"][extra]), extra
        assert module not in core, f"{module} is a core dependency: a docs build would pull it"
