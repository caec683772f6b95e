"""Tests of reportgen.render.redactions: the page says what was redacted; bundles from elsewhere are redacted again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reportgen.bundle import Redaction, RunStatus, load_bundle, read_manifest
from reportgen.render import render_site_pages
from reportgen.render.redactions import redacted_bundle, redactions_section

__all__: list[str] = []

MakeBundle = Callable[..., Path]


def test_the_section_counts_by_kind_and_place(tmp_path: Path, make_bundle: MakeBundle) -> None:
    manifest = read_manifest(make_bundle(tmp_path, "x")).model_copy(
        update={
            "redactions": [
                Redaction(kind="password in a URL", where="recipe", count=1),
                Redaction(kind="password in a URL", where="run.log", count=2),
                Redaction(kind="Hugging Face token", where="modules/", count=1),
            ]
        }
    )
    assert redactions_section(manifest) == (
        "## Redacted secrets\n\n"
        "Credentials the run met were replaced by `[redacted]` before its bundle was written:\n\n"
        "- 1 × Hugging Face token (modules/: 1)\n"
        "- 3 × password in a URL (recipe: 1, run.log: 2)"
    )
    assert redactions_section(manifest.model_copy(update={"redactions": []})) == ""


def test_a_bundle_made_elsewhere_is_redacted_at_render_time(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """An older or foreign bundle whose error, log and recipe copy still hold credentials: the page has none."""
    bundle = make_bundle(tmp_path / "results", "x", status=RunStatus.failed)
    token = "hf_" + "Zy98" * 8
    manifest = read_manifest(bundle).model_copy(update={"error": f"login failed for {token}"})
    (bundle / "manifest.json").write_text(manifest.model_dump_json())
    (bundle / "run.log").write_text(f"connecting to postgres://u:pw-777@db/x\n{token}\n")
    (bundle / "recipe.yaml").write_text(f"name: x\ndescription: {token}\n")
    assert redacted_bundle(load_bundle(bundle)).manifest.error == "login failed for [redacted]"
    render_site_pages(tmp_path / "results", tmp_path / "reports")
    for path in (tmp_path / "reports").rglob("*"):
        if path.is_file():
            text = path.read_bytes()
            assert token.encode() not in text and b"pw-777" not in text, path
    page = (tmp_path / "reports" / "x" / "index.md").read_text()
    assert "login failed for \\[redacted\\]" in page or "login failed for [redacted]" in page
