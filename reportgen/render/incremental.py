"""Render a site's pages at the speed of its changes.

A bundle's pages, charts and downloads are a function of its content, the content of its variant siblings
(the variants table), the modules its reproducer notebook copies from next to its recipe, and the renderer.
Their hash is the bundle's **render key**; `reports/.reportgen-render.json` records each bundle's key, its
content digest (`bundle_digest`), the files of its page directory and its index row. A build renders only
the bundles whose key changed (in a process pool when there are several: matplotlib and Pygments-free page
text are CPU-bound and single-threaded), writes only files whose bytes changed (the others keep their mtime,
so Sphinx re-reads nothing else), and removes every file of `reports/` that no bundle produced (pages of
bundles that are gone). The pages equal those of a clean build.

`reports/` is updated in place. A build killed part-way leaves some pages new and some old; the record
written before rendering starts has forgotten the bundles being rendered, so the next build renders them
again. The published HTML is never touched here (see `reportgen.site`).
"""

from __future__ import annotations

import ctypes
import hashlib
import logging
import multiprocessing
import os
import shutil
import signal
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from pathlib import Path

import matplotlib
import nbformat
from pydantic import BaseModel, ValidationError

from reportgen import __version__
from reportgen.bundle import (
    BundleDigest,
    RunRecord,
    bundle_digest,
    iter_bundles,
    read_manifest,
    recover_dir,
    write_if_changed,
)
from reportgen.errors import ReportgenError
from reportgen.render.index import OVERVIEW_FILE, BrokenBundle, IndexEntry, index_page, overview_page
from reportgen.render.markup import page_name
from reportgen.render.report import SPEEDUPS_PNG, RenderedReport, draw_speedups, render_report
from reportgen.render.sweep import SWEEP_PAGE
from reportgen.render.trends import run_page

__all__ = ["STATE_FILE", "render_site_pages", "renderer_version"]

logger = logging.getLogger(__name__)

STATE_FILE = ".reportgen-render.json"
"""The render record, inside `reports/` (a dot file: Sphinx's `exclude_patterns` leave it out)."""
INDEX_FILE = "index.md"
_PACKAGE = Path(__file__).resolve().parents[1]
_PR_SET_PDEATHSIG = 1


class _Record(BaseModel):
    """What the last build knew of one bundle."""

    signature: str
    content: str
    key: str = ""
    group: str | None = None
    files: list[str] = []
    row: list[str] | None = None
    speedup: float | None = None
    broken: str | None = None
    rank: int = 0
    overview: list[str] = []


class _State(BaseModel):
    renderer: str = ""
    speedups: str = ""
    """Hash of the bars of the index's speedup chart, as last drawn."""
    bundles: dict[str, _Record] = {}


@cache
def renderer_version() -> str:
    """A hash of reportgen's code and the versions of the libraries that draw and write: any change renders
    every bundle again."""
    digest = hashlib.sha256(f"{__version__}\0{matplotlib.__version__}\0{nbformat.__version__}".encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _load_state(reports_dir: Path) -> _State:
    try:
        return _State.model_validate_json((reports_dir / STATE_FILE).read_bytes())
    except (OSError, ValidationError):
        return _State()  # first build, or a record of another version: everything is rendered


def _save_state(reports_dir: Path, state: _State) -> None:
    write_if_changed(reports_dir / STATE_FILE, state.model_dump_json().encode())


def _describe(bundle_dir: Path, digest: BundleDigest) -> _Record:
    """A new record for a bundle whose content changed: what its manifest says about its siblings and recipe."""
    record = _Record(signature=digest.signature, content=digest.content)
    try:
        manifest = read_manifest(bundle_dir)
    except ReportgenError:
        return record  # render_report says why
    record.group = manifest.recipe.name if manifest.variant is not None else None
    return record


def _scan(bundle_dirs: Mapping[str, Path], old: _State) -> dict[str, _Record]:
    """Each page's record (by page directory), re-reading only bundles whose entries' stat changed since the
    last build."""
    records = {}
    for key, bundle_dir in bundle_dirs.items():
        previous = old.bundles.get(key)
        known = BundleDigest(previous.signature, previous.content) if previous else None
        digest = bundle_digest(bundle_dir, known)
        if previous is not None and digest.content == previous.content:
            records[key] = previous.model_copy(update={"signature": digest.signature})
        else:
            records[key] = _describe(bundle_dir, digest)
    return records


def _bundle_dirs(
    results_dir: Path, history: Mapping[str, Sequence[RunRecord]]
) -> tuple[dict[str, Path], dict[str, str]]:
    """Every bundle to render, by page directory (`trends.run_page`): the latest runs, then the kept ones; and
    the bundle name of each latest run's page directory (the index lists only those).

    A page directory is the bundle's name, or its encoding when the name is not a safe path segment
    (`markup.page_name`); a name whose encoding another bundle's page already holds is left out with a warning.
    """
    latest: dict[str, Path] = {}
    names: dict[str, str] = {}
    for path in iter_bundles(results_dir):
        page = page_name(path.name)
        if page in latest:
            logger.warning("%s: left out: its page %r is %s's", path, page, latest[page])
            continue
        latest[page], names[page] = path, path.name
    pages = {name: page for page, name in names.items()}
    kept = {
        run_page(run): results_dir / run.path
        for name, runs in history.items()
        if name in pages and len(runs) >= 2
        for run in runs
        if run.path != run.name and run_page(run) not in latest
    }
    return {**latest, **kept}, names


def _siblings(records: dict[str, _Record]) -> dict[str, list[str]]:
    """For each bundle of a recipe variant, the bundles of all variants of its recipe (itself included)."""
    groups: dict[str, list[str]] = {}
    for name, record in records.items():
        if record.group is not None:
            groups.setdefault(record.group, []).append(name)
    return {name: groups[record.group] for name, record in records.items() if record.group is not None}


def _render_key(name: str, records: dict[str, _Record], siblings: list[str], runs: Sequence[RunRecord]) -> str:
    parts = [renderer_version(), name, records[name].content]
    parts += [run.model_dump_json() for run in runs] if len(runs) >= 2 else []
    parts += [f"{sibling}:{records[sibling].content}" for sibling in siblings]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def _complete(page_dir: Path, record: _Record) -> bool:
    """Whether the last build rendered the bundle (or found it unreadable) and its files are all still there."""
    if record.broken is not None:
        return True
    return bool(record.files) and all((page_dir / file).is_file() for file in record.files)


def _die_with_parent() -> None:
    """Pool initializer: a worker gets SIGKILL when the build that forked it dies (Linux), instead of waiting
    forever on its task queue."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before prctl
        os._exit(1)


def _render_all(
    jobs: list[tuple[Path, list[Path], Path, Sequence[RunRecord]]],
) -> list[RenderedReport | BrokenBundle]:
    """Render the bundles of `jobs` (bundle dir, sibling dirs, page dir, kept runs): in a process pool when there are
    several, so each core draws charts; one bundle is rendered here (a pool costs more than it saves).

    Workers are forked: they start at once with matplotlib loaded, and nothing re-imports `__main__` (a
    script without a main guard stays safe); `site.lock` keeps the build lock out of forked children.
    """
    workers = min(len(jobs), os.cpu_count() or 1)
    if workers <= 1:
        return [render_report(*job) for job in jobs]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_die_with_parent) as pool:
        return list(pool.map(render_report, *zip(*jobs, strict=True)))


def _update(record: _Record, key: str, result: RenderedReport | BrokenBundle) -> None:
    record.key = key
    if isinstance(result, BrokenBundle):
        record.files, record.row, record.speedup, record.broken = [], None, None, result.error
    else:
        entry = result.entry
        record.files, record.row, record.speedup, record.broken = (
            list(result.files),
            list(entry.row),
            entry.speedup,
            None,
        )
        record.rank, record.overview = entry.rank, list(entry.overview)


def _write_index(reports_dir: Path, records: Mapping[str, _Record], drawn: str) -> tuple[set[str], str]:
    """Write the index page and its speedup chart (drawn again only when its bars changed).

    :param drawn: the hash of the bars the chart on disk shows
    :returns: their files, and the hash of the bars now drawn
    """
    entries = [
        IndexEntry(name, tuple(r.row), r.speedup, r.rank, tuple(r.overview))
        for name, r in records.items()
        if r.row is not None
    ]
    broken = [BrokenBundle(name, r.broken) for name, r in records.items() if r.broken is not None]
    speedups = [(e.name, e.speedup) for e in entries if e.speedup is not None]
    bars = hashlib.sha256(repr(speedups).encode()).hexdigest() if speedups else ""
    chart = SPEEDUPS_PNG if speedups else None
    if speedups and (bars != drawn or not (reports_dir / SPEEDUPS_PNG).is_file()):
        draw_speedups(speedups, reports_dir)
    sweeps = sorted(
        (page, r.group)
        for page, r in records.items()
        if r.group and r.row is not None and f"{SWEEP_PAGE}.md" in r.files
    )
    write_if_changed(reports_dir / INDEX_FILE, index_page(entries, broken, chart, sweeps).encode())
    write_if_changed(reports_dir / OVERVIEW_FILE, overview_page(entries, broken).encode())
    return {INDEX_FILE, OVERVIEW_FILE, *([SPEEDUPS_PNG] if chart else [])}, bars


def _remove_gone(reports_dir: Path, keep: set[str]) -> None:
    """Remove what `reports_dir` holds besides `keep` (the pages of bundles that are gone, leftovers)."""
    for path in reports_dir.iterdir():
        if path.name in keep:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()


def render_site_pages(
    results_dir: Path, reports_dir: Path, history: Mapping[str, Sequence[RunRecord]] | None = None
) -> list[Path]:
    """Bring `reports_dir` up to date with the bundles of `results_dir`, rendering only what changed.

    An unreadable bundle becomes a warning on the index and does not stop the others.

    :param history: each bundle's kept runs, oldest first (the history index's records): a bundle with two or
        more gets a trend page and sparkline (its render key includes them), and each kept run its own report
        (`<name>~<run id>/`)

    :returns: the index page and the report pages, at their paths
    """
    recover_dir(reports_dir)  # leftovers of builds that replaced reports/ whole
    reports_dir.mkdir(parents=True, exist_ok=True)
    old = _load_state(reports_dir)
    history = history or {}
    bundle_dirs, latest = _bundle_dirs(results_dir, history)
    runs = {page: history.get(name, ()) for page, name in latest.items()}
    records = _scan(bundle_dirs, old)
    siblings = _siblings({name: records[name] for name in latest})
    keys = {name: _render_key(name, records, siblings.get(name, []), runs.get(name, ())) for name in records}
    todo = [n for n, r in records.items() if r.key != keys[n] or not _complete(reports_dir / n, r)]
    if todo:  # forget them first: a build killed while rendering them leaves them to the next build
        _save_state(
            reports_dir, _State(bundles={n: r for n, r in old.bundles.items() if n in records and n not in todo})
        )
        jobs = [
            (bundle_dirs[n], [bundle_dirs[s] for s in siblings.get(n, [])], reports_dir / n, runs.get(n, ()))
            for n in todo
        ]
        for name, result in zip(todo, _render_all(jobs), strict=True):
            _update(records[name], keys[name], result)
    index_files, bars = _write_index(reports_dir, {name: records[name] for name in latest}, old.speedups)
    _remove_gone(reports_dir, index_files | {STATE_FILE} | {name for name, r in records.items() if r.files})
    _save_state(reports_dir, _State(renderer=renderer_version(), speedups=bars, bundles=records))
    pages = [reports_dir / name / INDEX_FILE for name in latest if records[name].row is not None]
    return [reports_dir / INDEX_FILE, *pages]
