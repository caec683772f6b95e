"""Names a results directory gives that become paths: bundle directory names and kept runs' ids.

They come from the directories of a results directory that may have been made elsewhere, so each is checked
once, where a walk reads it (`iter_bundles`, `iter_kept_runs`): a name outside `SAFE_NAME` (a space, `"`, `<`,
a leading dot, `..`, a control character, anything non-ASCII) or one that names the site's own pages
(`index.md`, `search`, ...) is not a bundle; the walk skips it with one warning. Every name the run stage
writes passes: a recipe name (`recipe.NAME_RE`), `<recipe>--<variant>` and a run id (`archive.run_id`).
"""

from __future__ import annotations

import re

from reportgen.recipe import RESERVED_PAGE_NAMES, SOURCE_SUFFIXES

__all__ = ["MAX_NAME_CHARS", "SAFE_NAME", "is_bundle_name", "is_run_id", "name_problem"]

MAX_NAME_CHARS = 128
"""A bundle name is at most a 64-character recipe name, `--` and a 32-character variant (98); with a run id
and the store's temporary prefixes (`.old-<name>-<hex>`) a path part stays far below the 255 bytes of a name."""
SAFE_NAME = re.compile(rf"[A-Za-z0-9][A-Za-z0-9._-]{{0,{MAX_NAME_CHARS - 1}}}")
"""ASCII letters, digits, `.`, `_`, `-`, starting with a letter or digit: no separator, no `..`, no dot file, and
nothing MyST, HTML, a URL or a terminal reads as markup."""


def name_problem(name: str) -> str | None:
    """Why `name` cannot be a bundle directory's name, or None when it can."""
    if not SAFE_NAME.fullmatch(name):
        return f"{name!r} is not a bundle name ({SAFE_NAME.pattern})"
    stem, _, suffix = name.lower().partition(".")
    if stem in RESERVED_PAGE_NAMES or f".{suffix}" in SOURCE_SUFFIXES:
        return f"{name!r} is a name of the site's own pages or sources"
    return None


def is_bundle_name(name: str) -> bool:
    """Whether `name` may name a bundle directory (and its report's page directory)."""
    return name_problem(name) is None


def is_run_id(name: str) -> bool:
    """Whether `name` may name a kept run's directory (`.history/<bundle>/<run id>/`)."""
    return SAFE_NAME.fullmatch(name) is not None
