"""The registry's side of learned hints: teach, forget, inspect, keep across restarts.

:class:`LearnedField` is the part of :class:`~toolsurface.registry.ToolRegistry` that owns
its :class:`~toolsurface.learned.LearnedHints`. What is taught goes there; the next search
indexes each tool's requests as its sixth field (:func:`learned_texts`, then
:func:`with_learned` for a build; the native engine can replace that field alone;
docs/analysis.md §9). The tools themselves, and so everything a provider is sent, never
change.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from pathlib import Path

from toolsurface._internal.durable import remove_leftovers, write_durably
from toolsurface.errors import UnknownToolError
from toolsurface.retrieval.hints.learned import LearnedFormatError, LearnedHints, LearnedRequest
from toolsurface.retrieval.packed_fields import IndexDoc, StoredFields, unpack_fields

__all__ = ["LearnedField", "OwnWords", "learned_texts", "with_learned"]

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

    def learn(self, query: str, tool_name: str, session: str | None = None) -> bool:
        """Teach that ``query`` led to ``tool_name`` (the registry's ``learn``); whether kept.

        ``session``: the session that taught it (counted once; see ``LearnedHints``).
        """
        _check_query(query, "query")
        if tool_name not in self._tools:
            raise UnknownToolError(f"no tool named {tool_name!r} is registered")
        return self.hints.add(query, tool_name, session=session)

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
        now = self.hints
        try:
            text = where.read_text("utf-8")
        except UnicodeDecodeError as exc:
            raise LearnedFormatError(
                f"{where}: not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
        loaded = LearnedHints.from_json(
            text,
            where=str(where),
            min_sessions=now.min_sessions,
            word_cap=now.word_cap,
        )
        with self._lock:
            loaded.version = self.hints.version + 1
            self.hints = loaded
        return len(loaded)


#: What splits a request into the words ``OwnWords`` weighs one by one: anything not a
#: letter or digit, connectors included, so each word is one identifier of one part.
_NOT_WORD = re.compile(r"[\W_]+")


class OwnWords:
    """The words of a request a tool's own five texts reach (a ``Reach``, for one build).

    A word is kept when every index term it makes is one of the tool's own terms. So the
    learned text a session taught holds only terms the tool's own fields hold, and a
    request that matches it matches the tool without it: learning reorders the tools a
    request finds and never lifts one the request's words do not reach.
    """

    def __init__(
        self,
        texts: Callable[[str], StoredFields | None],
        tokens: Callable[[str], list[str]],
    ) -> None:
        """``texts`` gives a tool's stored texts by name (``None``: no such tool)."""
        self._texts = texts
        self._tokens = tokens
        self._own: dict[str, frozenset[str]] = {}

    def __call__(self, tool: str, request: str) -> list[str]:
        """The words of ``request``, in order, whose every term is one of ``tool``'s own."""
        own = self._own.get(tool)
        if own is None:
            stored = self._texts(tool)
            texts = unpack_fields(tool, stored) if stored is not None else ()
            own = self._own[tool] = frozenset(self._tokens("\n".join(texts)))
        kept = []
        for word in _NOT_WORD.split(request):
            terms = self._tokens(word) if word else []
            if terms and own.issuperset(terms):
                kept.append(word)
        return kept


def learned_texts(
    hints: LearnedHints,
    texts: Callable[[str], StoredFields | None],
    tokens: Callable[[str], list[str]],
) -> dict[str, str]:
    """Each taught tool's learned text, cut to the words its own texts reach.

    ``texts`` gives a tool's stored texts by name (read only for the tools taught);
    ``tokens`` is the index's analysis (:class:`OwnWords`).
    """
    return hints.texts(OwnWords(texts, tokens))


def with_learned(
    names: Sequence[str], fields: Sequence[StoredFields], learned: Mapping[str, str]
) -> list[IndexDoc]:
    """The documents to index of ``names``: each tool's texts, with ``learned``'s if any.

    The learned text is a sixth string after five, or the second of a pair after packed
    texts (``packed_fields``).
    """
    if not learned:
        return list(fields)
    return [_with_learned(f, learned[n]) if n in learned else f for n, f in zip(names, fields)]


def _with_learned(stored: StoredFields, learned: str) -> IndexDoc:
    """``stored`` texts with a learned text: six strings, or packed texts and the text."""
    if isinstance(stored, bytes):
        return (stored, learned)
    return (*stored, learned)


def _removed_leftovers(where: Path) -> None:
    """Remove the temporary files an unfinished write of ``where`` left, with a log line."""
    removed = remove_leftovers(where)
    if removed:
        _log.info("toolsurface: removed %d leftover temporary file(s) of %s", removed, where)


def _check_query(query: object, what: str) -> None:
    if not isinstance(query, str):
        raise TypeError(f"{what} must be a string, got {type(query).__name__}")
