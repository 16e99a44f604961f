"""Learned hints: the requests a host saw lead to each tool, bounded, and their file format.

After a ToolSearch the host knows which tool the model then called; ``registry.learn``
keeps that request for the tool, and the registry indexes a tool's requests as its sixth,
``learned`` field (docs/analysis.md §9). Nothing here is ever sent to a provider: the field
is search-side only.

Each tool keeps at most ``cap`` distinct requests. Teaching a kept request again counts it;
past the cap the rarest request goes first, the oldest of the rarest on a tie, so what a
host's users say often stays and a one-off phrasing makes room.

A request is taught by the host itself (``session=None``: its own logs, trusted) or by a
session (``ToolSurface(learn_from_usage=True)``, the gateway's ``--learn``), which the
model and the user behind it steer. So that no session can steer what other sessions
find (docs/analysis.md §9):

- a session counts once per (request, tool), however often it teaches the pair;
- a session-taught request ranks only once ``min_sessions`` distinct sessions taught it;
- a word of session-taught requests enters a tool's field at most ``word_cap`` times;
- and only the words the tool's own text already reaches enter it (``texts``' ``reach``),
  so a learned request reorders the tools a search finds without it and lifts no other.

Sessions are kept as digests (``session_digest``), never as the ids themselves.

The file (``to_json``) is one JSON object, versioned so a later format can read this one::

    {"format": "toolsurface-learned", "version": 2, "cap": 32, "clock": 17,
     "tools": {"github__list_pull_requests": [
         {"query": "what PRs are open", "count": 3, "last": 17, "host": false,
          "sessions": ["5d41402abc4b2a76", "7d793037a0760186", "b2c3e1d7a5f04c1e"]}]}}

Version 1 (no ``host`` nor ``sessions``) is read as taught by the host.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from toolsurface._internal.invisible import strip_invisible
from toolsurface.errors import ToolsurfaceError
from toolsurface.retrieval.fields import clean_text

_log = logging.getLogger("toolsurface")

__all__ = [
    "LEARNED_CAP",
    "LEARNED_FORMAT",
    "LEARNED_MIN_SESSIONS",
    "LEARNED_QUERY_CHARS",
    "LEARNED_VERSION",
    "LEARNED_WORD_CAP",
    "LearnedFormatError",
    "LearnedHints",
    "LearnedRequest",
    "Reach",
    "session_digest",
]

#: The file's ``format`` and ``version`` fields (version 1 is still read).
LEARNED_FORMAT = "toolsurface-learned"
LEARNED_VERSION = 2
#: Distinct requests kept per tool, by default.
LEARNED_CAP = 32
#: Distinct sessions that must teach a request before it ranks, by default.
LEARNED_MIN_SESSIONS = 3
#: Times a word of session-taught requests may stand in one tool's field, by default.
LEARNED_WORD_CAP = 2
#: Session digests kept per request: enough to count to any sensible ``min_sessions``.
_SESSIONS_KEPT = 16
_MAX_MIN_SESSIONS = _SESSIONS_KEPT
_DIGEST_CHARS = 16
#: A request is kept on its first this many characters (a model's hostile essay is not).
LEARNED_QUERY_CHARS = 256
#: A file's bounds: what it may hold before it is refused rather than read.
_MAX_FILE_CHARS = 64 * 1024 * 1024
_MAX_CAP = 1024
_MAX_COUNT = 2**53


class LearnedFormatError(ToolsurfaceError, ValueError):
    """A learned-hints file that cannot be read; the message names the field at fault."""


#: The words of a request a tool's own text reaches: ``reach(tool, request)``.
Reach = Callable[[str, str], "list[str]"]


@dataclass(frozen=True)
class LearnedRequest:
    """One request kept for a tool: its text, how often and when last it was taught, by whom.

    ``by_host``: the host taught it itself; ``sessions``: how many distinct sessions did
    (counted up to 16).
    """

    query: str
    count: int
    last: int
    by_host: bool = True
    sessions: int = 0


def session_digest(session: str) -> str:
    """How a session is kept: a digest of its id (an HTTP session id is a credential).

    >>> session_digest("stdio")
    '0708da13dbf91478'
    """
    return hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def _normal(query: str) -> str:
    """The kept form of a request: clean, visible text, white space folded, cut to its bound.

    Cut before anything else, so a hostile essay costs no more than its first characters.
    """
    return " ".join(strip_invisible(clean_text(query[: 4 * LEARNED_QUERY_CHARS])).split())[
        :LEARNED_QUERY_CHARS
    ].rstrip()


class LearnedHints:
    """Per-tool requests, bounded by ``cap``, safe to share between threads.

    ``min_sessions`` and ``word_cap`` bound what sessions teach (module docstring); they are
    the store's settings, not the file's. ``version`` moves on every change, so an index
    built from one version knows when it is stale.

    >>> hints = LearnedHints(min_sessions=2)
    >>> [hints.add("delete it all", "fs__wipe", session="one") for _ in range(20)]
    ... # doctest: +ELLIPSIS
    [True, False, False, ...]
    >>> hints.texts()  # one session, twenty times: nothing ranks
    {}
    >>> hints.add("delete it all", "fs__wipe", session="two")
    True
    >>> hints.texts(lambda tool, request: ["delete"])  # two sessions; the words it reaches
    {'fs__wipe': 'delete'}
    """

    def __init__(
        self,
        cap: int = LEARNED_CAP,
        *,
        min_sessions: int = LEARNED_MIN_SESSIONS,
        word_cap: int = LEARNED_WORD_CAP,
    ) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= _MAX_CAP:
            raise ValueError(f"cap must be a whole number in 1..{_MAX_CAP}, got {cap!r}")
        self.min_sessions = _setting(min_sessions, "min_sessions", _MAX_MIN_SESSIONS)
        self.word_cap = _setting(word_cap, "word_cap", _MAX_CAP)
        self.cap = cap
        self._lock = threading.Lock()
        # tool -> key (casefolded request) -> [text, count, last, sessions, by_host]; the
        # clock orders teaching; sessions is a list of digests, at most _SESSIONS_KEPT.
        self._tools: dict[str, dict[str, list[Any]]] = {}
        self._clock = 0
        self.version = 0

    def add(self, query: str, tool: str, count: int = 1, *, session: str | None = None) -> bool:
        """Teach ``query`` for ``tool``; whether anything changed.

        By the host (``session=None``) it counts ``count`` times; by ``session`` it counts
        once for that session, ever: teaching the pair again from the same session changes
        nothing. An empty request (nothing left once cleaned) is kept nowhere.
        """
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"count must be a whole number >= 1, got {count!r}")
        if session is not None and not isinstance(session, str):
            raise TypeError(f"session must be a string or None, got {type(session).__name__}")
        text = _normal(query)
        if not text:
            return False
        key = text.casefold()
        digest = session_digest(session) if session is not None else None
        with self._lock:
            kept = self._tools.setdefault(tool, {})
            row = kept.get(key)
            if row is not None and digest is not None and digest in row[3]:
                return False  # this session taught the pair already: once per session
            self._clock += 1
            if digest is not None:
                count = 1
            if row is None:
                row = kept[key] = [text, count, self._clock, [], digest is None]
                if len(kept) > self.cap:
                    del kept[min(kept, key=lambda k: (kept[k][1], kept[k][2]))]
            else:
                row[1] = min(row[1] + count, _MAX_COUNT)
                row[2] = self._clock
                row[4] = row[4] or digest is None
            if digest is not None and len(row[3]) < _SESSIONS_KEPT:
                row[3].append(digest)
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

    def _ranks(self, row: list[Any]) -> bool:
        """Whether a kept request enters the field: the host's, or enough sessions'."""
        return bool(row[4]) or len(row[3]) >= self.min_sessions

    def text(self, tool: str, reach: Reach | None = None) -> str:
        """The learned field's text of ``tool``: its requests that rank, oldest first, a line each.

        A request the host taught stands whole. Of one sessions taught, only the words
        ``reach(tool, request)`` gives (the words the tool's own text reaches; all of them
        without ``reach``), each word at most ``word_cap`` times over the tool's field.
        """
        kept = self._tools.get(tool)
        if not kept:
            return ""
        with self._lock:
            rows = sorted((list(r) for r in kept.values() if self._ranks(r)), key=lambda r: r[2])
        lines: list[str] = []
        seen: dict[str, int] = {}
        for row in rows:
            if row[4]:
                lines.append(row[0])
                continue
            words = reach(tool, row[0]) if reach is not None else row[0].split()
            capped = []
            for word in words:
                folded = word.casefold()
                seen[folded] = seen.get(folded, 0) + 1
                if seen[folded] <= self.word_cap:
                    capped.append(word)
            if capped:
                lines.append(" ".join(capped))
        return "\n".join(lines)

    def texts(self, reach: Reach | None = None) -> dict[str, str]:
        """Every tool whose learned field is not empty, and its text (see ``text``)."""
        found = {name: self.text(name, reach) for name in list(self._tools)}
        return {name: text for name, text in found.items() if text}

    def export(self) -> dict[str, list[LearnedRequest]]:
        """What was learned, per tool in name order, each tool's requests oldest first."""
        with self._lock:
            snapshot = {
                name: [[*r[:3], len(r[3]), r[4]] for r in kept.values()]
                for name, kept in self._tools.items()
            }
        return {
            name: [
                LearnedRequest(t, c, last, by_host=host, sessions=n)
                for t, c, last, n, host in sorted(rows, key=lambda r: r[2])
            ]
            for name, rows in sorted(snapshot.items())
        }

    def _rows(self) -> dict[str, list[dict[str, Any]]]:
        """The file's rows, per tool in name order, oldest first."""
        with self._lock:
            snapshot = {
                name: sorted((list(r) for r in kept.values()), key=lambda r: r[2])
                for name, kept in self._tools.items()
            }
        return {
            name: [
                {"query": t, "count": c, "last": last, "host": host, "sessions": list(digests)}
                for t, c, last, digests, host in rows
            ]
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
        tools = self._rows()
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
    def from_json(
        cls,
        text: str,
        *,
        where: str = "learned hints",
        min_sessions: int = LEARNED_MIN_SESSIONS,
        word_cap: int = LEARNED_WORD_CAP,
    ) -> LearnedHints:
        """Hints read back from ``to_json``'s text; anything else raises naming the field.

        ``min_sessions`` and ``word_cap`` are the new store's settings (the file has none).
        """
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
        if version not in (1, LEARNED_VERSION) or isinstance(version, bool):
            raise LearnedFormatError(
                f"{where}: field 'version' is {version!r}; this release reads 1 and "
                f"{LEARNED_VERSION}"
            )
        cap = _whole(data.get("cap"), f"{where}: field 'cap'", 1, _MAX_CAP)
        clock = _whole(data.get("clock"), f"{where}: field 'clock'", 0, _MAX_COUNT)
        tools = data.get("tools")
        if not isinstance(tools, Mapping):
            raise LearnedFormatError(f"{where}: field 'tools' must be an object")
        hints = cls(cap, min_sessions=min_sessions, word_cap=word_cap)
        for name, rows in tools.items():
            at = f"{where}: tools.{name}"
            if not isinstance(rows, list) or len(rows) > cap:
                raise LearnedFormatError(f"{at}: must be a list of at most {cap} requests")
            kept: dict[str, list[Any]] = {}
            first: dict[str, int] = {}
            for i, row in enumerate(rows):
                key = _row_key(row)
                read = _row(row, f"{at}[{i}]", clock, version)
                if key in kept:
                    # Requests are kept casefolded: a second row of one is dropped, said.
                    _log.warning(
                        "toolsurface: %s[%d]: the same request as [%d] (requests are kept "
                        "casefolded); the first is kept",
                        at,
                        i,
                        first[key],
                    )
                    continue
                kept[key], first[key] = read, i
            if kept:
                hints._tools[str(name)] = kept
        hints._clock = clock
        hints.version = 1
        return hints


def _setting(value: object, name: str, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise ValueError(f"{name} must be a whole number in 1..{high}, got {value!r}")
    return value


def _row_key(row: object) -> str:
    """The key a file's row is kept under (its query, casefolded; checked by ``_row``)."""
    query = row.get("query") if isinstance(row, Mapping) else None
    return query.casefold() if isinstance(query, str) else ""


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def _whole(value: object, at: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise LearnedFormatError(f"{at} must be a whole number in {low}..{high}, got {value!r}")
    return value


_V1_FIELDS = {"query", "count", "last"}
_V2_FIELDS = {"query", "count", "last", "host", "sessions"}


def _row(row: object, at: str, clock: int, version: int) -> list[Any]:
    """One file row as the store keeps it: [text, count, last, sessions, by_host]."""
    fields = _V1_FIELDS if version == 1 else _V2_FIELDS
    if not isinstance(row, Mapping) or set(row) != fields:
        raise LearnedFormatError(f"{at}: must be an object of {', '.join(sorted(fields))}")
    query = row["query"]
    if not isinstance(query, str) or not _normal(query) or _normal(query) != query:
        raise LearnedFormatError(f"{at}.query: must be a kept request (clean, folded, cut)")
    count = _whole(row["count"], f"{at}.count", 1, _MAX_COUNT)
    last = _whole(row["last"], f"{at}.last", 0, clock)
    if version == 1:
        return [query, count, last, [], True]  # before sessions were told apart: the host's
    host = row["host"]
    if not isinstance(host, bool):
        raise LearnedFormatError(f"{at}.host: must be true or false")
    sessions = row["sessions"]
    if (
        not isinstance(sessions, list)
        or len(sessions) > _SESSIONS_KEPT
        or len(set(map(str, sessions))) != len(sessions)
        or not all(isinstance(d, str) and _is_digest(d) for d in sessions)
    ):
        raise LearnedFormatError(
            f"{at}.sessions: must be at most {_SESSIONS_KEPT} distinct session digests"
        )
    if not host and not sessions:
        raise LearnedFormatError(f"{at}: taught by neither the host nor a session")
    if len(sessions) > count:
        raise LearnedFormatError(f"{at}.count: below the number of sessions")
    return [query, count, last, list(sessions), host]


def _is_digest(text: str) -> bool:
    return len(text) == _DIGEST_CHARS and all(c in "0123456789abcdef" for c in text)
