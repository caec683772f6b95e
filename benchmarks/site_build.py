"""Site build at scale: full build, no-change rebuild, one bundle changed, one bundle added.

    python benchmarks/site_build.py [--n 20] [--runs-per-bundle K] [--work DIR] [--keep]
                                    [--steps index,full,nochange,changed,added]

The bundles are copies of one real GPU bundle: the H100 mixnet_l training run of
`tests/data/h100-mixnet_l-train-amp` (its profiler trace and its 2 wrapper + 519 kernel modules), wrapped in
the manifest, recipe and log of the real `tests/data/bundles/fused_add_mul` run and analysed once by
reportgen (`tests/data/h100_bundle.py`). Each copy is renamed (`mixnet_l-007`) and perturbed (title, step times, kernel times) so that no two are
alike. Every step is `reportgen build RESULTS --out SITE` in a fresh process; time is its wall time, peak RSS
the largest `ru_maxrss` of it and its children (sphinx-build, chart workers). `--python` times another
interpreter (e.g. a virtualenv of an older reportgen) on the same bundles.

`--runs-per-bundle K` makes a history: N runs as N/K bundles of K runs each (the latest in `<results>/<name>/`,
the others in `.history/<name>/<run id>/`, a day apart), so a site shows N/K reports, their trend pages and
N - N/K kept runs' reports. `index` times building the history index over every run from nothing (a fresh
process; the database file removed first). `--keep` reuses the results and site of an earlier call (so a long
full build and the timed rebuilds can run at different times).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests.data: the real bundles
STEPS = ("index", "full", "nochange", "changed", "added")


def _scale(value: object, factor: float) -> object:
    """Every float under `value` times `factor` (step times, kernel times: the copies differ)."""
    if isinstance(value, float):
        return value * factor
    if isinstance(value, list):
        return [_scale(v, factor) for v in value]
    if isinstance(value, dict):
        return {k: _scale(v, factor) for k, v in value.items()}
    return value


def copy_bundle(seed: Path, results: Path, index: int, revision: int = 0, name: str | None = None) -> Path:
    """Bundle `mixnet_l-<index>` (or `name`): the seed renamed, its numbers scaled by a factor of its own."""
    name = name or f"mixnet_l-{index:03d}"
    tmp = results / f".tmp-{name}"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(seed, tmp)
    factor = 1.0 + 0.001 * index + 0.01 * revision
    manifest = json.loads((tmp / "manifest.json").read_text(encoding="utf-8"))
    manifest["name"] = manifest["recipe"]["name"] = name
    manifest["recipe"]["title"] = f"mixnet_l copy {index} (revision {revision})"
    manifest["metrics"] = _scale(manifest["metrics"], factor)
    manifest["started_at"] = f"2026-{1 + revision // 28 % 12:02d}-{1 + revision % 28:02d}T10:00:00+00:00"
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    analysis = json.loads((tmp / "analysis.json").read_text(encoding="utf-8"))
    analysis["kernels"] = _scale(analysis["kernels"], factor)
    (tmp / "analysis.json").write_text(json.dumps(analysis) + "\n", encoding="utf-8")
    recipe = (tmp / "recipe.yaml").read_text(encoding="utf-8").replace("name: mixnet_l", f"name: {name}", 1)
    (tmp / "recipe.yaml").write_text(recipe, encoding="utf-8")
    dest = results / name
    if dest.exists():
        shutil.rmtree(dest)
    tmp.rename(dest)
    return dest


def make_history(seed: Path, results: Path, names: int, runs: int) -> None:
    """`names` bundles of `runs` runs each: revision r of a bundle is its r-th run; all but the last are kept runs."""
    for index in range(names):
        name = f"mixnet_l-{index:03d}"
        for revision in range(runs):
            bundle = copy_bundle(seed, results, index, revision, name)
            if revision < runs - 1:
                kept = results / ".history" / name / f"2026{revision:04d}T100000-{index:04d}{revision:04d}"
                kept.parent.mkdir(parents=True, exist_ok=True)
                bundle.rename(kept)


def timed_index(python: str, results: Path) -> tuple[float, float]:
    """(wall s, peak RSS MB) of building the history index from nothing, in a fresh process."""
    (results / ".reportgen-history.sqlite").unlink(missing_ok=True)
    code = "import sys; from pathlib import Path; from reportgen.history import HistoryIndex\n"
    code += "with HistoryIndex(Path(sys.argv[1])) as index: print(index.update(), file=sys.stderr)"
    started = time.monotonic()
    proc = subprocess.Popen([python, "-c", code, str(results)])
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"indexing failed with exit status {status}")
    return time.monotonic() - started, usage.ru_maxrss / 1024


def timed_build(python: str, results: Path, site: Path) -> tuple[float, float]:
    """(wall s, peak RSS MB) of `reportgen build` in a fresh process."""
    started = time.monotonic()
    proc = subprocess.Popen([python, "-m", "reportgen", "build", str(results), "--out", str(site)])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"reportgen build failed with exit status {status}")
    return wall, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=20, help="bundles (default 20)")
    parser.add_argument("--work", type=Path, default=Path("/tmp/reportgen-site-bench"), help="work directory")
    parser.add_argument("--steps", default=",".join(STEPS), help=f"some of {','.join(STEPS)}, in this order")
    parser.add_argument("--python", default=sys.executable, help="interpreter that runs `reportgen build`")
    parser.add_argument("--runs-per-bundle", type=int, default=1, help="runs per bundle: the rest are history")
    parser.add_argument("--keep", action="store_true", help="reuse the results and site of an earlier call")
    args = parser.parse_args()
    steps = [s for s in STEPS if s in args.steps.split(",")]
    from tests.data.h100_bundle import make_h100_bundle

    seed = make_h100_bundle(args.work / "seed")
    k = args.runs_per_bundle
    results, site = args.work / f"results-{args.n}x{k}", args.work / f"site-{args.n}x{k}"
    if not (args.keep and results.is_dir()):
        shutil.rmtree(results, ignore_errors=True)
        shutil.rmtree(site, ignore_errors=True)
        results.mkdir(parents=True)
        make_history(seed, results, args.n // k, k)
    rows = []
    for step in steps:
        if step == "changed":
            copy_bundle(seed, results, 0, revision=k + 1, name="mixnet_l-000")
        elif step == "added":
            copy_bundle(seed, results, args.n)
        if step == "index":
            wall, rss = timed_index(args.python, results)
        else:
            wall, rss = timed_build(args.python, results, site)
        rows.append((step, wall, rss))
        print(f"{step}: {wall:.1f} s, {rss:.0f} MB", file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(
        f"\n{args.n} runs ({args.n // k} bundles x {k}), {os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}\n"
    )
    print("| build | wall (s) | peak RSS (MB) |\n| --- | --- | --- |")
    for step, wall, rss in rows:
        print(f"| {step} | {wall:.1f} | {rss:.0f} |")


if __name__ == "__main__":
    main()
