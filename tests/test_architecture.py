"""The layout rules that `nox -s lint`'s import-linter contracts do not cover (docs/architecture.md)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "reportgen"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
SOURCES = sorted(p for p in PACKAGE.rglob("*.py") if "template" not in p.parts)
# The names of files inside a bundle: declared in reportgen/bundle/layout.py, nowhere else.
BUNDLE_FILE_LITERAL = re.compile(
    r"""["'](manifest\.json|analysis\.json|capture\.json|run\.log|trace\.json\.gz|recipe\.yaml|analysis-error\.txt)["']"""
)


def _module(path: Path) -> str:
    return ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")


def _package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def _cross_package_reaches(text: str, module: str, where: str) -> list[str]:
    """Imports in `text` (the source of `module`) that reach past another package's `__init__`."""
    importer = _package(module)
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reportgen."):
            target = node.module
            if _package(target) != importer and target != _package(target):
                found.append(f"{where}:{node.lineno}: from {target} import ...")
    return found


def test_cross_package_imports_go_through_the_package_face() -> None:
    reaches = [
        reach
        for path in SOURCES
        for reach in _cross_package_reaches(
            path.read_text(encoding="utf-8"), _module(path), str(path.relative_to(ROOT))
        )
    ]
    assert reaches == []


def test_the_face_rule_catches_a_reach_into_a_submodule() -> None:
    text = "from reportgen.bundle.store import Bundle\nfrom reportgen.bundle import Manifest\nfrom reportgen.render.markup import MISSING\n"
    assert _cross_package_reaches(text, "reportgen.render.pages", "x.py") == [
        "x.py:1: from reportgen.bundle.store import ..."
    ]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_module_size(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MAX_MODULE_LINES


def test_function_size() -> None:
    long = []
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


def test_bundle_file_names_are_declared_once() -> None:
    layout = PACKAGE / "bundle" / "layout.py"
    outside = [
        f"{path.relative_to(ROOT)}:{lineno}: {line.strip()}"
        for path in SOURCES
        if path != layout
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if BUNDLE_FILE_LITERAL.search(line) and not line.lstrip().startswith("#")
    ]
    assert outside == []
    assert BUNDLE_FILE_LITERAL.search('LOG = "run.log"')


def test_category_vocabulary_is_declared_once() -> None:
    """Names, order and colours live in bundle/categories.py; analysis rules only refer to the names."""
    declaring = [
        p.relative_to(ROOT).as_posix()
        for p in SOURCES
        if re.search(
            r"^(CATEGORY_ORDER|CATEGORY_COLORS|SEED_BUCKETS|CATEGORIES)\b.*=", p.read_text(encoding="utf-8"), re.M
        )
    ]
    assert declaring == ["reportgen/bundle/categories.py"]


def _top_level_imports(path: Path) -> set[str]:
    """reportgen modules imported when `path` is imported (not under TYPE_CHECKING, not inside functions)."""
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("reportgen"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)  # `from pkg import submodule`
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("reportgen"))
    return found


def test_no_import_cycle() -> None:
    modules = {_module(p): p for p in SOURCES}
    graph = {
        name: sorted(m for m in _top_level_imports(path) if m in modules and m != name)
        for name, path in modules.items()
    }
    state: dict[str, int] = {}  # 1 visiting, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    # A package's __init__ importing its own submodules is the face, not a cycle, unless a submodule imports
    # the face back.
    assert cycles == []


def test_running_loads_no_rendering_library() -> None:
    """`reportgen run` (cli → pipeline, with compare keeping each bundle's comparison) loads neither matplotlib,
    nbformat nor Sphinx: a GPU host may have only what running needs (the device image lacks nbformat)."""
    code = (
        "import sys, reportgen.cli, reportgen.pipeline, reportgen.compare; "
        "print(sorted(m for m in ('matplotlib', 'nbformat', 'sphinx', 'myst_parser', 'tabulate') if m in sys.modules))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"
