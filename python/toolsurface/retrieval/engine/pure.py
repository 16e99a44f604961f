"""The pure-Python engine: lexicon, BM25F index, search, fallback and explain.

It is the reference the native engine is checked against, so every floating-point
expression here is written in the order docs/analysis.md fixes, and the native code
mirrors it term by term. Its API is the native module's, class for class.
"""

from __future__ import annotations

import heapq
import math
import struct
import threading
from array import array
from collections import OrderedDict
from collections.abc import Collection, Sequence
from functools import reduce
from operator import add

from toolsurface.retrieval.analysis.analyzer import Analyzer, shape_of
from toolsurface.retrieval.analysis.language import FORMS_ALL, language_of_source, reads_as
from toolsurface.retrieval.engine.alias_match import PureAliases
from toolsurface.retrieval.engine.ranking import Hits, boost_factor, check_factor

__all__ = ["PureFilter", "PureIndex", "PureLexicon", "ScoringKey"]

N_FIELDS = 6
SETTINGS_CACHE = 8
FUZZY_MIN_CHARS = 3
FUZZY_MIN_SIMILARITY = 0.5
FUZZY_PER_TOKEN = 3
#: Query weight of a token of the request's payload (quoted text, the text after a colon).
PAYLOAD_WEIGHT = 0.5

#: The scoring part of the settings: six weights, six ``b``, ``k1``.
ScoringKey = tuple[float, ...]
#: A single-precision value, packed: how a saturated weight is rounded (``saturated``).
_SINGLE = struct.Struct("f")


def per_field(values: Sequence[float]) -> tuple[float, ...]:
    """Six per-field values from five or six.

    Five is a caller that predates the learned field: its weight and ``b`` are then 0, so it
    scores nothing (the native binding reads five the same way).
    """
    if len(values) == N_FIELDS:
        return tuple(values)
    if len(values) == N_FIELDS - 1:
        return (*values, 0.0)
    raise ValueError(
        "weights and b take five or six values: name, search_hint, summary, body, params[, learned]"
    )


def check_settings(
    weights: Sequence[float], b: Sequence[float], k1: float, expansion_weight: float
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The six weights and ``b``; ``ValueError`` for settings no score can be computed with."""
    weights, b = per_field(weights), per_field(b)
    for w in weights:
        if not (math.isfinite(w) and w >= 0.0):
            raise ValueError(f"field weight {w!r} must be finite and >= 0")
    for x in b:
        if not (math.isfinite(x) and 0.0 <= x <= 1.0):
            raise ValueError(f"b {x!r} must be within [0, 1]")
    if not (math.isfinite(k1) and k1 > 0.0):
        raise ValueError(f"k1 {k1!r} must be finite and > 0")
    if not (math.isfinite(expansion_weight) and expansion_weight >= 0.0):
        raise ValueError(f"expansion_weight {expansion_weight!r} must be finite and >= 0")
    return weights, b


def field_parts(
    tf: Sequence[int],
    lens: Sequence[int],
    w: Sequence[float],
    b: Sequence[float],
    avglen: Sequence[float],
) -> list[float]:
    """BM25F's per-field part of one term in one tool (docs/analysis.md §5), 0 where absent.

    ``(w_f * tf_f) / ((1 - b_f) + b_f * len_f / avglen_f)``; their sum in field order is the
    term's pseudo-frequency. The one place the pure engine writes the formula: the table
    and ``explain`` both call it (the native engine's twin is ``scoring::bm25f``).
    """
    return [
        (w[f] * float(tf[f])) / ((1.0 - b[f]) + b[f] * (float(lens[f]) / avglen[f]))
        if tf[f] > 0
        else 0.0
        for f in range(N_FIELDS)
    ]


def _added(parts: list[float]) -> float:
    """``parts`` added left to right from 0.0, as the native core adds a posting's fields.

    Not ``sum``: from Python 3.12 it adds floats with compensation, which can differ from
    plain addition in the last place, and the engines' scores must agree to the bit.
    """
    return reduce(add, parts, 0.0)


def _saturation(s: float, k1: float) -> float:
    """``s / (k1 + s)`` in double precision, before :func:`saturated` rounds it."""
    return s / (k1 + s)


def saturated(s: float, k1: float) -> float:
    """The saturation ``s / (k1 + s)`` of a pseudo-frequency, rounded to single precision.

    The native table keeps each posting's weight in four bytes; rounded the same way
    (to nearest, as C's cast to ``float``) here, the engines' scores agree to the bit.
    """
    return _SINGLE.unpack(_SINGLE.pack(_saturation(s, k1)))[0]  # type: ignore[no-any-return]


class PureLexicon:
    """Query expansion entries: sources as lexicon keys (``lexkey.py``), targets as terms."""

    def __init__(self, analyzer: Analyzer, entries: Sequence[tuple[str, str]]) -> None:
        self.entries: dict[tuple[str, ...], list[str]] = {}
        #: Per key word of a tagged source, its sources' forms (``language.FORM_*``); any
        #: other key word takes every form.
        self.forms: dict[str, int] = {}
        self.max_len = 0
        #: The targets of the ``<issue-key>`` shape source (none without one).
        self.issue_key: list[str] = []
        merged_sets: dict[tuple[str, ...], set[str]] = {}
        for i, (source, target) in enumerate(entries):
            try:
                shape = shape_of(source)
                tagged = language_of_source(source)
            except ValueError as e:
                raise ValueError(f"lexicon entry {i} ({source!r}): {e}") from None
            # A shape's key is its own name, a word no analysed text has (``<`` separates).
            if shape:
                key: tuple[str, ...] = (shape,)
            elif tagged is not None:
                words = analyzer.lexicon_key(tagged[1], tagged[0])
                key = tuple(w for w, _ in words)
                for w, form in words:
                    self.forms[w] = self.forms.get(w, 0) | form
            else:
                key = tuple(analyzer.lexicon_keys(source))
            if not key:
                raise ValueError(f"lexicon entry {i} ({source!r}): source has no index terms")
            targets = analyzer.tokens(target)
            if not targets:
                raise ValueError(f"lexicon entry {i} ({source!r}): target {target!r} has no terms")
            merged = self.entries.setdefault(key, [])
            # A set beside each entry's list: one entry of many targets was quadratic.
            seen = merged_sets.setdefault(key, set())
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    merged.append(t)
            if shape:
                self.issue_key = merged
            else:
                self.max_len = max(self.max_len, len(key))

        #: Every word of a key: a request's lexicon word in its language is looked up when
        #: it is one, else its index stem (docs/analysis.md §4a).
        self.words = frozenset(w for key in self.entries for w in key)

    def reads(self, word: str, form: int) -> bool:
        """Whether a request's lookup ``word`` of ``form`` reads as a key word (§4a)."""
        return word in self.words and reads_as(self.forms.get(word, FORMS_ALL), form)

    def __len__(self) -> int:
        """Number of distinct keys."""
        return len(self.entries)


class PureFilter:
    """The set of document ids a search may return."""

    def __init__(self, ids: frozenset[int]) -> None:
        self.ids = ids


def _dominated(new: tuple[float, bool], of_content: bool, before: tuple[float, bool, bool]) -> bool:
    """Whether a key's expansion ``new`` (weight, strong) adds nothing to ``before``'s."""
    return new[0] <= before[0] and (not new[1] or before[1]) and (not of_content or before[2])


def _joined(
    before: tuple[float, bool, bool] | None, new: tuple[float, bool], of_content: bool
) -> tuple[float, bool, bool]:
    """What a key's expansions added so far, ``new`` included: best weight, strong, content."""
    if before is None:
        return (new[0], new[1], of_content)
    return (max(before[0], new[0]), before[1] or new[1], before[2] or of_content)


def _add(terms: dict[str, float], term: str, weight: float) -> None:
    old = terms.get(term)
    if old is None or weight > old:
        terms[term] = weight


def _trigrams(term: str) -> set[str]:
    padded = f" {term} "
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


class PureIndex:
    """BM25F over six fields: postings with per-field counts, saturated weights per settings.

    A document is five field texts (the learned field then empty) or six.
    """

    def __init__(
        self,
        analyzer: Analyzer,
        names: Sequence[str],
        fields: Sequence[tuple[str, ...]],
    ) -> None:
        if len(names) != len(fields):
            raise ValueError(f"{len(names)} names but {len(fields)} field tuples")
        self.analyzer = analyzer
        self.names = list(names)
        n = len(names)
        self.lengths: list[tuple[int, ...]] = []
        postings: dict[str, dict[int, list[int]]] = {}
        totals = [0] * N_FIELDS
        for doc, doc_fields in enumerate(fields):
            if len(doc_fields) not in (N_FIELDS - 1, N_FIELDS):
                raise ValueError(f"document {doc} ({names[doc]!r}) needs five or six fields")
            if len(doc_fields) < N_FIELDS:
                doc_fields = (*doc_fields, "")
            lens = []
            for f, text in enumerate(doc_fields):
                toks = analyzer.tokens(text)
                lens.append(len(toks))
                totals[f] += len(toks)
                for tok in toks:
                    per_doc = postings.setdefault(tok, {})
                    counts = per_doc.get(doc)
                    if counts is None:
                        counts = per_doc[doc] = [0] * N_FIELDS
                    counts[f] += 1
            self.lengths.append(tuple(lens))
        self.avglen = [float(t) / float(n) if n else 0.0 for t in totals]
        self.postings: dict[str, tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]] = {}
        self.idf: dict[str, float] = {}
        #: The terms of the tools' own texts (a field before the learned one): a word only the
        #: learned field holds does not make the lexicon's expansion of it weak (``_terms``).
        self.own_terms: frozenset[str] = frozenset(
            term
            for term, per_doc in postings.items()
            if any(any(c[: N_FIELDS - 1]) for c in per_doc.values())
        )
        for term, per_doc in postings.items():
            docs = tuple(sorted(per_doc))
            self.postings[term] = (docs, tuple(tuple(per_doc[d]) for d in docs))
            nf, df = float(n), float(len(docs))
            self.idf[term] = math.log(1.0 + (nf - df + 0.5) / (df + 0.5))
        self._trigram_index: dict[str, list[str]] | None = None
        self._term_grams: dict[str, int] = {}
        self._tables: OrderedDict[ScoringKey, dict[str, list[float]]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        """Number of documents."""
        return len(self.names)

    def vocabulary_size(self) -> int:
        """Number of distinct terms."""
        return len(self.postings)

    def make_filter(self, ids: Sequence[int]) -> PureFilter:
        """A filter admitting the given document ids."""
        for i in ids:
            if not 0 <= i < len(self.names):
                raise ValueError(f"document id {i} out of range 0..{len(self.names)}")
        return PureFilter(frozenset(ids))

    # -- query -----------------------------------------------------------------------------

    def query_terms(
        self, query: str, lexicon: PureLexicon | None, expansion_weight: float
    ) -> list[tuple[str, float]]:
        """Weighted query terms in order: the query's own, then lexicon expansions."""
        toks, weights, keys, lookups, function = self.analyzer.query_analysis(query, PAYLOAD_WEIGHT)
        terms = self._terms(
            toks, weights, keys, lookups, function, lexicon, expansion_weight, None, self.own_terms
        )[0]
        return list(terms.items())

    def query_language(self, query: str) -> str:
        """The language ``query`` is read in: a code of ``LANGUAGES``, or ``latin``."""
        return self.analyzer.query_language(query)

    def has_content(self, query: str, lexicon: PureLexicon | None, expansion_weight: float) -> bool:
        """Whether ``query`` has a term that is not only a function word's or its expansion's.

        A search of a query without one finds nothing (analysis.md §4): the registry answers
        it as an empty one.
        """
        toks, weights, keys, lookups, function = self.analyzer.query_analysis(query, PAYLOAD_WEIGHT)
        return self._terms(
            toks, weights, keys, lookups, function, lexicon, expansion_weight, None, self.own_terms
        )[1]

    def mentions(
        self,
        query: str,
        lexicon: PureLexicon | None,
        expansion_weight: float,
        aliases: PureAliases,
    ) -> list[int]:
        """The numbers of the groups ``query`` mentions, first mentioned first (§8)."""
        if not aliases:
            return []
        return aliases.match([t for t, _ in self.query_terms(query, lexicon, expansion_weight)])

    @staticmethod
    def _terms(
        toks: list[str],
        weights: list[float],
        keys: list[float],
        lookups: list[tuple[tuple[str, int], ...]],
        function: list[bool],
        lexicon: PureLexicon | None,
        expansion_weight: float,
        vocabulary: dict[str, float] | None = None,
        index_terms: Collection[str] | None = None,
    ) -> tuple[dict[str, float], bool, int]:
        """The query's weighted terms (analysis.md §4): its own, the keys', the issue keys'.

        Strong terms first, each group in first-seen order, then the number of strong ones:
        a term is weak (analysis.md §4, "Weak evidence") when every time it comes it is a
        function word's, or an expansion of a key whose tokens are all function words or all
        terms of the tools' own texts (``index_terms``): the request's own words reach those tools
        already, and what the lexicon injects only weighs what they reach. The second value
        says whether one term is content: a term of a token that is no function word, of the
        expansion of a key holding one, or of an issue key. With ``vocabulary`` (the index's
        terms) only the terms in it count, as a search's do. A key is matched on the first
        of each token's lookups (its lexicon key, its lexicon word in the request's language)
        that is a key word its form reads as (§4a, ``PureLexicon.reads``).
        """
        terms: dict[str, float] = {}
        strong: set[str] = set()
        content = False

        def known(term: str) -> bool:
            return vocabulary is None or term in vocabulary

        for tok, w, func in zip(toks, weights, function):
            _add(terms, tok, w)
            if not func:
                strong.add(tok)
            content = content or (not func and known(tok))
        if lexicon is not None and expansion_weight > 0.0:
            if lexicon.max_len:
                # A key is matched on the first of each token's lookups (its lexicon key,
                # its lexicon word in the request's language) that is a key word its form
                # reads as (§4a); none: no word, which no key holds.
                looked = [
                    next((w for w, form in ws if lexicon.reads(w, form)), "") for ws in lookups
                ]
                # Per key expanded: the best weight, strength and content it added. Terms keep
                # their best weight and any strength, so a key met again adding no more is
                # not expanded again (a word repeated, against a host's entry of many
                # targets, cost each time).
                applied: dict[tuple[str, ...], tuple[float, bool, bool]] = {}
                i = 0
                while i < len(toks):
                    for length in range(min(lexicon.max_len, len(toks) - i), 0, -1):
                        key = tuple(looked[i : i + length])
                        targets = lexicon.entries.get(key)
                        if targets is not None:
                            key_weight = max(weights[i : i + length])
                            of_content = not all(function[i : i + length])
                            reached = index_terms is not None and all(
                                t in index_terms for t in toks[i : i + length]
                            )
                            new = (expansion_weight * key_weight, of_content and not reached)
                            before = applied.get(key)
                            if before is not None and _dominated(new, of_content, before):
                                i += length
                                break
                            applied[key] = _joined(before, new, of_content)
                            for t in targets:
                                _add(terms, t, expansion_weight * key_weight)
                                if of_content and not reached:
                                    strong.add(t)
                                content = content or (of_content and known(t))
                            i += length
                            break
                    else:
                        i += 1
            for w in keys:
                for t in lexicon.issue_key:
                    _add(terms, t, expansion_weight * w)
                    strong.add(t)
                    content = content or known(t)
        ordered = {t: w for t, w in terms.items() if t in strong}
        n_strong = len(ordered)
        ordered.update((t, w) for t, w in terms.items() if t not in strong)
        return ordered, content, n_strong

    def _table(self, key: ScoringKey) -> dict[str, list[float]]:
        with self._lock:
            table = self._tables.get(key)
            if table is not None:
                self._tables.move_to_end(key)
                return table
        w, b, k1 = key[0:N_FIELDS], key[N_FIELDS : 2 * N_FIELDS], key[2 * N_FIELDS]
        avg = self.avglen
        table = {}
        for term, (docs, counts) in self.postings.items():
            # Rounded in one C pass, as ``saturated`` rounds one value.
            table[term] = array(
                "f",
                [
                    _saturation(_added(field_parts(tf, self.lengths[doc], w, b, avg)), k1)
                    for doc, tf in zip(docs, counts)
                ],
            ).tolist()
        with self._lock:
            self._tables[key] = table
            while len(self._tables) > SETTINGS_CACHE:
                self._tables.popitem(last=False)
        return table

    def _score(
        self,
        terms: dict[str, float],
        table: dict[str, list[float]],
        allowed: PureFilter | None,
        n_strong: int | None = None,
    ) -> dict[int, float]:
        """Each document's score: the sum, in order, of the terms it has (analysis.md §5).

        Past the first ``n_strong`` terms (all, when ``None``) a term is weak: it adds only
        to a document the terms before it scored above 0.
        """
        acc: dict[int, float] = {}
        for i, (term, weight) in enumerate(terms.items()):
            posting = self.postings.get(term)
            if posting is None:
                continue
            q = weight * self.idf[term]
            if n_strong is not None and i >= n_strong:
                for doc, sat in zip(posting[0], table[term]):
                    if acc.get(doc, 0.0) != 0.0:
                        acc[doc] += q * sat
                continue
            for doc, sat in zip(posting[0], table[term]):
                acc[doc] = acc.get(doc, 0.0) + q * sat
        if allowed is None:
            return {d: s for d, s in acc.items() if s > 0.0}
        return {d: s for d, s in acc.items() if s > 0.0 and d in allowed.ids}

    def _fuzzy_terms(self, toks: list[str]) -> dict[str, float]:
        if self._trigram_index is None:
            index: dict[str, list[str]] = {}
            counts: dict[str, int] = {}
            for term in sorted(self.postings):
                if len(term) >= FUZZY_MIN_CHARS:
                    own = _trigrams(term)
                    counts[term] = len(own)
                    for g in own:
                        index.setdefault(g, []).append(term)
            self._term_grams = counts
            self._trigram_index = index
        term_grams = self._term_grams
        most = max(term_grams.values(), default=0)
        terms: dict[str, float] = {}
        for tok in dict.fromkeys(toks):
            if len(tok) < FUZZY_MIN_CHARS:
                continue
            grams = _trigrams(tok)
            # Dice is at most 2 * |term| / (|tok| + |term|), which grows with |term|: a token
            # that even the term with the most trigrams cannot reach matches none. Skipping
            # it changes nothing but what a long made-up word costs.
            if 2.0 * float(most) / float(len(grams) + most) < FUZZY_MIN_SIMILARITY:
                continue
            common: dict[str, int] = {}
            for g in grams:
                for term in self._trigram_index.get(g, ()):
                    common[term] = common.get(term, 0) + 1
            scored = []
            for term, c in common.items():
                dice = (2.0 * float(c)) / float(len(grams) + term_grams[term])
                if dice >= FUZZY_MIN_SIMILARITY:
                    scored.append((-dice, term))
            for neg, term in sorted(scored)[:FUZZY_PER_TOKEN]:
                _add(terms, term, -neg)
        return terms

    def search(
        self,
        query: str,
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: PureLexicon | None = None,
        allowed: PureFilter | None = None,
    ) -> Hits:
        """The ``k`` best documents: ids and scores, best first, and whether the fallback ran."""
        return self.search_boosted(query, k, weights, b, k1, expansion_weight, lexicon, allowed)

    def _best(self, scores: dict[int, float], k: int, fallback: bool) -> Hits:
        """The best ``k`` of one ranking's scores, best first, ties by name."""
        names = self.names
        best = heapq.nsmallest(k, scores.items(), key=lambda item: (-item[1], names[item[0]]))
        return [d for d, _ in best], [s for _, s in best], fallback

    def search_boosted(
        self,
        query: str,
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: PureLexicon | None = None,
        allowed: PureFilter | None = None,
        boosts: Sequence[tuple[PureFilter, float]] = (),
    ) -> Hits:
        """``search`` with ``boosts`` (a filter and its factor each) applied (``ranking.py``).

        Every hit's score is multiplied by the factors of the boosts holding it, then the
        best ``k`` are kept; the fallback runs when nothing scores, as in a plain search.
        """
        weights, b = check_settings(weights, b, k1, expansion_weight)
        if k < 0:
            raise ValueError(f"k must be >= 0, got {k}")
        checked = [(f.ids, check_factor(factor)) for f, factor in boosts]
        table = self._table((*weights, *b, k1))
        toks, tok_weights, keys, lookups, function = self.analyzer.query_analysis(
            query, PAYLOAD_WEIGHT
        )
        terms, content, n_strong = self._terms(
            toks,
            tok_weights,
            keys,
            lookups,
            function,
            lexicon,
            expansion_weight,
            self.idf,
            self.own_terms,
        )
        # A request whose terms are only function words' matches nothing (analysis.md §4).
        scores = self._score(terms, table, allowed, n_strong) if content else {}
        fallback = not scores
        if fallback:
            content_toks = [t for t, func in zip(toks, function) if not func]
            scores = self._score(self._fuzzy_terms(content_toks), table, allowed)
        if checked:
            scores = {d: s * boost_factor(d, checked) for d, s in scores.items()}
        return self._best(scores, k, fallback)

    def search_many(
        self,
        queries: Sequence[str],
        k: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: PureLexicon | None = None,
        allowed: PureFilter | None = None,
    ) -> list[Hits]:
        """``search`` for each query, in order."""
        return [
            self.search(q, k, weights, b, k1, expansion_weight, lexicon, allowed) for q in queries
        ]

    def explain(
        self,
        query: str,
        doc: int,
        weights: Sequence[float],
        b: Sequence[float],
        k1: float,
        expansion_weight: float,
        lexicon: PureLexicon | None,
        fallback: bool,
    ) -> list[tuple[str, float, list[float]]]:
        """Per matched term of ``doc``: the term, its query weight, each field's contribution."""
        weights, b = check_settings(weights, b, k1, expansion_weight)
        if not 0 <= doc < len(self.names):
            raise ValueError(f"document id {doc} out of range 0..{len(self.names)}")
        toks, tok_weights, keys, lookups, function = self.analyzer.query_analysis(
            query, PAYLOAD_WEIGHT
        )
        terms = (
            self._fuzzy_terms([t for t, func in zip(toks, function) if not func])
            if fallback
            else self._terms(
                toks,
                tok_weights,
                keys,
                lookups,
                function,
                lexicon,
                expansion_weight,
                None,
                self.own_terms,
            )[0]
        )
        lens = self.lengths[doc]
        out: list[tuple[str, float, list[float]]] = []
        for term, weight in terms.items():
            posting = self.postings.get(term)
            if posting is None or doc not in posting[0]:
                continue
            tf = posting[1][posting[0].index(doc)]
            parts = field_parts(tf, lens, weights, b, self.avglen)
            s = _added(parts)
            total = (weight * self.idf[term]) * saturated(s, k1)
            out.append((term, weight, [total * (p / s) if p > 0.0 else 0.0 for p in parts]))
        return out
