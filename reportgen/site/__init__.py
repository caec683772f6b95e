"""Site stage: a Sphinx project around the rendered report pages, built to HTML."""

from __future__ import annotations

from reportgen.site.build import STATIC_DIR, build_site

__all__ = ["STATIC_DIR", "build_site"]
