"""Command line: `reportgen run|build|report|validate|requirements`. Errors print one line, no traceback."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from reportgen import __version__
from reportgen.errors import ReportgenError

__all__ = ["main"]

EPILOG = """examples:
  reportgen report recipes/quickstart.yaml          run, analyse and build the site (docs/_build/html)
  reportgen run recipes/mixnet_l.yaml -o results    only run; bundles land in results/<name>/
  reportgen build results --out docs                render bundles into docs/reports and build HTML
  reportgen validate recipes/*.yaml                 check recipes without running them
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reportgen",
        description="Reproducible torch.compile performance reports.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"reportgen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run recipes, each in its own process; write bundles")
    rep = sub.add_parser("report", help="run recipes, then build the site")
    for p in (run, rep):
        p.add_argument("recipes", nargs="+", type=Path, help="recipe YAML files")
        p.add_argument("-o", "--results", type=Path, default=Path("results"), help="bundle directory")
        p.add_argument("--timeout", type=float, default=None, help="seconds per run (overrides recipes)")
    rep.add_argument("--out", type=Path, default=Path("docs"), help="Sphinx source directory")
    bld = sub.add_parser("build", help="render bundles into MyST pages and build the HTML site")
    bld.add_argument("results", nargs="?", type=Path, default=Path("results"), help="bundle directory")
    bld.add_argument("--out", type=Path, default=Path("docs"), help="Sphinx source directory")
    bld.add_argument("--html", type=Path, default=None, help="HTML output (default OUT/_build/html)")
    val = sub.add_parser("validate", help="check recipes without running them")
    val.add_argument("recipes", nargs="+", type=Path)
    req = sub.add_parser("requirements", help="print the pip requirements the recipes' models need")
    req.add_argument("recipes", nargs="+", type=Path)
    return parser


def _requirements(paths: Sequence[Path]) -> list[str]:
    from reportgen.recipe import load_recipes

    sources = {r.model.source for r in load_recipes(paths)}
    reqs: list[str] = []
    if sources & {"timm", "torchvision"}:
        reqs += ["torch==2.14.1", "torchvision==0.29.1"]
    if "timm" in sources:
        reqs.append("timm>=0.9")
    return reqs


def _dispatch(args: argparse.Namespace) -> int:
    from reportgen import pipeline
    from reportgen.run import RunOptions

    if args.command == "validate":
        from reportgen.recipe import load_recipes

        for recipe, path in zip(load_recipes(args.recipes), args.recipes, strict=True):
            print(f"{path}: ok ({recipe.name})")
        return 0
    if args.command == "requirements":
        print("\n".join(_requirements(args.recipes)))
        return 0
    if args.command == "build":
        html = pipeline.build(args.results, args.out, args.html)
        print(f"site: {html / 'index.html'}")
        return 0
    options = RunOptions(timeout_s=args.timeout)
    if args.command == "run":
        outcomes = pipeline.run_recipes(args.recipes, args.results, options)
        return 0 if all(o.ok for o in outcomes) else 1
    return pipeline.report(args.recipes, args.results, args.out, options)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args)
    except ReportgenError as exc:
        print(f"reportgen: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reportgen: interrupted", file=sys.stderr)
        return 130
