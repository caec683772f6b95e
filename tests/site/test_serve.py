"""Tests of reportgen.site.serve and `reportgen serve`: a built site on 127.0.0.1."""

from __future__ import annotations

import http.client
import os
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from html.parser import HTMLParser
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.errors import SiteError
from reportgen.pipeline import build as build_site
from reportgen.site.serve import find_html_dir, make_server


def test_find_html_dir_accepts_the_html_or_the_source_dir(tmp_path: Path) -> None:
    html = tmp_path / "docs" / "_build" / "html"
    html.mkdir(parents=True)
    (html / "index.html").write_text("<p>hi</p>")
    assert find_html_dir(html) == html
    assert find_html_dir(tmp_path / "docs") == html
    with pytest.raises(SiteError) as info:
        find_html_dir(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: no built site here (no index.html, nor _build/html/index.html) "
        "(build it first: reportgen build RESULTS --out DIR)"
    )


def test_make_server_serves_files_on_loopback(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<p>report</p>")
    with make_server(tmp_path, port=0) as server:
        host, port = server.server_address[:2]
        assert host == "127.0.0.1"
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html", timeout=10) as response:
                assert response.status == 200
                assert response.read() == b"<p>report</p>"
        finally:
            server.shutdown()
            thread.join()


def test_make_server_port_in_use_is_a_site_error(tmp_path: Path) -> None:
    with make_server(tmp_path, port=0) as server:
        port = server.server_address[1]
        with pytest.raises(SiteError, match=rf"cannot listen on 127\.0\.0\.1:{port}: .*pick another --port"):
            make_server(tmp_path, port=port)


def test_cli_serve_without_a_site_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", str(tmp_path), "--port", "0"]) == 2
    assert capsys.readouterr().err == (
        f"reportgen: error: {tmp_path}: no built site here (no index.html, nor _build/html/index.html) "
        "(build it first: reportgen build RESULTS --out DIR)\n"
    )


# --- only the published site (issue 26) -------------------------------------------------------------


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[Path, int]]:
    """A published tree as a build leaves it (`_build/html` a link to `.html-a`), with what must never be
    served planted in and around it; yields (the tree, the port of a server of `_build/html`)."""
    build = tmp_path / "site" / "_build"
    tree = build / ".html-a"
    for name, text in {
        "index.html": "<p>front</p>",
        "reports/alpha/index.html": "<p>alpha</p>",
        "_static/reportgen.css": "p {}",
        "_images/chart.png": "png",
        ".buildinfo": "config",
        ".reportgen-build.json": '{"inputs": "x"}',
        ".doctrees/environment.pickle": "pickle",
        "reports/.hidden/index.html": "<p>hidden</p>",
        "reports/.secret": "secret",
    }.items():
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(text)
    (build / ".html-state").mkdir()
    (build / ".html-state" / "key").write_text("key")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside")
    (outside / "index.html").write_text("outside")
    (tree / "leak.txt").symlink_to(outside / "secret.txt")
    (tree / "out").symlink_to(outside)
    (tree / "reports" / "front.html").symlink_to(tree / "index.html")  # a link, even one that stays inside
    (tree / "reports" / "beta").mkdir()
    (tree / "reports" / "beta" / "index.html").symlink_to(outside / "index.html")
    os.mkfifo(tree / "pipe.html")
    (build / "html").symlink_to(".html-a")
    with make_server(build / "html", port=0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield tree, server.server_address[1]
        finally:
            server.shutdown()
            thread.join()


def _get(port: int, path: str, method: str = "GET") -> tuple[int, bytes, dict[str, str]]:
    """The status, body and headers of `path` sent as is (no client-side normalisation of `..` or `%2e`)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read(), dict(response.getheaders())
    finally:
        connection.close()


def test_published_pages_are_served(site: tuple[Path, int]) -> None:
    _, port = site
    assert _get(port, "/")[:2] == (200, b"<p>front</p>")
    assert _get(port, "/index.html")[:2] == (200, b"<p>front</p>")
    assert _get(port, "/reports/alpha/?highlight=x#top")[:2] == (200, b"<p>alpha</p>")
    assert _get(port, "/reports/%61lpha/index.html")[:2] == (200, b"<p>alpha</p>")
    assert _get(port, "/_static/reportgen.css")[:2] == (200, b"p {}")
    status, body, headers = _get(port, "/reports/alpha/index.html", "HEAD")
    assert (status, body, headers["Content-Length"]) == (200, b"", "12")
    status, _, headers = _get(port, "/reports/alpha")
    assert (status, headers["Location"]) == (301, "/reports/alpha/")


@pytest.mark.parametrize(
    "path",
    [
        "/.doctrees/environment.pickle",
        "/.reportgen-build.json",
        "/.buildinfo",
        "/%2edoctrees/environment.pickle",
        "/%2Ereportgen-build.json",
        "/reports/.hidden/index.html",
        "/reports/.hidden/",
        "/reports/.secret",
        "/reports/alpha/../.secret",
    ],
)
def test_dot_names_are_not_served(site: tuple[Path, int], path: str) -> None:
    assert _get(site[1], path)[0] == 404


@pytest.mark.parametrize(
    "path",
    [
        "/%2e%2e/",
        "/%2e%2e/.html-state/key",
        "/%2E%2E/%2E%2E/outside/secret.txt",
        "/reports/%2e%2e/%2e%2e/.html-state/key",
        "/..%2f.html-state/key",
        "/reports/..%2F..%2Findex.html",
        "/%2e%2e%2f%2e%2e%2foutside/secret.txt",
    ],
)
def test_parent_names_are_not_served(site: tuple[Path, int], path: str) -> None:
    assert _get(site[1], path)[0] == 404


@pytest.mark.parametrize(
    "path", ["/leak.txt", "/out/secret.txt", "/out/", "/out", "/reports/front.html", "/reports/beta/"]
)
def test_links_are_not_followed(site: tuple[Path, int], path: str) -> None:
    status, body, _ = _get(site[1], path)
    assert status == 404
    assert b"outside" not in body and b"front" not in body


@pytest.mark.parametrize("path", ["/_images/", "/reports/", "/_static/"])
def test_directories_are_not_listed(site: tuple[Path, int], path: str) -> None:
    status, body, _ = _get(site[1], path)
    assert status == 404
    assert b"chart.png" not in body and b"alpha" not in body and b"reportgen.css" not in body


@pytest.mark.parametrize("path", ["/pipe.html", "/index.html%00.png", "/" + "a" * 5000, "/index.html/x"])
def test_odd_paths_are_404_at_once(site: tuple[Path, int], path: str) -> None:
    """A FIFO would block a reader forever; a NUL or an overlong name would be an error of the OS."""
    assert _get(site[1], path)[0] == 404


def test_a_built_site_serves_no_build_state(tmp_path: Path, make_bundle: Callable[..., Path]) -> None:
    """A real build: its pages are served, its doctrees, stamp and key are not, at any spelling."""
    make_bundle(tmp_path / "results", "alpha")
    html = build_site(tmp_path / "results", tmp_path / "site")
    with make_server(html, port=0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            port = server.server_address[1]
            assert _get(port, "/reports/alpha/")[0] == 200
            for path in (
                "/.doctrees/environment.pickle",
                "/.doctrees/reports/alpha/index.doctree",
                "/.reportgen-build.json",
                "/%2e%2e/.html-state/key",
                "/%2e%2e/.html-state/html-a/stamp.json",
                "/%2e%2e/.html-state/html-a/doctrees/environment.pickle",
            ):
                assert _get(port, path)[0] == 404, path
        finally:
            server.shutdown()
            thread.join()


class _Refs(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.refs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.refs += [value for name, value in attrs if name in ("href", "src") and value]


def test_every_file_a_built_site_links_to_is_served(tmp_path: Path, make_bundle: Callable[..., Path]) -> None:
    """Honest sites lose nothing: each href and src of each page of a real build, requested as a browser would
    (relative to the page's URL), is 200."""
    make_bundle(tmp_path / "results", "alpha")
    make_bundle(tmp_path / "results", "beta")
    html = build_site(tmp_path / "results", tmp_path / "site")
    root = html.resolve()
    urls = set()
    for page in sorted(root.rglob("*.html")):
        parser = _Refs()
        parser.feed(page.read_text(encoding="utf-8"))
        base = "/" + page.relative_to(root).as_posix()
        for ref in parser.refs:
            parts = urllib.parse.urlsplit(urllib.parse.urljoin(base, ref))
            if not parts.scheme and not parts.netloc and parts.path:
                urls.add(parts.path)
    assert len(urls) > 30
    with make_server(html, port=0) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            failed = {url: status for url in sorted(urls) if (status := _get(server.server_address[1], url)[0]) != 200}
        finally:
            server.shutdown()
            thread.join()
    assert failed == {}
