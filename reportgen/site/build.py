"""Site stage: a Sphinx project around the rendered report pages, built to HTML."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from reportgen.errors import SiteError, os_failure
from reportgen.pins import EXTRAS
from reportgen.site.search import merge_search
from reportgen.site.sphinx_runner import OUTPUTS_FILE
from reportgen.site.stamp import BuildStamp, changed_documents, prune_removed
from reportgen.site.state import FileIndex, Recorded, SiteState, open_state
from reportgen.site.trees import listing, other_tree, publish, published_tree, remove_leftovers, sync_tree, tree_dirs
from reportgen.site.units import (
    RECORDS_DIR,
    REPORTS_DIR,
    UNIT_PATTERN,
    build_units,
    in_unit,
    install_units,
    remove_units,
    stale_units,
    unit_names,
    unit_searches,
    units_used,
)

__all__ = [
    "REPORTS_DIR",
    "SERIAL_SHARE",
    "STATIC_DIR",
    "build_html",
    "default_html_dir",
    "ensure_project",
    "merged_results",
    "run_sphinx",
]

STATIC_DIR = Path(__file__).resolve().parent / "static"
"""The site's CSS (`reportgen.css`), JS (`reportgen.js`) and icon, for `html_static_path` of the site's and the
docs' conf.py."""
_TEMPLATE_FILES = ("conf.py", "index.md")
_PACKAGE = Path(__file__).resolve().parents[1]
_DIST_SUFFIXES = frozenset({".dist-info", ".egg-info", ".egg-link", ".pth"})
_TAIL_LINES = 30
_UNITS_WORK = "units-work"
_BUILDINFO_BACKUP = ".buildinfo.bak"
"""Sphinx keeps the previous `.buildinfo` under this name when its configuration changed: not part of the site (a
500-run site rebuilt after an upgrade held it where a clean build had none)."""
SERIAL_SHARE = 0.1
"""An incremental build that changes at most this share of the documents runs Sphinx with `-j 1`: its parallel
read sends the whole environment back from every chunk of documents (a cost that grows with the site), more
than reading a few pages on two cores saves. 100 bundles, one changed (2 cores): Sphinx 5.6-7.0 s with `-j 1`,
8.1-9.6 s with `-j auto` (9 chunks, 3.0 s unpickling environments); 20 bundles: 2.0-2.7 s against 2.5-3.1 s."""


def ensure_project(source_dir: Path) -> None:
    """Write the default Sphinx project into `source_dir` when it has no conf.py.

    Existing files (an index.md of the user's) are kept.
    """
    if (source_dir / "conf.py").exists():
        return
    template = resources.files("reportgen.site").joinpath("template")
    try:
        source_dir.mkdir(parents=True, exist_ok=True)
        for name in _TEMPLATE_FILES:
            target = source_dir / name
            if not target.exists():
                target.write_text(template.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        raise os_failure(exc, SiteError, "write the Sphinx project", source_dir) from exc


def run_sphinx(
    source_dir: Path, html_dir: Path, *, doctrees: Path, jobs: str = "auto", exclude: Sequence[str] = ()
) -> None:
    """Run `sphinx-build -W --keep-going -n -j JOBS -b html -d DOCTREES` (Sphinx's pickles outside the HTML:
    see `site.state`), leaving out the documents `exclude` matches too; SiteError with its output's tail on
    failure."""
    with _Sphinx(source_dir, html_dir, doctrees=doctrees, jobs=jobs, exclude=exclude) as sphinx:
        sphinx.finish()


class _Sphinx:
    """`run_sphinx` started, to do other work while it runs (its output goes to a file: a pipe left unread would
    stall it); `finish` waits for it, leaving the `with` block before stops it."""

    def __init__(self, source_dir: Path, html_dir: Path, *, doctrees: Path, jobs: str, exclude: Sequence[str]) -> None:
        own = [arg for pattern in exclude for arg in ("--exclude", pattern)]
        base = _sphinx_command(jobs)
        command = [*base[:3], *own, *base[3:], "-d", str(doctrees), str(source_dir), str(html_dir)]
        self._source_dir = source_dir
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
        try:
            self._proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)
        except OSError as exc:
            self._log.close()
            raise SiteError(f"cannot run sphinx-build: {exc}", path=source_dir) from exc

    def __enter__(self) -> _Sphinx:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait()
        self._log.close()

    def finish(self) -> None:
        """Wait for Sphinx; SiteError with its output's tail when it failed."""
        if self._proc.wait() == 0:
            return
        self._log.seek(0)
        output = self._log.read().decode("utf-8", errors="replace")
        tail = "\n".join(output.splitlines()[-_TAIL_LINES:])
        theme = EXTRAS["site"]
        missing_theme = f"no theme named '{theme}'" in output and importlib.util.find_spec(theme) is None
        raise SiteError(
            f"sphinx-build failed with exit code {self._proc.returncode}:\n{tail}",
            path=self._source_dir,
            hint=f"reportgen's site theme ({theme}) is not installed: pip install 'reportgen[site]'"
            if missing_theme
            else "fix the warnings above; every warning fails the build",
        )


def _sphinx_command(jobs: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "reportgen.site.sphinx_runner",
        "--no-color",
        "-W",
        "--keep-going",
        "-n",
        "-j",
        jobs,
        "-b",
        "html",
    ]


def merged_results(source_dir: Path) -> Path:
    """Where a build of several results directories merges them: `source_dir/_build/results` (not a source)."""
    return source_dir / "_build" / "results"


def default_html_dir(source_dir: Path) -> Path:
    """Where the HTML of `source_dir` goes unless told otherwise: `source_dir/_build/html`."""
    return source_dir / "_build" / "html"


def build_html(source_dir: Path, html_dir: Path) -> None:
    """Build the HTML of `source_dir` and publish it at `html_dir` (a link to one of two trees, see
    `site.trees`): nothing to do when no input changed since the published build; else the other tree is
    brought up to date with the published one, built incrementally with `sphinx-build -j auto` (`-j 1` when
    at most `SERIAL_SHARE` of the documents changed), cleared of the pages of removed documents, and published
    in one rename. Sphinx's doctrees and the stamp stay outside the trees, sealed (`site.state`): when they are
    not as the last build left them, the tree is built from scratch.

    A build killed or failing at any point leaves the previous site as it was; a failure of the OS (disk full,
    permission denied, a file where a directory should be) is one SiteError naming the path. Callers hold
    `build_lock(source_dir)`.
    """
    try:
        _build_html(source_dir, html_dir)
    except OSError as exc:
        raise os_failure(exc, SiteError, f"write the HTML site {html_dir.name!r}", html_dir) from exc


def _build_html(source_dir: Path, html_dir: Path) -> None:
    state = open_state(html_dir)  # first: a tree that is a link is gone before the published one is looked up
    current = published_tree(html_dir)
    skip = frozenset([source_dir / "_build", html_dir, *tree_dirs(html_dir), state.root])
    sources = listing(source_dir, skip)
    stamp = BuildStamp(inputs=_inputs(), sources={k: v for k, v in sources.items() if not _hidden(k)})
    recorded = state.read(current) if current is not None else None
    if recorded is not None and recorded.stamp == stamp:
        return
    tree = other_tree(html_dir, current)
    own = state.read(tree, quiet=True)  # the tree's own last build: its doctrees' file index spares re-reading
    state.forget(tree)
    previous, known = _start_from(state, current, tree, recorded, own.files if own is not None else {})
    changed, documents = changed_documents(
        previous and _site_own(previous), _site_own(stamp)
    )  # (few: the units are apart)
    jobs = "1" if changed <= SERIAL_SHARE * documents else "auto"
    (state.doctrees(tree) / OUTPUTS_FILE).unlink(missing_ok=True)  # only this run's record counts
    units = unit_names(stamp.sources)
    records, work = state.doctrees(tree) / RECORDS_DIR, state.root / _UNITS_WORK
    stale = sorted(stale_units(previous, stamp, tree))
    with _Sphinx(source_dir, tree, doctrees=state.doctrees(tree), jobs=jobs, exclude=[UNIT_PATTERN]) as own_pages:
        build_units(source_dir, work, stale, _sphinx_command("1"), _cores())  # while the site's own pages build
        own_pages.finish()
    (tree / _BUILDINFO_BACKUP).unlink(missing_ok=True)
    install_units(work, tree, records, stale)
    remove_units(tree, records, unit_names(previous.sources) - units if previous else ())
    prune_removed(
        tree, state.doctrees(tree), previous.sources if previous else {}, stamp.sources, units_used(records, units)
    )
    merge_search(tree, unit_searches(records, units))
    state.record(tree, stamp, known)
    publish(html_dir, tree)
    if current is not None and current != html_dir:
        remove_leftovers(current)
    if jobs == "auto" or len(stale) > SERIAL_SHARE * len(units):
        _prepare_next(state, tree, other_tree(html_dir, tree), stamp)


def _prepare_next(state: SiteState, tree: Path, other: Path, stamp: BuildStamp) -> None:
    """After a build that changed much (a clean one), make the other tree a copy of the one just published, so that
    the next build, which starts by bringing it up to date, copies only its own changes: at 500 runs the first
    one-change build after a clean one took 14.3 s against 7.7-8.2 s for the next ones."""
    state.forget(other)
    sync_tree(tree, other)
    sync_tree(state.doctrees(tree), state.doctrees(other))
    state.record(other, stamp, {})


def _start_from(
    state: SiteState, current: Path | None, tree: Path, recorded: Recorded | None, known: FileIndex
) -> tuple[BuildStamp | None, FileIndex]:
    """Bring `tree` and its doctrees up to date with the published tree when that was built as recorded and its
    doctrees, copied, are those recorded (then return its stamp and their file index); else empty both (a clean
    build: None). `known`: the file index `tree`'s own last build recorded."""
    if current is not None and recorded is not None and state.doctrees(current).is_dir():
        sync_tree(current, tree)
        sync_tree(state.doctrees(current), state.doctrees(tree))
        remove_leftovers(tree)
        files = state.check(tree, recorded, known)
        if files is not None:
            return recorded.stamp, files
    state.clear(tree)
    return None, {}


def _site_own(stamp: BuildStamp) -> BuildStamp:
    """`stamp` without the sources of the units (the runs' directories, built apart: `site.units`)."""
    kept = {k: v for k, v in stamp.sources.items() if not in_unit(k)}
    return BuildStamp(inputs=stamp.inputs, sources=kept)


def _cores() -> int:
    """Processes the units are built in: the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _hidden(relative: str) -> bool:
    """Sphinx's `exclude_patterns` of a reportgen site leave out dot names (the render record, the lock)."""
    return any(part.startswith(".") for part in relative.split("/"))


def _inputs() -> str:
    """What else a build depends on: Python, the Sphinx command, the installed distributions (Sphinx, its
    theme and extensions) and reportgen's own files (its CSS, JS and directives). `sys.path[0]` is left out:
    it is the directory the command was started from (or its script's), which says nothing of the build; with
    it, `reportgen build` run from another directory rebuilt an unchanged site."""
    digest = hashlib.sha256(f"{sys.version}\0{_sphinx_command('auto')}\0".encode())
    for entry in sys.path[1:]:
        path = Path(entry or ".")
        if path.is_dir():
            digest.update("\0".join(sorted(p.name for p in path.iterdir() if p.suffix in _DIST_SUFFIXES)).encode())
    for relative, (size, mtime_ns) in sorted(listing(_PACKAGE).items()):
        if "__pycache__" in relative:
            continue
        digest.update(f"{relative}\0{size}\0{mtime_ns}\0".encode())
    return digest.hexdigest()
