"""A trace's text edited as a stream: credentials in event names and args redacted, everything else byte for byte,
within the bounds of any trace read."""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest

from reportgen.credentials import REDACTED, redact
from reportgen.formats import TraceBounds, TraceTooLargeError, rewrite_trace
from reportgen.formats.rewrite import trace_pieces

__all__: list[str] = []

GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
EVENTS = [
    {"ph": "X", "cat": "user_annotation", "name": f"token={GHP}", "ts": 1, "dur": 2},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "args": {"note": "https://bob:hunter22@db.example/x"}},
    {"ph": "X", "cat": "kernel", "name": "triton_poi_fused_0", "args": {"correlation": 7, "é": "ünï"}},
]


def _edit(text: str) -> str:
    return redact(text)[0]


def _needs(text: str) -> bool:
    return bool(redact(text)[1])


def test_a_record_function_label_and_an_arg_are_redacted(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json.gz"
    trace.write_bytes(gzip.compress(orjson.dumps({"traceEvents": EVENTS * 3000, "traceName": "t"})))
    data = rewrite_trace(trace, _edit, _needs)
    assert data is not None
    text = gzip.decompress(data)
    assert GHP.encode() not in text and b"hunter22" not in text
    events = orjson.loads(text)["traceEvents"]
    assert events[0]["name"] == f"token={REDACTED}"
    assert events[1]["args"]["note"] == f"https://bob:{REDACTED}@db.example/x"
    assert events[2:3] == EVENTS[2:3] and len(events) == 9000


def test_a_clean_trace_is_left_as_it_is(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json.gz"
    trace.write_bytes(gzip.compress(orjson.dumps({"traceEvents": EVENTS[2:] * 10})))
    assert rewrite_trace(trace, _edit, _needs) is None


def test_pieces_end_after_a_quote_and_keep_every_byte(tmp_path: Path) -> None:
    raw = orjson.dumps({"traceEvents": EVENTS * 50_000}) + b"\xff\xfe"  # not UTF-8 at the end: kept as is
    trace = tmp_path / "trace.json"
    trace.write_bytes(raw)
    pieces = list(trace_pieces(trace))
    assert len(pieces) > 1 and all(p.endswith('"') for p in pieces[:-1])
    assert "".join(pieces).encode("utf-8", errors="surrogateescape") == raw


def test_rewriting_is_bounded(tmp_path: Path) -> None:
    trace = tmp_path / "trace.json.gz"
    trace.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (4 << 20) + b"]}"))
    with pytest.raises(TraceTooLargeError, match="hold no string"):
        rewrite_trace(trace, _edit, _needs, TraceBounds(event_bytes=1 << 20))
    with pytest.raises(TraceTooLargeError, match="passes 1,000,000 bytes"):
        rewrite_trace(trace, _edit, _needs, TraceBounds(inflated_bytes=1_000_000))
