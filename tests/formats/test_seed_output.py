"""The `-p` report reader, on text in the form torch/_inductor/wrapper_benchmark.py prints."""

from __future__ import annotations

from reportgen.formats import parse_seed_output

REPORT = """
  == triton_pointwise category kernels ==
Kernel                          Self CUDA TIME (ms)    Count  Percent
----------------------------  ---------------------  -------  ---------
triton_poi_fused_add_0                     0.012         1  0.10%
Total                                      3.100            25.43%

Percent of time when GPU is busy: 72.80%
Total wall time 12.190 ms
Output for tabulate: cabc123, 25.43%, 8.10%, 3.20%, 0.50%, 35.57%, 72.80%, 12.190ms
"""


def test_reads_the_tabulate_line() -> None:
    [profile] = parse_seed_output(REPORT)
    assert profile.name == "cabc123"
    assert profile.busy_percent == 72.8
    assert profile.wall_ms == 12.19
    assert profile.categories_percent == {
        "pointwise": 25.43,
        "reduction": 8.1,
        "persistent_reduction": 3.2,
        "other": 36.07,
    }


def test_one_profile_per_wrapper_and_nothing_from_other_text() -> None:
    text = REPORT + REPORT.replace("cabc123", "cdef456").replace("72.80%, 12.190ms", "91.00%, 30.000ms")
    assert [(p.name, p.busy_percent, p.wall_ms) for p in parse_seed_output(text)] == [
        ("cabc123", 72.8, 12.19),
        ("cdef456", 91.0, 30.0),
    ]
    assert parse_seed_output("Percent of time when GPU is busy: 72.80%\nTotal wall time 12.190 ms\n") == []
