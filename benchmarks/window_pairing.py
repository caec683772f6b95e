"""Do two processes' paired windows see the same host? The real coordinator, with and without `cpu=K`.

    python benchmarks/window_pairing.py [--pairs 144] [--block 6] [--work-ms 16] [--cpu K]

Two client processes take strict turns (`Turns`) under one `Coordinator`; each window times a fixed workload:
on a GPU, launches of a tiny kernel then a synchronize (launch-bound, like mixnet_l's forward), else the host
probe's loop (`--launches`, `--probes`: the same count in both processes; 1,500 launches take about 16 ms on an
H200 host). Every `--block` pairs the coordinator's `cpu` flips between K (default
the last CPU this process may use) and none, so both ways see the same stretch of the host; each window reports
the CPUs its thread might use, and a pair counts for a way only when both its windows ran that way. Prints, per
way, the median, 90th percentile and largest |a / b - 1| (%) of the pairs (a: the first process's window).

Sittings of 2026-11-27 (one H200, 16 vCPUs, torch 2.11). With a pipe instead of the coordinator, 144 pairs
each: 11.1 % (p90 37.8 %) on two different vCPUs, 2.0 % (6.6 %) on one. This script: one CPU (15) 2.53 % (p90
12.9 %) against unpinned 2.50 % (12.2 %), 288 pairs each; `--cpu 3` 1.61 % (6.6 %) against 2.45 % (6.8 %), 144
each: the processes the coordinator wakes mostly share a vCPU already.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from fresh_process import repo_env

from reportgen.run import window
from reportgen.run.window_host import Coordinator, Request, Turns

CLIENT = r"""
import sys, time
from reportgen.run import window
from reportgen.run.host import host_probe
windows = int(sys.argv[2])
try:
    import torch
    cuda = torch.cuda.is_available()
except ImportError:
    cuda = False
if cuda:
    x = torch.zeros(1, device="cuda")
    def work(n):
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
else:
    def work(n):
        for _ in range(n):
            host_probe()
def timed(n):
    start = time.perf_counter()
    work(n)
    return (time.perf_counter() - start) * 1e3
n = int(sys.argv[3] if cuda else sys.argv[4])
work(n)
window.connect()
import os
for _ in range(windows):
    with window.timed_window("work"):
        print(timed(n), len(os.sched_getaffinity(0)), flush=True)
"""


class _Flipping(Turns):
    """Turns whose every `block` pairs flip the coordinator's CPU between `cpu` and none, at the grant itself (the
    go of a granted window is built after `granted`): a pair never straddles a flip, and nothing polls."""

    def __init__(self, cpu: int, block: int) -> None:
        super().__init__(("a", "b"), alternate=("work",))
        self.cpu, self.block, self.grants = cpu, block, 0
        self.coordinator: Coordinator | None = None

    def granted(self, request: Request) -> None:
        super().granted(request)
        if self.coordinator is not None:
            self.coordinator.cpu = self.cpu if (self.grants // (2 * self.block)) % 2 == 0 else None
        self.grants += 1


def _client(coordinator: Coordinator, role: str, windows: int, counts: list[str]) -> subprocess.Popen[str]:
    env = repo_env(None, **{window.SOCKET_VARIABLE: coordinator.path, window.ROLE_VARIABLE: role})
    command = [sys.executable, "-c", CLIENT, "-", str(windows), *counts]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)


def measure(cpu: int, pairs: int, block: int, counts: list[str]) -> dict[str, list[float]]:
    """|a / b - 1| in % of each pair of windows, by way (one CPU, unpinned)."""
    ways: dict[str, list[float]] = {f"one CPU ({cpu})": [], "unpinned": []}
    policy = _Flipping(cpu, block)
    with Coordinator(policy, pause=False, settle_s=0.0) as coordinator:
        policy.coordinator = coordinator
        clients = [_client(coordinator, role, pairs, counts) for role in ("a", "b")]
        outs = [[line.split() for line in client.communicate(timeout=3600)[0].splitlines()] for client in clients]
    if any(len(out) != pairs for out in outs) or any(client.returncode for client in clients):
        raise SystemExit(f"the clients measured {[len(out) for out in outs]} windows, not {pairs} each")
    for (a, a_cpus), (b, b_cpus) in zip(*outs, strict=True):
        if a_cpus == b_cpus:  # both windows ran the same way
            ways[f"one CPU ({cpu})" if a_cpus == "1" else "unpinned"].append(abs(float(a) / float(b) - 1) * 100)
    return ways


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=288)
    parser.add_argument("--block", type=int, default=6, help="pairs per block; the two ways' blocks alternate")
    parser.add_argument("--launches", type=int, default=1500, help="a window's kernel launches, on a GPU")
    parser.add_argument("--probes", type=int, default=8, help="a window's host-probe loops, without one")
    parser.add_argument("--cpu", type=int, help="the pinned way's CPU (default: the last this process may use)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
    ways = measure(cpu, args.pairs, args.block, [str(args.launches), str(args.probes)])
    for name, values in ways.items():
        if len(values) < 2:
            print(f"{name:14s} too few pairs ({len(values)})")
            continue
        tenth = statistics.quantiles(values, n=10)
        print(
            f"{name:14s} |a/b - 1| %: median {statistics.median(values):5.2f}  p90 {tenth[-1]:5.2f}  "
            f"max {max(values):6.2f}  (n={len(values)})"
        )
    if args.json:
        args.json.write_text(json.dumps(ways), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
