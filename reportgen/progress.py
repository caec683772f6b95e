"""How the pipeline tells a console what it does: a small protocol, so that neither imports the other."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reportgen.bundle import Manifest, RunStatus

__all__ = ["Progress", "RunOutcome", "SilentProgress"]


@dataclass(frozen=True)
class RunOutcome:
    """One run's bundle, its manifest, and a note if analysis failed."""

    bundle: Path
    manifest: Manifest
    analysis_error: str | None = None
    analysis_s: float | None = None

    def stages_s(self) -> dict[str, float]:
        """Seconds per stage: the run's child stages, then the analysis."""
        stages = dict(self.manifest.metrics.stages_s)
        if self.analysis_s is not None:
            stages["analysis"] = self.analysis_s
        return stages

    @property
    def ok(self) -> bool:
        """Whether the run succeeded and was analysed."""
        return self.manifest.status is RunStatus.ok and self.analysis_error is None

    @property
    def settled(self) -> bool:
        """Whether the run's end is a result, not a failure: it succeeded, or it is a sweep point that ran out of
        memory (where the sweep's axis ends; its page marks it)."""
        return self.ok or (self.manifest.status is RunStatus.oom and bool(self.manifest.point))


class Progress(Protocol):
    """What the pipeline reports while it works (`reportgen.console`: plain lines or a live display)."""

    def run_started(self, name: str, recipe_path: Path, index: int, total: int, slot: str | None = None) -> None:
        """Run `name` starts, the `index`-th of `total`, in `slot` (`gpu 0`, `host`, `ray`); several may run at once."""

    def run_finished(self, outcome: RunOutcome) -> None:
        """A run ended (from the thread that ran it)."""

    def runs_done(self, outcomes: Sequence[RunOutcome]) -> None: ...
    def build_stage(self, stage: str) -> None: ...
    def site_built(self, html_dir: Path) -> None: ...


class SilentProgress:
    """Reports nothing: the pipeline used as a library."""

    def run_started(self, name: str, recipe_path: Path, index: int, total: int, slot: str | None = None) -> None:
        """Nothing."""

    def run_finished(self, outcome: RunOutcome) -> None:
        """Nothing."""

    def runs_done(self, outcomes: Sequence[RunOutcome]) -> None:
        """Nothing."""

    def build_stage(self, stage: str) -> None:
        """Nothing."""

    def site_built(self, html_dir: Path) -> None:
        """Nothing."""
