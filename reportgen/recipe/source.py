"""Recipe bytes → plain Python values plus a map from each value's path to its line and column.

PyYAML composes the node tree with a SafeLoader that refuses aliases and deep nesting; the
values are then built from the nodes here (scalars through the SafeLoader's own tag resolution
and constructors), so that duplicate keys, non-string keys, odd tags and plain scalars that YAML
readers read differently (`scalars.py`: `0777`, `on` or `1:30` in a string field, `010` as a number)
are reported at the node at fault.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from reportgen.errors import RecipeError
from reportgen.recipe.model import Recipe
from reportgen.recipe.scalars import number_problem, string_field, text_problem

__all__ = [
    "MAX_DEPTH",
    "Mark",
    "ParsedDocument",
    "SourceMap",
    "ValuePath",
    "describe_value",
    "dotted",
    "parse_document",
]

MAX_DEPTH = 64
ValuePath = tuple[str | int, ...]

_TAG = "tag:yaml.org,2002:"
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)
_SCALAR_KINDS = {
    _TAG + "str": "a string",
    _TAG + "int": "an integer",
    _TAG + "float": "a number",
    _TAG + "bool": "a boolean",
    _TAG + "null": "null",
    _TAG + "timestamp": "a date",
}


@dataclass(frozen=True)
class Mark:
    """A 1-based position in the recipe file."""

    line: int
    column: int


@dataclass(frozen=True)
class SourceMap:
    """Where each value (and each mapping key) starts, by value path."""

    values: Mapping[ValuePath, Mark]
    keys: Mapping[ValuePath, Mark]

    def locate(self, path: ValuePath) -> Mark:
        """The value at `path`, or its nearest enclosing value that exists in the file."""
        for end in range(len(path), -1, -1):
            mark = self.values.get(path[:end])
            if mark is not None:
                return mark
        return Mark(1, 1)

    def locate_key(self, path: ValuePath) -> Mark:
        """The key that holds the value at `path` (the value itself when it has no key)."""
        return self.keys.get(path) or self.locate(path)


@dataclass(frozen=True)
class ParsedDocument:
    """A recipe file's top-level mapping and its source map."""

    data: Mapping[str, object]
    source_map: SourceMap


class _RecipeLoader(yaml.SafeLoader):
    """A SafeLoader whose composer refuses aliases and nesting deeper than MAX_DEPTH."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.depth = 0
        self.tagged: set[int] = set()  # ids of the scalar nodes with an explicit tag (`!!str 0777`)

    def compose_scalar_node(self, anchor: dict[object, Node]) -> ScalarNode:
        tag = self.peek_event().tag  # type: ignore[no-untyped-call]
        node = super().compose_scalar_node(anchor)
        if tag not in (None, "!"):
            self.tagged.add(id(node))
        return node

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self.check_event(AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise _RefusedError(
                f"YAML alias '*{event.anchor}' is not allowed in recipes; write the value out",
                event.start_mark,
            )
        if self.depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise _RefusedError(f"values nested deeper than {MAX_DEPTH} levels", mark)
        self.depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


class _RefusedError(Exception):
    """Raised inside the composer; turned into a RecipeError with the file's path."""

    def __init__(self, message: str, mark: yaml.Mark) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


def parse_document(raw: bytes, path: str | Path) -> ParsedDocument:
    """Decode and parse a recipe file's bytes.

    :param raw: the file's content
    :param path: the file, for error locations
    :raises RecipeError: on binary or non-UTF-8 content, invalid YAML, an empty document,
        a top level that is not a mapping, aliases, duplicate or non-string keys
    """
    text = _decode(raw, path)
    loader, root = _compose(text, path)
    try:
        if root is None or (isinstance(root, ScalarNode) and root.tag == _TAG + "null" and not root.value):
            raise RecipeError(_empty_message(), path=path)
        builder = _ValueBuilder(loader, path)
        data = builder.build(root, ())
    finally:
        loader.dispose()
    if not isinstance(data, dict):
        mark = _mark(root.start_mark)
        raise RecipeError(
            f"expected a mapping at the top level, got {describe_value(data)}",
            path=path,
            line=mark.line,
            column=mark.column,
        )
    return ParsedDocument(data, SourceMap(builder.values, builder.keys))


def _empty_message() -> str:
    required = ", ".join(f"'{name}'" for name, field in Recipe.model_fields.items() if field.is_required())
    return f"recipe is empty; expected a mapping with at least {required}"


def _decode(raw: bytes, path: str | Path) -> str:
    """UTF-8 text; NUL bytes and invalid UTF-8 are refused at their position."""
    for bom, encoding in _WIDE_BOMS:
        if raw.startswith(bom):
            raise RecipeError(f"recipe file is {encoding} text (byte-order mark); save it as UTF-8", path=path)
    nul = raw.find(b"\x00")
    if nul >= 0:
        mark = _byte_mark(raw, nul)
        raise RecipeError(
            "recipe file contains NUL bytes; expected UTF-8 text, not a binary file",
            path=path,
            line=mark.line,
            column=mark.column,
        )
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        mark = _byte_mark(raw, exc.start)
        raise RecipeError(
            f"recipe file is not valid UTF-8 (byte 0x{raw[exc.start]:02x}); save it as UTF-8",
            path=path,
            line=mark.line,
            column=mark.column,
        ) from None


def _byte_mark(raw: bytes, offset: int) -> Mark:
    line_start = raw.rfind(b"\n", 0, offset) + 1
    column = len(raw[line_start:offset].decode("utf-8", errors="replace"))
    return Mark(raw.count(b"\n", 0, offset) + 1, column + 1)


def _compose(text: str, path: str | Path) -> tuple[_RecipeLoader, Node | None]:
    """The loader and the document's root node; YAML errors become located RecipeErrors."""
    try:
        loader = _RecipeLoader(text)
        return loader, loader.get_single_node()
    except _RefusedError as exc:
        mark = _mark(exc.mark)
        raise RecipeError(exc.message, path=path, line=mark.line, column=mark.column) from None
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, path) from None
    except yaml.reader.ReaderError as exc:
        line = text.count("\n", 0, exc.position) + 1
        column = exc.position - (text.rfind("\n", 0, exc.position) + 1) + 1
        raise RecipeError(
            f"invalid YAML: character {chr(exc.character)!r} is not allowed",
            path=path,
            line=line,
            column=column,
        ) from None
    except yaml.YAMLError as exc:
        raise RecipeError(f"invalid YAML: {exc}", path=path) from None


def _syntax_error(exc: yaml.MarkedYAMLError, path: str | Path) -> RecipeError:
    """`invalid YAML: <problem> (<context> at line L, column C)` at the problem's mark."""
    problem = exc.problem or exc.context or "syntax error"
    message = f"invalid YAML: {problem}"
    if exc.problem and exc.context and problem.startswith("but "):
        message = f"invalid YAML: {exc.context}, {problem}"
    elif exc.problem and exc.context and exc.context_mark is not None:
        context = _mark(exc.context_mark)
        message += f" ({exc.context} at line {context.line}, column {context.column})"
    where = exc.problem_mark or exc.context_mark
    mark = _mark(where) if where is not None else None
    hint = _syntax_hint(problem)
    return RecipeError(
        message,
        path=path,
        line=mark.line if mark else None,
        column=mark.column if mark else None,
        hint=hint,
    )


def _syntax_hint(problem: str) -> str | None:
    """What to do about the YAML problems whose own wording does not say it."""
    if "'\\t'" in problem:
        return "indent with spaces; YAML does not allow tabs"
    if "<block end>" in problem:
        return "check this line's indentation: the keys of one mapping must line up"
    return None


def _mark(mark: yaml.Mark) -> Mark:
    return Mark(mark.line + 1, mark.column + 1)


class _ValueBuilder:
    """Builds plain values from nodes, recording where each one starts."""

    def __init__(self, loader: _RecipeLoader, path: str | Path) -> None:
        self.loader = loader
        self.path = path
        self.values: dict[ValuePath, Mark] = {}
        self.keys: dict[ValuePath, Mark] = {}

    def fail(self, message: str, node: Node, hint: str | None = None) -> RecipeError:
        mark = _mark(node.start_mark)
        return RecipeError(message, path=self.path, line=mark.line, column=mark.column, hint=hint)

    def build(self, node: Node, path: ValuePath) -> object:
        self.values[path] = _mark(node.start_mark)
        if isinstance(node, MappingNode):
            return self.build_mapping(node, path)
        if isinstance(node, SequenceNode):
            if node.tag != _TAG + "seq":
                raise self.fail(f"unsupported YAML tag {_short_tag(node.tag)}; write a plain list", node)
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        assert isinstance(node, ScalarNode)
        value = self.build_scalar(node)
        if node.style is None and id(node) not in self.loader.tagged:
            self.check_plain(node, value, path)
        return value

    def check_plain(self, node: ScalarNode, value: object, path: ValuePath) -> None:
        """Refuse a plain scalar that YAML readers read differently, where it matters (`scalars.py`)."""
        field = string_field(path)
        if field is not None and not (value is None and field.nullable):
            problem = text_problem(node.value, node.tag, describe_value(value), digits_ok=field.env)
        else:
            problem = number_problem(node.value, node.tag, value)
        if problem is not None:
            message, hint = problem
            raise self.fail(f"{dotted(path)}: {message}" if path else message, node, hint=hint)

    def build_mapping(self, node: MappingNode, path: ValuePath) -> dict[str, object]:
        if node.tag != _TAG + "map":
            raise self.fail(f"unsupported YAML tag {_short_tag(node.tag)}; write a plain mapping", node)
        result: dict[str, object] = {}
        for key_node, value_node in node.value:
            key = self.build_key(key_node)
            key_path = (*path, key)
            first = self.keys.get(key_path)
            if first is not None:
                raise self.fail(
                    f"duplicate key {key!r} (first defined at line {first.line}, column {first.column})",
                    key_node,
                )
            self.keys[key_path] = _mark(key_node.start_mark)
            result[key] = self.build(value_node, key_path)
        return result

    def build_key(self, node: Node) -> str:
        hint = "quote the key to make it a string"
        if not isinstance(node, ScalarNode):
            kind = "a mapping" if isinstance(node, MappingNode) else "a list"
            raise self.fail(f"expected a string key, got {kind}", node, hint=hint)
        if node.tag == _TAG + "merge":
            raise self.fail("merge keys ('<<') are not supported in recipes", node)
        key = self.build_scalar(node)
        if not isinstance(key, str):
            raise self.fail(f"expected a string key, got {describe_value(key)}", node, hint=hint)
        return key

    def build_scalar(self, node: ScalarNode) -> object:
        if node.tag == _TAG + "value":
            return str(node.value)
        if node.tag not in _SCALAR_KINDS:
            raise self.fail(f"unsupported YAML tag {_short_tag(node.tag)}; write a plain value", node)
        try:
            return self.loader.construct_object(node)
        except Exception as exc:  # PyYAML's constructors raise many kinds on odd scalars
            detail = exc.problem if isinstance(exc, yaml.MarkedYAMLError) else exc
            shown = node.value if len(node.value) <= 40 else node.value[:37] + "..."
            kind = _SCALAR_KINDS.get(node.tag, _short_tag(node.tag))
            raise self.fail(
                f"cannot read {shown!r} as {kind}: {detail}", node, hint="quote it to make it a string"
            ) from None


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def dotted(path: ValuePath) -> str:
    """`inputs.tensors[0].shape` for ``("inputs", "tensors", 0, "shape")``; an odd key shows quoted: `env['A\\n']`."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        elif not _PLAIN_KEY.fullmatch(part):
            text += f"[{part!r}]"
        else:
            text += f".{part}" if text else part
    return text


def _short_tag(tag: str) -> str:
    """`'!!set'` for standard tags, the tag itself (quoted) for others."""
    return repr("!!" + tag[len(_TAG) :] if tag.startswith(_TAG) else tag)


def describe_value(value: object) -> str:
    """A short human description of a parsed value: `integer 5`, `'text'`, `a mapping`."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"boolean {str(value).lower()}"
    if isinstance(value, int):
        return f"integer {value}" if abs(value) < 10**30 else "a very large integer"
    if isinstance(value, float):
        return f"number {value}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return repr(shown)
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, datetime.datetime):
        return f"timestamp {value.isoformat()}"
    if isinstance(value, datetime.date):
        return f"date {value.isoformat()}"
    return f"a {type(value).__name__}"
