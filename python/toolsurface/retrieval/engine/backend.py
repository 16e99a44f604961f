"""One face for both engines: the ``Backend`` protocol, with a native and a pure class.

The engine is chosen once, by :func:`backend`; the pure classes mirror the native module's
API, so everything above this module is engine-blind. Both engines can live in one process
(the parity tests build both).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from toolsurface._engine import EngineName, engine, native_module
from toolsurface.errors import EngineUnavailableError
from toolsurface.models import ScoringArgs, SearchHit, Tool
from toolsurface.retrieval.analysis.analyzer import Analyzer, CharTable
from toolsurface.retrieval.analysis.reading import READ_VERBS, name_verb
from toolsurface.retrieval.engine import pure
from toolsurface.retrieval.engine.alias_match import PureAliases
from toolsurface.retrieval.engine.parts import index_in_parts
from toolsurface.retrieval.engine.pure_rules import PureBoostRules
from toolsurface.retrieval.engine.ranking import Hits, boost_factor
from toolsurface.retrieval.field_texts import IndexTexts, tool_fields
from toolsurface.retrieval.fields import FIELD_MAX_CHARS, clean_text
from toolsurface.retrieval.packed_fields import IndexDoc, StoredFields, pack_fields
from toolsurface.retrieval.resources import char_table_text, stopwords

#: What a name is sorted with: a tool, or its texts.
_V = TypeVar("_V")

__all__ = [
    "Backend",
    "IndexLike",
    "NativeBackend",
    "PureBackend",
    "Ranked",
    "Searcher",
    "backend",
]


class IndexLike(Protocol):
    """What the registry needs of an index, pure or native (see _native.pyi)."""

    def __len__(self) -> int: ...
    def vocabulary_size(self) -> int: ...
    def make_filter(self, ids: list[int]) -> Any: ...
    def query_language(self, query: str) -> str: ...
    def query_terms(
        self, query: str, lexicon: Any, expansion_weight: float
    ) -> list[tuple[str, float]]: ...
    def mentions(
        self, query: str, lexicon: Any, expansion_weight: float, aliases: Any
    ) -> list[int]: ...
    def search(
        self,
        query: str,
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: Any = None,
        allowed: Any = None,
    ) -> Hits: ...
    def search_boosted(
        self,
        query: str,
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: Any = None,
        allowed: Any = None,
        boosts: Sequence[tuple[Any, float]] = (),
    ) -> Hits: ...
    def search_many(
        self,
        queries: list[str],
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: Any = None,
        allowed: Any = None,
    ) -> list[Hits]: ...
    def explain(
        self,
        query: str,
        doc: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: Any,
        fallback: bool,
    ) -> list[tuple[str, float, list[float]]]: ...


#: A ranking with each hit's boost factor: ids, scores, whether it fell back, factors.
Ranked = tuple[list[int], list[float], bool, list[float]]


class Searcher(Protocol):
    """A search bound to one index, settings value, lexicon and boost rules (if any).

    Every method applies the rules (mentions, questions) in the same engine call; hits come
    back built. ``allowed`` is an index filter (``None``: every document).
    """

    def search(self, query: str, k: int) -> list[SearchHit]: ...
    def has_terms(self, query: str) -> bool: ...
    def search_in(self, query: str, k: int, allowed: Any = None) -> list[SearchHit]: ...
    def ranked(self, query: str, k: int, allowed: Any = None) -> Ranked: ...
    def search_many(
        self, queries: list[str], k: int, allowed: Any = None
    ) -> list[list[SearchHit]]: ...


class _BoundSearch:
    """The pure engine's ``Searcher``: the native one's contract, in Python."""

    def __init__(
        self,
        index: IndexLike,
        names: Sequence[str],
        args: ScoringArgs,
        lexicon: Any,
        rules: PureBoostRules | None = None,
    ) -> None:
        self._index, self._names, self._args, self._lexicon = index, list(names), args, lexicon
        self._rules = rules

    def _hits(self, found: Hits) -> list[SearchHit]:
        ids, scores, fallback = found
        names, new = self._names, tuple.__new__
        return [
            new(SearchHit, (names[i], score, rank, fallback, None))
            for rank, (i, score) in enumerate(zip(ids, scores), 1)
        ]

    def ranked(self, query: str, k: int, allowed: Any = None) -> Ranked:
        """The ``k`` best of ``query`` among ``allowed``, boosted by the rules, with factors."""
        weights, b, k1, ew = self._args
        index, lexicon, rules, q = self._index, self._lexicon, self._rules, clean_text(query)
        if rules is None:
            ids, scores, fallback = index.search(q, k, weights, b, k1, ew, lexicon, allowed)
            return ids, scores, fallback, [1.0] * len(ids)
        rules.check(index)  # type: ignore[arg-type]
        boosts = rules.found(index, q, lexicon, ew, allowed)  # type: ignore[arg-type]
        ids, scores, fallback = index.search_boosted(
            q, k, weights, b, k1, ew, lexicon, allowed, boosts
        )
        members = [(f.ids, factor) for f, factor in boosts]
        return ids, scores, fallback, [boost_factor(i, members) for i in ids]

    def has_terms(self, query: str) -> bool:
        """Whether ``query`` has a term to search for that is not only a function word's."""
        ew = self._args[3]
        # The pure engine's searcher binds the pure index, which has ``has_content``.
        index: Any = self._index
        return bool(index.has_content(clean_text(query), self._lexicon, ew))

    def search_in(self, query: str, k: int, allowed: Any = None) -> list[SearchHit]:
        """The ``k`` best hits for ``query`` among ``allowed``, best first."""
        return self._hits(self.ranked(query, k, allowed)[:3])

    def search(self, query: str, k: int) -> list[SearchHit]:
        """The ``k`` best hits for ``query``, best first."""
        return self.search_in(query, k)

    def search_many(self, queries: list[str], k: int, allowed: Any = None) -> list[list[SearchHit]]:
        """``search_in`` for each query, in order."""
        return [self.search_in(q, k, allowed) for q in queries]


class Backend(Protocol):
    """An engine: its analyser and factories for its lexicons, indexes and searches.

    :class:`NativeBackend` and :class:`PureBackend` implement it; :func:`backend` picks one
    once, and nothing above this module asks which engine it has.
    """

    @property
    def name(self) -> EngineName: ...
    @property
    def analyzer(self) -> Any: ...
    def tokens(self, text: str) -> list[str]:
        """Index terms of ``text`` under this engine."""
        ...

    def fields(self, tool: Tool, reported: dict[str, Tool] | None = None) -> StoredFields:
        """The five indexed field texts of ``tool`` (``field_texts.tool_fields``), as indexed.

        ``packed_fields.unpack_fields`` gives the five back whatever the form; ``reported``
        is as ``tool_fields`` takes it.
        """
        ...

    def by_name(self, names: list[str], values: list[_V]) -> tuple[list[str], list[_V]]:
        """``names`` and their ``values`` (tools, or texts) in the order of an index's ids."""
        ...

    def read_verb_names(self, names: list[str]) -> list[int]:
        """Positions of the names that open with a reading verb (``analysis.reading``)."""
        ...

    def lexicon(self, entries: Sequence[tuple[str, str]]) -> Any:
        """A compiled lexicon for this engine."""
        ...

    def aliases(self, groups: Sequence[int], texts: Sequence[str]) -> Any:
        """Compiled group aliases for ``mentions``: ``texts[i]`` analysed, for ``groups[i]``.

        ``None`` when no text has an index term (no alias can be mentioned).
        """
        ...

    def index(self, names: Sequence[str], fields: Sequence[IndexDoc]) -> IndexLike:
        """An index of the given documents (ids are positions in ``names``).

        A document is a tool's texts as :meth:`fields` made them, or those and its learned
        text (``learning.with_learned``).
        """
        ...

    def index_in_parts(
        self, names: Sequence[str], part: Callable[[int, int], list[IndexDoc]]
    ) -> IndexLike:
        """:meth:`index` of ``names``, whose documents ``part(lo, hi)`` makes a part at a time.

        ``part(lo, hi)`` is the documents of ``names[lo:hi]``, asked in order. The native
        engine analyses each part while the next is made (``parts.py``); the pure one makes
        them all, then indexes them.
        """
        ...

    @property
    def relearns(self) -> bool:
        """Whether :meth:`relearned` can replace an index's learned texts in place."""
        ...

    def relearned(self, index: IndexLike, learned: list[str]) -> IndexLike:
        """``index`` with document ``i``'s learned text made ``learned[i]``.

        Its tools' own texts are taken from the index, as a build of them and ``learned``
        would index them; only where :attr:`relearns`.
        """
        ...

    def rules(
        self,
        index: IndexLike,
        aliases: Any,
        member_ids: Sequence[int],
        member_ends: Sequence[int],
        read_only: Sequence[int],
        question_words: Sequence[str],
        mention_factor: float,
        question_factor: float,
    ) -> Any:
        """The boost rules of a registry over ``index`` (``BoostRules`` of this engine).

        ``aliases`` (compiled by :meth:`aliases`, or ``None``) numbers the groups as
        ``member_ends`` does: group ``g``'s document ids are ``member_ids`` from the end of
        group ``g - 1`` (0 for the first) to ``member_ends[g]``. A factor of 1 turns its rule
        off.
        """
        ...

    def searcher(
        self,
        index: IndexLike,
        names: Sequence[str],
        args: ScoringArgs,
        lexicon: Any,
        rules: Any = None,
    ) -> Searcher:
        """``index`` bound to ``args``, ``lexicon`` and ``rules``, returning ``SearchHit`` lists.

        Queries must be clean text (see ``clean_text``).
        """
        ...

    def plain_search(
        self, full: Callable[..., Any], owner: object, default_k: int, max_chars: int
    ) -> Callable[..., Any] | None:
        """``owner``'s ``full`` (``ToolRegistry.search``) with its hot path in the engine.

        The native engine answers a plain call (a query and ``k``) without a Python frame,
        making ``full``'s hot-path checks on ``owner``'s state, and calls ``full`` for
        everything else; ``None`` where the engine has no such path (the pure one).
        """
        ...


def _sorted_by_name(names: list[str], values: list[_V]) -> tuple[list[str], list[_V]]:
    order = sorted(range(len(names)), key=names.__getitem__)
    return [names[i] for i in order], [values[i] for i in order]


def _read_verb_names(names: list[str]) -> list[int]:
    return [i for i, n in enumerate(names) if name_verb(n) in READ_VERBS]


@dataclass(frozen=True)
class PureBackend:
    """The pure-Python engine (``retrieval/pure.py``): the reference."""

    analyzer: Analyzer

    @property
    def name(self) -> EngineName:
        return "pure"

    def tokens(self, text: str) -> list[str]:
        return list(self.analyzer.tokens(text))

    def fields(self, tool: Tool, reported: dict[str, Tool] | None = None) -> StoredFields:
        return tool_fields(tool, reported)

    def by_name(self, names: list[str], values: list[_V]) -> tuple[list[str], list[_V]]:
        return _sorted_by_name(names, values)

    def read_verb_names(self, names: list[str]) -> list[int]:
        return _read_verb_names(names)

    def lexicon(self, entries: Sequence[tuple[str, str]]) -> Any:
        return pure.PureLexicon(self.analyzer, [(str(s), str(t)) for s, t in entries])

    def aliases(self, groups: Sequence[int], texts: Sequence[str]) -> Any:
        tokens = self.analyzer.tokens
        table = PureAliases([(g, tokens(text)) for g, text in zip(groups, texts, strict=True)])
        return table if table else None

    def index(self, names: Sequence[str], fields: Sequence[IndexDoc]) -> IndexLike:
        # This backend's ``fields`` are the five strings, never packed.
        return pure.PureIndex(self.analyzer, names, cast(Sequence[IndexTexts], fields))

    def index_in_parts(
        self, names: Sequence[str], part: Callable[[int, int], list[IndexDoc]]
    ) -> IndexLike:
        return self.index(names, part(0, len(names)))

    @property
    def relearns(self) -> bool:
        return False  # the reference builds again from the tools' texts

    def relearned(self, index: IndexLike, learned: list[str]) -> IndexLike:
        raise NotImplementedError("the pure engine builds again; see relearns")

    def rules(
        self,
        index: IndexLike,
        aliases: Any,
        member_ids: Sequence[int],
        member_ends: Sequence[int],
        read_only: Sequence[int],
        question_words: Sequence[str],
        mention_factor: float,
        question_factor: float,
    ) -> Any:
        members, start = [], 0
        for g, end in enumerate(member_ends):
            if not start <= end <= len(member_ids):
                raise ValueError(
                    f"member_ends[{g}] = {end}: not between the previous end {start} and "
                    f"the {len(member_ids)} member ids"
                )
            members.append(member_ids[start:end])
            start = end
        return PureBoostRules(
            index,  # type: ignore[arg-type]
            aliases,
            members,
            read_only,
            question_words,
            mention_factor,
            question_factor,
        )

    def searcher(
        self,
        index: IndexLike,
        names: Sequence[str],
        args: ScoringArgs,
        lexicon: Any,
        rules: Any = None,
    ) -> Searcher:
        return _BoundSearch(index, names, args, lexicon, rules)

    def plain_search(
        self, full: Callable[..., Any], owner: object, default_k: int, max_chars: int
    ) -> Callable[..., Any] | None:
        return None  # the Python method is this engine's hot path


@dataclass(frozen=True)
class NativeBackend:
    """The native (Rust) engine, ``toolsurface._native``."""

    analyzer: Any
    native: Any
    #: The native core's ``tool_fields_packed`` (field texts in one Rust pass, packed, or
    #: ``None`` to leave a tool to the Python reference); ``None`` when the module predates
    #: it, and then the texts are made as tuples, the form such a module's index reads.
    fields_walk: Any = None
    #: The native core's ``sort_by_name`` (``None`` when the module predates it).
    name_sort: Any = None
    #: The native core's ``read_verb_names`` (``None`` when the module predates it).
    verbs: Any = None

    @property
    def name(self) -> EngineName:
        return "native"

    def tokens(self, text: str) -> list[str]:
        return list(self.analyzer.tokens(text))

    def fields(self, tool: Tool, reported: dict[str, Tool] | None = None) -> StoredFields:
        """The Rust pass's texts, packed; or the Python reference's for what it declines.

        It declines what needs Python (subclasses, non-dict mappings, lone surrogates, long
        fields, rare characters at a sentence's end).
        """
        walk = self.fields_walk
        if walk is None:
            return tool_fields(tool, reported)
        packed: bytes | None = walk(
            tool.name, tool.search_hint, tool.description, tool.input_schema, FIELD_MAX_CHARS
        )
        return packed if packed is not None else pack_fields(tool_fields(tool, reported))

    def by_name(self, names: list[str], values: list[_V]) -> tuple[list[str], list[_V]]:
        """The native sort orders copies of the names in one buffer.

        At 100,000 tools, ``sorted`` and a lookup per name wait on memory for about 120 ms
        of the build.
        """
        if self.name_sort is not None:
            done: tuple[list[str], list[_V]] | None = self.name_sort(names, values)
            if done is not None:
                return done
        return _sorted_by_name(names, values)

    def read_verb_names(self, names: list[str]) -> list[int]:
        """One Rust pass over all the names (a regular expression per name in Python)."""
        if self.verbs is not None:
            found: list[int] | None = self.verbs(names)
            if found is not None:
                return found
        return _read_verb_names(names)

    def lexicon(self, entries: Sequence[tuple[str, str]]) -> Any:
        return self.native.Lexicon(self.analyzer, [(str(s), str(t)) for s, t in entries])

    def aliases(self, groups: Sequence[int], texts: Sequence[str]) -> Any:
        """One native call analyses and compiles every alias (no lists of terms in Python)."""
        table = self.native.Aliases.analysed(self.analyzer, list(groups), list(texts))
        return table if len(table) else None

    def index(self, names: Sequence[str], fields: Sequence[IndexDoc]) -> IndexLike:
        idx: IndexLike = self.native.Index(self.analyzer, list(names), list(fields))
        return idx

    def index_in_parts(
        self, names: Sequence[str], part: Callable[[int, int], list[IndexDoc]]
    ) -> IndexLike:
        """A large catalogue is analysed a part at a time (``parts.py``)."""
        if not hasattr(self.native.Index, "assembled"):  # a module built before it
            return self.index(names, part(0, len(names)))
        idx: IndexLike = index_in_parts(self.native.Index, self.analyzer, names, part)
        return idx

    @property
    def relearns(self) -> bool:
        """A module built before ``Index.with_learned`` builds again from the texts."""
        return hasattr(self.native.Index, "with_learned")

    def relearned(self, index: IndexLike, learned: list[str]) -> IndexLike:
        """One native call: the learned texts analysed, merged with the index's postings."""
        idx: IndexLike = index.with_learned(learned)  # type: ignore[attr-defined]
        return idx

    def rules(
        self,
        index: IndexLike,
        aliases: Any,
        member_ids: Sequence[int],
        member_ends: Sequence[int],
        read_only: Sequence[int],
        question_words: Sequence[str],
        mention_factor: float,
        question_factor: float,
    ) -> Any:
        return index.boost_rules(  # type: ignore[attr-defined]
            aliases,
            list(member_ids),
            list(member_ends),
            list(read_only),
            list(question_words),
            mention_factor,
            question_factor,
        )

    def searcher(
        self,
        index: IndexLike,
        names: Sequence[str],
        args: ScoringArgs,
        lexicon: Any,
        rules: Any = None,
    ) -> Searcher:
        """Built in Rust: one call per search, the rules applied and the hits made there."""
        weights, b, k1, ew = args
        bound: Searcher = index.searcher(  # type: ignore[attr-defined]
            list(names), SearchHit, weights, b, k1, ew, lexicon, rules=rules
        )
        return bound

    def plain_search(
        self, full: Callable[..., Any], owner: object, default_k: int, max_chars: int
    ) -> Callable[..., Any] | None:
        """``PlainSearch``'s method (``None`` when the module predates it)."""
        made = getattr(self.native, "PlainSearch", None)
        if made is None:
            return None
        found: Callable[..., Any] = made(full, owner, default_k, max_chars).search
        return found


def _native_or_raise() -> Any:
    mod = native_module()
    if mod is None:
        # The live engine may be pure while a test asks for native: try the import directly.
        try:
            import toolsurface._native as _native

            return _native
        except ImportError as exc:
            raise EngineUnavailableError(f"the native core is not available: {exc}") from exc
    return mod


def _native_backend() -> NativeBackend:
    native = _native_or_raise()
    # A native module built before ``tool_fields_packed``, ``sort_by_name`` or ``read_verb_names``
    # existed leaves that work to Python.
    return NativeBackend(
        analyzer=native.Analyzer(char_table_text(), list(stopwords())),
        native=native,
        fields_walk=getattr(native, "tool_fields_packed", None),
        name_sort=getattr(native, "sort_by_name", None),
        verbs=getattr(native, "read_verb_names", None),
    )


def _pure_backend() -> PureBackend:
    return PureBackend(Analyzer(CharTable.parse(char_table_text()), stopwords()))


_MAKERS: dict[str, Callable[[], Backend]] = {"native": _native_backend, "pure": _pure_backend}


@functools.cache
def backend(name: EngineName | None = None) -> Backend:
    """The backend of ``name``, or of the live engine when ``None``; built once."""
    make = _MAKERS.get(name or engine())
    if make is None:
        raise ValueError(f"engine must be 'native' or 'pure', got {name!r}")
    return make()
