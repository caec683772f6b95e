"""A real site build from bundles made elsewhere: one whose numbers are NaN, Infinity and 1e999, one whose recipe
sets a secret-named variable. The build exits normally, the pages show "—" where a number was not one, and the
secret's value is nowhere in the published site."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from reportgen.pipeline import build as build_site

__all__: list[str] = []

MakeBundle = Callable[..., Path]
SECRET = "hunter2"
"""A value with no token shape under a secret-sounding name: only the name says it is one."""


def _numbers(bundle: Path) -> None:
    """Kernel times Infinity and 1e999, a share NaN; the compile time NaN, a step-time sample -Infinity."""
    analysis = json.loads((bundle / "analysis.json").read_text())
    rows = analysis["kernels"]["kernels"]
    rows[0]["device_time_us"], rows[1]["device_time_us"], rows[2]["share"] = "@INF", "@BIG", "@NAN"
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["metrics"]["compile_time_s"] = "@NAN"
    manifest["metrics"]["eager"]["samples_ms"][0] = "@-INF"
    for path, data in ((bundle / "analysis.json", analysis), (bundle / "manifest.json", manifest)):
        text = json.dumps(data)
        for token, literal in (("@INF", "Infinity"), ("@BIG", "1e999"), ("@NAN", "NaN"), ("@-INF", "-Infinity")):
            text = text.replace(f'"{token}"', literal)
        path.write_text(text)


def _secret_env(bundle: Path) -> None:
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["recipe"]["env"] = {"SERVICE_PASSWORD": SECRET, "TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1"}
    manifest["environment"]["env"]["SERVICE_PASSWORD"] = SECRET
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    recipe = (bundle / "recipe.yaml").read_text()
    (bundle / "recipe.yaml").write_text(recipe + f"env:\n  SERVICE_PASSWORD: {SECRET}\n")


def test_a_site_from_hostile_values_builds_and_publishes_none_of_them(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results = tmp_path / "results"
    _numbers(make_bundle(results, "numbers"))
    _secret_env(make_bundle(results, "secret"))
    make_bundle(results, "honest")
    html = build_site(results, tmp_path / "site")  # raises SiteError on a failed sphinx-build
    page = (html / "reports" / "numbers" / "index.html").read_text()
    text = re.sub(r"<[^>]+>", " ", page)
    assert not re.search(r"\b(nan|inf|infinity)\b", text, re.IGNORECASE), "a non-number was published"
    assert "—" in text
    assert "triton_red_fused_sum_2" in page  # the rows with real numbers are there
    assert "triton_per_fused__native_batch_norm_legit_functional_0" not in page  # the Infinity row is not
    assert (html / "reports" / "honest" / "index.html").is_file()
    published = [p for p in html.resolve().rglob("*") if p.is_file() and ".doctrees" not in p.parts]
    leaks = [p for p in published if SECRET.encode() in p.read_bytes()]
    assert not leaks, f"{SECRET!r} published in {leaks}"
    written = [p for p in (tmp_path / "site").rglob("*") if p.is_file() and not p.is_symlink()]  # pages, caches
    assert not [p for p in written if SECRET.encode() in p.read_bytes()], "the site's own files keep the secret"
    assert (html / "reports" / "secret" / "index.html").is_file()
