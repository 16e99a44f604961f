"""Learned hints: the requests a host saw lead to each tool, bounded, and their file format.

After a ToolSearch the host knows which tool the model then called; ``registry.learn``
keeps that request for the tool, and the registry indexes a tool's requests as its sixth,
``learned`` field (docs/analysis.md §9). Nothing here is ever sent to a provider: the field
is search-side only.

Each tool keeps at most ``cap`` distinct requests. Teaching a kept request again counts it;
past the cap the rarest request goes first, the oldest of the rarest on a tie, so what a
host's users say often stays and a one-off phrasing makes room.

The file (``to_json``) is one JSON object, versioned so a later format can read this one::

    {"format": "toolsurface-learned", "version": 1, "cap": 32, "clock": 17,
     "tools": {"github__list_pull_requests": [
         {"query": "what PRs are open", "count": 3, "last": 17}]}}
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolsurface._internal.invisible import strip_invisible
from toolsurface.errors import ToolsurfaceError
from toolsurface.retrieval.fields import clean_text

__all__ = [
    "LEARNED_CAP",
    "LEARNED_FORMAT",
    "LEARNED_QUERY_CHARS",
    "LEARNED_VERSION",
    "LearnedFormatError",
    "LearnedHints",
    "LearnedRequest",
]

#: The file's ``format`` and ``version`` fields.
LEARNED_FORMAT = "toolsurface-learned"
LEARNED_VERSION = 1
#: Distinct requests kept per tool, by default.
LEARNED_CAP = 32
#: A request is kept on its first this many characters (a model's hostile essay is not).
LEARNED_QUERY_CHARS = 256
#: A file's bounds: what it may hold before it is refused rather than read.
_MAX_FILE_CHARS = 64 * 1024 * 1024
_MAX_CAP = 1024
_MAX_COUNT = 2**53


class LearnedFormatError(ToolsurfaceError, ValueError):
    """A learned-hints file that cannot be read; the message names the field at fault."""


@dataclass(frozen=True)
class LearnedRequest:
    """One request kept for a tool: its text, how often it was taught, and when last."""

    query: str
    count: int
    last: int


def _normal(query: str) -> str:
    """The kept form of a request: clean, visible text, white space folded, cut to its bound.

    Cut before anything else, so a hostile essay costs no more than its first characters.
    """
    return " ".join(strip_invisible(clean_text(query[: 4 * LEARNED_QUERY_CHARS])).split())[
        :LEARNED_QUERY_CHARS
    ].rstrip()


class LearnedHints:
    """Per-tool requests, bounded by ``cap``, safe to share between threads.

    ``version`` moves on every change, so an index built from one version knows when it is
    stale.
    """

    def __init__(self, cap: int = LEARNED_CAP) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= _MAX_CAP:
            raise ValueError(f"cap must be a whole number in 1..{_MAX_CAP}, got {cap!r}")
        self.cap = cap
        self._lock = threading.Lock()
        # tool -> key (casefolded request) -> [text, count, last]; the clock orders teaching.
        self._tools: dict[str, dict[str, list[Any]]] = {}
        self._clock = 0
        self.version = 0

    def add(self, query: str, tool: str, count: int = 1) -> bool:
        """Teach ``query`` for ``tool`` (``count`` times); whether anything was kept.

        An empty request (nothing left once cleaned) is kept nowhere.
        """
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a whole number >= 1, got {count!r}")
        text = _normal(query)
        if not text:
            return False
        key = text.casefold()
        with self._lock:
            self._clock += 1
            kept = self._tools.setdefault(tool, {})
            row = kept.get(key)
            if row is None:
                kept[key] = [text, count, self._clock]
                if len(kept) > self.cap:
                    del kept[min(kept, key=lambda k: (kept[k][1], kept[k][2]))]
            else:
                row[1] = min(row[1] + count, _MAX_COUNT)
                row[2] = self._clock
            self.version += 1
        return True

    def forget(self, tool: str | None = None, query: str | None = None) -> int:
        """Drop ``query`` of ``tool``, every request of ``tool``, or everything (``None``).

        Returns how many requests went. ``query`` alone drops it from every tool.
        """
        key = _normal(query).casefold() if query is not None else None
        with self._lock:
            gone = 0
            for name in [tool] if tool is not None else list(self._tools):
                kept = self._tools.get(name)
                if kept is None:
                    continue
                if key is None:
                    gone += len(kept)
                    del self._tools[name]
                elif kept.pop(key, None) is not None:
                    gone += 1
                    if not kept:
                        del self._tools[name]
            if gone:
                self.version += 1
            return gone

    def text(self, tool: str) -> str:
        """The learned field's text of ``tool``: its requests, oldest first, one a line."""
        kept = self._tools.get(tool)
        if not kept:
            return ""
        with self._lock:
            rows = sorted(kept.values(), key=lambda r: r[2])
        return "\n".join(r[0] for r in rows)

    def texts(self) -> dict[str, str]:
        """Every tool with something learned, and its field text."""
        return {name: self.text(name) for name in list(self._tools)}

    def export(self) -> dict[str, list[LearnedRequest]]:
        """What was learned, per tool in name order, each tool's requests oldest first."""
        with self._lock:
            snapshot = {
                name: [list(r) for r in kept.values()] for name, kept in self._tools.items()
            }
        return {
            name: [LearnedRequest(t, c, last) for t, c, last in sorted(rows, key=lambda r: r[2])]
            for name, rows in sorted(snapshot.items())
        }

    def __len__(self) -> int:
        """How many requests are kept, over every tool."""
        return sum(len(kept) for kept in list(self._tools.values()))

    def __iter__(self) -> Iterator[tuple[str, LearnedRequest]]:
        """Every (tool, request) kept, tools in name order."""
        for name, rows in self.export().items():
            for row in rows:
                yield name, row

    # -- the file -----------------------------------------------------------------------

    def to_json(self) -> str:
        """The versioned file text (keys sorted, so the same hints give the same bytes)."""
        tools = {
            name: [{"query": r.query, "count": r.count, "last": r.last} for r in rows]
            for name, rows in self.export().items()
        }
        with self._lock:
            clock = self._clock
        payload = {
            "format": LEARNED_FORMAT,
            "version": LEARNED_VERSION,
            "cap": self.cap,
            "clock": clock,
            "tools": tools,
        }
        return json.dumps(payload, ensure_ascii=False, sort_keys=True, indent=1)

    @classmethod
    def from_json(cls, text: str, *, where: str = "learned hints") -> LearnedHints:
        """Hints read back from ``to_json``'s text; anything else raises naming the field."""
        if not isinstance(text, str):
            raise LearnedFormatError(f"{where}: expected text, got {type(text).__name__}")
        if len(text) > _MAX_FILE_CHARS:
            raise LearnedFormatError(f"{where}: over {_MAX_FILE_CHARS} characters")
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except (json.JSONDecodeError, ValueError, RecursionError) as exc:
            raise LearnedFormatError(f"{where}: not JSON ({exc})") from None
        if not isinstance(data, Mapping):
            raise LearnedFormatError(f"{where}: expected an object")
        if data.get("format") != LEARNED_FORMAT:
            raise LearnedFormatError(f"{where}: field 'format' must be {LEARNED_FORMAT!r}")
        version = data.get("version")
        if version != LEARNED_VERSION:
            raise LearnedFormatError(
                f"{where}: field 'version' is {version!r}; this release reads {LEARNED_VERSION}"
            )
        cap = _whole(data.get("cap"), f"{where}: field 'cap'", 1, _MAX_CAP)
        clock = _whole(data.get("clock"), f"{where}: field 'clock'", 0, _MAX_COUNT)
        tools = data.get("tools")
        if not isinstance(tools, Mapping):
            raise LearnedFormatError(f"{where}: field 'tools' must be an object")
        hints = cls(cap)
        for name, rows in tools.items():
            at = f"{where}: tools.{name}"
            if not isinstance(rows, list) or len(rows) > cap:
                raise LearnedFormatError(f"{at}: must be a list of at most {cap} requests")
            kept: dict[str, list[Any]] = {}
            for i, row in enumerate(rows):
                query, count, last = _row(row, f"{at}[{i}]", clock)
                kept.setdefault(query.casefold(), [query, count, last])
            if kept:
                hints._tools[str(name)] = kept
        hints._clock = clock
        hints.version = 1
        return hints


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _whole(value: object, at: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LearnedFormatError(f"{at} must be a whole number in {low}..{high}, got {value!r}")
    return value


def _row(row: object, at: str, clock: int) -> tuple[str, int, int]:
    if not isinstance(row, Mapping) or set(row) != {"query", "count", "last"}:
        raise LearnedFormatError(f"{at}: must be an object of query, count and last")
    query = row["query"]
    if not isinstance(query, str) or not _normal(query) or _normal(query) != query:
        raise LearnedFormatError(f"{at}.query: must be a kept request (clean, folded, cut)")
    count = _whole(row["count"], f"{at}.count", 1, _MAX_COUNT)
    last = _whole(row["last"], f"{at}.last", 0, clock)
    return query, count, last
