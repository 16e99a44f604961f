"""An upstream's stdout read as lines (one JSON-RPC message each), bounded in length.

The lines are joined once from the pipe's pieces, in time linear in their length (the MCP
SDK's stdio client joined them piece by piece, quadratic in a line's length). A line longer
than the bound is not held: past it only its size and its first and last bytes are kept
(:class:`Overlong`), enough to find the id of the request it answers, or is, where the MCP
SDKs write it.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import anyio
import anyio.abc

__all__ = ["LINE_MAX_BYTES", "STREAM_GONE", "Overlong", "lines_of"]

#: The longest line (one message) read from a server: 64 MiB, room for a result carrying a
#: large file as base64. Past it the line is dropped as it arrives (docs/limits.md).
LINE_MAX_BYTES = 64 * 2**20
#: Bytes of a dropped line's start and end kept to find the id of the request it answers.
_EDGE_BYTES = 512

_ID = rb'(-?[0-9]{1,20}|"(?:[^"\\]|\\.){0,256}")'
#: An answer whose id comes first (the Python SDK's order): anchored at the line's start,
#: so a key of the same name inside the result cannot match.
_ID_FIRST = re.compile(
    rb'\A\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID + rb'\s*,\s*"(?:result|error)"'
)
#: An answer whose id comes last (the TypeScript SDK's): the line opens with the result or
#: error and ends with the id, the top-level object's last key (a nested object's would be
#: followed by its parents' closing braces).
_ANSWER_FIRST = re.compile(rb'\A\s*\{\s*"(?:result|error)"\s*:')
_ID_LAST = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*\Z")
#: A request from the server, in either SDK's order (a notification has no id).
_REQUEST_ID_FIRST = re.compile(
    rb'\A\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID + rb'\s*,\s*"method"'
)
_REQUEST_FIRST = re.compile(rb'\A\s*\{\s*"method"\s*:')

#: What ends a stream's reading: it closed, broke, or the process's pipe went away.
STREAM_GONE = (
    anyio.EndOfStream,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    ConnectionError,
    OSError,
)


@dataclass(frozen=True)
class Overlong:
    """A line past the bound, dropped: its length in bytes, and its first and last bytes."""

    size: int
    head: bytes
    tail: bytes

    def then(self, piece: bytes) -> Overlong:
        """The line with ``piece`` read too (its bytes counted, its edges kept)."""
        head = self.head
        if len(head) < _EDGE_BYTES:
            head += piece[: _EDGE_BYTES - len(head)]
        tail = (self.tail + piece[-_EDGE_BYTES:])[-_EDGE_BYTES:]
        return Overlong(self.size + len(piece), head, tail)

    def answered_id(self) -> int | str | None:
        """The id of the request this line answers; ``None`` for no answer or no id found.

        A request or notification from the server answers nothing; an answer's id is looked
        for only where the MCP SDKs write it (first, or last), never inside the result.
        """
        return self._id(_ID_FIRST, _ANSWER_FIRST)

    def request_id(self) -> int | str | None:
        """The id of the request from the server this line is; ``None`` for none found.

        Looked for as :meth:`answered_id` looks for an answer's: a notification has none.
        """
        return self._id(_REQUEST_ID_FIRST, _REQUEST_FIRST)

    def _id(self, first: re.Pattern[bytes], opens: re.Pattern[bytes]) -> int | str | None:
        """The id ``first`` finds at the line's start, or at its end if it ``opens`` it."""
        found = first.match(self.head)
        if found is None and opens.match(self.head):
            found = _ID_LAST.search(self.tail)
        if found is None:
            return None
        try:
            value = json.loads(found.group(1))
        except ValueError:  # an escape json refuses
            return None
        return value if isinstance(value, int | str) else None


def _edges(pieces: list[bytes]) -> tuple[bytes, bytes]:
    """The first and last :data:`_EDGE_BYTES` of the pieces joined, without joining them."""
    head = tail = b""
    for piece in pieces:
        if len(head) >= _EDGE_BYTES:
            break
        head += piece[: _EDGE_BYTES - len(head)]
    for piece in reversed(pieces):
        if len(tail) >= _EDGE_BYTES:
            break
        tail = piece[max(0, len(piece) - (_EDGE_BYTES - len(tail))) :] + tail
    return head, tail


async def lines_of(
    stdout: anyio.abc.ByteReceiveStream, max_bytes: int = LINE_MAX_BYTES
) -> AsyncIterator[bytes | Overlong]:
    """The stream's lines without their ends, each joined once from its pieces.

    Blank lines are left out, and a last line without an end is not a line. A line longer
    than ``max_bytes`` is not held: once past the bound its bytes are only counted, and it
    is an :class:`Overlong` with its size and edges.
    """
    pieces: list[bytes] = []
    held = 0  # bytes in pieces
    dropped: Overlong | None = None  # the line under way, past the bound
    while True:
        try:
            chunk = await stdout.receive()
        except STREAM_GONE:
            return
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            if dropped is None and held + len(piece) > max_bytes:
                dropped = Overlong(held, *_edges(pieces))
                pieces, held = [], 0
            if dropped is not None:
                dropped = dropped.then(piece)
            elif piece:
                pieces.append(piece)
                held += len(piece)
            if end < 0:
                break
            start = end + 1
            if dropped is not None:
                yield dropped
                dropped = None
                continue
            line = b"".join(pieces)
            pieces, held = [], 0
            if line and not line.isspace():  # no copy of a long line, as strip() makes
                yield line
