"""Site stage: pages → HTML. A Sphinx project around the rendered report pages, built with
`sphinx-build -W`, one build of a site at a time, the previous HTML kept until the new one is whole."""

from __future__ import annotations

from reportgen.site.build import (
    REPORTS_DIR,
    STATIC_DIR,
    build_html,
    default_html_dir,
    ensure_project,
    merged_results,
    run_sphinx,
)
from reportgen.site.lock import DEFAULT_LOCK_TIMEOUT_S, LOCK_FILE, build_lock
from reportgen.site.serve import find_html_dir, make_server

__all__ = [
    "DEFAULT_LOCK_TIMEOUT_S",
    "LOCK_FILE",
    "REPORTS_DIR",
    "STATIC_DIR",
    "build_html",
    "build_lock",
    "default_html_dir",
    "ensure_project",
    "find_html_dir",
    "make_server",
    "merged_results",
    "run_sphinx",
]
