"""The recipe reference: one MyST table per model class, derived from the pydantic fields."""

from __future__ import annotations

import inspect
import json
import types
from collections.abc import Iterator, Sequence
from typing import Annotated, Literal, Union, get_args, get_origin

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from reportgen.recipe.fields import model_class, union_members
from reportgen.recipe.model import Recipe

__all__ = ["recipe_reference_markdown"]

_BASE_NAMES: dict[object, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    object: "any",
}
_BOUNDS = (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<"))


def recipe_reference_markdown() -> str:
    """MyST Markdown: for `Recipe` and each model below it, a key/type/default/description table.

    Sections come in the order the models first appear in the recipe; each starts with a
    ``(recipe-reference-<model>)=`` target that the type column links to.
    """
    sections = [_section(model, paths) for model, paths in _iter_models(Recipe)]
    return "\n\n".join(sections) + "\n"


def _iter_models(root: type[BaseModel]) -> Iterator[tuple[type[BaseModel], list[str]]]:
    """Each model reachable from `root` (depth first, in field order) with the keys it sits at."""
    paths: dict[type[BaseModel], list[str]] = {root: []}

    def visit(model: type[BaseModel], prefix: str) -> None:
        for name, field in model.model_fields.items():
            for member, suffix in _iter_nested(field.annotation):
                path = f"{prefix}{name}{suffix}"
                seen = member in paths
                paths.setdefault(member, []).append(path)
                if not seen:
                    visit(member, f"{path}.")

    visit(root, "")
    yield from paths.items()


def _iter_nested(annotation: object) -> Iterator[tuple[type[BaseModel], str]]:
    """Models inside an annotation, with the path suffix that leads to them (``[]`` for list items)."""
    for member in union_members(annotation):
        model = model_class(member)
        if model is not None:
            yield model, ""
        elif get_origin(member) is list:
            for nested, suffix in _iter_nested(get_args(member)[0]):
                yield nested, f"[]{suffix}"
        elif get_origin(member) is dict:
            for nested, suffix in _iter_nested(get_args(member)[1]):
                yield nested, f".<key>{suffix}"


def _section(model: type[BaseModel], paths: Sequence[str]) -> str:
    """Target, heading, docstring, where it is used, and the field table."""
    where = ", ".join(f"`{path}`" for path in paths) if paths else "the top level of a recipe file"
    lines = [
        f"({_anchor(model)})=",
        f"## {model.__name__}",
        "",
        f"{_doc(model)} Used at: {where}.",
        "",
        "| key | type | default | description |",
        "| --- | --- | --- | --- |",
    ]
    for name, field in model.model_fields.items():
        cells = (f"`{name}`", _type_text(field.annotation, field.metadata), _default_text(field), _description(field))
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(lines)


def _anchor(model: type[BaseModel]) -> str:
    return f"recipe-reference-{model.__name__.lower()}"


def _doc(model: type[BaseModel]) -> str:
    return (inspect.getdoc(model) or model.__name__).strip().splitlines()[0]


def _cell(text: str) -> str:
    return text.replace("\n", " ").replace("|", "\\|")


def _type_text(annotation: object, metadata: Sequence[object] = ()) -> str:
    """`integer (≥ 1)`, `list of [TensorSpec](#...)`, `one of `a`, `b` or null` ..."""
    origin = get_origin(annotation)
    if origin is Annotated:
        base, *extra = get_args(annotation)
        return _type_text(base, [*metadata, *extra])
    if origin is Union or origin is types.UnionType:
        args = get_args(annotation)
        text = " or ".join(_type_text(arg, metadata) for arg in args if arg is not type(None))
        return f"{text} or null" if type(None) in args else text
    constraints = list(_iter_constraints(metadata))
    base = _base_text(annotation)
    return f"{base} ({', '.join(constraints)})" if constraints else base


def _base_text(annotation: object) -> str:
    origin = get_origin(annotation)
    model = model_class(annotation)
    if model is not None:
        return f"[{model.__name__}](#{_anchor(model)})"
    if origin is Literal:
        choices = [f"`{value}`" for value in get_args(annotation)]
        return choices[0] if len(choices) == 1 else f"one of {', '.join(choices)}"
    if origin is list:
        return f"list of {_type_text(get_args(annotation)[0])}"
    if origin is dict:
        key, value = get_args(annotation)
        return f"mapping of {_type_text(key)} to {_type_text(value)}"
    return _BASE_NAMES.get(annotation, getattr(annotation, "__name__", str(annotation)))


def _iter_constraints(metadata: Sequence[object]) -> Iterator[str]:
    """`≥ 1`, `length ≤ 200`, `matching `re``, from annotated-types and pydantic metadata."""
    for item in metadata:
        if isinstance(item, FieldInfo):
            yield from _iter_constraints(item.metadata)
            continue
        for attribute, symbol in _BOUNDS:
            if getattr(item, attribute, None) is not None:
                yield f"{symbol} {getattr(item, attribute)}"
        if getattr(item, "min_length", None) is not None:
            yield f"length ≥ {item.min_length}"  # type: ignore[attr-defined]
        if getattr(item, "max_length", None) is not None:
            yield f"length ≤ {item.max_length}"  # type: ignore[attr-defined]
        if getattr(item, "pattern", None) is not None:
            yield f"matching `{item.pattern}`"  # type: ignore[attr-defined]


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "*required*"
    value = field.get_default(call_default_factory=True, validated_data={})
    if isinstance(value, BaseModel):
        return "`{}`"
    try:
        return f"`{json.dumps(value)}`"
    except (TypeError, ValueError):
        return f"`{value!r}`"


def _description(field: FieldInfo) -> str:
    if field.description:
        return field.description
    model = model_class(field.annotation)
    return _doc(model) if model is not None else ""
