"""What a process that imports torch's compile stack pays where no bytecode is kept, and with reportgen's cache.

    python benchmarks/bytecode_cost.py [--rounds 5] [--modules torch._inductor.codecache,torch._dynamo]

Three arms, interleaved (the order turns each round), each one fresh `python -c "import <modules>"`:

- `in place`: the install as it is (bytecode beside the sources, as pip writes it);
- `from source`: no bytecode read or written (`PYTHONDONTWRITEBYTECODE=1`, an empty `PYTHONPYCACHEPREFIX`), as on
  a read-only install or one run with `-B`; what the lent GPU machines showed (12.4 s of `compile` in one process);
- `kept`: `reportgen.run.bytecode.keep_bytecode`'s private cache, filled by a first untimed import.

Prints each arm's median wall (s) with its range and its ratio to `in place`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

__all__: list[str] = []


def _wall(modules: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", f"import {modules}"], env=env, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--modules", default="torch._inductor.codecache,torch._dynamo")
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    with tempfile.TemporaryDirectory(prefix="bytecode-") as work:
        kept = Path(work) / "kept"
        kept.mkdir(mode=0o700)
        arms = {
            "in place": lambda: base,
            "from source": lambda: {
                **base,
                "PYTHONDONTWRITEBYTECODE": "1",
                "PYTHONPYCACHEPREFIX": tempfile.mkdtemp(dir=work),
            },
            "kept": lambda: {**base, "PYTHONPYCACHEPREFIX": str(kept)},
        }
        _wall(args.modules, arms["kept"]())  # fills the kept cache, untimed
        walls: dict[str, list[float]] = {arm: [] for arm in arms}
        for round_ in range(args.rounds):
            order = list(arms)[round_ % 3 :] + list(arms)[: round_ % 3]
            for arm in order:
                walls[arm].append(_wall(args.modules, arms[arm]()))
            print(f"round {round_ + 1}: " + ", ".join(f"{a} {walls[a][-1]:.2f} s" for a in arms), flush=True)
    reference = statistics.median(walls["in place"])
    rows = [
        [arm, statistics.median(w), f"{min(w):.2f}-{max(w):.2f}", statistics.median(w) / reference]
        for arm, w in walls.items()
    ]
    print(f"\nimport {args.modules}: {args.rounds} rounds, {os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(tabulate(rows, headers=["arm", "median s", "range s", "/ in place"], floatfmt=".2f"))


if __name__ == "__main__":
    main()
