"""Command line: `reportgen run|build|report|serve|reproduce|validate|requirements`. Errors print one line, no traceback."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import json
import sys
import typing
from collections.abc import Sequence
from pathlib import Path

from reportgen import __version__
from reportgen.arguments import FLAG_TYPES, check_paths, port
from reportgen.bundle import HISTORY_DIR
from reportgen.console import LiveProgress, PrintProgress, show, terminal_logging
from reportgen.errors import BundleError, ReportgenError
from reportgen.escape import terminal_text
from reportgen.pins import EXTRAS, model_requirements

if typing.TYPE_CHECKING:
    from reportgen.matrix import MatrixOptions
    from reportgen.run import RunOptions

__all__ = ["main"]

EPILOG = """examples:
  reportgen report recipes/quickstart.yaml          run, analyse and build the site (docs/_build/html)
  reportgen run recipes/mixnet_l.yaml -o results    only run; bundles land in results/<name>/
  reportgen build results --out docs                render bundles into docs/reports and build HTML
  reportgen serve docs --port 8000                  browse the built site at http://127.0.0.1:8000/
  reportgen reproduce results/addmul                re-run a bundle's recipe; compare old and new numbers
  reportgen compare old/mixnet_l--default results/mixnet_l--default --markdown
                                                    headline numbers and kernel diff; exit 1 on a regression
  reportgen validate recipes/*.yaml                 check recipes without running them
  reportgen run recipes/*.yaml --timeout 900        several recipes, at most 15 min each
  reportgen run recipes/mixnet_l.yaml --variant default   one variant of a recipe
  reportgen run recipes/*.yaml --gpus all           one run per GPU at a time, longest expected first
  reportgen run recipes/*.yaml --shard 2/4 -o r2    this host's quarter of the runs (same split on every host)
  reportgen build r1 r2 r3 r4 --out docs            one site from the shards' results
  reportgen run recipes/*.yaml --executor ray       on a Ray cluster (RAY_ADDRESS), one GPU per run

On a terminal, runs show a live status line (recipe, stage from its run.log, elapsed time); piped
output gets one plain line per event instead. Exit codes: 0 all runs ok, 1 a run failed, 2 usage or
input error (one line on stderr), 130 interrupted; `compare`: 1 when a headline metric regressed.
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
    bld.add_argument(
        "results",
        nargs="*",
        type=Path,
        default=[Path("results")],
        help="bundle directories: several (the shards of a matrix, several hosts) make one site",
    )
    bld.add_argument("--out", type=Path, default=Path("docs"), help="Sphinx source directory")
    bld.add_argument("--html", type=Path, default=None, help="HTML output (default OUT/_build/html)")
    rpr = sub.add_parser("reproduce", help="re-run a bundle's recipe (and variant); print old vs new numbers")
    rpr.add_argument("bundle", type=Path, help="bundle directory (results/<name>)")
    rpr.add_argument("-o", "--results", type=Path, default=Path("results-repro"), help="where the new bundle goes")
    for p in (run, rep, rpr):
        _add_options(p, "RunOptions")
    for p in (run, rep):
        _add_options(p, "MatrixOptions")
    _add_history_parsers(sub)
    srv = sub.add_parser("serve", help="serve the built HTML site on 127.0.0.1 (Ctrl-C stops)")
    srv.add_argument(
        "site",
        nargs="?",
        type=Path,
        default=Path("docs"),
        help="HTML directory, or a Sphinx source dir with _build/html",
    )
    srv.add_argument("--port", type=port, default=8000, help="TCP port, 1-65535 (0: any free one)")
    val = sub.add_parser("validate", help="check recipes without running them")
    val.add_argument("recipes", nargs="+", type=Path)
    req = sub.add_parser("requirements", help="print the pip requirements the recipes' models need")
    req.add_argument("recipes", nargs="+", type=Path)
    return parser


def _add_history_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`compare` and `history`: the commands over kept runs."""
    cmp = sub.add_parser(
        "compare", help="compare two bundles (or two results directories); exit 1 on a regression beyond noise"
    )
    cmp.add_argument("before", type=Path, help="the earlier bundle, or a results directory")
    cmp.add_argument(
        "after",
        type=Path,
        nargs="?",
        help="the later bundle, or a results directory (paired by bundle name); omitted: BEFORE is a bundle, "
        "compared with the run it replaced (its newest run in <results>/.history/)",
    )
    form = cmp.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true", help="GitHub Markdown, for a pull request")
    form.add_argument("--json", action="store_true", help="the comparisons as JSON")
    cmp.add_argument(
        "--threshold",
        type=_fraction,
        default=None,
        help="how far a count or (with 3 pooled runs a side) a step time must move, beyond its intervals, to count "
        "(default: the later run's recipe `regression_threshold`, 0.05 = 5 %% unless the recipe says otherwise)",
    )
    cmp.add_argument(
        "--device-threshold",
        type=_fraction,
        default=None,
        help="how far device time per step must move, beyond the profiled steps' range, to count (default: the "
        "later run's recipe `device_regression_threshold`, 0.02 = 2 %% unless the recipe says otherwise)",
    )
    cmp.add_argument(
        "--no-pool",
        action="store_true",
        help="judge the two bundles alone: device figures and counts are judged, step times (host-dependent) "
        "are not (default: each side pools the step times of up to 5 runs of its recipe, torch, device and git "
        "commit kept beside it; with 3 or more a side, step times are judged too)",
    )
    hst = sub.add_parser("history", help="list every run kept in a results directory (the history index)")
    hst.add_argument("results", nargs="?", type=Path, default=Path("results"), help="bundle directory")
    hst.add_argument("--name", help="only this bundle (`<recipe>` or `<recipe>--<variant>`)")
    hst.add_argument("--recipe", help="only runs of this recipe (all its variants)")
    hst.add_argument("--torch", help="only runs under this torch version")
    hst.add_argument("--json", action="store_true", help="the runs as JSON")


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"expected a fraction between 0 and 1 (0.05 = 5 %), got {text!r}")
    return value


def _compare(args: argparse.Namespace) -> int:
    from reportgen.compare import compare_paths, to_markdown, to_text

    after = args.after
    before = args.before
    if after is None:
        from reportgen.history import previous_run

        after, before = before, previous_run(before)
        if before is None:
            raise BundleError(f"{after}: no earlier run of this bundle in {after.parent / HISTORY_DIR / after.name}")
    comparisons = compare_paths(
        before, after, args.threshold, pool=not args.no_pool, device_threshold=args.device_threshold
    )
    if args.json:
        print(json.dumps([c.model_dump(mode="json") | {"regressed": c.regressed} for c in comparisons], indent=2))
    else:
        show(to_markdown(comparisons) if args.markdown else to_text(comparisons))
    return 1 if any(c.regressed for c in comparisons) else 0


def _history(args: argparse.Namespace) -> int:
    from tabulate import tabulate

    from reportgen.history import HistoryIndex

    with HistoryIndex(args.results) as index:
        update = index.update()
        runs = index.runs(recipe=args.recipe, name=args.name, torch=args.torch)
    for problem in update.unreadable:
        show(f"reportgen: warning: left out of the history: {problem}", file=sys.stderr)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in runs], indent=2))
        return 0

    def num(value: float | None, spec: str) -> str:
        return "—" if value is None else f"{value:{spec}}"

    rows = [
        [
            terminal_text(cell, single_line=True)
            for cell in (
                r.started_at[:19],
                r.name,
                r.status,
                r.torch or "—",
                r.device_name or "—",
                num(r.device_eager_ms, ".3f"),
                num(r.device_compiled_ms, ".3f"),
                num(r.launches_compiled, ".0f"),
                num(r.eager_ms, ".2f"),
                num(r.compiled_ms, ".2f"),
                num(r.speedup, ".2f"),
                num(r.compile_s, ".1f"),
                r.path,
            )
        ]
        for r in runs
    ]
    headers = [
        "started",
        "bundle",
        "status",
        "torch",
        "device",
        "device ms/step eager",
        "device ms/step compiled",
        "launches/step compiled",
        "wall eager ms",
        "wall compiled ms",
        "wall speedup",
        "compile s",
        "path",
    ]
    print(tabulate(rows, headers=headers, disable_numparse=True))
    return 0


def _options_class(name: str) -> type[RunOptions] | type[MatrixOptions]:
    """`RunOptions` (a run's knobs) or `MatrixOptions` (how runs spread over GPUs and hosts)."""
    if name == "MatrixOptions":
        from reportgen.matrix import MatrixOptions

        return MatrixOptions
    from reportgen.run import RunOptions

    return RunOptions


def _add_options(parser: argparse.ArgumentParser, name: str) -> None:
    """One flag per field of options class `name` that declares one (its metadata: flag, help, metavar, choices)."""
    cls = _options_class(name)
    hints = typing.get_type_hints(cls)
    for option in dataclasses.fields(cls):
        if "flag" not in option.metadata:
            continue
        kind = next(t for t in typing.get_args(hints[option.name]) or (hints[option.name],) if t is not type(None))
        parser.add_argument(
            option.metadata["flag"],
            dest=option.name,
            type=FLAG_TYPES.get(option.name, kind),
            default=option.default,
            metavar=option.metadata.get("metavar"),
            choices=option.metadata.get("choices"),
            help=option.metadata["help"],
        )


def _options(args: argparse.Namespace, name: str) -> typing.Any:
    """The options of class `name` the command line asked for."""
    cls = _options_class(name)
    return cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if "flag" in f.metadata})


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


def _require_extra(extra: str, command: str) -> None:
    """Raise, naming the extra to install, when the module that `extra` brings (`pins.EXTRAS`) is missing."""
    module = EXTRAS[extra]
    if importlib.util.find_spec(module) is None:
        raise ReportgenError(
            f"`reportgen {command}` needs {module}, which is not installed here: pip install 'reportgen[{extra}]'"
        )


def _dispatch(args: argparse.Namespace) -> int:
    from reportgen import pipeline

    check_paths(args)
    if args.command == "validate":
        from reportgen.recipe import load_recipes, recipe_warnings

        for recipe, path in zip(load_recipes(args.recipes), args.recipes, strict=True):
            for warning in recipe_warnings(path):
                show(f"reportgen: warning: {warning}", file=sys.stderr)
            show(f"{path}: ok ({recipe.name})")
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
    if args.command == "compare":
        return _compare(args)
    if args.command == "history":
        return _history(args)
    _require_extra("run", args.command)  # run, report, reproduce: recipes run under torch
    options: RunOptions = _options(args, "RunOptions")
    if args.command == "reproduce":
        from reportgen.reproduce import reproduce

        reproduction = reproduce(args.bundle, args.results, options)
        show(reproduction.table())
        return 0 if reproduction.ok else 1
    matrix: MatrixOptions = _options(args, "MatrixOptions")
    with _progress(args.results) as progress:
        if args.command == "run":
            outcomes = pipeline.run_recipes(args.recipes, args.results, options, progress, args.variants, matrix)
            return 0 if all(o.settled for o in outcomes) else 1
        return pipeline.report(args.recipes, args.results, args.out, options, progress, args.variants, matrix)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = _parser().parse_args(argv)
    terminal_logging()
    try:
        return _dispatch(args)
    except ReportgenError as exc:
        show(f"reportgen: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("reportgen: interrupted", file=sys.stderr)
        return 130
