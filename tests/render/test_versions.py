"""The compiled versions table (issue 31, item 4): rows in compile order, shares by hand, a version that never ran."""

from __future__ import annotations

from reportgen.bundle import VersionRuntime
from reportgen.render.versions import versions_section


def test_each_version_is_a_row_and_one_that_never_ran_is_named() -> None:
    versions = [
        VersionRuntime(compile_id="0/0", function="forward (models.py:64)", calls=0, device_time_us=0.0),
        VersionRuntime(
            compile_id="0/1",
            function="forward (models.py:64)",
            reason="0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16",
            calls=3,
            device_time_us=3000.0,
            graphs=["forward (graph 0)", "backward (graph 1)"],
        ),
        VersionRuntime(compile_id="1/0", function=None, calls=3, device_time_us=1000.0),
    ]
    text = versions_section(versions, "cuda", 3)
    assert text.startswith("### Compiled versions at run time")
    assert (
        "2 frames compiled in 3 versions" in text and "kernels each version's graphs launched in the 3 profiled" in text
    )
    assert "`0/0` never ran there" in text and "`0/1` never" not in text
    rows = text.split("* - ")[2:]  # after the header row
    assert [row.split("\n")[0] for row in rows] == ["`0/0`", "`0/1`", "`1/0`"]
    assert "  - 3.000\n  - 75.0\n" in rows[1] and "  - 1.000\n  - 25.0\n" in rows[2]  # 3 of 4 ms; 1 of 4 ms
    assert "size mismatch at index 0" in rows[1] and "(first compile)" in rows[0]
    assert versions_section([], "cuda", 3) == ""
