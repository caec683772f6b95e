"""MyST text of the runtime per compiled version: each frame's versions (compiles and recompiles), how often each
ran in the profiled steps, its time, and the guard whose failure made it (issue 31, item 4)."""

from __future__ import annotations

from collections.abc import Sequence

from reportgen.bundle import VersionRuntime, reason_headline
from reportgen.render.markup import MISSING, code_span, escape_md, list_table, plural

__all__ = ["versions_section"]

HEADER = ["Version", "Frame", "Calls", "Time (ms)", "Share (%)", "Graphs", "Made by the failed guard"]


def versions_section(versions: Sequence[VersionRuntime], device: str, profiled_steps: int) -> str:
    """ "### Compiled versions at run time": one row per version, in compile order ("" without versions)."""
    if not versions:
        return ""
    total = sum(version.device_time_us for version in versions)
    rows = [
        [
            code_span(version.compile_id),
            code_span(version.function) if version.function else MISSING,
            str(version.calls),
            f"{version.device_time_us / 1000:.3f}",
            f"{100 * version.device_time_us / total:.1f}" if total > 0 else MISSING,
            escape_md(", ".join(version.graphs)) or MISSING,
            escape_md(reason_headline(version.reason)) if version.reason else "— (first compile)",
        ]
        for version in versions
    ]
    frames = len({version.compile_id.partition("/")[0] for version in versions})
    idle = [version.compile_id for version in versions if version.calls == 0]
    time_kind = "device time of the kernels" if device == "cuda" else "self CPU time of the ops"
    intro = (
        f"{plural(frames, 'frame')} compiled in {plural(len(versions), 'version')} (`<frame>/<compile>`, as in the "
        f"trace's `Torch-Compiled Region` spans). Calls and {time_kind} each version's graphs launched in the "
        f"{profiled_steps} profiled steps, backward included."
    )
    if idle:
        intro += (
            f" {', '.join(code_span(compile_id) for compile_id in idle)} never ran there: Dynamo tries the newest "
            "version's guards first, and a later version (e.g. one with a dynamic dimension) took its calls."
        )
    return "\n\n".join(["### Compiled versions at run time", intro, list_table(HEADER, rows)])
