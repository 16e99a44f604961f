"""Typed stub of ``toolsurface._native``, the Rust engine (crates/toolsurface-py).

Field order everywhere: name, search_hint, summary, body, params. Errors in the input or
the settings raise ``ValueError``; an internal failure raises ``RuntimeError``.
Constructors are declared as ``__new__``: PyO3 classes are built there (``__init__`` is
``object``'s), and ``mypy.stubtest`` checks the stub against the runtime signatures.
"""

from collections.abc import Callable
from typing import Any, Final, final

__all__ = [
    "ALIASES_PRUNED_UP_TO",
    "ASK_MARKERS",
    "CONNECTORS",
    "ER_ROOTS",
    "FIELD_NAMES",
    "FILE_EXTENSIONS",
    "FUNCTION_WORDS",
    "FUZZY_MIN_CHARS",
    "FUZZY_MIN_SIMILARITY",
    "FUZZY_PER_TOKEN",
    "MIN_TOKEN_CHARS",
    "N_FIELDS",
    "PAYLOAD_WEIGHT",
    "READ_VERBS",
    "SETTINGS_CACHE",
    "SUBJECT_MARKERS",
    "WRITE_VERBS",
    "Aliases",
    "AnalysedDocs",
    "Analyzer",
    "BoostRules",
    "Filter",
    "Index",
    "Lexicon",
    "PlainSearch",
    "Searcher",
    "__version__",
    "copy_json",
    "read_snapshot",
    "read_verb_names",
    "sort_by_name",
    "tool_fields_packed",
]

__version__: str

# The core's constants (tests/test_consts.py pins each to the pure engine's).
#: Number of indexed fields.
N_FIELDS: Final[int]
#: Field names, in index order.
FIELD_NAMES: Final[tuple[str, str, str, str, str, str]]
#: Saturated-weight tables an index keeps (one per scoring settings value).
SETTINGS_CACHE: Final[int]
#: Query tokens and terms shorter than this never take part in the fallback.
FUZZY_MIN_CHARS: Final[int]
#: Dice similarity of trigram sets a fuzzy match needs.
FUZZY_MIN_SIMILARITY: Final[float]
#: Vocabulary terms a query token may bring in through the fallback.
FUZZY_PER_TOKEN: Final[int]
ALIASES_PRUNED_UP_TO: Final[int]
#: Query weight of a payload token (quoted text, the text after a colon) and of a number.
PAYLOAD_WEIGHT: Final[float]
#: Tokens shorter than this (in code points, after folding) are dropped.
MIN_TOKEN_CHARS: Final[int]
#: Characters that join the parts of one identifier.
CONNECTORS: Final[str]
#: The extensions that make a request's identifier a file name, weighed like the payload.
FILE_EXTENSIONS: Final[tuple[str, ...]]
#: Endings of English verbs whose "er" is the root's: no agent noun (consider, register).
ER_ROOTS: Final[tuple[str, ...]]
#: Words that open a request's ask after its context, which weighs as the payload.
ASK_MARKERS: Final[tuple[str, ...]]
#: Words that open the subject of a search, which weighs as the payload.
SUBJECT_MARKERS: Final[tuple[str, ...]]
FUNCTION_WORDS: Final[tuple[str, ...]]
READ_VERBS: Final[tuple[str, ...]]
WRITE_VERBS: Final[tuple[str, ...]]

#: Per-field values: five (the learned field's then 0) or six.
_PerField = tuple[float, ...]
_Hits = tuple[list[int], list[float], bool]

@final
class Analyzer:
    """Text analysis: character table and stopwords in, index terms out."""

    def __new__(cls, char_table: str, stopwords: list[str]) -> Analyzer: ...
    def tokens(self, text: str) -> list[str]:
        """Index terms of ``text`` in order."""
    def fold(self, text: str) -> str:
        """``text`` folded to lower case through the character table."""
    def asks(self, text: str, words: list[str]) -> bool:
        """Whether ``text`` asks (docs/analysis.md §10), ``words`` its question words."""

@final
class Lexicon:
    """Query expansion lexicon, compiled with an analyzer."""

    def __new__(cls, analyzer: Analyzer, entries: list[tuple[str, str]]) -> Lexicon: ...
    def __len__(self) -> int:
        """Number of distinct keys."""

@final
class Aliases:
    """Group names and aliases as analysed terms (``Index.mentions`` matches queries to them)."""

    def __new__(cls, entries: list[tuple[int, list[str]]]) -> Aliases: ...
    @staticmethod
    def analysed(analyzer: Analyzer, groups: list[int], texts: list[str]) -> Aliases:
        """Aliases from raw texts: ``texts[i]`` analysed, kept for group ``groups[i]``."""
    def __len__(self) -> int:
        """The number of aliases kept (empty ones and repeats left out)."""

@final
class Filter:
    """The set of document ids a search may return (made by ``Index.make_filter``)."""

@final
class AnalysedDocs:
    """Documents analysed by ``Index.analyse``, for one ``Index.assembled``."""

    def __len__(self) -> int:
        """Number of documents."""

@final
class Index:
    """The BM25F index over six fields.

    A document of ``fields`` is five or six strings (the learned field then empty); or packed
    texts (``tool_fields_packed``; the name, the first field, is ``names[i]``), alone or in a
    pair with the learned text. Another form is a ``TypeError``, malformed packed texts a
    ``ValueError``, each naming the document.
    """

    def __new__(
        cls,
        analyzer: Analyzer,
        names: list[str],
        fields: list[tuple[str, ...] | bytes | tuple[bytes, str]],
    ) -> Index: ...
    @staticmethod
    def analyse(
        analyzer: Analyzer,
        names: list[str],
        fields: list[tuple[str, ...] | bytes | tuple[bytes, str]],
        first: int = 0,
    ) -> AnalysedDocs:
        """The documents ``fields`` of ``names`` analysed for :meth:`assembled`.

        The interpreter is let go meanwhile; ``first`` (the first document's id in the
        whole catalogue) only numbers documents in errors.
        """
    @staticmethod
    def assembled(analyzer: Analyzer, names: list[str], parts: list[AnalysedDocs]) -> Index:
        """The index of ``names`` whose documents ``parts`` holds in order, each used once.

        The same index as ``Index(analyzer, names, fields)`` of the parts' documents.
        """
    def __len__(self) -> int:
        """Number of documents."""
    def with_learned(self, learned: list[str]) -> Index:
        """The index with document ``i``'s learned text made ``learned[i]``.

        The tools' own five fields are taken from the postings: what a build of their
        texts and ``learned`` makes, without the texts.
        """
    def vocabulary_size(self) -> int:
        """Number of distinct terms."""
    def memory_bytes(self) -> int:
        """Heap bytes of the index structures (not counting the settings cache)."""
    def digest(self) -> int:
        """A digest of every array of the index: equal for identical builds."""
    def make_filter(self, ids: list[int]) -> Filter:
        """A filter admitting the given document ids."""
    def query_language(self, query: str) -> str:
        """The language ``query`` is read in: a code, or ``latin`` (no one leader of the votes)."""
    def query_terms(
        self, query: str, lexicon: Lexicon | None, expansion_weight: float
    ) -> list[tuple[str, float]]:
        """Weighted query terms in order: the query's own, then lexicon expansions."""
    def mentions(
        self, query: str, lexicon: Lexicon | None, expansion_weight: float, aliases: Aliases
    ) -> list[int]:
        """The numbers of the groups ``query`` mentions, first mentioned first (§8)."""
    def search(
        self,
        query: str,
        k: int,
        weights: _PerField,
        b: _PerField,
        k1: float,
        expansion_weight: float,
        lexicon: Lexicon | None = None,
        allowed: Filter | None = None,
    ) -> _Hits:
        """The ``k`` best documents: ids and scores, best first, and whether the fallback ran."""
    def search_boosted(
        self,
        query: str,
        k: int,
        weights: _PerField,
        b: _PerField,
        k1: float,
        expansion_weight: float,
        lexicon: Lexicon | None = None,
        allowed: Filter | None = None,
        boosts: list[tuple[Filter, float]] = ...,
    ) -> _Hits:
        """``search`` with ``boosts`` (filters and factors): each hit times its factors."""
    def search_many(
        self,
        queries: list[str],
        k: int,
        weights: _PerField,
        b: _PerField,
        k1: float,
        expansion_weight: float,
        lexicon: Lexicon | None = None,
        allowed: Filter | None = None,
    ) -> list[_Hits]:
        """``search`` for each query, in parallel, detached from the interpreter."""
    def boost_rules(
        self,
        aliases: Aliases | None,
        member_ids: list[int],
        member_ends: list[int],
        read_only: list[int],
        question_words: list[str],
        mention_factor: float,
        question_factor: float,
    ) -> BoostRules:
        """The boost rules of a registry over this index (docs/analysis.md §8, §10).

        ``aliases`` numbers the groups as ``member_ends`` does: group ``g``'s document ids
        are ``member_ids`` from the previous group's end (0 for the first) to
        ``member_ends[g]``; ``read_only`` are the documents that only read; a factor of 1
        turns its rule off. ``ValueError`` for an id out of range, an end out of order or
        past the ids, or a factor below 1 or not finite.
        """
    def searcher(
        self,
        names: list[str],
        hit_type: type[tuple[Any, ...]],
        weights: _PerField,
        b: _PerField,
        k1: float,
        expansion_weight: float,
        lexicon: Lexicon | None,
        direct_hits: bool = True,
        rules: BoostRules | None = None,
    ) -> Searcher:
        """A bound search whose hits are ``hit_type(name, score, rank, fallback, None)``.

        ``names`` go in id order; ``ValueError`` when they do not match the documents.
        ``direct_hits``: make each hit as ``tuple.__new__`` would, without its generic call
        (the same hits, a fraction of the cost), where that is exact: CPython 3.10 to 3.13
        and a ``hit_type`` that ``tuple.__new__`` accepts with the generic allocator (any
        tuple subclass defined in Python). ``False`` always calls ``tuple.__new__``, as
        other interpreters and Python 3.14 and later do; ``Searcher.direct_hits`` says
        which path is in use.
        """
    def explain(
        self,
        query: str,
        doc: int,
        weights: _PerField,
        b: _PerField,
        k1: float,
        expansion_weight: float,
        lexicon: Lexicon | None,
        fallback: bool,
    ) -> list[tuple[str, float, list[float]]]:
        """Per matched term of ``doc``: the term, its query weight, each field's contribution."""

@final
class PlainSearch:
    """A registry's ``search`` whose plain calls (a query and ``k``) run no Python frame.

    ``full`` is ``ToolRegistry.search``: called with ``owner`` for every other call, and
    whenever ``owner``'s state is not that of its hot path (read in ``owner.__dict__``).
    """

    def __new__(
        cls, full: Callable[..., Any], owner: object, default_k: int, max_chars: int
    ) -> PlainSearch: ...
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        settings: Any = None,
        admitted: Any = None,
        explain: bool = False,
        retrievers: Any = None,
        fusion: Any = None,
    ) -> Any:
        """The ``k`` best tools for ``query`` (``ToolRegistry.search``, its signature)."""

@final
class Searcher:
    """A search bound to one index, settings value and lexicon, whose hits come back built.

    Made by ``Index.searcher``; the registry's hot path.
    """

    @property
    def direct_hits(self) -> bool:
        """Whether hits are made directly rather than through ``tuple.__new__`` (same hits).

        False once ``hit_type``'s bases are reassigned: ``tuple.__new__`` checks them again.
        """
    def search(self, query: str, k: int) -> list[Any]:
        """The ``k`` best hits for ``query``, best first, as ``hit_type`` instances.

        With boost rules bound, the request's mentions and question are found and applied
        in the same call.
        """
    def has_terms(self, query: str) -> bool:
        """Whether ``query`` has a term to search for (``Index.query_terms`` not empty)."""
    def search_in(self, query: str, k: int, allowed: Filter | None = None) -> list[Any]:
        """``search`` among the documents ``allowed`` admits (all when ``None``)."""
    def ranked(
        self, query: str, k: int, allowed: Filter | None = None
    ) -> tuple[list[int], list[float], bool, list[float]]:
        """``search_in`` as ids, scores, whether it fell back, and each hit's boost factor."""
    def search_many(
        self, queries: list[str], k: int, allowed: Filter | None = None
    ) -> list[list[Any]]:
        """``search_in`` for each query, in parallel, detached from the interpreter."""

@final
class BoostRules:
    """A registry's boost rules over one index (made by ``Index.boost_rules``)."""

def tool_fields_packed(
    name: str, search_hint: str, description: str, input_schema: object, max_chars: int
) -> bytes | None:
    """``registry.tool_fields`` of a tool in one pass, packed, or ``None`` to leave it to Python.

    Packed as ``retrieval/packed_fields.py`` says: every field but the name (the tool's own).

    Declines what Python must decide: a subclass of ``str`` or ``dict``, a mapping that is no
    plain dict, any other non-JSON value where the walk looks for a mapping (a tuple), a
    property name that is no ``str``, a lone surrogate, a field over ``max_chars``
    characters, a first sentence whose end turns on a character other than ASCII, Latin-1
    letters and basic Cyrillic.
    """

def copy_json(value: object) -> Any | None:
    """A deep copy of plain JSON data (new dicts and lists, same leaves), or ``None``.

    Shared parts and cycles stay shared, as in a pickle round trip. ``None`` leaves the value
    to Python's copy: a type other than ``dict``, ``list``, ``str``, ``int``, ``float``,
    ``bool`` and ``None`` (subclasses included), a key that is no ``str``, nesting past 192
    levels.
    """

def read_snapshot(
    text: str,
) -> (
    tuple[
        list[str] | None,
        int,
        list[str],
        list[tuple[bool, list[str], str, str, int, str, int]],
        str,
        int,
        list[str],
        str | None,
        str,
    ]
    | None
):
    """A current-version surface snapshot's fields in key order, rows as tuples, or ``None``.

    Accepts only what ``SurfaceSnapshot`` accepts, with the same values (a key given twice
    counts as its last); ``None`` leaves the text to the model, whose errors name the field:
    another version, a field out of bounds, rows that disagree, a lone surrogate.
    """

def read_verb_names(names: list[str]) -> list[int] | None:
    """Positions of the names whose verb (``retrieval.analysis.reading.name_verb``) reads.

    ``None`` leaves the list to Python: a name that is no plain ``str`` or has a lone
    surrogate. The names are read without the interpreter's lock, from a copy.
    """

def sort_by_name(names: list[str], values: list[Any]) -> tuple[list[str], list[Any]] | None:
    """``names`` and ``values`` reordered as ``sorted(names)`` orders the names, or ``None``.

    Equal names keep their order. ``None`` leaves the sort to Python: a name that is no plain
    ``str`` or has a lone surrogate. Lists of different lengths are a ``ValueError``. A
    non-ASCII name keeps the UTF-8 form it was read in (CPython's cache, as any UTF-8 read
    leaves it); tool names are ASCII.
    """
