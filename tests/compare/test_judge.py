"""`reportgen.compare.judge.launch_changes`: the kernels both runs launched, each with another config."""

from __future__ import annotations

from reportgen.bundle import KernelLaunch
from reportgen.compare.judge import launch_changes


def _k(kernel: str, config: str, tuning: str = "tuned", source: str = "ca.py") -> KernelLaunch:
    return KernelLaunch(kernel=kernel, source=source, config=config, tuning=tuning, configs=4)  # type: ignore[arg-type]


def test_only_kernels_both_runs_launched_with_another_config_are_listed() -> None:
    before = [_k("triton_red_0", "XBLOCK: 1"), _k("triton_poi_1", "XBLOCK: 1024", "cached"), _k("gone_2", "a")]
    after = [
        _k("triton_red_0", "XBLOCK: 8"),  # another config: listed
        _k("triton_poi_1", "XBLOCK: 1024", "cached"),  # the same: not
        _k("new_3", "a"),  # only after: the kernel table says it appeared
        _k("triton_red_0", "XBLOCK: 64", source="cb.py"),  # another kernel's code under the same name: not paired
    ]
    changes = launch_changes(before, after)
    assert [(c.kernel, c.source, c.before, c.after, c.tuning) for c in changes] == [
        ("triton_red_0", "ca.py", "XBLOCK: 1", "XBLOCK: 8", ("tuned", "tuned"))
    ]
    assert launch_changes([], after) == [] and launch_changes(before, before) == []
