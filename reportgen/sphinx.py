"""The Sphinx extension: list ``"reportgen.sphinx"`` in a project's ``extensions``.

The directives live in :mod:`reportgen.sphinx_ext`; this module only delegates to it, lazily.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

__all__ = ["setup"]


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the ``perf-report``, ``perf-summary`` and ``perf-chart`` directives."""
    from reportgen.sphinx_ext import setup as setup_extension

    return setup_extension(app)
