"""One face for both engines: build an analyser, a lexicon and an index of either kind.

The pure classes mirror the native module's API, so everything above this module is
engine-blind. Both engines can live in one process (the parity tests build both).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from toolsurface._engine import EngineName, engine, native_module
from toolsurface.errors import EngineUnavailableError
from toolsurface.models import ScoringArgs, SearchHit
from toolsurface.retrieval import pure
from toolsurface.retrieval.analysis import Analyzer, CharTable
from toolsurface.retrieval.fields import clean_text
from toolsurface.retrieval.resources import char_table_text, stopwords

__all__ = ["Backend", "IndexLike", "Searcher", "backend"]

FieldTexts = tuple[str, str, str, str, str]
Hits = tuple[list[int], list[float], bool]


class IndexLike(Protocol):
    """What the registry needs of an index, pure or native (see _native.pyi)."""

    def __len__(self) -> int: ...
    def vocabulary_size(self) -> int: ...
    def make_filter(self, ids: list[int]) -> Any: ...
    def query_terms(
        self, query: str, lexicon: Any, expansion_weight: float
    ) -> list[tuple[str, float]]: ...
    def search(
        self,
        query: str,
        k: int,
        weights: tuple[float, float, float, float, float],
        b: tuple[float, float, float, float, float],
        k1: float,
        expansion_weight: float,
        lexicon: Any = None,
        allowed: Any = None,
    ) -> Hits: ...
    def search_many(
        self,
        queries: list[str],
        k: int,
        weights: tuple[float, float, float, float, float],
        b: tuple[float, float, float, float, float],
        k1: float,
        expansion_weight: float,
        lexicon: Any = None,
        allowed: Any = None,
    ) -> list[Hits]: ...
    def explain(
        self,
        query: str,
        doc: int,
        weights: tuple[float, float, float, float, float],
        b: tuple[float, float, float, float, float],
        k1: float,
        expansion_weight: float,
        lexicon: Any,
        fallback: bool,
    ) -> list[tuple[str, float, list[float]]]: ...


class Searcher(Protocol):
    """A search bound to one index, settings value and lexicon; hits come back built."""

    def search(self, query: str, k: int) -> list[SearchHit]: ...
    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]: ...


class _BoundSearch:
    """The pure engine's ``Searcher``: the native one's contract, in Python."""

    def __init__(
        self, index: IndexLike, names: Sequence[str], args: ScoringArgs, lexicon: Any
    ) -> None:
        self._index, self._names, self._args, self._lexicon = index, list(names), args, lexicon

    def _hits(self, found: Hits) -> list[SearchHit]:
        ids, scores, fallback = found
        names, new = self._names, tuple.__new__
        return [
            new(SearchHit, (names[i], score, rank, fallback, None))
            for rank, (i, score) in enumerate(zip(ids, scores), 1)
        ]

    def search(self, query: str, k: int) -> list[SearchHit]:
        """The ``k`` best hits for ``query``, best first."""
        weights, b, k1, ew = self._args
        found = self._index.search(clean_text(query), k, weights, b, k1, ew, self._lexicon)
        return self._hits(found)

    def search_many(self, queries: list[str], k: int) -> list[list[SearchHit]]:
        """``search`` for each query, in order."""
        weights, b, k1, ew = self._args
        cleaned = [clean_text(q) for q in queries]
        found = self._index.search_many(cleaned, k, weights, b, k1, ew, self._lexicon)
        return [self._hits(f) for f in found]


@dataclass(frozen=True)
class Backend:
    """An engine's analyser and factories for its lexicons and indexes."""

    name: EngineName
    analyzer: Any
    #: The native core's ``tool_fields`` (field texts in one Rust pass, or ``None`` to leave
    #: a tool to Python's ``registry.tool_fields``); ``None`` for the pure engine.
    fields_walk: Any = None
    #: The native core's ``sort_by_name`` (``None`` for the pure engine): see ``by_name``.
    name_sort: Any = None

    def by_name(
        self, names: list[str], fields: list[FieldTexts]
    ) -> tuple[list[str], list[FieldTexts]]:
        """``names`` and their ``fields`` in name order, the order of an index's ids.

        The native sort orders copies of the names in one buffer: at 100,000 tools,
        ``sorted`` and a lookup per name wait on memory for about 120 ms of the build.
        """
        if self.name_sort is not None:
            done: tuple[list[str], list[FieldTexts]] | None = self.name_sort(names, fields)
            if done is not None:
                return done
        order = sorted(range(len(names)), key=names.__getitem__)
        return [names[i] for i in order], [fields[i] for i in order]

    def tokens(self, text: str) -> list[str]:
        """Index terms of ``text`` under this engine."""
        return list(self.analyzer.tokens(text))

    def lexicon(self, entries: Sequence[tuple[str, str]]) -> Any:
        """A compiled lexicon for this engine."""
        items = [(str(s), str(t)) for s, t in entries]
        if self.name == "native":
            return _native_or_raise().Lexicon(self.analyzer, items)
        return pure.PureLexicon(self.analyzer, items)

    def index(self, names: Sequence[str], fields: Sequence[FieldTexts]) -> IndexLike:
        """An index of the given documents (ids are positions in ``names``)."""
        if self.name == "native":
            idx: IndexLike = _native_or_raise().Index(self.analyzer, list(names), list(fields))
            return idx
        return pure.PureIndex(self.analyzer, names, fields)

    def searcher(
        self, index: IndexLike, names: Sequence[str], args: ScoringArgs, lexicon: Any
    ) -> Searcher:
        """``index`` bound to ``args`` and ``lexicon``, returning ``SearchHit`` lists.

        The native one is built in Rust (one call per search, hits made there); the pure
        one wraps ``index.search``. Queries must be clean text (see ``clean_text``).
        """
        if self.name == "native":
            weights, b, k1, ew = args
            bound: Searcher = index.searcher(  # type: ignore[attr-defined]
                list(names), SearchHit, weights, b, k1, ew, lexicon
            )
            return bound
        return _BoundSearch(index, names, args, lexicon)


def _native_or_raise() -> Any:
    mod = native_module()
    if mod is None:
        # The live engine may be pure while a test asks for native: try the import directly.
        try:
            from toolsurface import _native

            return _native
        except ImportError as exc:
            raise EngineUnavailableError(f"the native core is not available: {exc}") from exc
    return mod


@functools.cache
def backend(name: EngineName | None = None) -> Backend:
    """The backend of ``name``, or of the live engine when ``None``; built once."""
    chosen: EngineName = name or engine()
    if chosen == "native":
        native = _native_or_raise()
        # A native module built before ``tool_fields`` or ``sort_by_name`` existed leaves
        # that work to Python.
        walk = getattr(native, "tool_fields", None)
        name_sort = getattr(native, "sort_by_name", None)
        analyzer = native.Analyzer(char_table_text(), list(stopwords()))
        return Backend(chosen, analyzer, walk, name_sort)
    if chosen == "pure":
        analyzer = Analyzer(CharTable.parse(char_table_text()), stopwords())
    else:
        raise ValueError(f"engine must be 'native' or 'pure', got {name!r}")
    return Backend(chosen, analyzer)
