"""What an HTML tree was built from, and the outputs of documents that are gone.

Each tree has a build stamp (kept outside it, in the site's build state: see `site.state`): the inputs of the
build that made it (a hash of Python, the Sphinx command, the installed distributions and reportgen's files)
and every source file's size and mtime. A build whose stamp equals the published tree's has nothing to do.
Sphinx does not delete the output of a removed document, nor images and downloads that no page uses any
more; `prune_removed` does, so that an incremental build equals a clean one.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, NonNegativeInt, ValidationError

from reportgen.site.sphinx_runner import OUTPUTS_FILE
from reportgen.site.trees import Listing, listing, read_regular

__all__ = ["INPUTS_MAX_CHARS", "OUTPUTS_MAX_BYTES", "BuildStamp", "Outputs", "changed_documents", "prune_removed"]

INPUTS_MAX_CHARS = 128
"""The longest `inputs` a stamp may hold: it is a SHA-256 hex digest (64 characters)."""
_ENV_PICKLE = "environment.pickle"
OUTPUTS_MAX_BYTES = 256 * 1024 * 1024
"""The largest record of the pages' images and downloads read (~100 bytes a file)."""
_SEARCH_INDEX = "searchindex.js"
_SOURCE_SUFFIXES = (".md", ".rst", ".ipynb")


def _relative(path: str) -> str:
    """A source path as `listing` writes it: relative, `/`-separated, no empty, `.` or `..` part, no NUL."""
    if "\0" in path or any(part in ("", ".", "..") for part in path.split("/")):
        raise ValueError(f"not a path inside the source directory: {path!r}")
    return path


class BuildStamp(BaseModel):
    """The inputs of a build: `inputs` (see `build._inputs`) and `sources` (relative path → size, mtime_ns).

    Strict: a stamp read back is pruned by (`prune_removed` deletes the outputs of its sources), so a path that
    could leave the tree, an unknown field or a value of another type makes it invalid (then a clean build).
    """

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    inputs: str = Field(max_length=INPUTS_MAX_CHARS)
    sources: dict[Annotated[str, AfterValidator(_relative)], tuple[NonNegativeInt, int]]


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


class Outputs(BaseModel):
    """`sphinx_runner.OUTPUTS_FILE`: what the pages of the build that just ended use."""

    model_config = ConfigDict(extra="forbid", strict=True)

    images: list[str]
    downloads: list[str]


def _env_outputs(doctrees: Path) -> tuple[set[str], set[str]] | None:
    """The images (`_images/...`) and downloads (`_downloads/...`) the pages use, as the Sphinx run that has just
    ended recorded them (`sphinx_runner`), else from the environment it wrote into `doctrees` (in this build,
    after the state it started from was checked: see `site.state`); None when neither can be read (then nothing
    is pruned there)."""
    data = read_regular(doctrees / OUTPUTS_FILE, OUTPUTS_MAX_BYTES)
    try:
        recorded = Outputs.model_validate_json(data) if data is not None else None
    except ValidationError:
        recorded = None
    if recorded is not None:
        return set(recorded.images), set(recorded.downloads)
    try:
        with (doctrees / _ENV_PICKLE).open("rb") as handle:
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


def prune_removed(
    tree: Path, doctrees: Path, before: Listing, after: Listing, also_used: tuple[set[str], set[str]] | None
) -> None:
    """Remove what Sphinx leaves of documents that are gone: the outputs of sources in `before` but not `after`
    (page and `_sources` copy in `tree`, doctree in `doctrees`), images and downloads no page uses (neither the
    pages of this Sphinx run nor those of `also_used`: the units', see `site.units`; None: nothing is pruned),
    and search words."""
    _drop_empty_terms(tree)
    for relative in before.keys() - after.keys():
        docname = _docname(relative)
        if docname is None:
            continue
        for output in (tree / f"{docname}.html", tree / f"_sources/{relative}.txt", doctrees / f"{docname}.doctree"):
            output.unlink(missing_ok=True)
    used = _env_outputs(doctrees)
    if used is None or also_used is None:
        return
    images, downloads = used[0] | also_used[0], used[1] | also_used[1]
    for folder, keep in (("_images", images), ("_downloads", downloads)):
        if not (tree / folder).is_dir():
            continue
        for relative in listing(tree / folder):
            if f"{folder}/{relative}" not in keep:
                (tree / folder / relative).unlink()
        for directory in sorted((p for p in (tree / folder).rglob("*") if p.is_dir()), reverse=True):
            if not any(directory.iterdir()):
                directory.rmdir()
