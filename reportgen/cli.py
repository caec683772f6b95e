"""Command line: `reportgen run|build|report|serve|reproduce|validate|requirements`. Errors print one line, no traceback."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from reportgen import __version__
from reportgen.console import LiveProgress, PrintProgress
from reportgen.errors import ReportgenError
from reportgen.pins import model_requirements

if typing.TYPE_CHECKING:
    from reportgen.run import RunOptions

__all__ = ["main"]

EPILOG = """examples:
  reportgen report recipes/quickstart.yaml          run, analyse and build the site (docs/_build/html)
  reportgen run recipes/mixnet_l.yaml -o results    only run; bundles land in results/<name>/
  reportgen build results --out docs                render bundles into docs/reports and build HTML
  reportgen serve docs --port 8000                  browse the built site at http://127.0.0.1:8000/
  reportgen reproduce results/addmul                re-run a bundle's recipe; compare old and new numbers
  reportgen validate recipes/*.yaml                 check recipes without running them
  reportgen run recipes/*.yaml --timeout 900        several recipes, at most 15 min each
  reportgen run recipes/mixnet_l.yaml --variant default   one variant of a recipe

On a terminal, runs show a live status line (recipe, stage from its run.log, elapsed time); piped
output gets one plain line per event instead. Exit codes: 0 all runs ok, 1 a run failed, 2 usage or
input error (one line on stderr), 130 interrupted.
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
        p.add_argument(
            "--variant",
            action="append",
            dest="variants",
            metavar="NAME",
            help="run only this variant of each recipe that has variants (repeatable)",
        )
    rep.add_argument("--out", type=Path, default=Path("docs"), help="Sphinx source directory")
    bld = sub.add_parser("build", help="render bundles into MyST pages and build the HTML site")
    bld.add_argument("results", nargs="?", type=Path, default=Path("results"), help="bundle directory")
    bld.add_argument("--out", type=Path, default=Path("docs"), help="Sphinx source directory")
    bld.add_argument("--html", type=Path, default=None, help="HTML output (default OUT/_build/html)")
    rpr = sub.add_parser("reproduce", help="re-run a bundle's recipe (and variant); print old vs new numbers")
    rpr.add_argument("bundle", type=Path, help="bundle directory (results/<name>)")
    rpr.add_argument("-o", "--results", type=Path, default=Path("results-repro"), help="where the new bundle goes")
    for p in (run, rep, rpr):
        _add_run_options(p)
    srv = sub.add_parser("serve", help="serve the built HTML site on 127.0.0.1 (Ctrl-C stops)")
    srv.add_argument(
        "site",
        nargs="?",
        type=Path,
        default=Path("docs"),
        help="HTML directory, or a Sphinx source dir with _build/html",
    )
    srv.add_argument("--port", type=int, default=8000, help="TCP port (0: any free one)")
    val = sub.add_parser("validate", help="check recipes without running them")
    val.add_argument("recipes", nargs="+", type=Path)
    req = sub.add_parser("requirements", help="print the pip requirements the recipes' models need")
    req.add_argument("recipes", nargs="+", type=Path)
    return parser


def _add_run_options(parser: argparse.ArgumentParser) -> None:
    """One flag per `RunOptions` field that declares one (its metadata: flag, help, metavar)."""
    from reportgen.run import RunOptions

    hints = typing.get_type_hints(RunOptions)
    for option in dataclasses.fields(RunOptions):
        if "flag" not in option.metadata:
            continue
        kind = next(t for t in typing.get_args(hints[option.name]) or (hints[option.name],) if t is not type(None))
        parser.add_argument(
            option.metadata["flag"],
            dest=option.name,
            type=kind,
            default=option.default,
            metavar=option.metadata.get("metavar"),
            help=option.metadata["help"],
        )


def _run_options(args: argparse.Namespace) -> RunOptions:
    """The `RunOptions` the command line asked for."""
    from reportgen.run import RunOptions

    return RunOptions(**{f.name: getattr(args, f.name) for f in dataclasses.fields(RunOptions) if "flag" in f.metadata})


def _requirements(paths: Sequence[Path]) -> list[str]:
    from reportgen.recipe import load_recipes

    return model_requirements({r.model.source for r in load_recipes(paths)})


def _progress(results_dir: Path | None) -> LiveProgress | PrintProgress:
    """A live display on a terminal, plain lines otherwise (logs, pipes, tests)."""
    return LiveProgress(results_dir) if sys.stdout.isatty() else PrintProgress()


def _serve(site: Path, port: int) -> int:
    from reportgen.site import find_html_dir, make_server

    html_dir = find_html_dir(site)
    with make_server(html_dir, port) as server:
        host, bound_port = server.server_address[:2]
        print(f"serving {html_dir} at http://{host!s}:{bound_port}/ (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            server.serve_forever()
    return 0


def _dispatch(args: argparse.Namespace) -> int:
    from reportgen import pipeline

    if args.command == "validate":
        from reportgen.recipe import load_recipes, recipe_warnings

        for recipe, path in zip(load_recipes(args.recipes), args.recipes, strict=True):
            for warning in recipe_warnings(path):
                print(f"reportgen: warning: {warning}", file=sys.stderr)
            print(f"{path}: ok ({recipe.name})")
        return 0
    if args.command == "requirements":
        print("\n".join(_requirements(args.recipes)))
        return 0
    if args.command == "build":
        with _progress(None) as progress:
            pipeline.build(args.results, args.out, args.html, progress)
        return 0
    if args.command == "serve":
        return _serve(args.site, args.port)
    options = _run_options(args)
    if args.command == "reproduce":
        from reportgen.reproduce import reproduce

        reproduction = reproduce(args.bundle, args.results, options)
        print(reproduction.table())
        return 0 if reproduction.ok else 1
    with _progress(args.results) as progress:
        if args.command == "run":
            outcomes = pipeline.run_recipes(args.recipes, args.results, options, progress, args.variants)
            return 0 if all(o.ok for o in outcomes) else 1
        return pipeline.report(args.recipes, args.results, args.out, options, progress, args.variants)


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
