"""A no-change rebuild of a host project that embeds reportgen, against the same host without it.

    python benchmarks/embed_rebuild.py [--pages 20] [--rounds 7] [--work DIR]

Two copies of one host Sphinx project (`--pages` Markdown pages): one lists `reportgen.sphinx` and embeds the
recorded H200 `fused_add_mul` bundle (`perf-report`, `perf-summary`) and a two-run trend (`perf-trend`); the
other has the same pages with plain text in the directives' place and no extension. Both are built once, then
rebuilt with nothing changed, alternating, `--rounds` times each (fresh `python -m sphinx` processes); prints
each round and the medians. Issue 30 asks for the embedding host within 0.2 s of the host alone.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "tests" / "data" / "bundles" / "fused_add_mul"
EMBED = "```{perf-report} ../results/fused_add_mul\n```\n\n```{perf-trend} ../results/fused_add_mul\n```\n"


def project(where: Path, pages: int, embed: bool) -> Path:
    source = where / ("embed" if embed else "alone")
    source.mkdir(parents=True)
    conf = 'extensions = ["myst_parser"]\n' if not embed else 'extensions = ["reportgen.sphinx"]\n'
    (source / "conf.py").write_text(conf, encoding="utf-8")
    toc = "\n".join(f"page{n}" for n in range(pages))
    (source / "index.md").write_text(f"# Host\n\n```{{toctree}}\n{toc}\n```\n", encoding="utf-8")
    for n in range(pages):
        body = EMBED if embed and n == 0 else "Some text of the host's own.\n\n" * 20
        (source / f"page{n}.md").write_text(f"# Page {n}\n\n{body}", encoding="utf-8")
    return source


def build(source: Path, out: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-W", "-b", "html", str(source), str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"sphinx-build of {source} failed:\n{result.stdout}{result.stderr}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--work", type=Path)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="embed-rebuild-"))
    results = work / "results"
    shutil.copytree(BUNDLE, results / "fused_add_mul")
    shutil.copytree(BUNDLE, results / ".history" / "fused_add_mul" / "20250101T000000-00000000")
    sources = {name: project(work, args.pages, name == "embed") for name in ("alone", "embed")}
    for name, source in sources.items():
        print(f"{name}: first build {build(source, work / f'html-{name}'):.2f} s", flush=True)
    times: dict[str, list[float]] = {name: [] for name in sources}
    for n in range(args.rounds):
        for name, source in sources.items():
            times[name].append(build(source, work / f"html-{name}"))
        print(f"round {n + 1}: alone {times['alone'][-1]:.3f} s, embedding {times['embed'][-1]:.3f} s", flush=True)
    alone, embed = statistics.median(times["alone"]), statistics.median(times["embed"])
    print(
        f"no-change rebuild, median of {args.rounds}: host alone {alone:.3f} s, embedding {embed:.3f} s, "
        f"difference {embed - alone:+.3f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
