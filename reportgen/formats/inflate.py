"""The streamed trace's bytes: a file read (and gzip inflated) on a producer thread, as a raw stream that
keeps the first and last megabyte of the decompressed text for the header keys.

The text is bounded (`bounds.TraceBounds`): its size and inflate ratio as it is produced, and, for a reader
that marks where each event ended (`mark`), the text read since the last complete event.
"""

from __future__ import annotations

import collections
import io
import queue
import threading
import zlib
from pathlib import Path
from typing import Any

from reportgen.formats.bounds import DEFAULT_BOUNDS, TraceBounds, TraceTooLargeError

__all__ = ["CHUNK", "EDGE_BYTES", "GZIP_MAGIC", "InflatedSource"]

EDGE_BYTES = 1 << 20
"""How much of the text's head and tail is kept (and where the header keys are looked for)."""
CHUNK = 1 << 20
"""Bytes read from the file at a time."""
GZIP_MAGIC = b"\x1f\x8b"


class InflatedSource(io.RawIOBase):
    """Decompressed bytes of the trace (gzip inflated on a producer thread), keeping its head and tail."""

    def __init__(self, path: Path, bounds: TraceBounds = DEFAULT_BOUNDS) -> None:
        self.path, self.position, self.head, self.bounds = path, 0, bytearray(), bounds
        self.mark: int | None = None
        """Where the reader's last complete event ended; None: no such check (the reader bounds events itself)."""
        self._compressed, self._inflated = 0, 0
        self._tail: collections.deque[bytes] = collections.deque()
        self._tail_size, self._pending, self._done, self._stop = 0, b"", False, False
        self._chunks: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=8)
        self._thread = threading.Thread(target=self._produce, name="reportgen-inflate", daemon=True)
        self._thread.start()

    def _put(self, item: bytes | BaseException | None) -> None:
        while not self._stop:
            try:
                self._chunks.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def close(self) -> None:
        """Stop the producer (a reader that gave up leaves no thread behind)."""
        self._stop = True
        super().close()

    def _produce(self) -> None:
        try:
            with open(self.path, "rb") as raw:
                first = raw.read(CHUNK)
                gz = self.path.suffix == ".gz" or first.startswith(GZIP_MAGIC)
                inflate = zlib.decompressobj(wbits=31) if gz else None
                block = first
                while block and not self._stop:
                    if inflate is None:
                        self._inflated += len(block)
                        self.bounds.check_inflated(self._inflated, None)
                        self._put(block)
                    else:
                        self._compressed += len(block)
                        inflate = self._inflate(inflate, block)
                    block = raw.read(CHUNK)
                if inflate is not None and not inflate.eof:
                    raise EOFError("truncated gzip: the compressed stream ends before its end marker")
            self._put(None)
        except BaseException as exc:  # handed to the reading thread, raised there
            self._put(exc)

    def _inflate(self, inflate: Any, block: bytes) -> Any:
        """Inflate one block; returns the decompressor for the next (a new one after a member's end)."""
        while block and not self._stop:
            if inflate.eof:  # a second gzip member (concatenated files) starts here
                block, inflate = inflate.unused_data, zlib.decompressobj(wbits=31)
                continue
            out = inflate.decompress(block, CHUNK * 8)
            self._inflated += len(out)
            self.bounds.check_inflated(self._inflated, self._compressed)
            self._put(out)
            block = inflate.unconsumed_tail
        return inflate

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._pending
        while not data:
            if self._done:
                return 0
            item = self._chunks.get()
            if item is None:
                self._done = True
                return 0
            if isinstance(item, BaseException):
                raise item
            data = item
        if self.mark is not None and self.position - self.mark > self.bounds.event_bytes:
            raise TraceTooLargeError(f"{self.bounds.event_bytes:,} bytes of its text hold no complete event")
        size = min(len(buffer), len(data))
        buffer[:size] = data[:size]
        self._pending = data[size:]
        self._keep(bytes(data[:size]))
        return size

    def _keep(self, data: bytes) -> None:
        self.position += len(data)
        if len(self.head) < EDGE_BYTES:
            self.head += data[: EDGE_BYTES - len(self.head)]
        self._tail.append(data)
        self._tail_size += len(data)
        while self._tail_size - len(self._tail[0]) >= EDGE_BYTES:
            self._tail_size -= len(self._tail.popleft())

    @property
    def tail(self) -> bytes:
        return b"".join(self._tail)
