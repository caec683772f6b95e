"""Does a timed window own the host? A run's step windows, quiet and busy in turn, beside a matrix's company.

    python benchmarks/window_truth.py RECIPE --company RECIPE... [--variant V] [--rounds 3] [--quiet-s 2]
        [--steps N] [--work DIR] [--gpus 0,1]

Runs alone and runs in a matrix are minutes apart, and a lent host's CPU speed moves by ±30 % in that time
(2×H200: the host probe read 0.95–1.78 ms across six runs of transformer), so "alone against the matrix" in whole
runs needs more rounds than a sitting holds. This compares within one run instead, window against window a few
hundred milliseconds apart. Each round starts RECIPE (role `measured`, on the first GPU) and the `--company`
recipes (one `reportgen run` of them, role `company`, on the second GPU; the first when there is one) at once,
under one coordinator that pauses everyone else during each window, as a matrix does. The measured run's step
windows (a host probe, then an eager and a compiled block) alternate between

- **busy**: "go" as soon as the company is stopped (what a matrix does: it was compiling or measuring until
  then), and
- **quiet**: "go" `--quiet-s` after it was stopped, the host idle but for the measured run: as if alone.

Pairs (quiet, busy) of consecutive windows in which the company was stopped give d = busy / quiet − 1 (%) for the
host probe and the eager and compiled blocks; they are pooled over the rounds (Hodges-Lehmann shift, exact
signed-rank 95 % interval, as `timing_fidelity.py`). A window owns the host when d is ~0: whatever the company
did before a window, that window measures as if it had been alone. Which of the pair goes first alternates.
`--steps N` times N block pairs (N step windows) through a copy of the recipe beside it, for more pairs a round.

First sitting (1×H200, torch 2.11, 2026-11-27; transformer beside quickstart and graph_breaks on the same GPU,
3 rounds, `--quiet-s 1`, 15 pairs): host probe −3.11 % [−17.88, +4.66], eager block −2.02 % [−7.08, +5.52],
compiled block +4.58 % [−0.26, +9.30]. The host flipped between 0.95–1.13 and 1.62–1.82 ms from one window to
the next; dividing a block by its window's probe widened the intervals (the two correlate at r = 0.3 only).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from fresh_process import repo_env
from tabulate import tabulate
from timing_fidelity import hodges_lehmann, recipe_with_steps

from reportgen.bundle import iter_bundles, load_bundle
from reportgen.run import window
from reportgen.run.window_host import Coordinator
from reportgen.run.window_policy import Fifo, Request

__all__: list[str] = []

MEASURED, COMPANY = "measured", "company"


@dataclass
class QuietEveryOther(Fifo):
    """First come, first served; the measured run's step windows wait `quiet_s` after the pause, every other one."""

    quiet_s: float
    quiet_first: bool = True
    windows: list[tuple[bool, list[str]]] = field(default_factory=list)
    """Per measured step window, in order: (quiet, the runs stopped for it)."""

    def settle_s(self, request: Request, paused: list[str], default: float) -> float:
        if request.role != MEASURED or request.what != "steps":
            return default
        quiet = (len(self.windows) % 2 == 0) == self.quiet_first
        self.windows.append((quiet, paused))
        return self.quiet_s if quiet else default


def _start(
    recipes: list[str], results: Path, role: str, gpu: str | None, socket: str, log: Path
) -> subprocess.Popen[bytes]:
    env = repo_env(None, **{window.SOCKET_VARIABLE: socket, window.ROLE_VARIABLE: role})
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    command = [sys.executable, "-m", "reportgen", "run", *recipes, "-o", str(results)]
    return subprocess.Popen(command, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT)


def _round(args: argparse.Namespace, number: int) -> list[tuple[str, float]]:
    """One round: the pairs' differences, (figure, d %)."""
    work = args.work / f"round-{number}"
    work.mkdir(parents=True, exist_ok=True)
    policy = QuietEveryOther(args.quiet_s, quiet_first=number % 2 == 1)
    gpus = [g for g in (args.gpus or "").split(",") if g] or [None]
    variant = ["--variant", args.variant] if args.variant else []
    with Coordinator(policy, settle_s=0.0, log_path=work / "windows.log") as coordinator:
        runs = [
            _start([args.recipe, *variant], work / MEASURED, MEASURED, gpus[0], coordinator.path, work / "m.log"),
            _start(args.company, work / COMPANY, COMPANY, gpus[-1], coordinator.path, work / "c.log"),
        ]
        for role, run in zip((MEASURED, COMPANY), runs, strict=True):
            coordinator.register(run.pid, role)
        for role, run in zip((MEASURED, COMPANY), runs, strict=True):
            run.wait()
            coordinator.retire(role)
    [bundle] = [load_bundle(b) for b in iter_bundles(work / MEASURED)]
    metrics = bundle.manifest.metrics
    if metrics.eager is None or metrics.compiled is None:
        raise SystemExit(f"{bundle.path}: no step times (see {work / 'm.log'})")
    series = {
        "host probe": metrics.host_probe_ms,
        "eager block": metrics.eager.samples_ms,
        "compiled block": metrics.compiled.samples_ms,
    }
    out = []
    for i in range(0, len(policy.windows) - 1, 2):
        (quiet_a, paused_a), (_, paused_b) = policy.windows[i], policy.windows[i + 1]
        if COMPANY not in paused_a or COMPANY not in paused_b:
            continue  # the company had ended (or not started): both windows were alone
        quiet, busy = (i, i + 1) if quiet_a else (i + 1, i)
        for name, values in series.items():
            if busy < len(values) and values[quiet] > 0:
                out.append((name, 100 * (values[busy] / values[quiet] - 1)))
    print(f"round {number}: {len(policy.windows)} step windows, {len(out) // len(series)} pairs beside the company")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("recipe")
    parser.add_argument("--company", nargs="+", required=True, help="recipes that run beside it (one reportgen run)")
    parser.add_argument("--variant")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quiet-s", type=float, default=2.0, help="a quiet window's wait after the pause")
    parser.add_argument("--steps", type=int, help="block pairs the measured run times (default: the recipe's)")
    parser.add_argument("--gpus", help="the measured run's GPU, then the company's (default: as the host gives)")
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    args.work = args.work or Path(tempfile.mkdtemp(prefix="window-truth-"))
    print(f"results under {args.work}", flush=True)
    with recipe_with_steps(Path(args.recipe).resolve(), args.steps) as recipe:
        args.recipe = str(recipe)
        diffs = [d for number in range(1, args.rounds + 1) for d in _round(args, number)]
    rows = []
    for name in ("host probe", "eager block", "compiled block"):
        values = [d for figure, d in diffs if figure == name]
        if not values:
            continue
        estimate, low, high = hodges_lehmann(values)
        interval = "—" if low is None or high is None else f"[{low:+.2f}, {high:+.2f}]"
        rows.append([name, len(values), f"{estimate:+.2f}", interval])
    print("\nbusy window / quiet window - 1, %, pooled over the pairs (Hodges-Lehmann, 95 % signed-rank interval)")
    print(tabulate(rows, headers=["figure", "pairs", "HL %", "95 % CI"], disable_numparse=True))


if __name__ == "__main__":
    main()
