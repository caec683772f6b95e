"""FX node metadata as text: a node's `stack_trace` and its `nn_module_stack` paths, and the call sites of a
compiled wrapper (which kernel or extern call each is, and the FX nodes it computes).

`stack_trace` (what Dynamo records for every node)::

      File "/home/me/model.py", line 27, in forward
        y = torch.relu(self.fc(y)) * 2

`nn_module_stack` values are `(path, class)`; the path is how Dynamo reached the module from the compiled
frame: `L['self'].blocks.1.norm` (torch 2.6+), `L['self']._modules['blocks']._modules['1']`,
`L['self'].blocks[1]`.

A wrapper's call sites: with `config.trace.provenance_tracking_level` set, Inductor writes
`# [Provenance debug handles] <kernel>:<handle>` before every kernel call and extern call; without it, only
GPU kernel definitions and extern calls carry `# Topologically Sorted Source Nodes: [...]` comments.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reportgen.bundle import SourceFrame
from reportgen.formats.wrapper import _DEFINITION
from reportgen.formats.wrapper import _EXTERN_CALL as _EXTERN

__all__ = ["WrapperSite", "module_path", "parse_stack", "user_frame", "wrapper_sites"]

_FRAME = re.compile(r'^\s*File "(.+?)", line (\d+), in (.+?)\s*$')
_ROOT = re.compile(r"^(?:[LG]\['[^']*'\]|self)(?=[.\[]|$)")
_ITEM = re.compile(r"(?:\._modules)?\[\s*'?([^'\]]*)'?\s*\]")
_HANDLE = re.compile(r"^\s*# \[Provenance debug handles\] (\S+?):(\d+)\s*$")
_ORIGINS = re.compile(r"^\s*# (?:Topologically Sorted|Unsorted) Source Nodes: \[(.*)\], Original ATen: \[.*\]\s*$")
_CALL = re.compile(r"^\s+(?:\w+ = )?(\w+)(?:\.run)?\(")


def parse_stack(text: str | None) -> list[SourceFrame]:
    """The frames of a `stack_trace`, outermost first; [] for None or text without frames."""
    frames = []
    for line in (text or "").splitlines():
        if match := _FRAME.match(line):
            frames.append(SourceFrame(file=match.group(1), line=int(match.group(2)), function=match.group(3)))
    return frames


def user_frame(frames: Sequence[SourceFrame], hidden_dirs: Sequence[str]) -> SourceFrame | None:
    """The innermost frame whose file is outside every directory of `hidden_dirs` (torch's own code)."""
    for frame in reversed(frames):
        if not any(frame.file.startswith(prefix) for prefix in hidden_dirs):
            return frame
    return None


def module_path(raw: str) -> str:
    """`L['self']._modules['blocks']._modules['1'].norm` → `blocks.1.norm`; the compiled model itself is ''."""
    rest = _ROOT.sub("", raw.strip(), count=1)
    rest = _ITEM.sub(lambda match: "." + match.group(1), rest)
    return ".".join(part for part in rest.split(".") if part)


@dataclass(frozen=True)
class WrapperSite:
    """One call site of a wrapper: the kernel or extern call, its debug handle, the FX nodes a comment names."""

    kernel: str
    handle: int | None = None
    source_nodes: tuple[str, ...] = ()


def wrapper_sites(source: str) -> list[WrapperSite]:
    """A wrapper's call sites in call order: one per debug-handle line when it has any, else one per call of a
    defined kernel (with its definition's `Source Nodes`) and per extern call (with the comment just above)."""
    lines = source.splitlines()
    handled = [WrapperSite(m.group(1), int(m.group(2))) for line in lines if (m := _HANDLE.match(line))]
    return handled or _commented_sites(lines)


def _split(text: str) -> tuple[str, ...]:
    return tuple(item.strip() for item in text.split(",") if item.strip())


def _commented_sites(lines: list[str]) -> list[WrapperSite]:
    """Sites from `Source Nodes` comments (torch without provenance tracking)."""
    defined: dict[str, tuple[str, ...]] = {}
    sites: list[WrapperSite] = []
    nodes: tuple[str, ...] = ()
    in_string = False
    for text in lines:
        if in_string:
            in_string = not text.startswith("'''")
            continue
        if origins := _ORIGINS.match(text):
            nodes = _split(origins.group(1))
        elif definition := _DEFINITION.match(text):
            defined[definition.group(1)] = nodes
            in_string, nodes = text.count("'''") % 2 == 1, ()
        elif extern := _EXTERN.search(text):
            sites.append(WrapperSite(extern.group(1), None, nodes))
            nodes = ()
        elif (call := _CALL.match(text)) and call.group(1) in defined:
            sites.append(WrapperSite(call.group(1), None, defined[call.group(1)]))
    return sites
