"""Load recipe files: bytes → YAML node tree → plain values → `Recipe`, every error located.

The YAML is composed (never constructed as a whole) so that every value keeps its position;
aliases are refused, keys must be unique strings, and each pydantic error is reported at the
node it concerns as ``file:line:col: message``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from reportgen.errors import RecipeError
from reportgen.recipe.env_policy import EntryError
from reportgen.recipe.fields import annotation_at, literal_choices, model_class
from reportgen.recipe.model import Recipe
from reportgen.recipe.references import check_reference, reference_warning
from reportgen.recipe.source import (
    Mark,
    ParsedDocument,
    SourceMap,
    ValuePath,
    describe_value,
    dotted,
    parse_document,
)

__all__ = ["MAX_RECIPE_BYTES", "load_recipe", "load_recipes", "recipe_warnings"]

MAX_RECIPE_BYTES = 1 << 20
_REFERENCE_FIELDS = (("model", "ref"), ("inputs", "factory"))
_EXPECTED_TYPES = {
    "string_type": "a string",
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_BOUNDS = {
    "greater_than_equal": ("ge", "at least"),
    "greater_than": ("gt", "greater than"),
    "less_than_equal": ("le", "at most"),
    "less_than": ("lt", "less than"),
}


def load_recipe(path: str | Path) -> Recipe:
    """Read, parse and validate one recipe file.

    :param path: the recipe's YAML file
    :raises RecipeError: located at the first problem in the file
    """
    return _load(path)[0]


def load_recipes(paths: Iterable[str | Path]) -> list[Recipe]:
    """Load several recipes; their names must be unique.

    :param paths: recipe files, in the order to return them
    :raises RecipeError: on the first invalid file, or on a name used twice (naming both files)
    """
    recipes: list[Recipe] = []
    seen: dict[str, str] = {}
    for path in paths:
        recipe, document = _load(path)
        first = seen.get(recipe.name)
        if first is not None:
            mark = document.source_map.locate(("name",))
            raise RecipeError(
                f"recipe name '{recipe.name}' is already used by {first}; names must be unique",
                path=path,
                line=mark.line,
                column=mark.column,
            )
        seen[recipe.name] = str(path)
        recipes.append(recipe)
    return recipes


def recipe_warnings(path: str | Path) -> list[str]:
    """Located warnings about a valid recipe: references that run something other than a model.

    :raises RecipeError: when the recipe is not valid
    """
    recipe, document = _load(path)
    warnings = []
    for field, ref in _references(recipe).items():
        warning = reference_warning(ref, field=".".join(field), search_dir=Path(path).parent) if ref else None
        if warning is not None:
            mark = document.source_map.locate(field)
            warnings.append(f"{path}:{mark.line}:{mark.column}: {warning}")
    return warnings


def _references(recipe: Recipe) -> dict[tuple[str, str], str | None]:
    return {("model", "ref"): recipe.model.ref, ("inputs", "factory"): recipe.inputs.factory}


def _load(path: str | Path) -> tuple[Recipe, ParsedDocument]:
    """Load one recipe, keeping its source map for later located errors."""
    raw = _read_bytes(path)
    document = parse_document(raw, path)
    try:
        recipe = Recipe.model_validate(document.data)
    except ValidationError as exc:
        raise _located_validation_error(exc, document.source_map, path) from None
    _check_references(recipe, document, path)
    return recipe, document


def _read_bytes(path: str | Path) -> bytes:
    """The file's bytes, refusing missing files, directories, special and oversized files."""
    file = Path(path)
    try:
        if not file.exists():
            raise RecipeError("recipe file not found", path=path)
        if file.is_dir():
            raise RecipeError("expected a recipe file, got a directory", path=path)
        if not file.is_file():
            raise RecipeError("expected a recipe file, got a special file", path=path)
        size = file.stat().st_size
        if size > MAX_RECIPE_BYTES:
            raise RecipeError(_too_large(size), path=path)
        with file.open("rb") as handle:
            raw = handle.read(MAX_RECIPE_BYTES + 1)
    except OSError as exc:
        raise RecipeError(f"cannot read recipe file: {exc.strerror or exc}", path=path) from None
    if len(raw) > MAX_RECIPE_BYTES:
        raise RecipeError(_too_large(len(raw)), path=path)
    return raw


def _too_large(size: int) -> str:
    return f"recipe file is {size} bytes; recipes are limited to 1 MiB ({MAX_RECIPE_BYTES} bytes)"


def _check_references(recipe: Recipe, document: ParsedDocument, path: str | Path) -> None:
    """Check `module:callable` references statically, located at their value nodes."""
    values = _references(recipe)
    for field in _REFERENCE_FIELDS:
        ref = values[field]
        if ref is None:
            continue
        problem = check_reference(ref, field=".".join(field), search_dir=Path(path).parent)
        if problem is not None:
            mark = document.source_map.locate(field)
            raise RecipeError(problem, path=path, line=mark.line, column=mark.column)


def _located_validation_error(exc: ValidationError, source_map: SourceMap, path: str | Path) -> RecipeError:
    """The first of the model's errors in document order, with a count of the others.

    A missing key sorts after the unknown keys of the same mapping: it is most likely misspelt there.
    """
    errors = exc.errors()
    unknown = {
        tuple(error["loc"][:-1]): _error_mark(error, source_map)
        for error in errors
        if error["type"] == "extra_forbidden"
    }

    def order(error: ErrorDetails) -> tuple[int, int, int]:
        mark = _error_mark(error, source_map)
        if error["type"] == "missing" and tuple(error["loc"][:-1]) in unknown:
            mark = unknown[tuple(error["loc"][:-1])]
            return (mark.line, mark.column, 1)
        return (mark.line, mark.column, 0)

    first = min(errors, key=order)
    mark, message = _error_mark(first, source_map), _error_message(first)
    others = len(errors) - 1
    if others:
        message += f" (and {others} more error{'s' if others > 1 else ''})"
    return RecipeError(message, path=path, line=mark.line, column=mark.column)


def _error_mark(error: ErrorDetails, source_map: SourceMap) -> Mark:
    """Missing keys point at the mapping that lacks them, unknown keys at the key itself."""
    loc: ValuePath = tuple(error["loc"])
    entry = (error.get("ctx") or {}).get("error")
    if isinstance(entry, EntryError):  # one entry of a mapping or list: point at it
        return (source_map.locate_key if entry.at_key else source_map.locate)((*loc, *entry.path))
    if error["type"] == "missing":
        return source_map.locate(loc[:-1])
    if error["type"] == "extra_forbidden":
        return source_map.locate_key(loc)
    return source_map.locate(loc)


def _error_message(error: ErrorDetails) -> str:
    """A sentence for one pydantic error, prefixed with the dotted path of the value."""
    loc: ValuePath = tuple(error["loc"])
    parent = loc[:-1]
    where = dotted(parent) or "recipe"
    if error["type"] == "missing":
        suffix = f" in {where}" if parent else ""
        return f"missing required key {loc[-1]!r}{suffix}"
    if error["type"] == "extra_forbidden":
        model = model_class(annotation_at(Recipe, parent))
        allowed = ", ".join(model.model_fields) if model is not None else ""
        return f"unknown key {loc[-1]!r} in {where}; expected one of: {allowed}"
    detail = _detail(error, loc)
    return f"{dotted(loc)}: {detail}" if loc else detail


def _detail(error: ErrorDetails, loc: ValuePath) -> str:
    """What was expected and what was found."""
    kind, context, value = error["type"], error.get("ctx") or {}, error["input"]
    got = describe_value(value)
    if kind in _EXPECTED_TYPES:
        return f"expected {_EXPECTED_TYPES[kind]}, got {got}"
    if kind == "literal_error":
        choices = literal_choices(annotation_at(Recipe, loc))
        shown = ", ".join(_literal(choice) for choice in choices) or str(context.get("expected"))
        return f"expected {'one of ' if len(choices) > 1 else ''}{shown}, got {got}"
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        return f"must be {words} {_bound(context.get(key))}, got {got}"
    if kind == "string_too_short":
        minimum = context.get("min_length")
        return "must not be empty" if minimum == 1 else f"must have at least {minimum} characters"
    if kind == "string_too_long":
        return f"must have at most {context.get('max_length')} characters, got {len(str(value))}"
    if kind == "too_long":
        return f"must have at most {context.get('max_length')} items, got {context.get('actual_length')}"
    if kind == "string_pattern_mismatch":
        return f"expected a value matching {context.get('pattern')}, got {got}"
    if kind in ("value_error", "assertion_error"):
        return str(context.get("error", error["msg"]))
    message = error["msg"]
    return f"{message[:1].lower()}{message[1:]}, got {got}"


def _bound(value: object) -> str:
    """`86400` rather than `86400.0`."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def _literal(value: object) -> str:
    return f"'{value}'" if isinstance(value, str) else str(value)
