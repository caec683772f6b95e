"""Report pages built one run at a time: each `reports/<run>/` is a unit Sphinx builds on its own.

One Sphinx project for the whole site made a one-run change cost what the site weighs: Sphinx loads and saves
its whole environment (every page's toctree, titles, dependencies) on every build, and at 500 runs of ~44 pages
a change cost a minute. So the site's own pages (its front page, `reports/index`, a user's pages) are one
project whose environment holds them alone, and the pages of each run are a unit built apart, into a directory of
the build state, then copied into the HTML tree: a change costs one unit and the small project, whatever the
site weighs.

A unit builds with the site's conf.py and the site's own pages (so a report page's sidebar and links are the
site's), its `include_patterns` limited to them and its run's directory (`include_patterns`); of its output, the
run's directory, its `_sources` and the images and downloads its pages use are kept. Pages of different runs
link by URL (`reportgen.escape.PAGE_SCHEME`), never by cross-reference. A unit is built from scratch each time
(its doctrees are thrown away with its output): no pickle of it is kept to be read again. It is built again when
a file of its directory, a page of the site's own (but for the generated index and overview, which a unit uses
for their titles alone) or the build's inputs changed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Collection, Sequence
from pathlib import Path

from pydantic import ValidationError

from reportgen.errors import SiteError
from reportgen.site.search import UnitSearch, unit_search
from reportgen.site.sphinx_runner import OUTPUTS_FILE
from reportgen.site.stamp import OUTPUTS_MAX_BYTES, BuildStamp, Outputs
from reportgen.site.trees import read_regular, sync_tree

__all__ = [
    "GENERATED",
    "RECORDS_DIR",
    "REPORTS_DIR",
    "UNIT_PATTERN",
    "build_units",
    "in_unit",
    "install_units",
    "remove_units",
    "stale_units",
    "unit_names",
    "unit_searches",
    "units_used",
]

REPORTS_DIR = "reports"
UNIT_PATTERN = f"{REPORTS_DIR}/*/**"
"""What the site's own project leaves out: every run's directory (the units)."""
GENERATED = frozenset({f"{REPORTS_DIR}/index.md", f"{REPORTS_DIR}/overview.inc", f"{REPORTS_DIR}/speedups.png"})
"""The site's own pages render writes on every change: a unit shows only their titles (in the sidebar), which do
not change, so they do not make every unit stale; and a unit reads them as their title alone (the index and the
front page's overview hold a row per run: reading them took most of a unit's build at 500 runs)."""
RECORDS_DIR = "units"
"""Where a tree's doctrees keep, per unit, what its pages use and its part of the search index (`<unit>.json`,
`<unit>.search.json`): they go with the tree's doctrees, synced and sealed with them (`site.state`)."""
_TAIL_LINES = 30
_SEARCH_SUFFIX = ".search.json"


def in_unit(path: str) -> bool:
    """Whether the source `path` is in a unit: in a directory directly under `reports/`, or below it."""
    return path.startswith(f"{REPORTS_DIR}/") and path.count("/") >= 2


def unit_names(sources: Collection[str]) -> set[str]:
    """The units of a site's sources: each directory directly under `reports/` that holds a file."""
    return {path.split("/")[1] for path in sources if in_unit(path)}


def _shared(stamp: BuildStamp) -> dict[str, tuple[int, int]]:
    """The site's own sources every unit is built with (all but the units and `GENERATED`)."""
    return {path: value for path, value in stamp.sources.items() if path not in GENERATED and not in_unit(path)}


def _by_unit(stamp: BuildStamp) -> dict[str, dict[str, tuple[int, int]]]:
    """The sources of each unit of `stamp` (one pass over them: a site of 500 runs has 22,000)."""
    units: dict[str, dict[str, tuple[int, int]]] = {}
    for path, value in stamp.sources.items():
        if in_unit(path):
            units.setdefault(path.split("/")[1], {})[path] = value
    return units


def stale_units(previous: BuildStamp | None, stamp: BuildStamp, tree: Path | None = None) -> set[str]:
    """The units of `stamp` to build: all of them when there is no previous build or its inputs or the site's
    own pages changed, else those whose files changed, or whose page is missing from `tree` (as Sphinx writes a
    page again whose output is gone)."""
    units = unit_names(stamp.sources)
    if previous is None or previous.inputs != stamp.inputs or _shared(previous) != _shared(stamp):
        return units
    before, after = _by_unit(previous), _by_unit(stamp)
    changed = {unit for unit in units if before.get(unit) != after.get(unit)}
    missing = {u for u in units if tree is not None and not (tree / REPORTS_DIR / u / "index.html").is_file()}
    return changed | missing


def _include(source_dir: Path, unit: str) -> list[str]:
    """`include_patterns` of a unit: the site's own pages and its run's directory."""
    top = sorted(p.name for p in source_dir.iterdir() if p.is_dir() and p.name != REPORTS_DIR)
    return ["*", f"{REPORTS_DIR}/*", *(f"{name}/**" for name in top), f"{REPORTS_DIR}/{unit}/**"]


def build_units(source_dir: Path, work: Path, units: Sequence[str], sphinx: list[str], jobs: int) -> None:
    """Build `units` (each from scratch, in `jobs` processes, each building its share one after another) in
    `work`, a directory of the build state (emptied first); `install_units` puts them in the site.

    :param sphinx: the runner's command up to its Sphinx options (`python -m reportgen.site.sphinx_runner -W ...`)
    :raises SiteError: when Sphinx fails on a unit (its output's tail)
    """
    shutil.rmtree(work, ignore_errors=True)
    if not units:
        return
    work.mkdir(parents=True)
    shares = [list(units[i :: max(1, jobs)]) for i in range(min(max(1, jobs), len(units)))]
    procs = []
    for number, share in enumerate(shares):
        plan = [
            {
                "include": _include(source_dir, unit),
                "titles": sorted(path for path in GENERATED if not path.endswith(".png")),
                "doctrees": str(work / unit / "doctrees"),
                "srcdir": str(source_dir),
                "outdir": str(work / unit / "html"),
            }
            for unit in share
        ]
        plan_file = work / f"plan-{number}.json"
        plan_file.write_text(json.dumps(plan), encoding="utf-8")
        command = [*sphinx[:3], "--units", str(plan_file), *sphinx[3:]]
        with (work / f"log-{number}.txt").open("wb") as log:  # (a pipe would stall a process while another's drains)
            procs.append(subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT))
    for number, proc in enumerate(procs):
        if proc.wait() != 0:
            for other in procs:  # the others' units are not installed: no need to finish them
                other.terminate()
                other.wait()
            output = (work / f"log-{number}.txt").read_text(encoding="utf-8", errors="replace")
            tail = "\n".join(output.splitlines()[-_TAIL_LINES:])
            raise SiteError(
                f"sphinx-build failed with exit code {proc.returncode}:\n{tail}",
                path=source_dir,
                hint="fix the warnings above; every warning fails the build",
            )


def install_units(work: Path, tree: Path, records: Path, units: Sequence[str]) -> None:
    """Copy the pages, sources, images and downloads of `units`, built in `work` (then removed), into `tree`;
    keep what each one's pages use and its part of the search index in `records`."""
    records.mkdir(exist_ok=True)
    for unit in units:
        _install(work / unit, tree, unit, records / unit)
    shutil.rmtree(work, ignore_errors=True)


def _install(built: Path, tree: Path, unit: str, record: Path) -> None:
    """Copy a built unit's run directory, `_sources` and used images and downloads into `tree`; keep what its
    pages use and its part of the search index at `record` (`.json`, `.search.json`)."""
    html = built / "html"
    for part in (f"{REPORTS_DIR}/{unit}", f"_sources/{REPORTS_DIR}/{unit}"):
        if (html / part).is_dir():
            sync_tree(html / part, tree / part)
        else:
            shutil.rmtree(tree / part, ignore_errors=True)
    data = read_regular(built / "doctrees" / OUTPUTS_FILE, OUTPUTS_MAX_BYTES) or b'{"images":[],"downloads":[]}'
    used = Outputs.model_validate_json(data)
    for relative in (*used.images, *used.downloads):
        target, built_file = tree / relative, html / relative
        if target.is_symlink() or not target.is_file() or _stat(target) != _stat(built_file):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.unlink(missing_ok=True)
            shutil.copy2(built_file, target)
    record.with_suffix(".json").write_bytes(data)
    search = unit_search(html, f"{REPORTS_DIR}/{unit}/")
    search_file = record.with_suffix(_SEARCH_SUFFIX)
    if search is None:
        search_file.unlink(missing_ok=True)
    else:
        search_file.write_text(search.model_dump_json(), encoding="utf-8")


def _stat(path: Path) -> tuple[int, int]:
    info = path.stat()
    return info.st_size, info.st_mtime_ns


def remove_units(tree: Path, records: Path, units: Collection[str]) -> None:
    """Remove the pages of `units` (runs that are gone) from `tree`, and what their pages used from the state."""
    for unit in units:
        for part in (tree / REPORTS_DIR / unit, tree / "_sources" / REPORTS_DIR / unit):
            shutil.rmtree(part, ignore_errors=True)
        for suffix in (".json", _SEARCH_SUFFIX):
            (records / f"{unit}{suffix}").unlink(missing_ok=True)


def units_used(records: Path, units: Collection[str]) -> tuple[set[str], set[str]] | None:
    """The images and downloads the pages of `units` use, from what each unit's build kept; None when one
    cannot be read (then nothing is pruned)."""
    images: set[str] = set()
    downloads: set[str] = set()
    for unit in units:
        data = read_regular(records / f"{unit}.json", OUTPUTS_MAX_BYTES)
        if data is None:
            return None
        try:
            used = Outputs.model_validate_json(data)
        except ValidationError:
            return None
        images.update(used.images)
        downloads.update(used.downloads)
    return images, downloads


def unit_searches(records: Path, units: Collection[str]) -> list[UnitSearch]:
    """The parts of the search index the builds of `units` kept (a unit's that cannot be read is left out: its
    pages are not found by the site's search until it is built again)."""
    parts = []
    for unit in sorted(units):
        data = read_regular(records / f"{unit}{_SEARCH_SUFFIX}", OUTPUTS_MAX_BYTES)
        try:
            parts.append(UnitSearch.model_validate_json(data)) if data is not None else None
        except ValidationError:
            continue
    return parts
