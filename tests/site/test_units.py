"""Tests of reportgen.site.units and site.search: each run's pages built apart, their search entries merged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from sphinx.search import js_index

from reportgen.pipeline import build as build_site
from reportgen.site.stamp import BuildStamp
from reportgen.site.units import stale_units, unit_names

MakeBundle = Callable[..., Path]


def _stamp(inputs: str = "x", **changes: tuple[int, int]) -> BuildStamp:
    sources = {
        "index.md": (10, 1),
        "conf.py": (10, 1),
        "reports/index.md": (10, 1),
        "reports/overview.inc": (10, 1),
        "reports/a/index.md": (10, 1),
        "reports/a/kernels/k.md": (10, 1),
        "reports/a~20260101T000000-00000001/index.md": (10, 1),
        "reports/b/index.md": (10, 1),
        "reports/b/b-chart.png": (10, 1),
    }
    return BuildStamp(inputs=inputs, sources={**sources, **{k.replace("__", "/"): v for k, v in changes.items()}})


def test_which_units_a_change_makes_stale() -> None:
    before = _stamp()
    assert unit_names(before.sources) == {"a", "a~20260101T000000-00000001", "b"}
    assert stale_units(None, before) == unit_names(before.sources)  # a first build: all
    assert stale_units(before, _stamp()) == set()
    assert stale_units(before, _stamp(inputs="y")) == unit_names(before.sources)  # reportgen or Sphinx changed
    # the generated index and overview change on every build: no unit shows more than their titles
    assert stale_units(before, _stamp(**{"reports__index.md": (11, 2), "reports__overview.inc": (12, 2)})) == set()
    assert stale_units(before, _stamp(**{"reports__b__b-chart.png": (11, 2)})) == {"b"}
    assert stale_units(before, _stamp(**{"reports__a__kernels__k.md": (10, 2)})) == {"a"}
    assert stale_units(before, _stamp(**{"reports__c__index.md": (1, 1)})) == {"c"}  # a new run
    # the site's own pages (its front page, conf.py, a user's page) are in every unit's sidebar or build
    for shared in ("index.md", "conf.py", "guide__intro.md"):
        assert stale_units(before, _stamp(**{shared.replace("/", "__"): (99, 9)})) == unit_names(before.sources)


def _searched(html: Path) -> dict[str, object]:
    index = js_index.loads((html / "searchindex.js").read_text(encoding="utf-8"))
    assert isinstance(index, dict)
    return index


def test_the_sites_search_finds_every_runs_pages(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """The site's own project indexes its pages only; the units' entries are merged in, in docname order, and a
    removed run's pages leave the index."""
    results = tmp_path / "results"
    for name, title in (("alpha", "Zyxwvut alpha"), ("beta", "Qwertyuiop beta")):
        make_bundle(results, name, title=title)
    html = build_site(results, tmp_path / "site")
    index = _searched(html)
    docnames = index["docnames"]
    assert isinstance(docnames, list)
    assert docnames == sorted(docnames)
    assert {"index", "reports/index", "reports/alpha/index", "reports/beta/index"} <= set(docnames)
    titles, terms = index["titles"], index["titleterms"]
    assert isinstance(titles, list) and isinstance(terms, dict)
    assert titles[docnames.index("reports/alpha/index")] == "Zyxwvut alpha"
    assert terms["zyxwvut"] == docnames.index("reports/alpha/index")
    assert terms["qwertyuiop"] == docnames.index("reports/beta/index")
    (results / "beta" / "manifest.json").unlink()
    for path in sorted((results / "beta").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    (results / "beta").rmdir()
    index = _searched(build_site(results, tmp_path / "site"))
    docnames = index["docnames"]
    assert isinstance(docnames, list) and "reports/beta/index" not in docnames
    terms = index["titleterms"]
    assert isinstance(terms, dict) and "qwertyuiop" not in terms
    assert terms["zyxwvut"] == docnames.index("reports/alpha/index")
    assert not (html / "reports" / "beta").exists()


def test_a_runs_pages_have_the_sites_sidebar(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A unit is built with the site's own pages, read for their titles alone: a report page's sidebar leads to
    the site's front page and its reports index, as on a site built as one project."""
    results = tmp_path / "results"
    make_bundle(results, "alpha")
    make_bundle(results, "beta")
    page = (build_site(results, tmp_path / "site") / "reports" / "alpha" / "index.html").read_text(encoding="utf-8")
    assert 'class="sidebar-brand" href="../../index.html"' in page
    assert '<a class="reference internal" href="../index.html">Reports</a>' in page
    assert "beta" not in page  # nothing of the index's rows
