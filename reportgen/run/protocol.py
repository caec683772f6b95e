"""The files the parent and the run's child process exchange (typed, JSON on disk)."""

from __future__ import annotations

import os
import sys
from typing import Literal, NoReturn

from pydantic import BaseModel, ConfigDict

from reportgen.bundle import Environment, Isolation, Metrics, ModuleFile
from reportgen.recipe import Recipe
from reportgen.run.host import HostPlacement

__all__ = ["CHILD_RESULT", "CHILD_SPEC", "ChildResult", "ChildSpec", "exit_now"]

CHILD_SPEC = "child-spec.json"
CHILD_RESULT = "child-result.json"


class ChildSpec(BaseModel):
    """What the parent asks the child to run."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    recipe: Recipe
    recipe_dir: str
    placement: HostPlacement | None = None


class ChildResult(BaseModel):
    """What the child reports back; rewritten as the run progresses, so a crash keeps the last stage."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: Literal["started", "environment", "model", "eager", "compile", "timing", "profile", "done"]
    status: Literal["running", "ok", "failed", "oom"] = "running"
    error: str | None = None
    environment: Environment | None = None
    metrics: Metrics = Metrics()
    trace_file: str | None = None
    eager_trace_file: str | None = None
    modules: list[ModuleFile] = []
    capture_file: str | None = None
    isolation: Isolation | None = None
    failed_at: float | None = None
    graphs: list[str] = []
    graph_digests: list[str] = []
    splits: list[str] = []


def exit_now(code: int) -> NoReturn:
    """End a run's process (its child, the graph-timing process) with `code` once its output is flushed, without the
    interpreter's teardown: its results are on disk by then, and the teardown (atexit hooks, the compile workers'
    shutdown, a compile-sized heap, the GPU's context) only delayed whoever waits on it (the launcher, the run's
    child). What the process leaves running, its supervisor ends (`reaper`)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
