"""Shared fixtures: canned bundles built from model objects, no GPU needed."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from reportgen.bundle import (
    ANALYSIS_REVISION,
    Analysis,
    Environment,
    GpuInfo,
    HostInfo,
    Kernel,
    KernelTable,
    Manifest,
    Metrics,
    ModuleFile,
    RunStatus,
    StepTimes,
    Versions,
    write_analysis,
    write_bundle,
)
from reportgen.recipe.model import Recipe
from tests.data import CPU_HISTORY, H100_FIXTURE, RECIPES_DIR

if TYPE_CHECKING:
    from playwright.sync_api import Browser

__all__ = ["DEFAULT_KERNELS", "MakeBundle", "shared_once"]

MakeBundle = Callable[..., Path]

DEFAULT_KERNELS: tuple[tuple[str, str, float, int], ...] = (
    ("triton_per_fused__native_batch_norm_legit_functional_0", "triton_persistent_reduction", 9100.0, 30),
    ("sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc", "conv", 6400.0, 120),
    ("triton_poi_fused_add_mul_sigmoid_1", "triton_pointwise", 4100.0, 90),
    (
        "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, T*)",
        "aten_native",
        800.0,
        12,
    ),
    ("triton_red_fused_sum_2", "triton_reduction", 600.0, 6),
)

RECIPE_YAML = """\
name: {name}
title: {title}
model:
  ref: timm:mixnet_l
inputs:
  batch_size: 64
  tensors:
    - shape: [3, 224, 224]
task: train
amp: fp16
"""


def _step_times(median_ms: float) -> StepTimes:
    samples = [median_ms * f for f in (0.97, 0.99, 1.0, 1.01, 1.04)]
    return StepTimes(
        samples_ms=samples,
        median_ms=median_ms,
        q1_ms=samples[1],
        q3_ms=samples[3],
        min_ms=samples[0],
        max_ms=samples[-1],
    )


def _environment() -> Environment:
    return Environment(
        device="cuda",
        device_name="NVIDIA H100 80GB HBM3",
        versions=Versions(
            python="3.12.3",
            torch="2.11.0+cu130",
            triton="3.6.0",
            cuda="13.0",
            reportgen="0.1.0",
            platform="Linux-6.8-x86_64",
        ),
        host=HostInfo(cpu="AMD EPYC 9654", cpu_count=16, memory_bytes=128 * 2**30),
        gpus=[
            GpuInfo(
                index=0,
                name="NVIDIA H100 80GB HBM3",
                total_memory_bytes=80 * 2**30,
                multiprocessor_count=132,
                capability="9.0",
                peak_bandwidth_gbps=3352.0,
            )
        ],
        env={"TORCHINDUCTOR_UNIQUE_KERNEL_NAMES": "1"},
    )


def make_manifest(name: str, status: RunStatus, title: str | None) -> Manifest:
    """A manifest of a mixnet_l training run; failed runs have no metrics."""
    recipe = Recipe.model_validate(
        {
            "name": name.split("--")[0],  # a bundle `<recipe>--<variant>` comes from recipe `<recipe>`
            "title": title,
            "model": {"ref": "timm:mixnet_l"},
            "inputs": {"batch_size": 64, "tensors": [{"shape": [3, 224, 224]}]},
            "task": "train",
            "amp": "fp16",
        }
    )
    ok = status is RunStatus.ok
    return Manifest(
        name=name,
        recipe=recipe,
        recipe_sha256="0" * 64,
        recipe_path=f"recipes/{name}.yaml",
        status=status,
        exit_code=0 if ok else 1,
        error=None if ok else "RuntimeError: CUDA error: an illegal memory access <b>was</b> `encountered`",
        started_at="2025-01-01T00:00:00Z",
        finished_at="2025-01-01T00:05:00Z",
        wall_time_s=300.0,
        environment=_environment(),
        metrics=Metrics(eager=_step_times(120.0), compiled=_step_times(80.0), compile_time_s=160.0)
        if ok
        else Metrics(),
        trace_file="trace.json.gz" if ok else None,
    )


def make_analysis(kernels: Sequence[tuple[str, str, float, int]]) -> Analysis:
    """An analysis whose kernel table holds `kernels` as (name, category, time_us, count)."""
    total_us = sum(k[2] for k in kernels)
    rows = [
        Kernel(name=n, category=c, device_time_us=t, count=k, share=t / total_us if total_us else 0.0)
        for n, c, t, k in sorted(kernels, key=lambda k: k[2], reverse=True)
    ]
    table = KernelTable(device="cuda", profiled_steps=3, total_us=total_us, kernels=rows)
    return Analysis(revision=ANALYSIS_REVISION, kernels=table)


def _reportgen_variables() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if name.startswith("REPORTGEN_")}


@pytest.fixture(autouse=True)
def _no_reportgen_variable_outlives_its_test() -> Iterator[None]:
    """A test that leaves a `REPORTGEN_*` variable behind changes the tests after it in the same worker (a stale
    timing-lock path once failed an unrelated test in CI): each test ends with the variables it started with."""
    before = _reportgen_variables()
    yield
    after = _reportgen_variables()
    assert after == before, f"this test left REPORTGEN_* variables changed: {before} -> {after}"


@pytest.fixture
def make_bundle() -> MakeBundle:
    """Factory: `make_bundle(results_dir, name, status=..., kernels=..., title=...)` -> bundle dir.

    `kernels=None` uses DEFAULT_KERNELS for ok runs and writes no analysis for failed ones.
    """

    def make(
        results_dir: Path,
        name: str,
        status: RunStatus = RunStatus.ok,
        kernels: Sequence[tuple[str, str, float, int]] | None = None,
        title: str | None = None,
    ) -> Path:
        def populate(tmp: Path) -> Manifest:
            (tmp / "recipe.yaml").write_text(RECIPE_YAML.format(name=name, title=json.dumps(title or name)))
            (tmp / "run.log").write_text("".join(f"log line {i}\n" for i in range(100)))
            return make_manifest(name, status, title)

        bundle_dir = write_bundle(results_dir, name, populate)
        if kernels is not None or status is RunStatus.ok:
            write_analysis(bundle_dir, make_analysis(DEFAULT_KERNELS if kernels is None else kernels))
        return bundle_dir

    return make


@pytest.fixture(scope="session")
def h100_modules(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[ModuleFile]]:
    """The H100 fixture's compiled modules laid out as in a bundle (`modules/wrappers`, `modules/kernels`).

    Wrappers are ordered as compiled: forward first, then backward.
    """
    import shutil
    import tarfile

    from reportgen.formats.wrapper import parse_wrapper

    assert H100_FIXTURE.is_dir(), f"missing fixture {H100_FIXTURE}"
    root = tmp_path_factory.mktemp("h100-modules")
    with tarfile.open(H100_FIXTURE / "modules.tar.gz") as tar:
        tar.extractall(root / "raw", filter="data")
    files = sorted((root / "raw").rglob("*.py"))
    wrappers = [p for p in files if "compiled_module_main" in p.read_text()]
    wrappers.sort(key=lambda p: parse_wrapper(p.read_text()).kind != "forward")
    modules: list[ModuleFile] = []
    for kind, group in (("wrapper", wrappers), ("kernel", [p for p in files if p not in wrappers])):
        (root / "modules" / f"{kind}s").mkdir(parents=True)
        for order, src in enumerate(group):
            dest = root / "modules" / f"{kind}s" / src.name
            shutil.copyfile(src, dest)
            rel = dest.relative_to(root).as_posix()
            modules.append(ModuleFile(path=rel, kind=kind, order=order, size_bytes=dest.stat().st_size))
    return root, modules


CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    """Debian's chromium through Playwright; a clear failure when either is missing."""
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing: install it (as root: apt-get update && apt-get install -y chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the Python package playwright is missing: pip install -e '.[test]'")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def shared_once(factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """`make(directory)` done once per test session, by the first worker (pytest-xdist) that asks; the others wait
    for it and get the same directory, which they must not change (copy it). A `make` that failed is tried again.

    The directory sits beside the workers' temporary directories (in the session's own without xdist).
    """
    root = factory.getbasetemp()
    root = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    done, directory = root / f"shared-{name}.done", root / f"shared-{name}"
    with (root / f"shared-{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.is_file():
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir()
            make(directory)
            done.touch()
    return directory


def _run_addmul_on_history(directory: Path) -> None:
    results = Path(shutil.copytree(CPU_HISTORY, directory / "results"))
    run = [sys.executable, "-m", "reportgen", "run", str(RECIPES_DIR / "addmul.yaml"), "-o", str(results)]
    proc = subprocess.run(run, capture_output=True, text=True, timeout=900, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.fixture(scope="session")
def addmul_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results directory: the recorded history of `addmul.yaml` (`CPU_HISTORY`) joined by one real CPU run of it
    (`reportgen run`), made once per session and shared by the test files that read it; copy it to change it."""
    return shared_once(tmp_path_factory, "addmul-history", _run_addmul_on_history) / "results"
