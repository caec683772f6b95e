"""Names from a results directory that become paths: a safe alphabet, checked once where a walk reads them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from reportgen.bundle import (
    HISTORY_DIR,
    MANIFEST_FILE,
    is_bundle_name,
    is_run_id,
    iter_bundles,
    iter_kept_runs,
)
from reportgen.bundle.archive import run_id
from reportgen.recipe import load_recipe
from tests.conftest import MakeBundle

__all__: list[str] = []

RECIPES = Path(__file__).resolve().parents[1] / "data" / "recipes"
HOSTILE_NAMES = [
    'a"b',  # an attribute breakout in the theme's links
    "a b",  # a space: broke the build
    "a<b",
    "index.md",  # the reports index itself
    "INDEX.md",
    "search",
    "genindex.html",
    "x.rst",
    "a\x1b[31mred",  # a terminal escape
    "a\u202eb",  # a right-to-left override
    "caf\u00e9",  # non-ASCII
    "-rf",  # an option to whatever runs it
    "a\nb",
    "a" * 129,
    "a`b",
    "a{b}",
    "a%2e",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_hostile_names_are_not_bundle_names(name: str) -> None:
    assert not is_bundle_name(name)


def test_every_name_a_run_writes_is_a_bundle_name_and_a_run_id() -> None:
    """Recipe names, `<recipe>--<variant>` and run ids, as the run stage makes them."""
    names = []
    for path in sorted(RECIPES.glob("*.yaml")):
        recipe = load_recipe(path)
        names += [recipe.bundle_name(None), *(recipe.bundle_name(v) for v in recipe.variants)]
    names += ["a" * 64 + "--" + "b" * 32, "mixnet_l.v2--max-autotune"]
    assert len(names) > 15 and all(is_bundle_name(n) for n in names), [n for n in names if not is_bundle_name(n)]
    ids = [run_id({"started_at": "2026-11-25T10:54:35+00:00"}), run_id({})]
    assert ids[1].startswith("unknown-") and all(is_run_id(i) for i in ids)
    assert not is_run_id("..") and not is_run_id(".x") and not is_run_id("a/b")


def _bundle_dir(results: Path, name: str) -> None:
    (results / name).mkdir(parents=True)
    (results / name / MANIFEST_FILE).write_text("{}")


def test_discovery_skips_bundle_directories_with_hostile_names(
    tmp_path: Path, make_bundle: MakeBundle, caplog: pytest.LogCaptureFixture
) -> None:
    results = tmp_path / "results"
    make_bundle(results, "quickstart")
    hostile = ['a"b', "a b", "a<b", "index.md", "a\x1b]8;;x\x07", "caf\u00e9"]
    for name in hostile:
        _bundle_dir(results, name)
    with caplog.at_level(logging.WARNING):
        found = [p.name for p in iter_bundles(results)]
    assert found == ["quickstart"]
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == len(hostile)  # one located warning each
    assert all(str(results) in m and "\x1b" not in m for m in skipped)


def test_kept_runs_with_hostile_names_are_skipped(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results = tmp_path / "results"
    make_bundle(results, "quickstart")
    good = results / HISTORY_DIR / "quickstart" / "20260101T000000-0123abcd"
    good.mkdir(parents=True)
    (good / MANIFEST_FILE).write_text("{}")
    for home, run in (("quickstart", "a b"), ("quickstart", ".hidden"), ('a"b', "20260101T000000-0123abcd")):
        _bundle_dir(results / HISTORY_DIR / home, run)
    runs = [(name, path.relative_to(results).as_posix()) for name, path in iter_kept_runs(results)]
    assert runs == [("quickstart", "quickstart"), ("quickstart", f"{HISTORY_DIR}/quickstart/{good.name}")]


def test_a_bundle_named_index_md_does_not_reach_the_reports(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A directory named `index.md` aborted the render with a traceback: it is skipped, the others render."""
    from reportgen.render import render_site_pages

    results = tmp_path / "results"
    make_bundle(results, "quickstart")
    make_bundle(results, "other").rename(results / "index.md")
    render_site_pages(results, tmp_path / "reports")
    assert (tmp_path / "reports" / "index.md").is_file() and (tmp_path / "reports" / "quickstart").is_dir()
    assert sorted(p.name for p in (tmp_path / "reports").iterdir() if p.is_dir()) == ["quickstart"]


@pytest.mark.parametrize("name", ["../../x", "/tmp/x", "a b", "index", "x\n", 'q"uote'])
def test_a_manifest_naming_its_bundle_with_a_hostile_name_is_refused(
    tmp_path: Path, make_bundle: MakeBundle, name: str
) -> None:
    """`manifest.name` is what a kept run's page links to and what the history looks a bundle up by: a foreign
    manifest's name must be a bundle name too, whatever its directory is called."""
    import json

    from reportgen.bundle import MANIFEST_FILE, read_manifest
    from reportgen.errors import BundleError

    bundle_dir = make_bundle(tmp_path, "mixnet")
    data = json.loads((bundle_dir / MANIFEST_FILE).read_text())
    data["name"] = name
    (bundle_dir / MANIFEST_FILE).write_text(json.dumps(data))
    with pytest.raises(BundleError, match="name"):
        read_manifest(bundle_dir)
