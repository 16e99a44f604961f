"""The registry's side of learned hints: teach, forget, inspect, keep across restarts.

:class:`LearnedField` is the part of :class:`~toolsurface.registry.ToolRegistry` that owns
its :class:`~toolsurface.learned.LearnedHints`. What is taught goes there; the next search
rebuilds the index with each tool's requests as its sixth field (:func:`index_texts`,
docs/analysis.md §9). The tools themselves, and so everything a provider is sent, never
change.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Container, Iterable, Sequence
from pathlib import Path

from toolsurface._internal.durable import remove_leftovers, write_durably
from toolsurface.errors import UnknownToolError
from toolsurface.retrieval.field_texts import FieldTexts, IndexTexts
from toolsurface.retrieval.hints.learned import LearnedHints, LearnedRequest

__all__ = ["LearnedField", "index_texts"]

_log = logging.getLogger("toolsurface")


class LearnedField:
    """A registry's learned hints: the store, what may be taught to it, and its file.

    ``hints`` is the store (shared with whoever passed it in): ``load_learned`` replaces it
    whole under ``lock``, the registry's, under which the registry reads it with the
    catalogue generation. ``tools`` is the registry's live set of names, read only.
    """

    def __init__(self, lock: threading.RLock, tools: Container[str], hints: LearnedHints) -> None:
        self._lock = lock
        self._tools = tools
        #: The store; read without the lock by a search, which compares its version.
        self.hints = hints

    def learn(self, query: str, tool_name: str) -> bool:
        """Teach that ``query`` led to ``tool_name`` (the registry's ``learn``); whether kept."""
        _check_query(query, "query")
        if tool_name not in self._tools:
            raise UnknownToolError(f"no tool named {tool_name!r} is registered")
        return self.hints.add(query, tool_name)

    def learn_many(self, pairs: Iterable[tuple[str, str]], *, missing_ok: bool = False) -> int:
        """Teach many (query, tool name) pairs, a host's logs; how many were kept.

        Every pair is checked before any is taught (errors name ``item i``); with
        ``missing_ok`` a pair naming a tool no longer registered is passed over.
        """
        checked: list[tuple[str, str]] = []
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2):
                raise TypeError(f"item {i}: expected a (query, tool name) pair")
            query, name = pair
            _check_query(query, f"item {i}: query")
            if not isinstance(name, str):
                raise TypeError(f"item {i}: tool name must be a string")
            if name not in self._tools:
                if missing_ok:
                    continue
                raise UnknownToolError(f"item {i}: no tool named {name!r} is registered")
            checked.append((query, name))
        return sum(self.hints.add(q, n) for q, n in checked)

    def forget(self, tool_name: str | None = None, query: str | None = None) -> int:
        """Drop what was learned: one request, one tool's, a request everywhere, or all.

        Returns how many requests went; the next search no longer sees them.
        """
        if query is not None:
            _check_query(query, "query")
        return self.hints.forget(tool_name, query)

    def learned(self, tool_name: str | None = None) -> dict[str, list[LearnedRequest]]:
        """What was learned, per tool (or for ``tool_name`` alone), oldest request first."""
        found = self.hints.export()
        if tool_name is None:
            return found
        return {tool_name: found[tool_name]} if tool_name in found else {}

    def save_learned(self, path: str | os.PathLike[str]) -> None:
        """Write the learned hints to ``path`` atomically and durably (format: docs/tools.md).

        The file and its directory are fsynced, so after a crash ``path`` holds the old
        hints or the new ones; a temporary file a crash left beside it is removed here.
        """
        where = Path(path)
        write_durably(where, self.hints.to_json().encode("utf-8"))
        _removed_leftovers(where)

    def load_learned(self, path: str | os.PathLike[str]) -> int:
        """Replace the learned hints by those of ``path``; how many requests it held.

        A file that cannot be read raises ``LearnedFormatError`` naming the field, and the
        hints the registry had stay as they were.
        """
        where = Path(path)
        _removed_leftovers(where)
        loaded = LearnedHints.from_json(where.read_text("utf-8"), where=str(where))
        with self._lock:
            loaded.version = self.hints.version + 1
            self.hints = loaded
        return len(loaded)


def index_texts(
    names: list[str], fields: list[FieldTexts], hints: dict[str, str]
) -> list[IndexTexts]:
    """The documents to index: a tool's five texts, six where it has learned ones."""
    if not hints:
        return list(fields)
    return [(*f, hints[n]) if n in hints else f for n, f in zip(names, fields)]


def _removed_leftovers(where: Path) -> None:
    """Remove the temporary files an unfinished write of ``where`` left, with a log line."""
    removed = remove_leftovers(where)
    if removed:
        _log.info("toolsurface: removed %d leftover temporary file(s) of %s", removed, where)


def _check_query(query: object, what: str) -> None:
    if not isinstance(query, str):
        raise TypeError(f"{what} must be a string, got {type(query).__name__}")
