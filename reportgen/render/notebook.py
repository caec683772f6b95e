"""The reproducer notebook of a report: write the recipe, re-run it, compare the headline numbers.

The notebook is self-contained: it embeds the bundle's recipe.yaml and the local Python modules the
recipe imports (in a site, the bundle's copies of them; else looked up next to the original recipe file,
when that still exists), runs the recipe
with reportgen's public API (the run happens in a child process with its own Inductor cache), and
prints the new headline numbers next to the original ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path, PurePosixPath

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from tabulate import tabulate

from reportgen.bundle import MAX_MODULE_BYTES, RECIPE_FILE, RECIPE_MODULES_DIR, Manifest, read_bundle_text
from reportgen.credentials import redact
from reportgen.escape import markdown_code, markdown_text, visible
from reportgen.recipe import LocalModules, find_local_modules, read_local_modules
from reportgen.render.markup import MISSING

__all__ = [
    "Headline",
    "comparison_table",
    "reproducer_notebook",
]


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
            return MISSING if value is None else f"{value:{spec}}{unit}"

        return [
            ("status", self.status),
            ("device", self.device),
            ("torch", self.torch or MISSING),
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


def _intro(manifest: Manifest, original: Headline) -> str:
    recipe = manifest.recipe
    what = f"recipe {markdown_code(recipe.name)}" + (
        f", variant {markdown_code(manifest.variant)}" if manifest.variant else ""
    )
    rows = [(label, markdown_text(value, table=True)) for label, value in original.rows()]
    table = tabulate(rows, headers=["original run", ""], tablefmt="github", disable_numparse=True)
    variant = f" — {markdown_text(manifest.variant)}" if manifest.variant else ""
    return "\n\n".join(
        [
            f"# Reproduce: {markdown_text(recipe.display_title)}{variant}",
            f"This notebook re-runs {what} (model {markdown_code(recipe.model.ref)}), which ran on "
            f"{markdown_text(original.device)} with torch {markdown_text(original.torch or 'unknown')} on "
            f"{markdown_text(manifest.started_at)}, and compares the headline numbers.",
            table,
            "It needs `reportgen` (and torch) installed. The run happens in a child process with its own "
            "Inductor cache and timeout, like `reportgen run`; its bundle lands in `results/`.",
        ]
    )


def _module_cells(manifest: Manifest, modules: LocalModules) -> list[NotebookNode]:
    cells: list[NotebookNode] = []
    for module in modules.found:
        cells.append(
            new_markdown_cell(
                f"The recipe imports {markdown_code(module.path)}, copied from next to "
                f"{markdown_code(manifest.recipe_path)}."
            )
        )
        if (parent := PurePosixPath(module.path).parent) != PurePosixPath("."):
            cells.append(new_code_cell(f"import os\n\nos.makedirs({str(parent)!r}, exist_ok=True)"))
        cells.append(new_code_cell(f"%%writefile {module.path}\n{visible(redact(module.source)[0]).rstrip()}"))
    if modules.missing:
        where = (
            f"next to {markdown_code(manifest.recipe_path)}"
            if modules.recipe_dir
            else "(the original recipe file is gone)"
        )
        names = ", ".join(markdown_code(name) for name in modules.missing)
        cells.append(
            new_markdown_cell(
                f"The recipe imports {names}, which was not found {where}, so this notebook does not include "
                "it: the run imports it from the installed packages. Install it, or put its file next to "
                "this notebook."
            )
        )
    return cells


def _bundled(bundle_dir: Path) -> Callable[[str], str | None]:
    """A reader of the bundle's copies of the recipe's modules: regular files inside it, or None."""

    def read(relative: str) -> str | None:
        path = f"{RECIPE_MODULES_DIR}/{relative}"
        return read_bundle_text(bundle_dir, path, MAX_MODULE_BYTES, "not embedded in the notebook")

    return read


def _run_cell(variant: str | None) -> str:
    return f"""\
from pathlib import Path

from reportgen.pipeline import run_recipe_file

VARIANT = {variant!r}  # the recipe variant the original run compiled (None = the recipe as written)
outcome = run_recipe_file(Path({RECIPE_FILE!r}), Path("results"), VARIANT)
reproduced = outcome.manifest
print(f"{{reproduced.name}}: {{reproduced.status.value}} in {{reproduced.wall_time_s:.1f}} s -> {{outcome.bundle}}")
if reproduced.error:
    print(reproduced.error)"""


def _compare_cell(original: Headline) -> str:
    return (
        "from reportgen.render import Headline, comparison_table\n\n"
        f"ORIGINAL = {original.literal()}\n"
        "print(comparison_table(ORIGINAL, Headline.from_manifest(reproduced)))"
    )


def reproducer_notebook(
    manifest: Manifest, recipe_yaml: str, base_dir: Path | None = None, bundle_dir: Path | None = None
) -> NotebookNode:
    """A notebook that re-runs the bundle's recipe (and variant) and compares the headline numbers.

    :param recipe_yaml: the bundle's recipe.yaml text, embedded with credentials redacted (as are module sources)
    :param base_dir: directory a relative `manifest.recipe_path` is relative to (default: the working directory)
    :param bundle_dir: the bundle: the recipe's modules are read from its copies only (a site build reads
        nothing outside its bundles); without it, from next to `manifest.recipe_path`
    """
    if bundle_dir is None:
        modules = find_local_modules(manifest.recipe, manifest.recipe_path, base_dir)
    else:
        modules = read_local_modules(manifest.recipe, bundle_dir / RECIPE_MODULES_DIR, _bundled(bundle_dir))
    original = Headline.from_manifest(manifest)
    cells = [
        new_markdown_cell(_intro(manifest, original)),
        new_code_cell(f"%%writefile {RECIPE_FILE}\n{visible(redact(recipe_yaml)[0]).rstrip()}"),
        *_module_cells(manifest, modules),
        new_markdown_cell("Run the recipe (a few warm-up steps, then timed eager and compiled steps):"),
        new_code_cell(_run_cell(manifest.variant)),
        new_markdown_cell("The reproduced numbers next to the original ones:"),
        new_code_cell(_compare_cell(original)),
    ]
    for number, cell in enumerate(cells):
        cell["id"] = f"cell-{number}"  # stable ids: the same bundle gives the same notebook
    notebook: NotebookNode = new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"},
        },
    )
    nbformat.validate(notebook)
    return notebook
