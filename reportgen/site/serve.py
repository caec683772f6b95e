"""Serve a built site on the loopback interface with the standard library's `http.server`.

Only the published site: a request is answered with a regular file below the HTML directory (the tree its
link points to now), reached without a link and through no name that starts with a dot (`..`, `.buildinfo`,
doctrees or stamps an older reportgen left in a tree), a directory with its `index.html`; everything else is
404, and there are no directory listings.
"""

from __future__ import annotations

import email.utils
import functools
import http.server
import os
import stat
import urllib.parse
from http import HTTPStatus
from pathlib import Path
from typing import BinaryIO

from reportgen.errors import SiteError

__all__ = ["HOST", "find_html_dir", "make_server", "published_file"]

HOST = "127.0.0.1"
_INDEX = "index.html"
_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK
"""Open without following a link, and without blocking on a FIFO."""


def published_file(root: Path, url_path: str) -> tuple[Path, bool] | None:
    """The file that `url_path` (percent-encoded, as in the request line) names below `root`, and whether it
    named a directory (its `index.html`); None when it is not a published file: a part starts with a dot or
    holds NUL, a part is a link, or it ends at anything but a regular file (or a directory with one)."""
    parts = [part for part in urllib.parse.unquote(url_path, errors="surrogateescape").split("/") if part]
    if any(part.startswith(".") or "\0" in part for part in parts):
        return None
    path = root.joinpath(*parts)
    try:
        for depth in range(1, len(parts) + 1):
            if stat.S_ISLNK(os.lstat(root.joinpath(*parts[:depth])).st_mode):
                return None
        directory = stat.S_ISDIR(os.lstat(path).st_mode)
        if directory:
            path = path / _INDEX
        return (path, directory) if stat.S_ISREG(os.lstat(path).st_mode) else None
    except (OSError, ValueError):
        return None


class _SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the published files of one site (`published_file`), GET and HEAD, without logging requests."""

    def send_head(self) -> BinaryIO | None:
        """Send the headers of the requested file and return it open, or send 404 (or 301 to a directory's
        `/`) and return None."""
        url_path = urllib.parse.urlsplit(self.path).path
        found = published_file(Path(os.path.realpath(self.directory)), url_path)
        if found is None:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        path, directory = found
        if directory and not url_path.endswith("/"):
            parts = [part for part in urllib.parse.unquote(url_path, errors="surrogateescape").split("/") if part]
            self.send_response(HTTPStatus.MOVED_PERMANENTLY)
            self.send_header("Location", "/" + "".join(f"{urllib.parse.quote(part)}/" for part in parts))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        try:
            handle = os.fdopen(os.open(path, _OPEN_FLAGS), "rb")
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):
            handle.close()
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-type", self.guess_type(str(path)))
        self.send_header("Content-Length", str(status.st_size))
        self.send_header("Last-Modified", email.utils.formatdate(status.st_mtime, usegmt=True))
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        return handle

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        """No directory listings."""
        self.send_error(HTTPStatus.NOT_FOUND, "File not found")

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
    """A server of the published files of `html_dir` (`published_file`) bound to 127.0.0.1:`port` (0 = any
    free port); call `serve_forever`."""
    handler = functools.partial(_SiteHandler, directory=str(html_dir))
    try:
        return http.server.ThreadingHTTPServer((HOST, port), handler)
    except OSError as exc:
        raise SiteError(f"cannot listen on {HOST}:{port}: {exc.strerror}", hint="pick another --port") from exc
