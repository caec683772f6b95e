"""One search index for a site built in units (`site.units`): the site's own project's, with every unit's pages.

Sphinx writes `searchindex.js` for the documents of one project: the site's own pages in the tree, each unit's
with its build. A unit's part (its pages: their titles, words and section titles, by docname) is kept in the
build state as JSON and merged into the tree's index after every build: documents in docname order, so the index
does not depend on which units were built when. Objects (API entries) of a unit are not merged: report pages
define none.

The format is Sphinx's (`sphinx.search.js_index`: a JSON object in `Search.setIndex(...)`); words map to one
document number or a list of them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

__all__ = ["SEARCH_INDEX", "UnitSearch", "merge_search", "unit_search"]

SEARCH_INDEX = "searchindex.js"
_WORDS = ("terms", "titleterms")
_TITLES = ("alltitles", "indexentries")


class UnitSearch(BaseModel):
    """A unit's part of a search index, by docname: each page's file and title, the pages of each word and
    title word, the pages of each section title and index entry with the rest of their entry (anchor, ...)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    pages: dict[str, tuple[str, str]]
    terms: dict[str, list[str]]
    titleterms: dict[str, list[str]]
    alltitles: dict[str, list[tuple[str, list[str | bool | None]]]]
    indexentries: dict[str, list[tuple[str, list[str | bool | None]]]]


def _load(path: Path) -> dict[str, Any] | None:
    from sphinx.search import js_index

    try:
        index = js_index.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return index if isinstance(index, dict) else None


def _numbers(value: Any) -> list[int]:
    return [value] if isinstance(value, int) else [v for v in value if isinstance(v, int)]


def unit_search(html: Path, prefix: str) -> UnitSearch | None:
    """The part of the search index Sphinx wrote into `html` that is about the pages under `prefix`; None when
    there is no index to read."""
    index = _load(html / SEARCH_INDEX)
    if index is None:
        return None
    names: list[str] = index.get("docnames", [])
    mine = {i: name for i, name in enumerate(names) if name.startswith(prefix)}
    part: dict[str, Any] = {
        "pages": {name: (index["filenames"][i], index["titles"][i]) for i, name in mine.items()},
    }
    for key in _WORDS:
        words = {word: [mine[i] for i in _numbers(docs) if i in mine] for word, docs in index.get(key, {}).items()}
        part[key] = {word: docs for word, docs in words.items() if docs}
    for key in _TITLES:
        titles = {
            title: [(mine[entry[0]], list(entry[1:])) for entry in entries if entry and entry[0] in mine]
            for title, entries in index.get(key, {}).items()
        }
        part[key] = {title: entries for title, entries in titles.items() if entries}
    try:
        return UnitSearch.model_validate(part)
    except ValidationError:
        return None


def merge_search(tree: Path, parts: Iterable[UnitSearch]) -> None:
    """Add the pages of `parts` to the search index of `tree` (written by the site's own project), all pages in
    docname order, written as Sphinx writes it."""
    from sphinx.search import js_index

    path = tree / SEARCH_INDEX
    index = _load(path)
    if index is None:
        return
    pages = {name: (index["filenames"][i], index["titles"][i]) for i, name in enumerate(index["docnames"])}
    old = list(index["docnames"])
    units = list(parts)
    for part in units:
        pages.update(part.pages)
    order = sorted(pages)
    number = {name: i for i, name in enumerate(order)}
    merged: dict[str, Any] = {**index, "docnames": order}
    merged["filenames"] = [pages[name][0] for name in order]
    merged["titles"] = [pages[name][1] for name in order]
    for key in _WORDS:
        words: dict[str, set[int]] = {}
        for word, docs in index.get(key, {}).items():
            words.setdefault(word, set()).update(number[old[i]] for i in _numbers(docs) if i < len(old))
        for part in units:
            for word, names in getattr(part, key).items():
                words.setdefault(word, set()).update(number[name] for name in names)
        merged[key] = {w: (min(d) if len(d) == 1 else sorted(d)) for w, d in sorted(words.items()) if d}
    for key in _TITLES:
        titles: dict[str, list[list[Any]]] = {}
        for title, entries in index.get(key, {}).items():
            titles[title] = [[number[old[e[0]]], *e[1:]] for e in entries if e and e[0] < len(old)]
        for part in units:
            for title, pairs in getattr(part, key).items():
                titles.setdefault(title, []).extend([number[name], *rest] for name, rest in pairs)
        merged[key] = {t: sorted(e, key=lambda x: (x[0], str(x[1:]))) for t, e in sorted(titles.items())}
    for key in ("objects",):  # numbered by page too; units define none
        merged[key] = {
            prefix: [[number[old[o[0]]], *o[1:]] for o in objects if o and o[0] < len(old)]
            for prefix, objects in index.get(key, {}).items()
        }
    text = js_index.dumps(merged)
    if text != path.read_text(encoding="utf-8"):
        path.write_text(text, encoding="utf-8")
