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
from toolsurface.retrieval import pure
from toolsurface.retrieval.analysis import Analyzer, CharTable
from toolsurface.retrieval.resources import char_table_text, stopwords

__all__ = ["Backend", "IndexLike", "backend"]

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


@dataclass(frozen=True)
class Backend:
    """An engine's analyser and factories for its lexicons and indexes."""

    name: EngineName
    analyzer: Any

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
        analyzer = _native_or_raise().Analyzer(char_table_text(), list(stopwords()))
    elif chosen == "pure":
        analyzer = Analyzer(CharTable.parse(char_table_text()), stopwords())
    else:
        raise ValueError(f"engine must be 'native' or 'pure', got {name!r}")
    return Backend(chosen, analyzer)
