"""Every relative link of a built site resolves, with no network: `sphinx-build -W -n` (nitpicky, warnings
are errors) checks cross-references while building; a crawler over the HTML checks every href and src."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from reportgen.bundle import RunStatus
from reportgen.escape import PAGE_SCHEME
from reportgen.pipeline import build as build_site
from tests.data import CPU_HISTORY

MakeBundle = Callable[..., Path]

GPU_BUNDLE = Path(__file__).resolve().parents[1] / "data" / "bundles" / "fused_add_mul"
_REF_ATTRS = {"href", "src"}


class _Refs(HTMLParser):
    """Collects the href/src values and the element ids of one page."""

    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value is not None and name in _REF_ATTRS:
                self.refs.append(value)
            elif value is not None and name == "id":
                self.ids.add(value)


def _parse(page: Path) -> _Refs:
    parser = _Refs()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def _local_refs(page: Path) -> Iterator[tuple[str, Path, str]]:
    """(ref, target file, fragment) of each link of `page` to another file of the site."""
    for ref in _parse(page).refs:
        parts = urlsplit(ref)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # external, mailto:, data:, or a fragment of the page itself
        target = page.parent / unquote(parts.path)
        yield ref, target / "index.html" if ref.endswith("/") else target, unquote(parts.fragment)


def _broken_refs(html: Path) -> tuple[list[str], int]:
    """Links of the site under `html` whose file (or element id) is missing, and how many were checked."""
    broken, checked = [], 0
    ids: dict[Path, set[str]] = {}
    for page in sorted(html.rglob("*.html")):
        for ref, target, fragment in _local_refs(page):
            checked += 1
            if not target.resolve().is_file():
                broken.append(f"{page.relative_to(html)}: {ref} (no such file)")
                continue
            if fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = _parse(target).ids
                if fragment not in ids[target]:
                    broken.append(f"{page.relative_to(html)}: {ref} (no element with id {fragment!r})")
    return broken, checked


def test_every_relative_link_and_image_of_the_site_resolves(tmp_path: Path, make_bundle: MakeBundle) -> None:
    results = tmp_path / "results"
    shutil.copytree(GPU_BUNDLE, results / "h200-fused_add_mul")
    make_bundle(results, "mixnet", title="Mixnet <L>")
    make_bundle(results, "crash", status=RunStatus.failed)
    html = build_site(results, tmp_path / "site")
    pages = {str(p.relative_to(html)) for p in html.rglob("*.html")}
    assert {"reports/index.html", "reports/h200-fused_add_mul/index.html", "reports/crash/index.html"} <= pages
    broken, checked = _broken_refs(html)
    assert not broken, "\n".join(broken)
    assert checked > 100
    index = (html / "reports" / "index.html").read_text(encoding="utf-8")
    assert 'alt="Speedup of torch.compile per run" class="reportgen-chart" src="../_images/speedups.png"' in index
    assert 'href="h200-fused_add_mul/index.html"' in index


_MYST_TARGETS = re.compile(r"\]\(<([^>]*)>\)|\{doc\}`[^`]*<([^>]*)>`")


def test_a_runs_pages_leave_its_directory_only_by_page_urls(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """Each run's pages can be built without the others' (issue 29): from `reports/<run>/`, a link to another
    run's pages (variants, the kept runs of a trend page, a kept run's latest) is a `reportgen-page:` URL, never a
    cross-reference Sphinx would need the other run's pages for; and every such URL resolves in the HTML."""
    results = tmp_path / "results"
    shutil.copytree(CPU_HISTORY, results)
    for variant in ("default", "max-autotune"):
        manifest = make_bundle(results, f"mix--{variant}") / "manifest.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text(encoding="utf-8")), "variant": variant}))
    html = build_site(results, tmp_path / "site")
    broken, _ = _broken_refs(html)
    assert not broken, "\n".join(broken)
    reports = tmp_path / "site" / "reports"
    inside, crossing, stray = 0, set(), []
    for page in sorted(reports.glob("*/**/*.md")):
        run = reports / page.relative_to(reports).parts[0]
        for match in _MYST_TARGETS.finditer(page.read_text(encoding="utf-8")):
            target = match.group(1) or match.group(2)
            if target.startswith(f"{PAGE_SCHEME}:"):
                other = (page.parent / target.removeprefix(f"{PAGE_SCHEME}:")).resolve()
                assert (html / other.relative_to(reports.parent.resolve())).with_suffix(".html").is_file(), target
                crossing.add((run.name, other.parent.name))
            elif (page.parent / target).resolve().is_relative_to(run.resolve()):
                inside += 1
            else:
                stray.append(f"{page.relative_to(reports)}: {target}")
    assert not stray, "\n".join(stray)
    assert inside > 10
    assert ("mix--default", "mix--max-autotune") in crossing  # variants
    kept = sorted(d.name for d in reports.iterdir() if "~" in d.name)
    assert len(kept) >= 2
    assert {("addmul", name) for name in kept} <= crossing  # the trend page to the kept runs
    assert (kept[0], "addmul") in crossing  # a kept run to its latest
