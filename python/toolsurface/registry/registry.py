"""The tool registry: tools by name, a catalogue generation, and search best first.

The analysed index is built once per catalogue generation and shared by every search until
the tools change; a search sees one whole generation, never half of one.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from toolsurface._engine import EngineName
from toolsurface._internal.gcpause import gc_paused
from toolsurface._internal.off_loop import off_loop
from toolsurface.errors import DuplicateToolError, UnknownToolError
from toolsurface.groups import LoadMode, ToolGroup
from toolsurface.models import (
    RetrievalSettings,
    SearchHit,
    Tool,
    scoring_args,
    tool_from_mapping,
)
from toolsurface.registry.view import RegistryView, ViewCache
from toolsurface.retrieval.analysis.morphology import with_forms
from toolsurface.retrieval.boosts.boosts import Boosts
from toolsurface.retrieval.boosts.mentions import MentionBoost
from toolsurface.retrieval.engine.backend import Backend, IndexLike, Searcher, backend
from toolsurface.retrieval.engine.built import BuiltIndex as _Built
from toolsurface.retrieval.even import even_settings
from toolsurface.retrieval.field_texts import tool_fields
from toolsurface.retrieval.fields import SURROGATE, clean_text
from toolsurface.retrieval.fusion import (
    DocumentRanker,
    FusionSettings,
    HostRanker,
    RankerFailure,
    ToolDocument,
    check_fusion,
    fuse_hosts,
    fuse_semantic,
)
from toolsurface.retrieval.gloss import english_reading
from toolsurface.retrieval.hints.learned import LearnedHints, LearnedRequest
from toolsurface.retrieval.hints.learning import LearnedField, learned_texts, with_learned
from toolsurface.retrieval.looking import without_looking
from toolsurface.retrieval.membership import GroupMembership
from toolsurface.retrieval.minilm import SharedEnglish, english_available, english_default
from toolsurface.retrieval.packed_fields import IndexDoc, StoredFields, unpack_fields
from toolsurface.retrieval.resources import default_lexicon_entries
from toolsurface.retrieval.semantic import (
    SemanticRanker,
    SemanticUnavailableError,
    semantic_available,
    semantic_default,
)

__all__ = [
    "DEFAULT_LEXICON",
    "QUERY_MAX_CHARS",
    "DocumentRanker",
    "HostRanker",
    "RankerFailure",
    "ToolDocument",
    "ToolRegistry",
    "tool_fields",
]

_log = logging.getLogger("toolsurface")

#: A query is analysed on its first this many characters; the rest is ignored (logged).
QUERY_MAX_CHARS = 4096
#: The hits ``search`` returns when no ``k`` is given.
_SEARCH_K = 10
#: The registry's own attributes ``search``'s hot path reads (``_native.PlainSearch``
#: reads them in the instance dict, so a class that defines any of them keeps the method).
_SEARCH_STATE = (
    "_fast",
    "retrievers",
    "semantic",
    "settings",
    "_generation",
    "_learned",
    "_membership",
)
#: How many lexical hits a host ranker's ranking is fused with, at the least.
FUSION_DEPTH = 50
_SEARCHER_CACHE = 8


class _DefaultLexicon:
    """Marker for the bundled lexicon."""

    def __repr__(self) -> str:
        return "DEFAULT_LEXICON"


DEFAULT_LEXICON: Any = _DefaultLexicon()


def __getattr__(name: str) -> Any:
    """``IToolRetriever``, the old name of :class:`HostRanker`, with a ``DeprecationWarning``."""
    if name == "IToolRetriever":
        warnings.warn(DEPRECATED_RETRIEVER, DeprecationWarning, stacklevel=2)
        return HostRanker
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Why ``IToolRetriever`` warns: it is protocore's name for the other shape of ranker.
DEPRECATED_RETRIEVER = (
    "toolsurface.IToolRetriever is deprecated: use HostRanker for rank(query, names, k); "
    "a ranker written for protocore's IToolRetriever, rank(query, documents, limit), is "
    "a DocumentRanker, and the registry takes both"
)


def _looking_only(searcher: Searcher, query: str, allowed: Any) -> bool:
    """Whether ``query`` matches a tool only through its verbs of looking.

    True when blanking them (:func:`~toolsurface.retrieval.looking.without_looking`)
    leaves words to search for that match no tool but through the fallback.
    """
    rest = without_looking(query)
    if rest is None or not searcher.has_terms(rest):
        return False
    ids, _, fallback, _ = searcher.ranked(rest, 1, allowed)
    return not ids or fallback


def _check_admitted(admitted: object) -> None:
    """``admitted`` is None or a collection of names: a lone string is no set of its letters."""
    if isinstance(admitted, str | bytes):
        raise TypeError(
            f"admitted must be a collection of tool names, not a {type(admitted).__name__}"
        )


class ToolRegistry:
    """Tools by name, a generation that moves when they change, and lexical search.

    ``engine`` picks "native" or "pure" (default: the live engine); ``lexicon`` is the
    bundled one by default, ``None`` for none, or a host's own ``(source, targets)`` pairs
    (with their Russian word forms, ``retrieval/morphology.py``, unless ``word_forms=False``).
    ``learned`` is the store of learned hints (``learn``; default: a new, empty one).
    ``retrievers`` are host rankers fused into every search (see :meth:`search`), each a
    :class:`HostRanker` or a :class:`DocumentRanker`; ``on_ranker_error`` is called with a
    :class:`RankerFailure` whenever one fails, which :attr:`ranker_errors` also counts.
    ``semantic`` fuses the semantic extra's ranking into every search (see :meth:`search`):
    ``True`` requires it, ``False`` turns it off, a :class:`SemanticRanker` is used as it
    is, and ``None`` (the default) follows ``TOOLSURFACE_SEMANTIC`` and is otherwise on
    exactly when ``toolsurface[semantic]`` is installed. With the extra's own ranker (not
    one given), a request also gets the English encoder's ranking, of the request when it is
    read as English and else of its English gloss, if it has one (:attr:`english`).
    ``english`` says whether: ``False`` leaves it out, ``True`` requires its files, and
    ``None`` (the default) follows ``TOOLSURFACE_ENGLISH_ENCODER`` and is otherwise on
    exactly when they are installed; ``FusionSettings.english_weight`` 0 leaves it out of a
    search.
    """

    def __init__(
        self,
        tools: Iterable[Tool | Mapping[str, Any]] = (),
        *,
        engine: EngineName | None = None,
        lexicon: Any = DEFAULT_LEXICON,
        settings: RetrievalSettings | None = None,
        retrievers: Sequence[HostRanker | DocumentRanker] = (),
        fusion: FusionSettings | None = None,
        word_forms: bool = True,
        learned: LearnedHints | None = None,
        on_ranker_error: Callable[[RankerFailure], None] | None = None,
        semantic: bool | SemanticRanker | None = None,
        english: bool | None = None,
    ) -> None:
        self._backend: Backend = backend(engine)
        #: The semantic ranker fused into every search, or ``None`` (lexical alone).
        self.semantic: SemanticRanker | None = _semantic_ranker(semantic)
        #: The English encoder's ranker (of English requests, and others' glosses), or ``None``.
        self.english: SemanticRanker | None = _english_ranker(semantic, self.semantic, english)
        if lexicon is DEFAULT_LEXICON:
            self._lexicon = _default_lexicon(self._backend)
        elif lexicon is None:
            self._lexicon = None
        else:
            entries = with_forms(lexicon, self._backend.tokens) if word_forms else list(lexicon)
            self._lexicon = self._backend.lexicon(entries)
        self.settings = settings or RetrievalSettings()
        self.retrievers: list[HostRanker | DocumentRanker] = list(retrievers)
        self.fusion = check_fusion(fusion) if fusion is not None else FusionSettings()
        #: Called with a :class:`RankerFailure` whenever a host ranker fails in a search.
        self.on_ranker_error = on_ranker_error
        self._ranker_errors: dict[str, int] = {}
        # The documents of the tools for rankers that take them: (generation, documents).
        self._documents: tuple[int, tuple[ToolDocument, ...]] | None = None
        self._lock = threading.RLock()
        self._tools: dict[str, Tool] = {}
        self._origins: dict[str, str] = {}
        # The tools' field texts are not kept: a build makes them from the tools, and a
        # learned hint merges with the index (docs/performance.md, "The registry keeps no
        # texts"). The tools whose over-long fields were reported, by name, so that a build
        # reports a definition once; a replacement is another object, reported anew even
        # when a late build of the old one records the old one.
        self._cut_reported: dict[str, Tool] = {}
        self._generation = 0
        # The registry's parts, each the owner of its own state. They read the tools and
        # the generation (never write them) and share the lock, so that what one reads
        # under it (a view's tools and groups, the index's hints) is one moment's.
        lock, tools_, gen = self._lock, self._tools, lambda: self._generation
        self._membership = groups = GroupMembership(lock, tools_, gen, self._backend.tokens)
        self._views = ViewCache(lock, tools_, gen, groups, self)  # type: ignore[arg-type]
        self._mentions = MentionBoost(groups, self._backend, self._lexicon, self._current)
        self._boosts = Boosts(self._mentions, groups, self._backend)
        hints = learned if learned is not None else LearnedHints()
        self._learned = LearnedField(lock, tools_, hints)
        self._built: _Built | None = None
        # The hot path's bound search: (generation, learned version, groups version,
        # settings, searcher) of the last plain search; used while all four still hold
        # (see ``search``). The searcher holds the boost rules of that groups version.
        self._fast: tuple[int, int, int, RetrievalSettings, Searcher] | None = None
        # One batch (one generation step; errors name "item i" as ``register_many`` does).
        self.register_many(tools)
        self._install_plain_search()

    def _install_plain_search(self) -> None:
        """Make the instance's ``search`` the engine's, where it has a hot path of its own.

        The native engine's (``_native.PlainSearch``) answers a plain call (a query and
        ``k``) without entering a Python frame, making :meth:`search`'s hot-path checks on
        this registry's state, and calls :meth:`search` for every other call: the same
        hits, 5% to 8% less time a search beside bm25-turbo, none with the caches cold
        (docs/performance.md). A subclass that defines its own ``search``, or any of the
        state it reads, keeps the method.
        """
        cls = type(self)
        if cls.search is not _SEARCH or any(hasattr(cls, name) for name in _SEARCH_STATE):
            return  # a class-level patch, or a subclass's own search or state: its own
        plain = self._backend.plain_search(_SEARCH, self, _SEARCH_K, QUERY_MAX_CHARS)
        if plain is not None:
            self.__dict__["search"] = plain

    def __copy__(self) -> ToolRegistry:
        """A shallow copy (``copy.copy``): the same parts, its own ``search``.

        The native engine's ``search`` reads the registry it was made for, so the copy
        gets one of its own rather than the original's.
        """
        cls = type(self)
        made = cls.__new__(cls)
        made.__dict__.update(self.__dict__)
        made.__dict__.pop("search", None)
        made._install_plain_search()
        return made

    # -- the catalogue ---------------------------------------------------------------------

    @property
    def engine(self) -> EngineName:
        """The engine this registry searches with."""
        return self._backend.name

    def terms(self, text: str) -> list[str]:
        """The index terms this registry's analyser makes of ``text``: what a search matches.

        A host checks with it whether a name or alias can be found at all (one of stopwords
        and one-letter words gives none).

        >>> from toolsurface import ToolRegistry
        >>> ToolRegistry().terms("Listing the open pull requests")
        ['list', 'open', 'pull', 'request']
        """
        # Cleaned as a search cleans its query (a lone surrogate becomes U+FFFD): the terms
        # are those a search of ``text`` matches, on either engine.
        return self._backend.tokens(clean_text(text))

    @property
    def generation(self) -> int:
        """Catalogue generation: moves whenever a tool is registered, replaced or removed."""
        return self._generation

    def register(
        self, tool: Tool | Mapping[str, Any], *, replace: bool = False, where: str = ""
    ) -> Tool:
        """Add a tool (a :class:`Tool` or a mapping); ``where`` names its source in errors."""
        parsed = tool if isinstance(tool, Tool) else tool_from_mapping(tool, where=where)
        origin = where or "registered by the host"
        with self._lock:
            if parsed.name in self._tools and not replace:
                raise DuplicateToolError(parsed.name, self._origins[parsed.name], origin)
            self._tools[parsed.name] = parsed
            self._origins[parsed.name] = origin
            self._generation += 1
        return parsed

    def register_many(
        self, tools: Iterable[Tool | Mapping[str, Any]], *, replace: bool = False, where: str = ""
    ) -> list[Tool]:
        """Register several tools; all are validated before any is added."""
        prefix = f"{where} " if where else ""
        parsed: list[Tool] = []
        names: list[str] = []
        with gc_paused():  # millions of new containers, none garbage (see _internal/gcpause.py)
            for i, t in enumerate(tools):
                if not isinstance(t, Tool):
                    t = tool_from_mapping(t, where=f"{prefix}item {i}")
                parsed.append(t)
                names.append(t.name)
        if not replace and len(set(names)) != len(names):
            seen: dict[str, int] = {}
            for i, name in enumerate(names):
                if name in seen:
                    first = f"{prefix}item {seen[name]}"
                    raise DuplicateToolError(name, first, f"{prefix}item {i}")
                seen[name] = i
        with self._lock:
            tools_ = self._tools
            if not replace and not tools_.keys().isdisjoint(names):
                for i, name in enumerate(names):
                    if name in tools_:
                        raise DuplicateToolError(name, self._origins[name], f"{prefix}item {i}")
            tools_.update(zip(names, parsed))
            self._origins.update(zip(names, [f"{prefix}item {i}" for i in range(len(names))]))
            if parsed:
                self._generation += 1
        return parsed

    def unregister(self, name: str) -> Tool:
        """Remove a tool by name and return it; an unknown name raises ``UnknownToolError``."""
        with self._lock:
            tool = self._tools.pop(name, None)
            if tool is None:
                raise UnknownToolError(f"no tool named {name!r} is registered")
            del self._origins[name]
            self._cut_reported.pop(name, None)
            self._generation += 1
        return tool

    def unregister_many(self, names: Iterable[str], *, missing_ok: bool = False) -> list[Tool]:
        """Remove several tools at once (one generation); unknown names raise unless allowed."""
        wanted = list(dict.fromkeys(names))
        with self._lock:
            unknown = [n for n in wanted if n not in self._tools]
            if unknown and not missing_ok:
                raise UnknownToolError(f"no tool named {unknown[0]!r} is registered")
            removed = []
            for n in wanted:
                tool = self._tools.pop(n, None)
                if tool is not None:
                    removed.append(tool)
                    del self._origins[n]
                    self._cut_reported.pop(n, None)
            if removed:
                self._generation += 1
        return removed

    def get(self, name: str) -> Tool:
        """The tool of that name; an unknown name raises ``UnknownToolError``."""
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(f"no tool named {name!r} is registered") from None

    def __contains__(self, name: object) -> bool:
        """Whether a tool of that name is registered."""
        return name in self._tools

    def __len__(self) -> int:
        """Number of registered tools."""
        return len(self._tools)

    def names(self) -> list[str]:
        """Registered names in sorted order."""
        with self._lock:
            return sorted(self._tools)

    def registration_order(self) -> list[str]:
        """Registered names in the order the host gave them; a replaced tool keeps its place."""
        with self._lock:
            return list(self._tools)

    def tools(self) -> list[Tool]:
        """Registered tools in name order."""
        with self._lock:
            return [self._tools[n] for n in sorted(self._tools)]

    # -- groups (``retrieval/membership.py``), views (``registry/view.py``) --------------

    def declare_group(
        self,
        name: str,
        *,
        prefix: str | None = None,
        dynamic: bool = False,
        load: LoadMode = "auto",
        rules: str | None = None,
        description: str | None = None,
        aliases: Sequence[str] = (),
    ) -> ToolGroup:
        """Declare (or redeclare) a group; tools join by their ``group`` field or ``prefix``.

        ``dynamic=True`` marks membership the host does not write (an MCP server's tools);
        ``description`` is one line the catalogue and ToolSearch show for the group;
        ``aliases`` are other names of the service (a query that mentions the group by name or
        alias weights the group's tools up: ``docs/analysis.md`` §8). Each alias must have
        index terms (``ValueError`` naming it otherwise).
        The catalogue generation does not move: groups shape what is held back, not what
        is registered.

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="slack__send_message", description="Send a message to a channel."),
        ... ])
        >>> fs = registry.declare_group("fs", prefix="fs__", rules="Paths are relative.")
        >>> registry.group_of("fs__read_file"), registry.group_of("slack__send_message")
        ('fs', None)
        >>> fs.load, registry.groups_version
        ('auto', 1)
        """
        return self._membership.declare_group(
            name,
            prefix=prefix,
            dynamic=dynamic,
            load=load,
            rules=rules,
            description=description,
            aliases=aliases,
        )

    def undeclare_group(self, name: str) -> bool:
        """Remove a group's declaration; idempotent (returns whether it was declared)."""
        return self._membership.undeclare_group(name)

    def groups(self) -> dict[str, ToolGroup]:
        """Declared groups by name."""
        return self._membership.groups()

    @property
    def groups_version(self) -> int:
        """Moves whenever a group is declared or undeclared."""
        return self._membership.version

    def group_of(self, name: str) -> str | None:
        """The group a registered tool belongs to: its own field, else the longest prefix."""
        return self._membership.group_of(name)

    def group_members(self, name: str) -> tuple[str, ...]:
        """The registered tools in group ``name``, in name order (none for an unknown group)."""
        return self._membership.group_members(name)

    def group_map(self) -> Mapping[str, str]:
        """Every registered tool that is in a group, mapped to it (read-only, one generation)."""
        return self._membership.group_map()

    def group(self, name: str) -> ToolGroup:
        """A group by name: declared, or implied by tools whose ``group`` field names it."""
        return self._membership.group(name)

    def view(self) -> RegistryView:
        """The tools and groups as they are now, as one immutable view (kept until a change)."""
        return self._views.view()

    def mentioned_groups(self, query: str, settings: RetrievalSettings | None = None) -> list[str]:
        """The declared groups ``query`` mentions by name or alias (``docs/analysis.md`` §8).

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="atlassian__confluence_search", description="Search Confluence pages."),
        ...     Tool(
        ...         name="aws-eks__search_troubleshoot_guide",
        ...         description="Search the EKS troubleshooting guide for a runbook.",
        ...     ),
        ... ])
        >>> query = "look up the release runbook in confluence"
        >>> [h.name for h in registry.search(query)]
        ['aws-eks__search_troubleshoot_guide', 'atlassian__confluence_search']
        >>> _ = registry.declare_group("atlassian", prefix="atlassian__", aliases=["confluence"])
        >>> registry.mentioned_groups(query)
        ['atlassian']
        >>> [h.name for h in registry.search(query)]
        ['atlassian__confluence_search', 'aws-eks__search_troubleshoot_guide']
        """
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        return self._mentions.mentioned_groups(query, settings or self.settings)

    # -- learned hints (``learning.py``) --------------------------------------------------

    @property
    def learned_hints(self) -> LearnedHints:
        """The registry's store of learned requests (shared with whoever passed it in)."""
        return self._learned.hints

    def learn(self, query: str, tool_name: str, *, session: str | None = None) -> bool:
        """Teach that ``query`` led to ``tool_name``; whether anything was kept.

        Opt-in: nothing is learned unless a host calls this (or ``learn_many``). A name
        that is not registered raises ``UnknownToolError``; a query that is empty once
        cleaned keeps nothing. Without ``session`` the host teaches, and the request ranks
        at once; with it a session does, under the rules that keep one session from
        steering others (``LearnedHints``; docs/analysis.md §9).

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="pagerduty__list_oncalls", description="List who is on call."),
        ...     Tool(name="slack__send_message", description="Send a message."),
        ... ])
        >>> [h.name for h in registry.search("who's babysitting prod tonight", k=1)]
        []
        >>> registry.learn("who is babysitting prod tonight?", "pagerduty__list_oncalls")
        True
        >>> [h.name for h in registry.search("who's babysitting prod", k=1)]
        ['pagerduty__list_oncalls']
        >>> registry.forget("pagerduty__list_oncalls")
        1
        """
        return self._learned.learn(query, tool_name, session)

    def learn_many(self, pairs: Iterable[tuple[str, str]], *, missing_ok: bool = False) -> int:
        """Teach many (query, tool name) pairs, a host's logs; how many were kept."""
        return self._learned.learn_many(pairs, missing_ok=missing_ok)

    def forget(self, tool_name: str | None = None, query: str | None = None) -> int:
        """Drop what was learned: one request, one tool's, a request everywhere, or all."""
        return self._learned.forget(tool_name, query)

    def learned(self, tool_name: str | None = None) -> dict[str, list[LearnedRequest]]:
        """What was learned, per tool (or for ``tool_name`` alone), oldest request first."""
        return self._learned.learned(tool_name)

    def save_learned(self, path: str | os.PathLike[str]) -> None:
        """Write the learned hints to ``path`` atomically (docs/tools.md gives the format)."""
        self._learned.save_learned(path)

    def load_learned(self, path: str | os.PathLike[str]) -> int:
        """Replace the learned hints by those of ``path``; how many requests it held."""
        return self._learned.load_learned(path)

    # -- search ----------------------------------------------------------------------------

    def _read_only(self) -> frozenset[str]:
        """The tools that only read: by their hint, else by the verb their name opens with.

        ``analysis.reading.reads_only`` for every tool, the names without a hint read in
        one pass of the engine. Called under the lock.
        """
        hinted: list[str] = []
        unhinted: list[str] = []
        for name, tool in self._tools.items():
            hint = tool.read_only
            if hint is None:
                unhinted.append(name)
            elif hint:
                hinted.append(name)
        hinted.extend([unhinted[i] for i in self._backend.read_verb_names(unhinted)])
        return frozenset(hinted)

    def _current(self) -> _Built:
        with self._lock:
            built, hints = self._built, self._learned.hints
            stamp = (self._generation, hints.version)
            if built is not None and (built.generation, built.learned) == stamp:
                return built
            tools = dict(self._tools)
            relearn = built if built is not None and built.generation == stamp[0] else None
            # The same tools: only what was learned moved, and what reads only has not.
            read_only = relearn.read_only if relearn is not None else self._read_only()
        # The learned texts are read after the stamp: a change in between makes a newer
        # index than the stamp says, never an older one, and the next search rebuilds.
        if relearn is not None and self._backend.relearns:
            index = self._relearned(relearn.index, relearn.names, tools, hints)
            made = relearn.relearned(index, stamp[1])
        else:
            names, index = self._built_index(tools, hints)
            made = _Built(stamp[0], names, index, learned=stamp[1], read_only=read_only)
        with self._lock:
            if self._built is None or (self._built.generation, self._built.learned) < stamp:
                self._built = made
        return made

    def _built_index(
        self, tools: Mapping[str, Tool], hints: LearnedHints
    ) -> tuple[list[str], IndexLike]:
        """The names of ``tools`` in id order (by name) and the index of them and ``hints``.

        The texts are made a part at a time, in id order, for the engine to analyse each
        part while the next is made; a taught tool's are made once, for its learned text
        first (which is cut to the words its own texts reach).
        """
        names, ordered = self._backend.by_name(list(tools), list(tools.values()))
        texts_of, reported = self._backend.fields, self._cut_reported
        taught: dict[str, StoredFields] = {}

        def taught_texts(name: str) -> StoredFields | None:
            tool = tools.get(name)
            if tool is None:
                return None
            if name not in taught:
                taught[name] = texts_of(tool, reported)
            return taught[name]

        learned = learned_texts(hints, taught_texts, self._backend.tokens)

        def part(lo: int, hi: int) -> list[IndexDoc]:
            some = names[lo:hi]
            with gc_paused():  # a new object a tool, none garbage
                stored = [
                    taught[n] if n in taught else texts_of(tool, reported)
                    for n, tool in zip(some, ordered[lo:hi])
                ]
            return with_learned(some, stored, learned)

        return names, self._backend.index_in_parts(names, part)

    def _relearned(
        self, index: IndexLike, names: list[str], tools: Mapping[str, Tool], hints: LearnedHints
    ) -> IndexLike:
        """``index`` (of ``names``, ``tools``) with the learned texts of ``hints``.

        Only the taught tools' texts are made (to cut each request to the words a tool's own
        texts reach); the others' are in the index already.
        """
        fields, reported = self._backend.fields, self._cut_reported

        def texts(name: str) -> StoredFields | None:
            tool = tools.get(name)
            return None if tool is None else fields(tool, reported)

        learned = learned_texts(hints, texts, self._backend.tokens)
        return self._backend.relearned(index, [learned.get(n, "") for n in names])

    def _field_texts(self, tools: Sequence[Tool]) -> list[StoredFields]:
        """The field texts of ``tools``, as the engine indexes them (made, not kept).

        A tool's over-long fields are reported once while it stays registered.
        """
        texts = self._backend.fields
        reported = self._cut_reported
        with gc_paused():  # a new object a tool, none garbage
            return [texts(tool, reported) for tool in tools]

    def prepare(self) -> None:
        """Build the search index of the registry as it is now, so the next search need not.

        A search builds it when the tools or the learned hints changed since the last; a
        host that changes them off the request path (a catalogue refresh, a learned hint)
        calls this there, in a worker thread if it likes (the native build runs without
        the interpreter's lock), and keeps that cost away from its next request.
        """
        built = self._current()
        self._searcher(built, self.settings)
        if self.semantic is not None:
            self._semantic_table(self.semantic, built)
        if self.english is not None and self.fusion.english_weight > 0.0:
            try:
                self._semantic_table(self.english, built)
            except SemanticUnavailableError as exc:
                self._english_unavailable(exc)

    def _prepare(
        self, query: object, k: object, settings: RetrievalSettings | None
    ) -> tuple[str, int, RetrievalSettings]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or k < 0:
            raise ValueError(f"k must be a whole number >= 0, got {k!r}")
        if len(query) > QUERY_MAX_CHARS:
            _log.info(
                "toolsurface: query of %d characters analysed on its first %d",
                len(query),
                QUERY_MAX_CHARS,
            )
            query = query[:QUERY_MAX_CHARS]
        query = clean_text(query)
        chosen = settings or self.settings
        if not isinstance(chosen, RetrievalSettings):
            raise TypeError(f"settings must be RetrievalSettings, got {type(chosen).__name__}")
        return query, k, chosen

    def search(
        self,
        query: str,
        k: int = _SEARCH_K,
        *,
        settings: RetrievalSettings | None = None,
        admitted: Collection[str] | None = None,
        explain: bool = False,
        retrievers: Sequence[HostRanker | DocumentRanker] | None = None,
        fusion: FusionSettings | None = None,
    ) -> list[SearchHit]:
        """The ``k`` best tools for ``query``, best first, ties by name.

        ``admitted`` limits the hits to those names (a run's policy); ``explain`` adds the
        matched terms and each field's contribution to every hit; ``retrievers`` (default:
        the registry's) are fused with the lexical ranking by weighted reciprocal rank, as
        ``fusion`` (default: the registry's) says. A retriever is a :class:`HostRanker`,
        given the admitted names, or protocore's :class:`DocumentRanker`, given the admitted
        tools as :class:`ToolDocument` s (told apart by the names of ``rank``'s parameters).
        Fused hits score ``sum weight / (k + rank)``; when every retriever declines (no
        names) or fails, the lexical hits are served as they are. A retriever that fails is
        logged, counted in :attr:`ranker_errors` and handed to ``on_ranker_error``.

        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="slack__send_message", description="Send a message to a channel."),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ...     Tool(name="fs__write_file", description="Write text to a file on disk."),
        ... ])
        >>> [hit.name for hit in registry.search("post a message to the team channel")]
        ['slack__send_message']
        >>> [hit.name for hit in registry.search("прочитай файл", k=1)]
        ['fs__read_file']
        >>> [hit.name for hit in registry.search("read a file", admitted={"fs__write_file"})]
        ['fs__write_file']

        A query with no terms to search for (empty, blank, only punctuation or stopwords
        such as "the") ranks nothing, so it answers the first ``k`` tools in registration
        order instead, each at score 0.0, not fallback: the first ``k`` of ``admitted`` when
        it is given, and with ``explain`` an empty explanation (no term contributed). A
        query with terms that match nothing still answers nothing, and a host retriever's
        own answer to an empty query is served as it is.

        >>> [(hit.name, hit.score) for hit in registry.search("the", k=2)]
        [('slack__send_message', 0.0), ('fs__read_file', 0.0)]
        """
        # The native engine answers this hot path itself (``_install_plain_search``): its
        # checks are these, on the same state (plain_search.rs); a change here is made there.
        fast = self._fast
        if (
            fast is not None
            and type(query) is str
            and type(k) is int
            and k >= 0
            and settings is None
            and admitted is None
            and not explain
            and retrievers is None
            and fusion is None
            and not self.retrievers
            and self.semantic is None
            and fast[0] == self._generation
            and fast[1] == self._learned.hints.version
            and fast[2] == self._membership.version
            and fast[3] is self.settings
            and len(query) <= QUERY_MAX_CHARS
        ):
            # The hot path: a plain search of the current catalogue, one call into the
            # engine, which finds the request's boosts and builds the hits. A query with
            # lone surrogates takes the full path, which cleans it.
            try:
                hits = fast[4].search(query, k)
            except UnicodeEncodeError:
                pass
            else:
                # Nothing found: a query with terms answers nothing (asked in the engine).
                if hits or not k or fast[4].has_terms(query):
                    return hits
                return self._unranked(query, k, settings, admitted, explain)
        _check_admitted(admitted)
        hits = self._ranked(query, k, settings, admitted, explain, retrievers, fusion)
        if hits or not k:
            return hits
        return self._unranked(query, k, settings, admitted, explain)

    def _unranked(
        self,
        query: str,
        k: int,
        settings: RetrievalSettings | None,
        admitted: Collection[str] | None,
        explain: bool,
    ) -> list[SearchHit]:
        """A query without terms: the first ``k`` tools in registration order, score 0.0.

        Asked only once the ranking found nothing; a query with terms answers nothing.
        """
        query, k, chosen = self._prepare(query, k, settings)
        built = self._current()
        # Terms of function words only ("what's it?") are no terms to search for.
        if not k or self._searcher(built, chosen).has_terms(query):
            return []
        known = built.ids
        order = [n for n in self.registration_order() if n in known]
        if admitted is not None:
            order = [n for n in order if n in admitted]
        explanation = () if explain else None
        return [
            SearchHit(name, 0.0, rank, False, explanation) for rank, name in enumerate(order[:k], 1)
        ]

    def _ranked(
        self,
        query: str,
        k: int,
        settings: RetrievalSettings | None,
        admitted: Collection[str] | None,
        explain: bool,
        retrievers: Sequence[HostRanker | DocumentRanker] | None,
        fusion: FusionSettings | None,
        near: list[str] | None = None,
        english: list[str] | None = None,
    ) -> list[SearchHit]:
        """``search`` as ranked: a query without terms finds nothing here.

        ``near`` and ``english`` are the query's semantic rankings when a batch has made
        them already.
        """
        query, k, chosen = self._prepare(query, k, settings)
        how = self.fusion if fusion is None else check_fusion(fusion)
        built = self._current()
        hosts = self.retrievers if retrievers is None else list(retrievers)
        semantic = self.semantic
        searcher = self._searcher(built, chosen)
        allowed = built.filter_for(admitted) if admitted is not None else None
        if not hosts and not explain and semantic is None:
            return searcher.search_in(query, k, allowed)
        depth = max(k, FUSION_DEPTH) if hosts or semantic is not None else k
        ids, scores, fallback, factors = searcher.ranked(query, depth, allowed)
        names = [built.names[i] for i in ids]
        factor_of = dict(zip(names, factors))
        if semantic is not None and k and self._has_terms(built, query, chosen):
            # A query without terms keeps the registration order (``_unranked``).
            if near is None:
                table = self._semantic_table(semantic, built)
                near = semantic.rank(query, *table[:2], admitted, table[2]) if table else []
            if english is None:
                english = self._english_ranking(
                    built, [query], how, admitted, chosen.expansion_weight
                )[0]
            if near or english:
                even_names: list[str] = []
                if names and not fallback and _looking_only(searcher, query, allowed):
                    # The words matched a verb of looking alone ("find the best ramen in
                    # Tokyo"): the encoders decide, as for a request that matches nothing.
                    names, scores = [], []
                else:
                    even = self._searcher(built, even_settings(chosen)).ranked(
                        query, depth, allowed
                    )
                    even_names = [built.names[i] for i in even[0]]
                names, scores = fuse_semantic(names, scores, near, how, even_names, english)
        if hosts and k:
            pool = built.names if admitted is None else [n for n in built.names if n in admitted]
            # The whole catalogue's name -> id map is its membership test.
            in_pool: Collection[str] = built.ids if admitted is None else set(pool)
            fused = fuse_hosts(
                query,
                names,
                hosts,
                pool,
                in_pool,
                max(k, FUSION_DEPTH),
                how,
                lambda: self._host_documents(built, None if admitted is None else in_pool),
                self._ranker_failed,
            )
            if fused is not None:
                names, scores = fused
        names, scores = names[:k], scores[:k]
        if explain:
            factor_of.update(self._factors(searcher, built, query, names, factor_of, admitted))
        hits = []
        for rank, (name, score) in enumerate(zip(names, scores), 1):
            explanation = None
            if explain:
                f = factor_of.get(name, 1.0)
                explanation = built.explain(query, name, chosen, self._lexicon, fallback, f)
            hits.append(SearchHit(name, score, rank, fallback, explanation))
        return hits

    def _english_ranking(
        self,
        built: _Built,
        queries: Sequence[str],
        how: FusionSettings,
        admitted: Collection[str] | None,
        expansion_weight: float,
    ) -> list[list[str]]:
        """The English encoder's ranking of each query, or ``[]``.

        What it reads of each is :func:`~toolsurface.retrieval.gloss.english_reading`'s: a
        query read as English as it is; another, its English gloss (the query, then the
        English words the lexicon adds to its terms); one with none, nothing, but for a
        ``latin`` one of ASCII terms, as it is. Nothing is
        embedded when there is no English ranker or its weight is 0; the rest are embedded
        in one batch.
        """
        out: list[list[str]] = [[] for _ in queries]
        english = self.english
        if english is None or how.english_weight <= 0.0:
            return out
        index, lexicon = built.index, self._lexicon
        wanted: list[int] = []
        asked: list[str] = []
        for i, query in enumerate(queries):
            lang = index.query_language(query)
            text: str | None = query
            if lang != "en":
                terms = index.query_terms(query, lexicon, expansion_weight)
                own = {t for t, _ in index.query_terms(query, None, expansion_weight)}
                text = english_reading(query, lang, [t for t, _ in terms], own)
            if text is not None:
                wanted.append(i)
                asked.append(text)
        try:
            table = self._semantic_table(english, built) if wanted else None
            if table is None:
                return out
            ranked = english.rank_many(asked, *table[:2], admitted, table[2])
        except SemanticUnavailableError as exc:
            self._english_unavailable(exc)
            return out
        for i, found in zip(wanted, ranked):
            out[i] = found
        return out

    def _english_unavailable(self, exc: SemanticUnavailableError) -> None:
        """Rank without the English encoder from now on, and say why once."""
        if self.english is not None:
            self.english = None
            warnings.warn(
                f"toolsurface: ranking without the English encoder: {exc}",
                RuntimeWarning,
                stacklevel=3,
            )

    def _has_terms(self, built: _Built, query: str, chosen: RetrievalSettings) -> bool:
        return bool(built.index.query_terms(query, self._lexicon, chosen.expansion_weight))

    def _semantic_table(
        self, semantic: SemanticRanker, built: _Built
    ) -> tuple[Sequence[str], Any, dict[str, int]] | None:
        """The tools' vectors of ``built``'s generation, in its name order (made once).

        ``None`` when the catalogue moved on since ``built`` was made: that search keeps
        the lexical ranking, and the next one ranks the new generation.
        """
        made = semantic.cached(built.generation, built.names)
        if made is not None:
            return made
        with self._lock:
            if self._generation != built.generation:
                return None
            tools = self._tools
            chosen = [tools[n] for n in built.names]
        # Made outside the lock: a registration need not wait for it.
        stored = self._field_texts(chosen)
        texts = [unpack_fields(n, f) for n, f in zip(built.names, stored)]
        return semantic.table(built.generation, built.names, texts)

    def _factors(
        self,
        searcher: Searcher,
        built: _Built,
        query: str,
        names: Sequence[str],
        known: Mapping[str, float],
        admitted: Collection[str] | None,
    ) -> dict[str, float]:
        """The boost factors of fused hits the lexical ranking did not reach.

        Ranked again among those tools alone: a tool that scores there gets the factor its
        boosts give it, and one that scores nothing has no term to explain.
        """
        extra = [n for n in names if n not in known and (admitted is None or n in admitted)]
        if not extra:
            return {}
        ids, _, _, factors = searcher.ranked(query, len(extra), built.filter_for(extra))
        return {built.names[i]: f for i, f in zip(ids, factors)}

    @property
    def ranker_errors(self) -> int:
        """How many times a host ranker failed in a search of this registry (all rankers)."""
        with self._lock:
            return sum(self._ranker_errors.values())

    def ranker_error_counts(self) -> dict[str, int]:
        """The host rankers' failures so far, by ranker class (``module.QualifiedName``)."""
        with self._lock:
            return dict(self._ranker_errors)

    def _ranker_failed(self, failure: RankerFailure) -> None:
        with self._lock:
            self._ranker_errors[failure.label] = self._ranker_errors.get(failure.label, 0) + 1
        callback = self.on_ranker_error
        if callback is not None:
            try:
                callback(failure)
            except Exception:
                _log.exception("toolsurface: the host's on_ranker_error callback failed")

    def _host_documents(
        self, built: _Built, allowed: Collection[str] | None
    ) -> Sequence[ToolDocument]:
        """The documents of ``built``'s tools (those ``allowed``), in its name order.

        Made once per generation and kept, so a document ranker is handed the same list
        while the catalogue stands (and may key its own index on it).
        """
        cached = self._documents
        if cached is None or cached[0] != built.generation:
            with self._lock:
                tools = self._tools
                chosen = [tools[n] for n in built.names if n in tools]
                current = self._generation == built.generation
            stored = self._field_texts(chosen)
            docs = tuple(  # a tuple: one ranker cannot change what the next is given
                ToolDocument(t.name, t.description, t.search_hint, unpack_fields(t.name, f)[4])
                for t, f in zip(chosen, stored)
            )
            if current:  # the tools were this generation's: keep their documents
                self._documents = cached = (built.generation, docs)
            if cached is None or cached[0] != built.generation:
                return docs if allowed is None else [d for d in docs if d.name in allowed]
        docs = cached[1]
        return docs if allowed is None else [d for d in docs if d.name in allowed]

    def search_many(
        self,
        queries: Sequence[str],
        k: int = 10,
        *,
        settings: RetrievalSettings | None = None,
        admitted: Collection[str] | None = None,
    ) -> list[list[SearchHit]]:
        """``search`` for many queries at once (native: across cores, the GIL released).

        With the semantic ranking on, each query is searched (and fused) in turn.

        ``queries`` is a sequence of strings; a lone string is refused, not searched letter
        by letter, and a query that is not a string is named by its index.
        """
        _check_admitted(admitted)
        semantic = self.semantic
        prepared = self._prepare_batch(queries, k, settings, cleaned=semantic is not None)
        _, k, chosen = self._prepare("", k, settings)
        if semantic is not None:
            return self._fused_many(semantic, prepared, k, chosen, admitted)
        built = self._current()
        searcher = self._searcher(built, chosen)
        allowed = built.filter_for(admitted) if admitted is not None else None
        # Paused, the collector makes no full pass mid-batch: it held the GIL longer than
        # any chunk the native core converts between letting it go (benches/gil.py).
        with gc_paused():
            try:
                answers = searcher.search_many(prepared, k, allowed)
            except UnicodeEncodeError:  # a lone surrogate, which the native engine refuses
                prepared = [clean_text(q) for q in prepared]
                answers = searcher.search_many(prepared, k, allowed)
        # A query without terms answers the first k in registration order, as search does.
        # Most batches have none: the core's fresh list is the answer, with no serial pass.
        if all(answers):
            return answers
        return [
            hits or self._unranked(q, k, chosen, admitted, False)
            for q, hits in zip(prepared, answers)
        ]

    def _fused_many(
        self,
        semantic: SemanticRanker,
        queries: list[str],
        k: int,
        chosen: RetrievalSettings,
        admitted: Collection[str] | None,
    ) -> list[list[SearchHit]]:
        """``search`` of each query with the semantic ranking, the queries embedded at once.

        The encoder embeds a batch in well under the time of its texts one by one; each
        query is then fused as ``search`` fuses it. Should the catalogue move on meanwhile,
        each query is searched on its own instead.
        """
        built = self._current()
        table = self._semantic_table(semantic, built)
        if table is None or not k:
            return [self.search(q, k, settings=chosen, admitted=admitted) for q in queries]
        wanted = [i for i, q in enumerate(queries) if self._has_terms(built, q, chosen)]
        asked = [queries[i] for i in wanted]
        ranked = semantic.rank_many(asked, *table[:2], admitted, table[2])
        english = self._english_ranking(
            built, asked, self.fusion, admitted, chosen.expansion_weight
        )
        near: list[list[str]] = [[] for _ in queries]
        near_en: list[list[str]] = [[] for _ in queries]
        for i, found, found_en in zip(wanted, ranked, english):
            near[i], near_en[i] = found, found_en
        out = []
        for query, found, found_en in zip(queries, near, near_en):
            hits = self._ranked(query, k, chosen, admitted, False, None, None, found, found_en)
            out.append(hits or self._unranked(query, k, chosen, admitted, False))
        return out

    def _prepare_batch(
        self,
        queries: Sequence[str],
        k: object,
        settings: RetrievalSettings | None,
        *,
        cleaned: bool = True,
    ) -> list[str]:
        """Each query as ``_prepare`` leaves it, checked in C-speed passes over the batch.

        Preparing is the serial part of a batch the core scores on every thread, so the
        common case (plain strings, none too long, no lone surrogate) costs a few passes of
        builtins, not a Python call per query; anything else takes ``_prepare`` per query.
        With ``cleaned`` false the common case skips the look for lone surrogates (a pass
        of the regular expression over all non-ASCII text): the native engine refuses them
        with ``UnicodeEncodeError``, and the caller then cleans; the pure one cleans each.
        """
        if isinstance(queries, str | bytes):
            raise TypeError("queries must be a sequence of strings, not a single string")
        batch = list(queries)
        plain = set(map(type, batch)) <= {str}
        if plain and (not batch or max(map(len, batch)) <= QUERY_MAX_CHARS):
            if not cleaned:
                return batch
            joined = "".join(batch)
            if joined.isascii() or SURROGATE.search(joined) is None:
                return batch
        prepared = []
        for i, q in enumerate(batch):
            if not isinstance(q, str):
                raise TypeError(f"queries[{i}] must be a string, got {type(q).__name__}")
            prepared.append(self._prepare(q, k, settings)[0])
        return prepared

    def query_terms(
        self, query: str, settings: RetrievalSettings | None = None
    ) -> list[tuple[str, float]]:
        """The weighted terms a query searches for: its own, then the lexicon's expansions."""
        query, _, chosen = self._prepare(query, 0, settings)
        return list(
            self._current().index.query_terms(query, self._lexicon, chosen.expansion_weight)
        )

    def _searcher(self, built: _Built, chosen: RetrievalSettings) -> Searcher:
        """The bound search of ``built`` under ``chosen`` and the groups' boost rules.

        The hot path keeps the registry's own (see ``_fast``).
        """
        version, rules = self._boosts.rules(built, chosen)
        fast = self._fast
        if (
            fast is not None
            and (fast[0], fast[1], fast[2]) == (built.generation, built.learned, version)
            and fast[3] is chosen
        ):
            return fast[4]
        with built.lock:
            found = built.searchers.get(id(chosen))
        if found is not None and found[0] is chosen and found[1] is rules:
            made = found[2]
        else:
            made = self._backend.searcher(
                built.index, built.names, scoring_args(chosen), self._lexicon, rules
            )
            with built.lock:
                if len(built.searchers) >= _SEARCHER_CACHE:
                    built.searchers.pop(next(iter(built.searchers)))
                built.searchers[id(chosen)] = (chosen, rules, made)
        if chosen is self.settings:
            self._fast = (built.generation, built.learned, version, chosen, made)
        return made

    # -- async: the same work in a worker thread ----------------------------------------

    async def asearch(
        self,
        query: str,
        k: int = 10,
        *,
        settings: RetrievalSettings | None = None,
        admitted: Collection[str] | None = None,
        explain: bool = False,
        retrievers: Sequence[HostRanker | DocumentRanker] | None = None,
        fusion: FusionSettings | None = None,
    ) -> list[SearchHit]:
        """:meth:`search` run in a worker thread, so an event loop never waits on it.

        The same parameters and hits. The first search of a catalogue generation builds the
        index (tens of milliseconds at a thousand tools); here that happens off the loop,
        as does every search after it. The registry is safe to use from many threads, so
        searches of one registry may run side by side; the host's ``retrievers`` are then
        called in the worker thread too.

        >>> import asyncio
        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([
        ...     Tool(name="slack__send_message", description="Send a message to a channel."),
        ...     Tool(name="fs__read_file", description="Read a file from disk."),
        ... ])
        >>> hits = asyncio.run(registry.asearch("post a message to the team channel"))
        >>> [hit.name for hit in hits]
        ['slack__send_message']
        """
        return await off_loop(
            self.search,
            query,
            k,
            settings=settings,
            admitted=admitted,
            explain=explain,
            retrievers=retrievers,
            fusion=fusion,
        )

    async def aprepare(self) -> None:
        """:meth:`prepare` run in a worker thread: the index is built off the event loop.

        >>> import asyncio
        >>> from toolsurface import Tool, ToolRegistry
        >>> registry = ToolRegistry([Tool(name="fs__read_file", description="Read a file.")])
        >>> asyncio.run(registry.aprepare())  # after a catalogue change, before requests
        >>> [hit.name for hit in registry.search("read a file")]
        ['fs__read_file']
        """
        await off_loop(self.prepare)


#: ``ToolRegistry.search`` as defined here: what a native ``PlainSearch`` stands in for.
_SEARCH = ToolRegistry.search


def _english_ranker(
    semantic: object, chosen: SemanticRanker | None, english: object
) -> SemanticRanker | None:
    """The English encoder's ranker beside the extra's own (not a given) semantic ranker.

    ``None`` when the semantic ranking is off, a host gave its own ranker (its choice of
    encoder stands), or ``english`` is ``False``; with ``None``, also when
    ``TOOLSURFACE_ENGLISH_ENCODER`` turns it off or its files are not installed
    (:func:`~toolsurface.retrieval.minilm.english_default`); ``True`` requires the files.
    """
    if english is not None and not isinstance(english, bool):
        raise TypeError(f"english must be a bool or None, got {type(english).__name__}")
    if chosen is None or isinstance(semantic, SemanticRanker) or english is False:
        return None
    if english is True and not english_available():
        raise SemanticUnavailableError(
            "english=True needs the English encoder's files (pip install 'toolsurface[semantic]')"
        )
    if english is None and not english_default():
        return None
    return SemanticRanker(SharedEnglish(), depth=chosen.depth)


def _semantic_ranker(semantic: object) -> SemanticRanker | None:
    """The registry's semantic ranker for its ``semantic`` argument (see the class)."""
    if isinstance(semantic, SemanticRanker):
        return semantic
    if semantic is None:
        semantic = semantic_default()
    elif not isinstance(semantic, bool):
        raise TypeError(
            f"semantic must be a bool, a SemanticRanker or None, got {type(semantic).__name__}"
        )
    if not semantic:
        return None
    if not semantic_available():  # required, and missing: fails here, not in a search
        raise SemanticUnavailableError(
            "semantic=True needs the semantic extra (pip install 'toolsurface[semantic]')"
        )
    return SemanticRanker()  # the encoder loads on the first semantic search


_LEXICONS: dict[EngineName, Any] = {}
_LEXICON_LOCK = threading.Lock()


def _default_lexicon(b: Backend) -> Any:
    with _LEXICON_LOCK:
        lex = _LEXICONS.get(b.name)
        if lex is None:
            lex = _LEXICONS[b.name] = b.lexicon(default_lexicon_entries())
        return lex
