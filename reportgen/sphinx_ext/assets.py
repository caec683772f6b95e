"""Chart images and the recipe copy of a bundle, drawn once per bundle version into the build's cache.

Each version of a bundle gets its own folder ``<doctreedir>/_reportgen/<bundle>-<key>/``, filled in a
temporary sibling and renamed into place, so parallel readers (``sphinx-build -j``) never see a
half-drawn folder and a folder, once there, never changes (pages that show its images stay current).
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path

from reportgen.bundle import RECIPE_FILE, Bundle, read_recipe_text
from reportgen.escape import path_segment
from reportgen.render import ChartFiles, redacted

__all__ = ["CACHE_DIR", "CHART_KINDS", "BundleAssets", "ChartKind", "bundle_assets", "source_uri"]

CACHE_DIR = "_reportgen"
_INDEX_FILE = "assets.json"


@dataclass(frozen=True)
class ChartKind:
    """A chart that ``perf-chart`` can show.

    :param field: its attribute of :class:`~reportgen.render.pages.ChartFiles`
    :param alt: default alt text
    """

    field: str
    alt: str


CHART_KINDS: dict[str, ChartKind] = {
    "categories": ChartKind("categories", "Time per kernel category"),
    "top-kernels": ChartKind("top_kernels", "Longest kernels by time"),
    "step-times": ChartKind("step_times", "Eager and compiled step times"),
    "graphs": ChartKind("graph_categories", "Kernel time per compiled graph by category"),
    "timeline": ChartKind("timeline", "Timeline of one step: busy vs idle"),
    "idle": ChartKind("idle", "Histogram of idle gaps"),
    "bandwidth": ChartKind("bandwidth", "Achieved bandwidth of hot kernels"),
    "modules": ChartKind("modules", "Modules with the most device time of their own"),
    "roofline": ChartKind("roofline", "Kernels of known FLOPs against the GPU's roofs"),
    "ranks": ChartKind("ranks", "Each rank's compute and communication in one profiled step"),
}
"""``:kind:`` values of ``perf-chart``."""


@dataclass(frozen=True)
class BundleAssets:
    """The drawn files of one bundle version.

    :param directory: the cache folder holding them
    :param charts: chart file names inside `directory` (None: no data for that chart)
    :param recipe: file name of the recipe copy, None when the bundle has no recipe file
    """

    directory: Path
    charts: ChartFiles
    recipe: str | None

    def chart(self, kind: str) -> Path | None:
        """The image of chart `kind` (a :data:`CHART_KINDS` key), or None when it was not drawn."""
        name: str | None = getattr(self.charts, CHART_KINDS[kind].field)
        return None if name is None else self.directory / name

    def names(self) -> list[str]:
        """The names of all files in `directory` that a page may show."""
        return [*([self.recipe] if self.recipe is not None else []), *self.charts.names()]


def source_uri(path: Path, srcdir: Path) -> str:
    """`path` as a Sphinx URI rooted at the source directory (``/../_build/...``)."""
    return "/" + Path(os.path.relpath(path, srcdir)).as_posix()


def _draw(bundle: Bundle, directory: Path) -> None:
    from reportgen.render import draw_charts  # matplotlib: loaded when a chart is drawn, not at import

    charts = draw_charts(bundle, directory)
    recipe_text = redacted(read_recipe_text(bundle.path))
    if recipe_text is not None:
        (directory / RECIPE_FILE).write_text(recipe_text, encoding="utf-8")
    index = {"charts": dataclasses.asdict(charts), "recipe": RECIPE_FILE if recipe_text is not None else None}
    (directory / _INDEX_FILE).write_text(json.dumps(index, indent=2) + "\n", encoding="utf-8")


def _read(directory: Path) -> BundleAssets:
    index = json.loads((directory / _INDEX_FILE).read_text(encoding="utf-8"))
    names = {f.name: index["charts"].get(f.name) for f in dataclasses.fields(ChartFiles)}
    return BundleAssets(directory=directory, charts=ChartFiles(**names), recipe=index["recipe"])


def bundle_assets(bundle: Bundle, key: str, cache_root: Path) -> BundleAssets:
    """The charts and recipe copy of `bundle`, drawn into `cache_root` unless already there.

    :param key: identifies the bundle's version (:func:`~reportgen.sphinx_ext.locate.bundle_key`)
    """
    name = path_segment(bundle.name)
    directory = cache_root / f"{name}-{key}"
    if not (directory / _INDEX_FILE).is_file():
        cache_root.mkdir(parents=True, exist_ok=True)
        tmp = cache_root / f".tmp-{name}-{secrets.token_hex(4)}"
        tmp.mkdir()
        try:
            _draw(bundle, tmp)
            tmp.rename(directory)
        except OSError:
            if not (directory / _INDEX_FILE).is_file():  # not another reader's folder: a real failure
                raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return _read(directory)
