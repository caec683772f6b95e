"""The history index: one row per bundle (latest and archived), in SQLite, refreshed from the bundles.

SQLite because it ships with Python (no dependency, no server), a results directory stays one portable
folder, and an index of a few thousand rows answers "runs of recipe X ordered by time" in microseconds.
A row is keyed by the bundle's path and remembers its manifest's size and mtime and its analysis's mtime: an
update stats every manifest and analysis and parses only the new or changed ones (of an analysis, only the few
numbers a record keeps: `AnalysisHead`). A row holds the record as JSON, and its figures in columns of their own
for SQL over the history: the repeatable ones (device time and counts per step; NULL for runs analysed before
them) beside the host-dependent wall ones. A damaged or foreign database file, or one of another `SCHEMA`, is
deleted and rebuilt; it is never trusted over the bundles.

A results directory may come from elsewhere with its index: no path stored in the index is followed. Every
run's path and bundle name are derived from the directories walked (`bundle.iter_kept_runs`: no links, safe
names); a row for a path the walk did not find is never returned, and a returned record's `path` and `name`
are the walk's, whatever the row says.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from reportgen.bundle import (
    ANALYSIS_FILE,
    HISTORY_DIR,
    HISTORY_INDEX_FILE,
    MANIFEST_FILE,
    RunRecord,
    history_runs,
    is_plain_file,
    iter_kept_runs,
    read_analysis_head,
    read_manifest,
)
from reportgen.errors import BundleError

__all__ = ["SCHEMA", "HistoryIndex", "IndexUpdate", "bundle_home", "find_bundles", "kept_runs_of", "previous_run"]

SCHEMA = 5
"""`PRAGMA user_version` of today's index; another value means rebuild (5: the figure columns)."""

_TABLE = """
CREATE TABLE runs (
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    analysis_mtime_ns INTEGER NOT NULL,
    name TEXT NOT NULL,
    recipe TEXT NOT NULL,
    started_at TEXT NOT NULL,
    torch TEXT,
    device_name TEXT,
    device_eager_ms REAL,
    device_compiled_ms REAL,
    launches_compiled REAL,
    aten_ops_compiled REAL,
    graphs_compiled REAL,
    eager_ms REAL,
    compiled_ms REAL,
    speedup REAL,
    host_probe_ms REAL,
    record TEXT NOT NULL
);
CREATE INDEX runs_by_recipe ON runs (recipe, started_at);
CREATE INDEX runs_by_name ON runs (name, started_at);
"""
_COLUMNS = ("name", "recipe", "started_at", "torch", "device_name")
"""The `RunRecord` fields queries filter by, each in a column of its own."""
_FIGURE_COLUMNS = (
    "device_eager_ms",
    "device_compiled_ms",
    "launches_compiled",
    "aten_ops_compiled",
    "graphs_compiled",
    "eager_ms",
    "compiled_ms",
    "speedup",
    "host_probe_ms",
)
"""The `RunRecord` figures kept in columns of their own for SQL over the history: the repeatable ones (device time
per step, counts per step; NULL for runs analysed before them) beside the host-dependent wall ones."""


@dataclass(frozen=True)
class IndexUpdate:
    """What an update changed: bundles indexed anew, re-read, dropped, left alone, and unreadable ones."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    unreadable: tuple[str, ...] = ()


def find_bundles(results: Path) -> Iterator[Path]:
    """Every bundle of a results directory: `<name>/` (the latest run) and `.history/<name>/<run id>/`
    (directories only, no links, safe names: `bundle.iter_kept_runs`)."""
    for _, bundle in iter_kept_runs(results):
        yield bundle


def _walked(results: Path) -> dict[str, str]:
    """The bundle name of every run the walk finds, by its path relative to `results` (the index's key)."""
    return {str(bundle.relative_to(results)): name for name, bundle in iter_kept_runs(results)}


def bundle_home(bundle: Path) -> tuple[Path, str]:
    """(results directory, bundle name) of a latest run `<results>/<name>` or a kept one
    `<results>/.history/<name>/<run id>`."""
    if bundle.parent.parent.name == HISTORY_DIR:
        return bundle.parent.parent.parent, bundle.parent.name
    return bundle.parent, bundle.name


def kept_runs_of(bundle: Path) -> list[Path]:
    """The runs of `bundle`'s name that its results directory keeps in `.history/`, newest first (a run id
    starts with the run's start time)."""
    results, name = bundle_home(bundle)
    return sorted(history_runs(results, name), reverse=True)


def previous_run(bundle: Path) -> Path | None:
    """The run of bundle `bundle` (`<results>/<name>`) that came before it: the newest one in its history."""
    runs = kept_runs_of(bundle)
    return runs[0] if runs else None


def _stamp(bundle: Path) -> tuple[int, int, int]:
    """What says a bundle changed: its manifest's mtime and size, its analysis's mtime (0: none)."""
    manifest = (bundle / MANIFEST_FILE).stat()
    try:
        analysed = (bundle / ANALYSIS_FILE).stat().st_mtime_ns
    except OSError:
        analysed = 0
    return manifest.st_mtime_ns, manifest.st_size, analysed


_SQLITE_SIDE_FILES = ("", "-journal", "-wal", "-shm")
"""The index file and the files SQLite opens beside it, by suffix (it follows links when it opens each)."""


def _clear_planted(path: Path) -> None:
    """Remove whatever stands at the index's paths and is not a plain file of its own (a link SQLite would write
    through to a file outside the results, a FIFO whose read would block, a hard link to an outside file): the
    index is a cache, rebuilt from the bundles. A path that cannot be cleared makes `_open` use memory."""
    for suffix in _SQLITE_SIDE_FILES:
        side = path.with_name(path.name + suffix)
        try:
            info = os.lstat(side)
        except FileNotFoundError:
            continue
        if not is_plain_file(info):
            side.unlink()  # OSError (a directory there, no permission): the caller falls back to memory


class HistoryIndex:
    """The index of one results directory. `HistoryIndex(results).update()` brings it up to date."""

    def __init__(self, results: Path, path: Path | None = None) -> None:
        """:param path: the index file (default `<results>/.reportgen-history.sqlite`; a docs build keeps its own
        in Sphinx's build directory, out of the host's source tree)"""
        self.results = results
        self.path = path if path is not None else results / HISTORY_INDEX_FILE
        self._db = self._open()
        self._found: dict[str, str] | None = None
        """Bundle name by key of the runs the last walk found (`update`, or the first `runs`)."""

    def _open(self) -> sqlite3.Connection:
        try:
            return self._open_file()
        except (sqlite3.OperationalError, OSError):  # a results dir we may not write: index in memory
            return self._create(sqlite3.connect(":memory:"))

    def _open_file(self) -> sqlite3.Connection:
        _clear_planted(self.path)
        try:
            db = sqlite3.connect(self.path)
            version = db.execute("PRAGMA user_version").fetchone()[0]
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if version == SCHEMA and "runs" in tables:
                return db
            db.close()
        except sqlite3.DatabaseError:  # not a database, or damaged: the bundles are the truth
            pass
        self.path.unlink(missing_ok=True)
        return self._create(sqlite3.connect(self.path))

    @staticmethod
    def _create(db: sqlite3.Connection) -> sqlite3.Connection:
        with db:
            db.executescript(_TABLE)
            db.execute(f"PRAGMA user_version = {SCHEMA}")
        return db

    def close(self) -> None:
        """Close the database."""
        self._db.close()

    def __enter__(self) -> HistoryIndex:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self) -> IndexUpdate:
        """Index new and changed bundles, drop rows of bundles that are gone."""
        rows = self._db.execute("SELECT path, mtime_ns, size, analysis_mtime_ns, name FROM runs")
        known = {row[0]: tuple(row[1:]) for row in rows}
        self._found = found = _walked(self.results)
        seen: set[str] = set()
        added = updated = unchanged = 0
        unreadable: list[str] = []
        with self._db:
            for key, name in found.items():
                bundle = self.results / key
                stamp = _stamp(bundle)
                seen.add(key)
                if known.get(key) == (*stamp, name):
                    unchanged += 1
                    continue
                try:
                    record = RunRecord.from_manifest(read_manifest(bundle), key, read_analysis_head(bundle))
                except BundleError as exc:
                    unreadable.append(f"{bundle}: {exc}")
                    seen.discard(key)
                    continue
                record = record.model_copy(update={"name": name})  # the directory's name, not the manifest's
                self._insert(key, stamp, record)
                if key in known:
                    updated += 1
                else:
                    added += 1
            gone = [key for key in known if key not in seen]
            self._db.executemany("DELETE FROM runs WHERE path = ?", [(key,) for key in gone])
        return IndexUpdate(added, updated, len(gone), unchanged, tuple(unreadable))

    def _insert(self, key: str, stamp: tuple[int, int, int], record: RunRecord) -> None:
        """One run's row: its key, stamp, what queries filter by, its figures in columns, and the whole record."""
        columns = ("path", "mtime_ns", "size", "analysis_mtime_ns", *_COLUMNS, *_FIGURE_COLUMNS, "record")
        values = (
            key,
            *stamp,
            *(getattr(record, column) for column in (*_COLUMNS, *_FIGURE_COLUMNS)),
            record.model_dump_json(),
        )
        marks = ", ".join("?" * len(columns))
        self._db.execute(f"INSERT OR REPLACE INTO runs ({', '.join(columns)}) VALUES ({marks})", values)

    def runs(
        self,
        recipe: str | None = None,
        name: str | None = None,
        torch: str | None = None,
        device_name: str | None = None,
    ) -> list[RunRecord]:
        """Runs matching every given filter, oldest first."""
        where, args = [], []
        for column, value in (("recipe", recipe), ("name", name), ("torch", torch), ("device_name", device_name)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        sql = "SELECT path, record FROM runs" + (f" WHERE {' AND '.join(where)}" if where else "")
        rows = self._db.execute(sql + " ORDER BY started_at, path", args).fetchall()
        if self._found is None:
            self._found = _walked(self.results)
        found, records = self._found, []
        for key, record in rows:
            if key not in found or (name is not None and found[key] != name):  # a path the walk did not find
                continue
            try:
                run = RunRecord.model_validate_json(record)
            except ValidationError:  # a row of a foreign index: `update` re-reads its bundle
                continue
            records.append(run.model_copy(update={"path": key, "name": found[key]}))
        return records

    def previous(self, name: str) -> tuple[RunRecord, RunRecord] | None:
        """The latest run of bundle `name` and the one before it, or None with fewer than two."""
        runs = self.runs(name=name)
        return (runs[-2], runs[-1]) if len(runs) >= 2 else None
