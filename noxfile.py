"""Sessions: report (run + build), tests, docs, lint, bench, site_bench, fidelity, matrix_bench. Thin: install, then call the CLI."""

from __future__ import annotations

import runpy
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True

PYTHON = "3.11"
PINS = runpy.run_path(str(Path(__file__).parent / "reportgen" / "pins.py"))  # declared once, also read by the CLI
TORCH_CPU = PINS["TORCH_CPU"]
DEFAULT_RECIPES = ["recipes/quickstart.yaml"]


def _install(session: nox.Session, *extras: str) -> None:
    """torch's CPU build, then reportgen with what running recipes and building its own site need."""
    session.install(TORCH_CPU)
    session.install("-e", f".[{','.join(('run', 'site', *extras))}]")


@nox.session(python=PYTHON)
def report(session: nox.Session) -> None:
    """Run recipes (default: recipes/quickstart.yaml) and build the site into docs/_build/html."""
    recipes = session.posargs or DEFAULT_RECIPES
    _install(session)
    extra = session.run("reportgen", "requirements", *recipes, silent=True, external=False)
    if extra and extra.strip():
        session.install(*extra.split())
    session.run("reportgen", "report", *recipes, "--results", "results", "--out", "docs")


@nox.session(python=PYTHON)
def tests(session: nox.Session) -> None:
    """The test suite (CPU only; real torch.compile and Sphinx builds).

    Two workers (pytest-xdist), each test file whole on one (its module fixtures run once): most tests wait on a
    child that keeps one core busy: on a 2-core machine the suite took 929 s instead of 1361 s. `-n 0`
    after `--` runs it in one process.
    """
    _install(session, "test")
    session.run("pytest", "-n", "2", "--dist", "loadfile", *session.posargs)


@nox.session(python=PYTHON)
def docs(session: nox.Session) -> None:
    """Build the site from whatever bundles results/ holds."""
    _install(session)
    session.run("reportgen", "build", "results", "--out", "docs")


@nox.session(python=PYTHON)
def bench(session: nox.Session) -> None:
    """Trace analysis at scale vs HTA (benchmarks/trace_analysis.py); not part of `tests`.

    HTA (PyPI `traceinsight`) gets a virtualenv of its own under the session's, so that it never
    becomes a dependency of reportgen. Arguments go to the script, e.g. `nox -s bench -- --sizes 100`.
    """
    _install(session)
    hta_env = f"{session.virtualenv.location}-hta"
    session.run("python", "-m", "venv", hta_env, external=True)
    session.run(f"{hta_env}/bin/python", "-m", "pip", "install", "-q", "traceinsight==0.6.1", external=True)
    session.run("python", "benchmarks/trace_analysis.py", "--hta-python", f"{hta_env}/bin/python", *session.posargs)


@nox.session(python=PYTHON)
def site_bench(session: nox.Session) -> None:
    """Site build times: full, no-change, one changed, one added (benchmarks/site_build.py); not part of `tests`.

    Arguments go to the script, e.g. `nox -s site_bench -- --n 500 --steps full,nochange`.
    """
    _install(session)
    session.run("python", "benchmarks/site_build.py", *session.posargs)


@nox.session(python=PYTHON)
def fidelity(session: nox.Session) -> None:
    """reportgen's step times and busy % against a bare loop and `wrapper.py -p` (GPU; not part of `tests`).

    Arguments go to benchmarks/timing_fidelity.py, e.g. `nox -s fidelity -- recipes/mixnet_l.yaml --variant default`.
    """
    _install(session)
    session.run(
        "python",
        "benchmarks/timing_fidelity.py",
        *(session.posargs or ["recipes/mixnet_l.yaml", "--variant", "default"]),
    )


@nox.session(python=PYTHON)
def matrix_bench(session: nox.Session) -> None:
    """A matrix's throughput over the host's GPUs and its step times against runs alone (GPU; not part of `tests`).

    Arguments go to benchmarks/matrix_bench.py, e.g. `nox -s matrix_bench -- alone recipes/resnet50.yaml`.
    """
    _install(session)
    session.run("python", "benchmarks/matrix_bench.py", *session.posargs)


@nox.session(python=PYTHON)
def lint(session: nox.Session) -> None:
    """ruff, mypy (strict on reportgen/, pydantic plugin) and the import-linter contracts in pyproject.toml."""
    _install(session, "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", "reportgen")
    session.run("mypy")
    session.run("lint-imports")
