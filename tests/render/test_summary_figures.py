"""The report's summary leads with what repeats (issue 27): device time per step and counts, eager against
compiled, one sentence splitting the step into device and host time, then the wall figures labelled
host-dependent. Figures are built by hand; expected words and numbers are worked out by hand."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from reportgen.bundle import Bundle, Figures, StepFigures, load_bundle
from reportgen.render.pages import ChartFiles, report_page
from tests.conftest import MakeBundle

__all__: list[str] = []

EAGER = StepFigures(
    profiled_steps=3,
    device_us=[6080.0, 6100.0, 6120.0],
    active_us=[4100.0, 4100.0, 4100.0],
    counts={"kernels": [645] * 3, "launches": [645] * 3, "aten_ops": [1467] * 3, "graphs": [0] * 3},
)
COMPILED = StepFigures(
    profiled_steps=3,
    device_us=[2270.0, 2280.0, 2290.0],
    active_us=[2280.0, 2280.0, 2280.0],
    counts={"kernels": [120] * 3, "launches": [40] * 3, "aten_ops": [300, 300, 303], "graphs": [2] * 3},
)


def _summary(bundle: Bundle, figures: Figures | None, eager_ms: float = 6.18, compiled_ms: float = 5.22) -> str:
    assert bundle.analysis is not None
    metrics = bundle.manifest.metrics
    assert metrics.eager is not None and metrics.compiled is not None
    metrics = metrics.model_copy(
        update={
            "eager": metrics.eager.model_copy(update={"median_ms": eager_ms}),
            "compiled": metrics.compiled.model_copy(update={"median_ms": compiled_ms}),
            "host_probe_ms": [0.9, 1.0, 1.2],
        }
    )
    bundle = dataclasses.replace(
        bundle,
        manifest=bundle.manifest.model_copy(update={"metrics": metrics}),
        analysis=bundle.analysis.model_copy(update={"figures": figures}),
    )
    return report_page(bundle, ChartFiles()).split("## Summary\n\n", 1)[1].split("\n\n## ", 1)[0]


def test_the_summary_leads_with_device_time_and_counts(tmp_path: Path, make_bundle: MakeBundle) -> None:
    summary = _summary(load_bundle(make_bundle(tmp_path, "t")), Figures(device="cuda", eager=EAGER, compiled=COMPILED))
    repeats, wall = summary.split("### What repeats: device time and counts per step\n\n", 1)[1].split(
        "\n\n### Wall figures (host-dependent)\n\n"
    )
    _, bullets, split = repeats.split("\n\n")
    assert bullets.splitlines() == [
        # 6.10 / 2.28 = 2.675...: 2.68×
        "- **Device time per step:** eager 6.10 ms [6.08–6.12], compiled 2.28 ms [2.27–2.29]: 2.68× device speedup "
        "(medians over 3 and 3 profiled steps; brackets: the lowest and highest step)",
        "- **Kernels run per step:** eager 645, compiled 120",
        "- **Kernel launches per step:** eager 645, compiled 40",
        "- **ATen ops dispatched per step:** eager 1,467, compiled 301",
        "- **Compiled graphs entered per step:** eager 0, compiled 2",
    ]
    # compiled: 2.28 / 5.22 = 44 %, 5.22 - 2.28 = 2.94; eager: 4.10 / 6.18 = 66 %, 6.18 - 4.10 = 2.08;
    # saved: 4.10 - 2.28 = 1.82 GPU-active, 2.08 - 2.94 = -0.86 host (compiled spends more on the host)
    assert split == (
        "Compiled: 2.28 ms of the 5.22 ms step is GPU-active (44 %), the rest (2.94 ms) the GPU waits on the host; "
        "eager: 4.10 ms of the 6.18 ms step is GPU-active (66 %), the rest (2.08 ms) the GPU waits on the host; "
        "torch.compile saves 1.82 ms of GPU-active time and adds 0.860 ms of host time per step (wall medians "
        "against the profiled steps' GPU-active medians)."
    )
    assert summary.index("- **Device time per step:**") < summary.index("- **Eager median:**")
    assert "- **Host probe:** 1.00 ms (median of 3 timings of a fixed CPU workload: the host's CPU speed)" in wall
    assert "- **Compiled median:** 5.22 ms (95 % interval —), CV —" in wall


def test_host_time_is_floored_at_zero(tmp_path: Path, make_bundle: MakeBundle) -> None:
    """A GPU-bound step: GPU-active 2.28 ms against a 2.20 ms wall median (timed apart, without the profiler)."""
    figures = Figures(device="cuda", eager=None, compiled=COMPILED)
    summary = _summary(load_bundle(make_bundle(tmp_path, "t")), figures, compiled_ms=2.20)
    assert (
        "Compiled: 2.28 ms of the 2.20 ms step is GPU-active (100 %), the rest (0.00 ms) the GPU waits on the host "
        "(wall medians"
    ) in summary
    assert (
        "- **Device time per step:** eager —, compiled 2.28 ms [2.27–2.29] (medians over 3 profiled steps;" in summary
    )
    assert "torch.compile" not in summary  # no eager split: no saving


def test_a_cpu_run_says_its_device_figures_are_cpu_time(tmp_path: Path, make_bundle: MakeBundle) -> None:
    cpu = StepFigures(profiled_steps=1, device_us=[30.0], active_us=[30.0], counts={"aten_ops": [4], "graphs": [0]})
    compiled = StepFigures(
        profiled_steps=1, device_us=[20.0], active_us=[20.0], counts={"aten_ops": [0], "graphs": [1]}
    )
    summary = _summary(load_bundle(make_bundle(tmp_path, "t")), Figures(device="cpu", eager=cpu, compiled=compiled))
    assert "- **CPU time per step:** eager 0.0300 ms [0.0300–0.0300], compiled 0.0200 ms" in summary
    assert "Kernels run" not in summary and "Kernel launches" not in summary  # counts a CPU trace cannot have
    assert "- **ATen ops dispatched per step:** eager 4, compiled 0" in summary
    assert "On a CPU run the device figures are CPU time (the ops' own time): host-dependent" in summary
    assert "GPU-active" not in summary


def test_a_run_from_before_the_figures_still_renders(tmp_path: Path, make_bundle: MakeBundle) -> None:
    summary = _summary(load_bundle(make_bundle(tmp_path, "t")), None)
    assert "No device figures or counts: this run predates them (its analysis recorded none)" in summary
    assert "- **Eager median:** 6.18 ms" in summary and "- **Speedup:** 1.18×" in summary  # 6.18 / 5.22
