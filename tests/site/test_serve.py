"""Tests of reportgen.site.serve and `reportgen serve`: a built site on 127.0.0.1."""

from __future__ import annotations

import threading
import urllib.request
from pathlib import Path

import pytest

from reportgen.cli import main
from reportgen.errors import SiteError
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
