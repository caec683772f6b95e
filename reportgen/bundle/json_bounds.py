"""What one JSON file of a bundle may hold, checked once it is parsed and before it is validated.

A bundle may come from elsewhere. Its manifest, capture, analysis, provenance and comparison are bounded
(`bound_json`): the nesting depth and every list's and object's length (past one, the file is refused), each
string's length (a longer one is cut, with a warning), and every number: NaN, Infinity and one past
`MAX_JSON_MAGNITUDE` (`1e999` parses as Infinity) become null, and `validate_numbers` then leaves out what
cannot be null, so a page shows "—" or leaves the row out and never formats or plots a non-finite number.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from pydantic import BaseModel, ValidationError

__all__ = [
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "MAX_JSON_MAGNITUDE",
    "MAX_JSON_STRING_CHARS",
    "Bounded",
    "JsonBoundError",
    "bound_json",
    "validate_numbers",
]

MAX_JSON_STRING_CHARS: Final = 1 << 18
"""A string is cut beyond 262,144 characters: a kernel name is at most 8,192 (`formats.bounds`), a failed run's
error with its 40-line log tail a few thousand; a page never shows more than this of one field."""
MAX_JSON_ITEMS: Final = 250_000
"""Entries of one list or object: mixnet_l's analysis holds ~1,100 kernels and a step's timeline a few thousand
intervals; every entry may become a table row or a bar."""
MAX_JSON_DEPTH: Final = 64
"""Nesting of lists and objects: the models nest 6 deep, a recipe's free-form kwargs a few more."""
MAX_JSON_MAGNITUDE: Final = float(1 << 63)
"""Numbers are int64's range: bytes, microseconds since the epoch and counts fit; beyond it a sum overflows to
infinity, and an int of thousands of digits cannot even be converted to float."""
_CUT_MARK = "… [cut]"
_MAX_ROUNDS = 12
"""`validate_numbers` climbs at most this many levels from a dropped number (the models nest 6 deep)."""

Path = tuple[str | int, ...]
_ModelT = TypeVar("_ModelT", bound=BaseModel)


class JsonBoundError(ValueError):
    """The file passes one of the bounds; the message says which, and where."""


@dataclass
class Bounded:
    """What `bound_json` changed: how many strings it cut, and where it nulled a number (in file order)."""

    cut_strings: int = 0
    numbers: list[Path] = field(default_factory=list)


def _where(path: Path) -> str:
    return ".".join(str(part) for part in path) or "<root>"


def _out_of_range(value: object) -> bool:
    if isinstance(value, float):
        return not math.isfinite(value) or abs(value) > MAX_JSON_MAGNITUDE
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_JSON_MAGNITUDE


def bound_json(data: Any) -> Bounded:
    """Bound parsed JSON in place: long strings cut, out-of-range numbers nulled (see the module).

    :raises JsonBoundError: a list or object too long, nesting too deep, or a key too long
    """
    found = Bounded()
    stack: list[tuple[Any, Path]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > MAX_JSON_DEPTH:
            raise JsonBoundError(f"nested deeper than {MAX_JSON_DEPTH} levels at {_where(path)}")
        if len(node) > MAX_JSON_ITEMS:
            raise JsonBoundError(f"{len(node):,} entries at {_where(path)}, over the bound of {MAX_JSON_ITEMS:,}")
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(key, str) and len(key) > MAX_JSON_STRING_CHARS:
                raise JsonBoundError(f"a key of {len(key):,} characters at {_where(path)}")
            if isinstance(value, (dict, list)):
                stack.append((value, (*path, key)))
            elif isinstance(value, str) and len(value) > MAX_JSON_STRING_CHARS:
                node[key] = value[: MAX_JSON_STRING_CHARS - len(_CUT_MARK)] + _CUT_MARK
                found.cut_strings += 1
            elif _out_of_range(value):
                node[key] = None
                found.numbers.append((*path, key))
    found.numbers.sort(key=_order)
    return found


def _order(path: Path) -> list[tuple[int, int, str]]:
    """File order of paths: list indices as numbers."""
    return [(0, part, "") if isinstance(part, int) else (1, 0, part) for part in path]


def _remove(data: Any, path: Path) -> bool:
    """Remove the entry at `path` (a key of an object: its default applies; an element of a list)."""
    node = data
    for part in path[:-1]:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        del node[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def validate_numbers(
    model: type[_ModelT], data: Any, numbers: list[Path], context: dict[str, Any] | None = None
) -> _ModelT:
    """`model` from `data` whose `numbers` were nulled: a null where the model takes one stays (shown as "—");
    elsewhere its entry is removed (a default applies, a list loses that element), then, while the model still
    refuses it, the entry holding it, and so on up.

    :raises ValidationError: the model refuses the data for another reason, or once nothing is left to remove
    """
    tainted = set(numbers)
    for _ in range(_MAX_ROUNDS):
        try:
            return model.model_validate(data, context=context)
        except ValidationError as exc:
            if not tainted:
                raise
            locations = [tuple(error["loc"]) for error in exc.errors()]
            related = [
                loc if error["type"] != "missing" else loc[:-1]
                for loc, error in zip(locations, exc.errors(), strict=True)
                if any(loc[: len(t)] == t or t[: len(loc)] == loc for t in tainted)
            ]
            if not related or len(related) < len(locations):
                raise
            removed = False
            for loc in sorted(set(related), key=_order, reverse=True):  # later list elements first
                if loc and _remove(data, loc):
                    tainted.add(loc[:-1])
                    removed = True
            if not removed:
                raise
    return model.model_validate(data, context=context)
