"""What the CLI shows while the pipeline works: plain lines (logs, pipes) or a live display (terminals).

Both implement `reportgen.progress.Progress`. The live display tails the running child's `run.log`
(its `[reportgen HH:MM:SS] stage` lines) from a thread that reads only new bytes twice a second.
"""

from __future__ import annotations

import logging
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

from rich.markup import escape

from reportgen.bundle import LOG_FILE, NOT_MEASURED
from reportgen.escape import terminal_text
from reportgen.progress import RunOutcome

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID


__all__ = [
    "LiveProgress",
    "PrintProgress",
    "TerminalFormatter",
    "show",
    "stage_line",
    "summary_rows",
    "terminal_logging",
]

SUMMARY_HEADER = ("bundle", "status", "speedup", "wall time")
_STAGE_LINE = re.compile(r"^\[reportgen \d\d:\d\d:\d\d\] (.+)$")
_POLL_S = 0.5


def _cell(text: str) -> str:
    """A name or value on one line of the terminal (`escape.terminal_text`): no forged line, no control."""
    return terminal_text(text, single_line=True)


def show(text: str, file: TextIO | None = None) -> None:
    """Print `text` to the terminal (stdout, or `file`) through `escape.terminal_text`: its newlines stay, its
    escape sequences, bells, carriage returns and bidi controls are shown as text."""
    print(terminal_text(text), file=file or sys.stdout, flush=True)


class TerminalFormatter(logging.Formatter):
    """Log records as `%(message)s` through `escape.terminal_text`: warnings quote bundles and their names."""

    def format(self, record: logging.LogRecord) -> str:
        """The record's text, fit for a terminal."""
        return terminal_text(super().format(record))


def terminal_logging() -> None:
    """Route reportgen's warnings to stderr through `TerminalFormatter` (once; Python's last-resort handler would
    write them raw)."""
    logger = logging.getLogger("reportgen")
    if not any(isinstance(h.formatter, TerminalFormatter) for h in logger.handlers):
        handler = logging.StreamHandler()
        handler.setLevel(logging.WARNING)
        handler.setFormatter(TerminalFormatter("%(message)s"))
        logger.addHandler(handler)


def stage_line(outcome: RunOutcome) -> str:
    """`<bundle>: environment 3.1 s, model 2.0 s, ...`: where a run's time went."""
    stages = ", ".join(f"{_cell(name)} {seconds:.1f} s" for name, seconds in outcome.stages_s().items())
    return f"{_cell(outcome.bundle.name)}: {stages}" if stages else ""


def summary_rows(outcomes: Sequence[RunOutcome]) -> list[tuple[str, str, str, str]]:
    """One row per run: bundle, status (or `analysis failed`), speedup, wall time."""
    rows = []
    for outcome in outcomes:
        manifest = outcome.manifest
        status = "analysis failed" if outcome.analysis_error else manifest.status.value
        speedup = manifest.metrics.speedup
        rows.append(
            (
                _cell(outcome.bundle.name),
                _cell(status),
                f"{speedup:.2f}×" if speedup is not None else NOT_MEASURED,
                f"{manifest.wall_time_s:.1f} s",
            )
        )
    return rows


class PrintProgress:
    """Plain lines through `notify`: `running <name>`, `<name>: ok in 12.3 s -> <bundle>`, `site: <path>`."""

    def __init__(self, notify: Callable[[str], None] = print) -> None:
        self._notify = notify

    def notify(self, line: str) -> None:
        """Pass `line` on, fit for a terminal (`escape.terminal_text`)."""
        self._notify(terminal_text(line))

    def __enter__(self) -> PrintProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run_started(self, name: str, recipe_path: Path, index: int, total: int, slot: str | None = None) -> None:
        """Say which run starts, and where."""
        where = f" on {_cell(slot)}" if slot else ""
        self.notify(f"running {_cell(name)} ({_cell(str(recipe_path))}){where} [{index}/{total}]")

    def run_finished(self, outcome: RunOutcome) -> None:
        """Say how the run ended."""
        manifest = outcome.manifest
        name = _cell(outcome.bundle.name)
        self.notify(f"{name}: {manifest.status.value} in {manifest.wall_time_s:.1f} s -> {_cell(str(outcome.bundle))}")
        if outcome.analysis_error:
            self.notify(f"{name}: analysis failed: {outcome.analysis_error}")

    def runs_done(self, outcomes: Sequence[RunOutcome]) -> None:
        """An aligned summary table of all runs."""
        rows = [SUMMARY_HEADER, *summary_rows(outcomes)]
        widths = [max(len(row[i]) for row in rows) for i in range(len(SUMMARY_HEADER))]
        for row in rows:
            self.notify("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        for line in filter(None, map(stage_line, outcomes)):
            self.notify(f"stages of {line}")

    def build_stage(self, stage: str) -> None:
        """Say which build stage starts."""
        self.notify(f"build: {stage}")

    def site_built(self, html_dir: Path) -> None:
        """Where the site is."""
        self.notify(f"site: {html_dir / 'index.html'}")


def _run_log(results_dir: Path, name: str) -> Path | None:
    """The running child's log: `run.log` in the bundle's temporary directory (`bundle.store.replace_dir`)."""
    pattern = re.compile(rf"^\.tmp-{re.escape(name)}-[0-9a-f]{{8}}$")
    try:
        logs = [d / LOG_FILE for d in results_dir.iterdir() if pattern.fullmatch(d.name) and (d / LOG_FILE).is_file()]
    except OSError:
        return None
    return max(logs, key=lambda p: p.stat().st_mtime, default=None)


class _LogTail(threading.Thread):
    """Calls `on_stage(text)` for each new `[reportgen HH:MM:SS] text` line of a run's log."""

    def __init__(self, results_dir: Path, name: str, on_stage: Callable[[str], None]) -> None:
        super().__init__(name=f"tail-{name}", daemon=True)
        self._results_dir, self._name, self._on_stage = results_dir, name, on_stage
        self._stop_event = threading.Event()

    def stop(self) -> None:
        """Stop polling and wait for the thread."""
        self._stop_event.set()
        self.join()

    def run(self) -> None:
        path, offset, pending = None, 0, b""
        while not self._stop_event.wait(_POLL_S):
            path = path or _run_log(self._results_dir, self._name)
            if path is None:
                continue
            try:
                with path.open("rb") as log:
                    log.seek(offset)
                    chunk = log.read()
            except OSError:  # the bundle was moved into place: the run is ending
                return
            offset += len(chunk)
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                if match := _STAGE_LINE.match(line.decode("utf-8", errors="replace").rstrip()):
                    self._on_stage(match.group(1))


class LiveProgress:
    """A rich live display: a bar over the runs, a spinner with the current run's stage and elapsed time."""

    def __init__(self, results_dir: Path | None = None, console: Console | None = None) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
        from rich.table import Column

        self.console = console or Console()
        self._results_dir = results_dir
        self._progress: Progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}", table_column=Column(ratio=1, no_wrap=True, overflow="ellipsis")),
            BarColumn(bar_width=12),
            TimeElapsedColumn(),
            console=self.console,
            transient=True,
        )
        self._overall: TaskID | None = None
        self._current: TaskID | None = None
        self._runs: dict[str, tuple[TaskID, _LogTail | None]] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> LiveProgress:
        self._progress.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        for name in list(self._runs):
            self._end_run(name)
        self._progress.stop()

    def _end_run(self, name: str) -> None:
        """Stop tailing run `name`'s log and remove its line."""
        with self._lock:
            task, tail = self._runs.pop(name, (None, None))
        if tail is not None:
            tail.stop()
        if task is not None:
            self._progress.remove_task(task)

    def _replace_current(self, description: str) -> None:
        if self._current is not None:
            self._progress.remove_task(self._current)
        self._current = self._progress.add_task(description, total=None)

    def run_started(self, name: str, recipe_path: Path, index: int, total: int, slot: str | None = None) -> None:
        """A new spinner line for the run (one per run under way: one per GPU); start tailing its log."""
        with self._lock:
            if self._overall is None:
                self._overall = self._progress.add_task("", total=total)
        self._progress.update(self._overall, description=f"[bold]run {index} of {total}[/]")
        label = (
            f"[cyan]{escape(_cell(slot))}[/] [bold]{escape(_cell(name))}[/]"
            if slot
            else f"[bold]{escape(_cell(name))}[/]"
        )
        current, started = self._progress.add_task(f"{label}: starting", total=None), time.monotonic()

        def on_stage(stage: str) -> None:
            since = time.monotonic() - started
            self._progress.update(current, description=f"{label}: {escape(_cell(stage))} [dim](since {since:.0f} s)[/]")

        tail = _LogTail(self._results_dir, name, on_stage) if self._results_dir is not None else None
        with self._lock:
            self._runs[name] = (current, tail)
        if tail is not None:
            tail.start()

    def run_finished(self, outcome: RunOutcome) -> None:
        """One line above the display: how the run ended."""
        self._end_run(outcome.bundle.name)
        manifest = outcome.manifest
        mark = "[green]✓[/]" if outcome.ok else "[red]✗[/]"
        error = outcome.analysis_error
        note = f" [red](analysis failed: {escape(terminal_text(error))})[/]" if error else ""
        self.console.print(
            f"{mark} {escape(_cell(outcome.bundle.name))}: {manifest.status.value} in {manifest.wall_time_s:.1f} s"
            f" -> {escape(_cell(str(outcome.bundle)))}{note}",
            highlight=False,
        )
        if self._overall is not None:
            self._progress.advance(self._overall)

    def runs_done(self, outcomes: Sequence[RunOutcome]) -> None:
        """A summary table of all runs."""
        from rich.table import Table

        table = Table(*SUMMARY_HEADER, title="runs", title_justify="left")
        for row in summary_rows(outcomes):
            style = "green" if row[1] == "ok" else "red"
            table.add_row(escape(row[0]), f"[{style}]{escape(row[1])}[/]", row[2], row[3])
        self.console.print(table)
        for line in filter(None, map(stage_line, outcomes)):
            self.console.print(f"[dim]stages of {escape(line)}[/]")

    def build_stage(self, stage: str) -> None:
        """The spinner line shows the build stage."""
        self._replace_current(f"[bold]site[/]: {escape(_cell(stage))}")

    def site_built(self, html_dir: Path) -> None:
        """Where the site is."""
        if self._current is not None:
            self._progress.remove_task(self._current)
            self._current = None
        self.console.print(f"site: {escape(_cell(str(html_dir / 'index.html')))}", highlight=False, soft_wrap=True)
