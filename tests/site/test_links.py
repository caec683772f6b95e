"""Every relative link of a built site resolves, with no network: `sphinx-build -W -n` (nitpicky, warnings
are errors) checks cross-references while building; a crawler over the HTML checks every href and src."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

from reportgen.bundle import RunStatus
from reportgen.pipeline import build as build_site

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
