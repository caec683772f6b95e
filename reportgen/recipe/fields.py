"""Read the recipe model's field annotations: which model, list, mapping or literal a path leads to.

Shared by the error messages (allowed keys, enum choices) and the reference tables, so that
both come from the pydantic classes and nothing is written twice.
"""

from __future__ import annotations

import types
from collections.abc import Sequence
from typing import Annotated, Literal, Union, get_args, get_origin

from pydantic import BaseModel

__all__ = ["accepts_none", "annotation_at", "literal_choices", "model_class", "union_members"]


def union_members(annotation: object) -> tuple[object, ...]:
    """The members of a union, with `None` and `Annotated` wrappers removed.

    :param annotation: a field annotation such as ``Annotated[int, Field(ge=1)] | None``
    """
    origin = get_origin(annotation)
    if origin is Annotated:
        return union_members(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return tuple(member for arg in get_args(annotation) for member in union_members(arg))
    if annotation is type(None):
        return ()
    return (annotation,)


def accepts_none(annotation: object) -> bool:
    """Whether `None` is one of the annotation's members (``str | None``)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return accepts_none(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(accepts_none(arg) for arg in get_args(annotation))
    return annotation is type(None)


def model_class(annotation: object) -> type[BaseModel] | None:
    """The pydantic model among the annotation's members, if any."""
    for member in union_members(annotation):
        if isinstance(member, type) and get_origin(member) is None and issubclass(member, BaseModel):
            return member
    return None


def literal_choices(annotation: object) -> tuple[object, ...]:
    """The values of the `Literal` members of an annotation (empty when there are none)."""
    return tuple(
        value for member in union_members(annotation) if get_origin(member) is Literal for value in get_args(member)
    )


def annotation_at(root: type[BaseModel], loc: Sequence[str | int]) -> object | None:
    """The annotation of the value at `loc` below `root`, or None where the path leaves the model.

    :param root: the model the path starts from
    :param loc: keys and list indices, as in a pydantic error's ``loc``
    """
    annotation: object = root
    for part in loc:
        step = _step(annotation, part)
        if step is None:
            return None
        annotation = step
    return annotation


def _step(annotation: object, part: str | int) -> object | None:
    """The annotation one key or index further down."""
    for member in union_members(annotation):
        origin = get_origin(member)
        model = model_class(member)
        if isinstance(part, str) and model is not None and part in model.model_fields:
            annotation_: object | None = model.model_fields[part].annotation
            return annotation_
        if isinstance(part, int) and origin is list:
            item: object = get_args(member)[0]
            return item
        if isinstance(part, str) and origin is dict:
            value: object = get_args(member)[1]
            return value
    return None
