"""Serve a built site on the loopback interface with the standard library's `http.server`."""

from __future__ import annotations

import functools
import http.server
from pathlib import Path

from reportgen.errors import SiteError

__all__ = ["HOST", "find_html_dir", "make_server"]

HOST = "127.0.0.1"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves files without logging each request to stderr."""

    def log_message(self, format: str, *args: object) -> None:
        """Log nothing."""


def find_html_dir(path: Path) -> Path:
    """`path` when it holds index.html, else its `_build/html` (a Sphinx source directory was given)."""
    for candidate in (path, path / "_build" / "html"):
        if (candidate / "index.html").is_file():
            return candidate
    raise SiteError(
        "no built site here (no index.html, nor _build/html/index.html)",
        path=path,
        hint="build it first: reportgen build RESULTS --out DIR",
    )


def make_server(html_dir: Path, port: int = 8000) -> http.server.ThreadingHTTPServer:
    """A server of `html_dir` bound to 127.0.0.1:`port` (0 = any free port); call `serve_forever`."""
    handler = functools.partial(_QuietHandler, directory=str(html_dir))
    try:
        return http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise SiteError(f"cannot listen on {HOST}:{port}: {exc.strerror}", hint="pick another --port") from exc
