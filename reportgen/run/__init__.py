"""Run stage: execute a recipe in its own process and leave a bundle (see `launcher`).

Imports are lazy so that the child process (`reportgen.run.child`) loads only what it needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reportgen.run.launcher import RunOptions, child_env, run_recipe, stop_runs, sweep_work_dirs
    from reportgen.run.lost import write_lost_run
    from reportgen.run.window_host import Coordinator, Fifo

__all__ = [
    "Coordinator",
    "Fifo",
    "RunOptions",
    "child_env",
    "run_recipe",
    "stop_runs",
    "sweep_work_dirs",
    "write_lost_run",
]


def __getattr__(name: str) -> object:
    if name == "write_lost_run":
        from reportgen.run import lost

        return lost.write_lost_run
    if name in ("Coordinator", "Fifo"):
        from reportgen.run import window_host

        return getattr(window_host, name)
    if name in __all__:
        from reportgen.run import launcher

        return getattr(launcher, name)
    raise AttributeError(name)
