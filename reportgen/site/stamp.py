"""What an HTML tree was built from, and the outputs of documents that are gone.

Each tree holds `.reportgen-build.json`: the inputs of the build that made it (a hash of Python, the Sphinx
command, the installed distributions and reportgen's files) and every source file's size and mtime. A build
whose stamp equals the published tree's has nothing to do. Sphinx does not delete the output of a removed
document, nor images and downloads that no page uses any more; `prune_removed` does, so that an incremental
build equals a clean one.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from reportgen.site.trees import Listing, listing

__all__ = ["STAMP_FILE", "BuildStamp", "changed_documents", "clear_stamp", "prune_removed", "read_stamp", "write_stamp"]

STAMP_FILE = ".reportgen-build.json"
_DOCTREES = ".doctrees"
_ENV_PICKLE = "environment.pickle"
_SEARCH_INDEX = "searchindex.js"
_SOURCE_SUFFIXES = (".md", ".rst", ".ipynb")


class BuildStamp(BaseModel):
    """The inputs of a build: `inputs` (see `build._inputs`) and `sources` (relative path → size, mtime_ns)."""

    inputs: str
    sources: dict[str, tuple[int, int]]


def read_stamp(tree: Path) -> BuildStamp | None:
    """The stamp of `tree`, or None (none yet, or unreadable: the next build runs Sphinx)."""
    try:
        return BuildStamp.model_validate_json((tree / STAMP_FILE).read_bytes())
    except (OSError, ValidationError):
        return None


def write_stamp(tree: Path, stamp: BuildStamp) -> None:
    """Record that `tree` was built from `stamp` (the last step before it is published)."""
    (tree / STAMP_FILE).write_text(stamp.model_dump_json(), encoding="utf-8")


def clear_stamp(tree: Path) -> None:
    """Forget what `tree` was built from, before building into it."""
    (tree / STAMP_FILE).unlink(missing_ok=True)


def _docname(relative: str) -> str | None:
    for suffix in _SOURCE_SUFFIXES:
        if relative.endswith(suffix):
            return relative[: -len(suffix)]
    return None


def changed_documents(previous: BuildStamp | None, stamp: BuildStamp) -> tuple[int, int]:
    """(documents added, changed or removed since `previous`, documents in `stamp`): every document counts as
    changed when there is no previous build or its inputs differ."""
    docs = {k for k in stamp.sources if _docname(k) is not None}
    if previous is None or previous.inputs != stamp.inputs:
        return len(docs), len(docs)
    before = {k for k in previous.sources if _docname(k) is not None}
    changed = {k for k in docs if previous.sources.get(k) != stamp.sources[k]} | (before - docs)
    return len(changed), len(docs)


def _env_outputs(tree: Path) -> tuple[set[str], set[str]] | None:
    """The images (`_images/...`) and downloads (`_downloads/...`) the pages of `tree` use, from Sphinx's
    environment; None when it cannot be read (then nothing is pruned there)."""
    try:
        with (tree / _DOCTREES / _ENV_PICKLE).open("rb") as handle:
            env: Any = pickle.load(handle)
        images = {f"_images/{unique}" for _, unique in env.images.values()}
        downloads = {f"_downloads/{Path(dest).as_posix()}" for _, dest in env.dlfiles.values()}
    except (OSError, pickle.UnpicklingError, AttributeError, ImportError, EOFError, ValueError):
        return None
    return images, downloads


def _drop_empty_terms(tree: Path) -> None:
    """Sphinx's incremental search index keeps a word whose pages were all removed or rewritten, with an empty
    page list (a clean build has no such word); drop those words, written as Sphinx writes the index."""
    from sphinx.search import js_index

    path = tree / _SEARCH_INDEX
    try:
        index = js_index.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    for key in ("terms", "titleterms"):
        if isinstance(words := index.get(key), dict):
            index[key] = {word: pages for word, pages in words.items() if pages != []}
    text = js_index.dumps(index)
    if text != path.read_text(encoding="utf-8"):
        path.write_text(text, encoding="utf-8")


def prune_removed(tree: Path, before: Listing, after: Listing) -> None:
    """Remove from `tree` what Sphinx leaves of documents that are gone: the outputs of sources in `before` but
    not `after` (page, `_sources` copy, doctree), images and downloads no page uses, and search words."""
    _drop_empty_terms(tree)
    for relative in before.keys() - after.keys():
        docname = _docname(relative)
        if docname is None:
            continue
        for output in (f"{docname}.html", f"_sources/{relative}.txt", f"{_DOCTREES}/{docname}.doctree"):
            (tree / output).unlink(missing_ok=True)
    used = _env_outputs(tree)
    if used is None:
        return
    images, downloads = used
    for folder, keep in (("_images", images), ("_downloads", downloads)):
        if not (tree / folder).is_dir():
            continue
        for relative in listing(tree / folder):
            if f"{folder}/{relative}" not in keep:
                (tree / folder / relative).unlink()
        for directory in sorted((p for p in (tree / folder).rglob("*") if p.is_dir()), reverse=True):
            if not any(directory.iterdir()):
                directory.rmdir()
