"""A drop-in retriever for hosts that rank their own documents: ``rank(query, docs, limit)``.

A host built like protocore asks its retriever for ``rank(query, documents, limit)``: the
names of the best documents, best first, where each document carries ``name``,
``description``, ``search_hint`` and ``parameters`` (the parameters' names and descriptions
flattened to one text). toolsurface's own :class:`~toolsurface.HostRanker` takes names
instead (``rank(query, names, k)``), so such a host had to write a wrapper, and a naive one
(hash the documents, rebuild a registry when they change) paid for the hash on every call
and refused any name outside MCP's alphabet with a raw pydantic error.

:class:`DocumentRetriever` is that wrapper done once: it keeps its index across calls, tells
an unchanged catalogue from a changed one cheaply, takes any name the host uses (and names
several documents share), and gives the rankings
:meth:`ToolRegistry.search <toolsurface.ToolRegistry.search>` gives over the equivalent
tools. It is itself a :class:`~toolsurface.DocumentRanker`, so a registry takes it as one of
its ``retrievers``.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter, eq, itemgetter
from typing import Any, Literal

from toolsurface.errors import ToolDefinitionError
from toolsurface.models import (
    MAX_DESCRIPTION_CHARS,
    TOOL_NAME_PATTERN,
    RetrievalSettings,
    SearchHit,
    Tool,
)
from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry

__all__ = ["DOCUMENT_FIELDS", "DocumentRetriever"]

_log = logging.getLogger("toolsurface")

#: The attributes (or mapping keys) a document is read by, in the order rows hold them.
DOCUMENT_FIELDS = ("name", "description", "search_hint", "parameters")
_BY_ATTRIBUTE = attrgetter(*DOCUMENT_FIELDS)
_BY_KEY = itemgetter(*DOCUMENT_FIELDS)
_NAME_OF_HIT = itemgetter(0)  # SearchHit is a named tuple; its name is item 0

#: Longest internal name (MCP's rule, which ``Tool`` enforces).
_ALIAS_MAX = 128
#: Decimal digits of the hash that tells apart aliases that would collide: a run of digits
#: is one index term, where hex would split into letter and digit parts (``3fa9`` -> 3, fa, 9).
_HASH_DIGITS = 8
_NOT_NAME_CHARS = re.compile(r"[^A-Za-z0-9_.\-]+")
_SURROGATES = re.compile("[\ud800-\udfff]")


def _hint_max() -> int:
    """``Tool``'s own cap on ``search_hint``, read from the model so a change follows it."""
    for rule in Tool.model_fields["search_hint"].metadata:
        limit = getattr(rule, "max_length", None)
        if isinstance(limit, int):
            return limit
    return 4096


_HINT_MAX = _hint_max()

Row = tuple[Any, Any, Any, Any]
EngineName = Literal["native", "pure"]


@dataclass(frozen=True)
class _State:
    """One catalogue's index, replaced whole: a search holds one and never sees half of two.

    ``source`` is the sequence it was last confirmed for (kept referenced, so its ``id``
    cannot be reused by another list) and ``length`` its length then; ``rows`` the raw field
    values read from it, the fingerprint a new sequence is compared with.
    """

    source: Sequence[Any] | None
    length: int
    rows: list[Row]
    registry: ToolRegistry
    size: int
    #: internal name -> host name, or ``None`` when every host name is its own internal name.
    host_names: dict[str, str] | None
    #: ``registry.search``, bound once: the hot path makes no bound method per call.
    search: Callable[[str, int], list[SearchHit]]


class DocumentRetriever:
    """``rank(query, documents, limit)`` over a host's documents, BM25F as toolsurface ranks.

    A document is any object with the attributes ``name``, ``description``, ``search_hint``
    and ``parameters`` (a dataclass, a named tuple, a plain object) or a mapping with those
    keys (read by key; anything that is not a :class:`~collections.abc.Mapping` is read by
    attribute). ``search_hint`` is indexed as the tool's hint field, ``parameters`` (the
    host's flattened parameter names and descriptions) as its parameters field, the
    description as summary and body as for any tool. A missing or ``None`` field is empty
    text, except ``name``, which every document needs; a field that is not a string is a
    ``TypeError`` naming the document (its index and name) and the field.

    ``rank`` returns the host's own names, best first, ties in the order of the internal
    names (which is the names' order when every name already fits MCP's rule):

    >>> from toolsurface.adapters.documents import DocumentRetriever
    >>> docs = [
    ...     {"name": "fs:read_file", "description": "Read a file from disk.",
    ...      "parameters": "path The file to read"},
    ...     {"name": "web/search", "description": "Search the web.",
    ...      "search_hint": "google lookup"},
    ... ]
    >>> retriever = DocumentRetriever()
    >>> retriever.rank("read the file at this path", docs, 5)
    ['fs:read_file']
    >>> retriever.rank("найди в google", docs, 5)
    ['web/search']
    >>> retriever.rank("read", docs, 0)
    []

    **When it rebuilds.** The index is kept across calls. The same sequence object as the
    last call, with the same length, is taken as unchanged without reading a document: a
    list changed in place at the same length (a document replaced, or a document's field
    changed) must be passed as a new sequence, or :meth:`invalidate` called first. Any
    other sequence has its four fields read from every document and compared with the
    last catalogue's; equal values (a new list of the same or equal documents) keep the
    index, and only a difference rebuilds it. :attr:`builds` counts the rebuilds.

    **Names.** Any string is a name (``ns:weird/name``, spaces, Cyrillic, 300 characters,
    the empty string). A name that fits MCP's rule (1 to 128 of ``[A-Za-z0-9_.-]``) is its
    own internal name. Any other is given an internal alias: each run of other characters
    becomes ``_`` (``ns:weird/name`` -> ``ns_weird_name``, whose terms are the name's
    ``ns``, ``weird``, ``name`` plus the joined ``nsweirdnam``: an alias is one identifier),
    the empty name ``_`` (no terms, as the name has none); an alias over 128 characters, or
    one that another document's name or alias already is, keeps its first 119 characters
    and ends with ``_`` and 8 digits of a hash of the host's name (one more term, a number),
    so aliases depend on the set of names, not on the documents' order. A name whose words
    the alias cannot carry (letters or digits outside ASCII, or a cut) is also appended to
    the document's hint, so it stays findable by them. ``rank`` maps every alias back; the
    host never sees one.

    **Duplicates.** A name may be given by several documents, as protocore's host allows
    (a catalogue of bare tool names repeats some: 1,592 distinct among 1,635 tools). Each
    document is ranked as the host gave it, on its own fields, as a document of its own
    (it counts in every term's document frequency), and ``rank`` answers, as protocore's
    own ranker does, with the name of each matching document, best first: a name given
    twice can come back twice, once at each of its documents' places, and ``limit`` counts
    documents. (protocore's fusion, and toolsurface's, count a repeated name at its best
    place; ``list(dict.fromkeys(ranked))`` gives each name once.) Inside the index the later
    documents of a name carry it with trailing underscores, which add no index term, so two
    documents with the same fields score alike and tie in the host's order.

    ``engine``, ``lexicon`` and ``settings`` are passed to the :class:`~toolsurface.ToolRegistry`
    it keeps (a custom lexicon is compiled again at each rebuild). ``rank`` is safe to call
    from several threads: rebuilds take a lock, and a search uses the index it started with.
    """

    def __init__(
        self,
        *,
        engine: EngineName | None = None,
        lexicon: Any = DEFAULT_LEXICON,
        settings: RetrievalSettings | None = None,
    ) -> None:
        # A host's lexicon is read once: a generator would be empty at the second rebuild.
        self._lexicon = lexicon if lexicon is DEFAULT_LEXICON or lexicon is None else list(lexicon)
        self._engine = engine
        self._settings = settings
        self._lock = threading.Lock()
        self._builds = 0
        # The empty catalogue, built now so a bad engine, lexicon or settings fails here.
        empty = self._registry([])
        self._state = _State(None, 0, [], empty, 0, None, empty.search)

    @property
    def builds(self) -> int:
        """How many times the index was rebuilt for a changed catalogue."""
        return self._builds

    @property
    def engine(self) -> EngineName:
        """The engine the index searches with."""
        return self._state.registry.engine

    def internal_names(self) -> dict[str, str]:
        """Host name -> internal name, for the last catalogue's names that needed an alias.

        A name given by several documents maps to its first document's internal name (the
        later ones add trailing underscores to it).

        For reading toolsurface's own log lines, which name a tool by its internal name.
        """
        back = self._state.host_names
        if back is None:
            return {}
        first: dict[str, str] = {}
        for alias, name in back.items():  # in the documents' order: a name's first one wins
            first.setdefault(name, alias)
        return {n: a for n, a in first.items() if a != n}

    def invalidate(self) -> None:
        """Forget which sequence the index was built from (not the index itself).

        Call it after changing the last list in place, or a document in it, when passing
        that list again: the next ``rank`` then compares every document's fields and
        rebuilds only if one differs.
        """
        with self._lock:
            self._state = replace(self._state, source=None)

    def rank(self, query: str, documents: Sequence[Any], limit: int) -> list[str]:
        """The names of up to ``limit`` documents matching ``query``, best first.

        ``limit`` of 0 or less gives ``[]``; one past the catalogue's size gives every
        matching document. A document that matches no term of the query is not returned, so
        an empty or blank query gives ``[]``. A name several documents share comes back once
        for each of them that matches, at its place (see **Duplicates** above).
        """
        state = self._state
        # The unchanged catalogue's whole check: one identity and one length.
        if documents is not state.source or len(documents) != state.length:
            state = self._refresh(documents)
        if type(limit) is not int or type(query) is not str:
            limit = _checked(query, limit)
        if limit <= 0 or not query or query.isspace():
            return []  # a blank query matches no document (protocore's ranker: none either)
        size = state.size
        hits = state.search(query, limit if limit < size else size)
        if hits and hits[0].score == 0.0 and not state.registry.terms(query):
            # The registry answers a query with no terms ("the", "?!") with its first tools
            # unranked; protocore's ranker matches no document, so neither does this one.
            return []
        back = state.host_names
        if back is None:
            return list(map(_NAME_OF_HIT, hits))
        return [back[hit[0]] for hit in hits]

    # -- the catalogue ---------------------------------------------------------------------

    def _refresh(self, documents: Sequence[Any]) -> _State:
        """The state for ``documents``: the last one if its content is the same, else new."""
        if not isinstance(documents, Sequence) or isinstance(documents, str | bytes):
            raise TypeError(
                f"documents must be a sequence (a list or tuple), got {type(documents).__name__}"
            )
        with self._lock:
            state = self._state
            if documents is state.source and len(documents) == state.length:
                return state  # another thread confirmed it while this one waited
            if _same_rows(documents, state.rows):
                state = replace(state, source=documents, length=len(state.rows))
            else:
                state = self._build(documents, _rows(documents))
            self._state = state
            return state

    def _build(self, documents: Sequence[Any], rows: list[Row]) -> _State:
        names: list[str] = []
        texts: list[tuple[str, str, str]] = []
        for i, row in enumerate(rows):
            name, description, hint, parameters = row
            if not (
                type(name) is str
                and type(description) is str
                and type(hint) is str
                and type(parameters) is str
            ):
                name, description, hint, parameters = (
                    _text(i, row[0], f, v) for f, v in zip(DOCUMENT_FIELDS, row)
                )
            if row[0] is None:
                kind = type(documents[i]).__name__
                raise TypeError(
                    f"document {i} (a {kind}): field 'name' is missing or None: "
                    "every document needs a name"
                )
            names.append(name)
            texts.append((description, hint, parameters))
        aliases = _aliases(names)
        for i, (name, alias) in enumerate(zip(names, aliases)):
            if alias != name and _loses_words(name, alias):
                description, hint, parameters = texts[i]
                texts[i] = (description, f"{hint}\n{name}" if hint else name, parameters)
        tools = (
            _tool(i, name, alias, *text)
            for i, (name, alias, text) in enumerate(zip(names, aliases, texts))
        )
        # A generator: the registry builds each tool inside its bulk load, where the cyclic
        # collector is paused (thousands of new containers, none of them garbage).
        registry = self._registry(tools)
        self._builds += 1
        identity = all(a == n for n, a in zip(names, aliases))
        back = None if identity else dict(zip(aliases, names))
        return _State(documents, len(rows), rows, registry, len(names), back, registry.search)

    def _registry(self, tools: Iterable[Tool]) -> ToolRegistry:
        registry = ToolRegistry(
            tools, engine=self._engine, lexicon=self._lexicon, settings=self._settings
        )
        # Build the index now, under the lock, so no search pays for it (or races to).
        registry.search("", 0)
        return registry


def _checked(query: object, limit: object) -> int:
    """``limit`` as an int, after refusing a query that is not a string or a bad limit."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise TypeError(f"limit must be an int, got {type(limit).__name__}")
    return int(limit)


def _same_rows(documents: Sequence[Any], rows: list[Row]) -> bool:
    """Whether ``documents``' field values equal ``rows``: the content fingerprint.

    The values themselves are compared, not a hash of them, so no collision can hide a
    change; equal strings that are the same objects (the common case) compare by identity.
    Each document's values are compared and dropped at once, in C, stopping at the first
    difference: no list of rows is built for a catalogue that turns out unchanged.
    """
    if len(documents) != len(rows):
        return False
    try:
        try:
            return all(map(eq, map(_BY_ATTRIBUTE, documents), rows))
        except AttributeError:
            pass
        try:
            if all(type(d) is dict for d in documents):
                return all(map(eq, map(_BY_KEY, documents), rows))
        except KeyError:
            pass
        return all(map(eq, map(_row, documents), rows))
    except Exception:  # a field whose == raises is no string: the build names it
        return False


def _rows(documents: Sequence[Any]) -> list[Row]:
    """Every document's four raw field values, ``None`` where one is missing.

    The common catalogues (all objects with the four attributes, or all dicts with the four
    keys) are read in one C loop; anything else falls back to a document at a time. (The
    first loop would read a ``Mapping`` that also has all four attributes by attribute; a
    mapping class with attributes of those names is not one a host writes.)
    """
    try:
        return list(map(_BY_ATTRIBUTE, documents))
    except AttributeError:
        pass
    try:
        if all(type(d) is dict for d in documents):
            return list(map(_BY_KEY, documents))
    except KeyError:
        pass
    return [_row(d) for d in documents]


def _row(document: Any) -> Row:
    if isinstance(document, Mapping):
        get = document.get
        return (get("name"), get("description"), get("search_hint"), get("parameters"))
    return (
        getattr(document, "name", None),
        getattr(document, "description", None),
        getattr(document, "search_hint", None),
        getattr(document, "parameters", None),
    )


def _text(index: int, name: Any, field: str, value: Any) -> str:
    """A field's text: ``None`` is empty, a string is itself, anything else is refused."""
    if value is None:
        return ""
    if type(value) is str:
        return value
    if isinstance(value, str):
        return str.__str__(value)  # a plain copy: a subclass's own methods play no part
    shown = f" ({name!r})" if isinstance(name, str) else ""
    raise TypeError(
        f"document {index}{shown}: field {field!r} must be a string or None, "
        f"got {type(value).__name__}"
    )


def _digits(name: str, attempt: int) -> str:
    data = name.encode("utf-8", "surrogatepass") + b"\0" + str(attempt).encode()
    number = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
    return f"{number % 10**_HASH_DIGITS:0{_HASH_DIGITS}d}"


def _aliases(names: list[str]) -> list[str]:
    """The internal name of each document, unique and valid; see the class docstring.

    Valid names keep themselves first, then aliases that stand alone, then the hashed ones
    in the order of their host names, so a name's first document's alias depends on the set
    of names only. A name given again is then told apart by trailing underscores, which add
    no index term (``create_issue_`` has the terms of ``create_issue``), in the order of the
    names and, within one name, of its documents. (A name too long to take one more
    underscore ends in a hash instead, one number term more, its words kept in the hint.)
    """
    out: dict[str, str] = {}
    taken: set[str] = set()
    wanting: dict[str, list[str]] = {}
    for name in dict.fromkeys(names):
        if TOOL_NAME_PATTERN.fullmatch(name):
            out[name] = name
            taken.add(name)
        else:
            wanting.setdefault(_NOT_NAME_CHARS.sub("_", name) or "_", []).append(name)
    hashed: list[tuple[str, str]] = []
    for base, group in wanting.items():
        if len(group) == 1 and len(base) <= _ALIAS_MAX and base not in taken:
            out[group[0]] = base
            taken.add(base)
        else:
            hashed.extend((name, base) for name in group)
    for name, base in sorted(hashed):
        out[name] = _hashed(base[: _ALIAS_MAX - _HASH_DIGITS - 1], name, 0, taken)
    if len(out) == len(names):
        return [out[name] for name in names]
    # Names given more than once: the first document keeps the name's alias, each later one
    # takes the next free alias with one more trailing underscore.
    counts: dict[str, int] = {}
    for name in names:
        counts[name] = counts.get(name, 0) + 1
    extra: dict[str, list[str]] = {}
    for name in sorted(n for n, c in counts.items() if c > 1):
        alias, more = out[name], list[str]()
        for _ in range(counts[name] - 1):
            alias = alias + "_"
            while alias in taken and len(alias) <= _ALIAS_MAX:
                alias += "_"
            if len(alias) > _ALIAS_MAX:  # no room left: one number term more (a rare name)
                alias = _hashed(out[name][: _ALIAS_MAX - _HASH_DIGITS - 1], name, len(more), taken)
            taken.add(alias)
            more.append(alias)
        extra[name] = more[::-1]  # popped from the end: the second document's first
    result = []
    seen: set[str] = set()
    for name in names:
        if name in seen:
            result.append(extra[name].pop())
        else:
            seen.add(name)
            result.append(out[name])
    return result


def _hashed(stem: str, name: str, attempt: int, taken: set[str]) -> str:
    """``stem`` and 8 digits of a hash of ``name``, not yet ``taken`` (which it joins)."""
    alias = f"{stem}_{_digits(name, attempt)}"
    while alias in taken:  # a collision of the hashes themselves: astronomically rare
        attempt += 1
        alias = f"{stem}_{_digits(name, attempt)}"
    taken.add(alias)
    return alias


def _loses_words(name: str, alias: str) -> bool:
    """Whether ``alias`` drops words of ``name``: non-ASCII letters or digits, or a cut."""
    if not alias.startswith(_NOT_NAME_CHARS.sub("_", name) or "_"):
        return True
    return any(not c.isascii() and c.isalnum() for c in name)


def _clean(text: str) -> str:
    """Lone surrogates as U+FFFD: the engines index them so, and ``Tool`` refuses them."""
    return text if text.isascii() else _SURROGATES.sub("\ufffd", text)


def _tool(index: int, name: str, alias: str, description: str, hint: str, params: str) -> Tool:
    """The internal tool of one document.

    The parameters text becomes the schema's one property *name*, with an empty schema:
    the parameters field is made of each property's name and description, so its text is
    then exactly the host's (a property with the text as its description would add the
    property's own name to it).
    """
    description, hint, params = _clean(description), _clean(hint), _clean(params)
    if len(description) > MAX_DESCRIPTION_CHARS:
        _log.warning(
            "toolsurface: document %d (%r): description of %d characters indexed on its first %d",
            index,
            name,
            len(description),
            MAX_DESCRIPTION_CHARS,
        )
        description = description[:MAX_DESCRIPTION_CHARS]
    if len(hint) > _HINT_MAX:
        _log.warning(
            "toolsurface: document %d (%r): search_hint of %d characters indexed on its first %d",
            index,
            name,
            len(hint),
            _HINT_MAX,
        )
        hint = hint[:_HINT_MAX]
    schema: dict[str, Any] = {"type": "object", "properties": {params: {}} if params else {}}
    try:
        return Tool(name=alias, description=description, search_hint=hint, input_schema=schema)
    except ToolDefinitionError as exc:  # not expected: every value was made to fit the model
        where = exc.field or "<document>"
        reason = exc.problems[0][1] if exc.problems else str(exc)
        raise ToolDefinitionError(
            f"document {index} ({name!r}): {where}: {reason}",
            tool=name,
            field=where,
            problems=exc.problems,
        ) from None
