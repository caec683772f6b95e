"""Secrets and injection, end to end: nothing secret-looking reaches any output file; no user text becomes markup.

A real `reportgen report` runs two recipes with credentials planted in its environment: `leaky_ok`
prints them and runs to the end (trace, analysis, source pages, downloads), `leaky` prints them and
raises an error holding one, next to an HTML payload; its title and description carry `<script>`,
MyST directive and role syntax. Every file of the output tree (bundles, site sources, HTML, notebooks,
gzip and tar.gz archives decompressed) is then searched for each secret.
"""

from __future__ import annotations

import gzip
import os
import secrets
import string
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from reportgen.bundle import RunStatus, read_manifest

__all__: list[str] = []

RECIPES = Path(__file__).resolve().parent / "data" / "recipes"
ALNUM = string.ascii_letters + string.digits


def _random(length: int, alphabet: str = ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(length))


def _planted() -> dict[str, str]:
    """Fresh credentials of each kind (escaping-proof characters only), by variable name."""
    return {
        "HF_TOKEN": "hf_" + _random(34),
        "GITHUB_TOKEN": "ghp_" + _random(36),
        "AWS_SECRET_ACCESS_KEY": _random(40),
        "MY_PASSWORD": "correct-horse-" + _random(12, string.ascii_lowercase),
        "TORCH_REPORTGEN_NOTE": "sk-" + _random(40),
    }


DATABASE_PASSWORD = "pw-" + _random(12)
DATABASE_URL = f"postgres://reportgen:{DATABASE_PASSWORD}@db.example/metrics"
"""An innocently named variable whose value holds a password: the URL is kept, its password is not."""
FIXED_SECRETS = {
    "recipe description": "recipe-password-42",
    "model source URL": "source-password-42",
    "model source token": "hf_SourceCodeTokenNeverPublished0042",
}
"""Credentials written into the recipe (leaky_ok.yaml) and its model's source (tiny_models.py)."""


@dataclass(frozen=True)
class Report:
    """The report's working directory, the finished process and the planted secrets."""

    work: Path
    proc: subprocess.CompletedProcess[str]
    planted: dict[str, str]

    @property
    def html(self) -> Path:
        return self.work / "site" / "_build" / "html"


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    work = tmp_path_factory.mktemp("secrets")
    planted = _planted()
    recipes = [str(RECIPES / f"{name}.yaml") for name in ("leaky", "leaky_ok")]
    command = [sys.executable, "-m", "reportgen", "report", *recipes, "-o", "results", "--out", "site"]
    env = {**os.environ, **planted, "DATABASE_URL": DATABASE_URL}
    proc = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=1200)
    return Report(work, proc, planted)


def _contents(path: Path) -> bytes:
    """A file's bytes; gzip files (trace.json.gz, modules.tar.gz) decompressed."""
    data = path.read_bytes()
    return gzip.decompress(data) if data.startswith(b"\x1f\x8b") else data


def _hits(root: Path, needle: str) -> list[str]:
    """Files under `root` whose contents hold `needle`."""
    return [
        str(path.relative_to(root)) for path in root.rglob("*") if path.is_file() and needle.encode() in _contents(path)
    ]


@pytest.mark.slow
def test_the_runs_ended_as_planned_and_the_site_built(report: Report) -> None:
    assert report.proc.returncode == 1, report.proc.stdout + report.proc.stderr
    assert "site: " in report.proc.stdout
    results = report.work / "results"
    assert read_manifest(results / "leaky").status is RunStatus.failed
    assert read_manifest(results / "leaky_ok").status is RunStatus.ok
    assert (results / "leaky_ok" / "analysis.json").is_file()


@pytest.mark.slow
def test_printed_secrets_were_redacted_not_dropped(report: Report) -> None:
    for name in ("leaky", "leaky_ok"):
        log = (report.work / "results" / name / "run.log").read_text(encoding="utf-8")
        for variable in report.planted:
            assert f"{variable}=[redacted]" in log, (name, variable)
        assert "DATABASE_URL=postgres://reportgen:[redacted]@db.example/metrics" in log
    error = read_manifest(report.work / "results" / "leaky").error
    assert error is not None and "login failed with [redacted]" in error


@pytest.mark.slow
def test_what_was_redacted_is_counted_in_the_manifest_and_on_the_page(report: Report) -> None:
    manifest = read_manifest(report.work / "results" / "leaky_ok")
    found = {(r.kind, r.where): r.count for r in manifest.redactions}
    assert found[("value of a secret variable", "run.log")] == 6  # five secrets and DATABASE_URL's password
    assert found[("password in a URL", "recipe.yaml")] == 1 and found[("password in a URL", "recipe")] == 1
    assert (
        manifest.recipe.description
        == "Weights from https://bob:[redacted]@weights.example/x (a password in the recipe's own text)"
    )
    page = (report.html / "reports" / "leaky_ok" / "index.html").read_text(encoding="utf-8")
    assert found[("password in a URL", "recipe_modules/")] == 1  # tiny_models.py's MIRROR
    assert (
        "Redacted secrets" in page and "3 × password in a URL (recipe: 1, recipe.yaml: 1, recipe_modules/: 1)" in page
    )


@pytest.mark.slow
def test_no_secret_anywhere_in_the_output_tree(report: Report) -> None:
    files = [path for path in report.work.rglob("*") if path.is_file()]
    assert any(path.suffix == ".html" for path in files)
    secrets = {**report.planted, "DATABASE_URL": DATABASE_PASSWORD, **FIXED_SECRETS}
    found = {name: _hits(report.work, value) for name, value in secrets.items()}
    assert found == {name: [] for name in secrets}
    notebook = (report.work / "site" / "reports" / "leaky_ok" / "reproduce.ipynb").read_text(encoding="utf-8")
    assert 'MIRROR = \\"https://reportgen:[redacted]@models.example/v1\\"' in notebook  # the source, redacted
    for value in report.planted.values():
        assert value not in report.proc.stdout + report.proc.stderr


@pytest.mark.slow
def test_markup_in_title_description_and_error_stays_text(report: Report) -> None:
    pages = list(report.html.rglob("*.html"))
    assert pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "<script>alert" not in text, page
        assert "<img src=x" not in text, page
    leaky = (report.html / "reports" / "leaky" / "index.html").read_text(encoding="utf-8")
    assert "Injected &lt;script&gt;alert(1)&lt;/script&gt;" in leaky
    assert "{eval-rst}" in leaky and "{raw}" in leaky
    assert "&lt;img src=x onerror=alert(1)&gt;" in leaky
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in leaky
