"""MyST text of the findings and of the compile diagnostics (graph breaks, recompiles, phases, CUDA graphs).

Pure functions of the bundle model; the page assembler places them (findings first). A finding's evidence
and suggestion are plain text with a small convention (`reportgen.bundle.model.Finding`): one paragraph per
line, `- ` list items, backticks for code; everything else is escaped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from reportgen.bundle import CompileDiagnostics, Finding, RegionEvidence, reason_headline
from reportgen.render.markup import MISSING, code_span, escape_md, list_table, location_span, plural

__all__ = ["DIRECTIVES", "NO_FINDINGS", "findings_section", "findings_text", "regions_section"]

DIRECTIVES: dict[str, str] = {"problem": "important", "warning": "warning", "info": "note"}
"""The MyST admonition directive of each finding severity."""

NO_FINDINGS = "No findings: nothing stood out."

_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")
_LOCATION = re.compile(r"/[^\s`]+:\d+")
"""An absolute source location in a finding's evidence (`file:line`)."""
_BACKTICKS = re.compile(r"`+")
_CUDAGRAPHS = {
    "used": "used: compiled graphs are replayed as CUDA graphs.",
    "skipped": "requested but skipped: the graphs run as ordinary kernel launches.",
    "off": "off (not requested).",
}
_REGIONS_EXPLAINED = (
    "A graph break ends a frame's graph; the rest of the frame runs as a resumed frame, compiled as its own "
    "region and called from inside the region that broke: N breaks in one frame give N + 1 compiled regions, "
    "N of them nested, and (in training) N + 1 `CompiledFunction` blocks per step."
)


def findings_section(findings: Sequence[Finding]) -> str:
    """ "## Findings": one admonition per finding, in the given order."""
    return f"## Findings\n\n{findings_text(findings)}"


def findings_text(findings: Sequence[Finding]) -> str:
    """One admonition per finding (no heading: embeddable alone)."""
    if not findings:
        return NO_FINDINGS
    return "\n\n".join(_admonition(finding) for finding in findings)


def regions_section(regions: RegionEvidence | None, diagnostics: CompileDiagnostics | None) -> str:
    """ "## Compile diagnostics": graph breaks, recompiles, graphs and trace evidence, phases, CUDA graphs."""
    if regions is None and diagnostics is None:
        return ""
    parts = ["## Compile diagnostics"]
    if diagnostics is not None:
        parts += [_graph_breaks(diagnostics), _recompiles(diagnostics)]
    parts.append(_graphs(regions, diagnostics))
    if diagnostics is not None:
        parts += [_phases(diagnostics), _cudagraphs(diagnostics)]
    return "\n\n".join(part for part in parts if part)


# --- findings ------------------------------------------------------------------------------------------


def _admonition(finding: Finding) -> str:
    body = "\n\n".join(
        [
            f"**{escape_md(finding.title)}**",
            _text(finding.evidence),
            _prefixed("**Suggestion:**", _text(finding.suggestion)),
        ]
    )
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{{{DIRECTIVES[finding.severity]}}}\n{body}\n{fence}"


def _prefixed(label: str, blocks: str) -> str:
    """`label` at the start of the first paragraph (on a line of its own before a list)."""
    return f"{label}\n\n{blocks}" if blocks.startswith("- ") or not blocks else f"{label} {blocks}"


def _text(text: str) -> str:
    """Plain text with the finding convention as MyST blocks: paragraphs and bullet lists."""
    blocks: list[list[str]] = []
    for line in (line.strip() for line in text.splitlines()):
        if not line:
            continue
        item = line.startswith("- ")
        rendered = f"- {_inline(line[2:])}" if item else _inline(line)
        if item and blocks and blocks[-1][0].startswith("- "):
            blocks[-1].append(rendered)
        else:
            blocks.append([rendered])
    return "\n\n".join("\n".join(block) for block in blocks)


def _inline(text: str) -> str:
    """One line: backtick-delimited pieces as code spans (a source location `/…/file.py:N` shortened, as in the
    tables), the rest escaped; unbalanced backticks: all escaped."""
    out: list[str] = []
    position = 0
    for match in _CODE.finditer(text):
        code = match.group(2)
        span = location_span(code) if _LOCATION.fullmatch(code) else code_span(code)  # (short, the whole on hover)
        out += [_escaped(text[position : match.start()]), span]
        position = match.end()
    out.append(_escaped(text[position:]))
    return "".join(out)


def _escaped(text: str) -> str:
    """`escape_md`, keeping one space at either end so code spans stay apart from the words around them."""
    if not text.strip():
        return " " if text else ""
    lead = " " if text[0].isspace() else ""
    trail = " " if text[-1].isspace() else ""
    return f"{lead}{escape_md(text)}{trail}"


# --- compile diagnostics -------------------------------------------------------------------------------


def _graph_breaks(diagnostics: CompileDiagnostics) -> str:
    breaks = diagnostics.graph_breaks
    if not breaks:
        return "### Graph breaks\n\nNo graph breaks."
    rows = [
        [
            _inline(reason_headline(b.reason)) or MISSING,
            location_span(b.location) if b.location else MISSING,
            str(b.count),
        ]
        for b in breaks
    ]
    total = plural(sum(b.count for b in breaks), "graph break")
    return "\n\n".join(["### Graph breaks", f"{total}.", list_table(["Reason", "Location", "Count"], rows)])


def _recompiles(diagnostics: CompileDiagnostics) -> str:
    found = diagnostics.recompiles
    if not found:
        return "### Recompiles\n\nNo recompiles."
    rows = [[code_span(r.frame) or MISSING, _inline(reason_headline(r.reason)) or MISSING] for r in found]
    total = plural(len(found), "recompile")
    return "\n\n".join(["### Recompiles", f"{total}.", list_table(["Frame", "Failed guard"], rows)])


def _graphs(regions: RegionEvidence | None, diagnostics: CompileDiagnostics | None) -> str:
    items: list[str] = []
    if diagnostics is not None and diagnostics.unique_graphs is not None:
        ops = ", ".join(str(n) for n in diagnostics.graph_ops)
        items.append(
            f"Unique graphs (Dynamo): {diagnostics.unique_graphs}" + (f"; FX call ops per graph: {ops}" if ops else "")
        )
    if regions is not None:
        blocks = regions.compiled_function_blocks_per_step
        items += [
            f"Compiled regions in the trace (distinct `Torch-Compiled Region` names): {regions.compiled_regions}",
            f"Region events nested inside another region: {regions.nested_regions}",
            f"`CompiledFunction` blocks per profiled step: {MISSING if blocks is None else f'{blocks:.1f}'}",
        ]
    if not items:
        return ""
    return "\n\n".join(
        ["### Graphs and compiled regions", "\n".join(f"- {_inline(item)}" for item in items), _REGIONS_EXPLAINED]
    )


def _phases(diagnostics: CompileDiagnostics) -> str:
    phases = diagnostics.compile_phases_s
    total = sum(phases.values())
    parts = ["### Compile time"]
    if phases:
        rows = [[code_span(name), f"{seconds:.2f}", _share(seconds, total)] for name, seconds in phases.items()]
        rows.append(["total", f"{total:.2f}", _share(total, total)])
        parts.append(list_table(["Phase", "Seconds", "Share (%)"], rows, "Compile phases"))
    if diagnostics.cache:
        rows = [[code_span(name), str(count)] for name, count in diagnostics.cache.items()]
        parts.append(list_table(["Counter", "Value"], rows, "Compile caches"))
    return "\n\n".join(parts) if len(parts) > 1 else ""


def _cudagraphs(diagnostics: CompileDiagnostics) -> str:
    parts = ["### CUDA graphs", f"CUDA graphs: {_CUDAGRAPHS[diagnostics.cudagraphs]}"]
    if diagnostics.cudagraph_skip_reasons:
        parts.append("\n".join(f"- {_inline(reason)}" for reason in diagnostics.cudagraph_skip_reasons))
    return "\n\n".join(parts)


def _share(seconds: float, total: float) -> str:
    return f"{100 * seconds / total:.1f}" if total > 0 else MISSING
