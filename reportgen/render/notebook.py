"""The reproducer notebook of a report: write the recipe, re-run it, compare the headline numbers.

The notebook is self-contained: it embeds the bundle's recipe.yaml and the local Python modules the
recipe imports (looked up next to the original recipe file, when that still exists), runs the recipe
with reportgen's public API (the run happens in a child process with its own Inductor cache), and
prints the new headline numbers next to the original ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields
from pathlib import Path, PurePosixPath

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from tabulate import tabulate

from reportgen.bundle.model import Manifest

__all__ = [
    "Headline",
    "LocalModule",
    "LocalModules",
    "comparison_table",
    "find_local_modules",
    "reproducer_notebook",
]

_MISSING = "—"
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


@dataclass(frozen=True)
class Headline:
    """The numbers a reproduction is compared on; None = not measured."""

    status: str
    device: str
    torch: str | None = None
    eager_ms: float | None = None
    compiled_ms: float | None = None
    speedup: float | None = None
    compile_s: float | None = None

    @classmethod
    def from_manifest(cls, manifest: Manifest) -> Headline:
        """The headline numbers of a run."""
        metrics, env = manifest.metrics, manifest.environment
        return cls(
            status=manifest.status.value,
            device=f"{env.device} ({env.device_name})" if env else manifest.recipe.device,
            torch=env.versions.torch if env else None,
            eager_ms=metrics.eager.median_ms if metrics.eager else None,
            compiled_ms=metrics.compiled.median_ms if metrics.compiled else None,
            speedup=metrics.speedup,
            compile_s=metrics.compile_time_s,
        )

    def rows(self) -> list[tuple[str, str]]:
        """(label, formatted value) pairs, in table order."""

        def num(value: float | None, spec: str, unit: str = "") -> str:
            return _MISSING if value is None else f"{value:{spec}}{unit}"

        return [
            ("status", self.status),
            ("device", self.device),
            ("torch", self.torch or _MISSING),
            ("eager median (ms)", num(self.eager_ms, ".3f")),
            ("compiled median (ms)", num(self.compiled_ms, ".3f")),
            ("speedup", num(self.speedup, ".2f", "x")),
            ("compile time (s)", num(self.compile_s, ".1f")),
        ]

    def literal(self) -> str:
        """Python source that rebuilds this headline (for the notebook)."""
        args = "".join(f"    {f.name}={getattr(self, f.name)!r},\n" for f in fields(self))
        return f"Headline(\n{args})"


def comparison_table(original: Headline, reproduced: Headline, tablefmt: str = "simple") -> str:
    """Original and reproduced headline numbers side by side, as a text table."""
    rows = [(label, old, new) for (label, old), (_, new) in zip(original.rows(), reproduced.rows(), strict=True)]
    return str(tabulate(rows, headers=["", "original", "reproduced"], tablefmt=tablefmt, disable_numparse=True))


@dataclass(frozen=True)
class LocalModule:
    """A Python module the recipe imports from next to its file.

    :param path: path relative to the recipe's directory, e.g. `models.py`
    :param source: the module's text
    """

    path: str
    source: str


@dataclass(frozen=True)
class LocalModules:
    """What a recipe imports from next to its file.

    :param recipe_dir: the original recipe's directory, or None when the recipe file no longer exists
    :param found: the modules found there
    :param missing: module names of `module:callable` references with no file next to the recipe
    """

    recipe_dir: Path | None
    found: tuple[LocalModule, ...] = ()
    missing: tuple[str, ...] = ()


def _module_names(manifest: Manifest) -> list[str]:
    recipe = manifest.recipe
    refs = [recipe.model.ref] if recipe.model.source == "python" else []
    if recipe.inputs.factory:
        refs.append(recipe.inputs.factory)
    return list(dict.fromkeys(ref.split(":", 1)[0] for ref in refs))


def find_local_modules(manifest: Manifest, base_dir: Path | None = None) -> LocalModules:
    """Look up the modules of the recipe's `module:callable` references next to `manifest.recipe_path`.

    :param base_dir: directory a relative `recipe_path` is relative to (default: the working directory)
    """
    names = _module_names(manifest)
    recipe_path = Path(manifest.recipe_path)
    if not recipe_path.is_absolute():
        recipe_path = (base_dir or Path.cwd()) / recipe_path
    if not recipe_path.is_file():
        return LocalModules(recipe_dir=None, missing=tuple(names))
    found, missing = [], []
    for name in names:
        relative = PurePosixPath(*name.split(".")).with_suffix(".py")
        path = recipe_path.parent / relative
        try:
            found.append(LocalModule(path=str(relative), source=path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError):
            missing.append(name)
    return LocalModules(recipe_dir=recipe_path.parent, found=tuple(found), missing=tuple(missing))


def _escape(text: str) -> str:
    """`text` as literal notebook Markdown (no emphasis, links, HTML or table breaks)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _intro(manifest: Manifest, original: Headline) -> str:
    recipe = manifest.recipe
    what = f"recipe `{recipe.name}`" + (f", variant `{manifest.variant}`" if manifest.variant else "")
    rows = [(label, _escape(value)) for label, value in original.rows()]
    table = tabulate(rows, headers=["original run", ""], tablefmt="github", disable_numparse=True)
    return "\n\n".join(
        [
            f"# Reproduce: {_escape(recipe.display_title)}" + (f" — {manifest.variant}" if manifest.variant else ""),
            f"This notebook re-runs {what} (model `{recipe.model.ref}`), which ran on {_escape(original.device)} "
            f"with torch {_escape(original.torch or 'unknown')} on {manifest.started_at}, "
            "and compares the headline numbers.",
            table,
            "It needs `reportgen` (and torch) installed. The run happens in a child process with its own "
            "Inductor cache and timeout, like `reportgen run`; its bundle lands in `results/`.",
        ]
    )


def _module_cells(manifest: Manifest, modules: LocalModules) -> list[NotebookNode]:
    cells: list[NotebookNode] = []
    for module in modules.found:
        cells.append(
            new_markdown_cell(f"The recipe imports `{module.path}`, copied from next to `{manifest.recipe_path}`.")
        )
        if (parent := PurePosixPath(module.path).parent) != PurePosixPath("."):
            cells.append(new_code_cell(f"import os\n\nos.makedirs({str(parent)!r}, exist_ok=True)"))
        cells.append(new_code_cell(f"%%writefile {module.path}\n{module.source.rstrip()}"))
    if modules.missing:
        where = f"next to `{manifest.recipe_path}`" if modules.recipe_dir else "(the original recipe file is gone)"
        names = ", ".join(f"`{name}`" for name in modules.missing)
        cells.append(
            new_markdown_cell(
                f"The recipe imports {names}, which was not found {where}, so this notebook does not include "
                "it: the run imports it from the installed packages. Install it, or put its file next to "
                "this notebook."
            )
        )
    return cells


def _run_cell(variant: str | None) -> str:
    return f"""\
from pathlib import Path

from reportgen.bundle.store import read_manifest
from reportgen.recipe import load_recipe
from reportgen.run import RunOptions, run_recipe

VARIANT = {variant!r}  # the recipe variant the original run compiled (None = the recipe as written)
recipe = load_recipe("recipe.yaml")
variant = next(v for v in recipe.variants if v.name == VARIANT) if VARIANT else None
bundle = run_recipe(recipe, Path("recipe.yaml"), Path("results"), RunOptions(), variant)
reproduced = read_manifest(bundle)
print(f"{{reproduced.name}}: {{reproduced.status.value}} in {{reproduced.wall_time_s:.1f}} s -> {{bundle}}")
if reproduced.error:
    print(reproduced.error)"""


def _compare_cell(original: Headline) -> str:
    return (
        "from reportgen.render.notebook import Headline, comparison_table\n\n"
        f"ORIGINAL = {original.literal()}\n"
        "print(comparison_table(ORIGINAL, Headline.from_manifest(reproduced)))"
    )


def reproducer_notebook(manifest: Manifest, recipe_yaml: str, base_dir: Path | None = None) -> NotebookNode:
    """A notebook that re-runs the bundle's recipe (and variant) and compares the headline numbers.

    :param recipe_yaml: the bundle's recipe.yaml text, embedded verbatim
    :param base_dir: directory a relative `manifest.recipe_path` is relative to (default: the working directory)
    """
    original = Headline.from_manifest(manifest)
    cells = [
        new_markdown_cell(_intro(manifest, original)),
        new_code_cell(f"%%writefile recipe.yaml\n{recipe_yaml.rstrip()}"),
        *_module_cells(manifest, find_local_modules(manifest, base_dir)),
        new_markdown_cell("Run the recipe (a few warm-up steps, then timed eager and compiled steps):"),
        new_code_cell(_run_cell(manifest.variant)),
        new_markdown_cell("The reproduced numbers next to the original ones:"),
        new_code_cell(_compare_cell(original)),
    ]
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"  # stable ids: the same bundle gives the same notebook
    notebook = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(notebook)
    return notebook
