"""The catalogue doctor: what in a host's catalogue keeps a tool from being found or sent.

A host hands over its registry; the doctor reports, without changing anything:

* **Unfound tools.** Each tool is searched for by its own first sentence (the ``summary``)
  and by a harder query, that sentence without the words of the tool's name (the words a
  request would use when it does not echo the name), run only when at least
  ``HARD_QUERY_MIN_TERMS`` distinct index terms remain (fewer is noise, not a request). A
  tool not in the first ``k`` hits of a query is reported with its rank (within the first
  ``DEPTH``) and the tools above it. Both queries run through the registry's own search,
  lexicon and settings, all at once with ``search_many``.
* **Near-duplicate pairs** that compete for the same requests: each is in the other's first
  two hits for the other's own summary with scores within ``MUTUAL_SCORE_RATIO`` and one of
  them is not first for its own summary, or their analysed summary terms overlap by at
  least ``TERM_OVERLAP`` (Jaccard, at least ``TERM_OVERLAP_MIN_TERMS`` distinct terms
  between them). A pair whose tools each rank first for their own summary is left out:
  the index tells them apart (a ``delete`` and a ``get`` of one object).
* **Description problems** (simple, documented heuristics on the first sentence as the
  index cuts it): ``empty`` (no description), ``too_short`` (fewer than
  ``SUMMARY_MIN_WORDS`` words with a letter or digit), ``too_long`` (over
  ``SUMMARY_MAX_CHARS`` characters: the cut probably missed a sentence end),
  ``open_bracket`` (more brackets opened than closed: cut inside a parenthesis),
  ``title_like`` (a heading, not a sentence: a breadcrumb such as "Notion | Retrieve a
  user", a Markdown ``#`` heading, or Title Case words with no end punctuation),
  ``control_chars`` (control, bidi or zero-width characters anywhere in the description:
  terminal escapes from a hostile server, say). Telling a
  verb needs a tagger, so a fragment without one is caught only in these shapes.
* **Names a provider refuses** (``NAME_RULES``): MCP allows dots and 128 characters, the
  model APIs less.

The doctor is a report: findings never raise; only bad arguments do.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from toolsurface.models import SearchHit
from toolsurface.providers import PROVIDERS
from toolsurface.providers.schemas import SchemaIssue, schema_issues
from toolsurface.registry import ToolRegistry
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.fields import split_description

__all__ = [
    "DEPTH",
    "HARD_QUERY_MIN_TERMS",
    "ISSUE_KINDS",
    "MUTUAL_SCORE_RATIO",
    "NAME_RULES",
    "SUMMARY_MAX_CHARS",
    "SUMMARY_MIN_WORDS",
    "TERM_OVERLAP",
    "TERM_OVERLAP_MIN_TERMS",
    "DescriptionIssue",
    "DoctorReport",
    "DuplicatePair",
    "NameIssue",
    "NameRule",
    "UnfoundTool",
    "description_issues",
    "diagnose",
    "format_report",
    "name_issue",
]

#: How deep the self-queries look, to give a missed tool's rank.
DEPTH = 10
#: The harder query runs when the summary keeps this many distinct terms without the name's.
HARD_QUERY_MIN_TERMS = 3
#: Two tools in each other's first two hits compete when the lower score of the pair is at
#: least this share of the higher one, on both tools' summary queries.
MUTUAL_SCORE_RATIO = 0.9
#: Two summaries sharing at least this share of their analysed terms (Jaccard) compete.
TERM_OVERLAP = 0.9
#: ... when the two summaries have at least this many distinct terms between them.
TERM_OVERLAP_MIN_TERMS = 3
#: A first sentence of fewer words than this says too little to be found by.
SUMMARY_MIN_WORDS = 3
#: A first sentence longer than this probably ran past a missed sentence end.
SUMMARY_MAX_CHARS = 300


@dataclass(frozen=True)
class NameRule:
    """One provider's rule for a function (tool) name: a pattern and where it is written."""

    provider: str
    pattern: re.Pattern[str]
    rule: str
    source: str

    def accepts(self, name: str) -> bool:
        """Whether the provider takes ``name`` as a tool name."""
        return self.pattern.fullmatch(name) is not None


# The providers' name rules come from the one table in toolsurface.providers, which cites
# each provider's API reference.
NAME_RULES: tuple[NameRule, ...] = tuple(
    NameRule(spec.name, spec.name_pattern, spec.name_rule, spec.source)
    for spec in PROVIDERS.values()
    if spec.name != "openai-responses"  # the same rule as "openai"
)

QueryKind = Literal["summary", "summary_without_name"]
IssueKind = Literal["empty", "too_short", "too_long", "open_bracket", "title_like", "control_chars"]
ISSUE_KINDS: tuple[IssueKind, ...] = (
    "empty",
    "too_short",
    "too_long",
    "open_bracket",
    "title_like",
    "control_chars",
)


@dataclass(frozen=True)
class UnfoundTool:
    """A tool its own query did not bring into the first ``k``: the query and what won."""

    name: str
    query_kind: QueryKind
    query: str
    rank: int | None
    above: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return {
            "name": self.name,
            "query_kind": self.query_kind,
            "query": self.query,
            "rank": self.rank,
            "above": list(self.above),
        }


@dataclass(frozen=True)
class DuplicatePair:
    """Two tools that compete for the same requests, with the evidence and one figure."""

    a: str
    b: str
    similarity: float
    score_ratio: float | None
    term_overlap: float
    mutual_top2: bool

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return {
            "a": self.a,
            "b": self.b,
            "similarity": round(self.similarity, 4),
            "score_ratio": None if self.score_ratio is None else round(self.score_ratio, 4),
            "term_overlap": round(self.term_overlap, 4),
            "mutual_top2": self.mutual_top2,
        }


@dataclass(frozen=True)
class DescriptionIssue:
    """A description whose first sentence (what the index weighs most) is empty or badly cut."""

    name: str
    issue: IssueKind
    summary: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return {
            "name": self.name,
            "issue": self.issue,
            "summary": self.summary,
            "detail": self.detail,
        }


@dataclass(frozen=True)
class NameIssue:
    """A tool name that some providers refuse, and each one's rule."""

    name: str
    refused_by: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        """The finding as JSON-ready values."""
        return {
            "name": self.name,
            "length": len(self.name),
            "refused_by": list(self.refused_by),
        }


@dataclass(frozen=True)
class DoctorReport:
    """Everything the doctor found in one catalogue, with the settings it looked with."""

    tools: int
    engine: str
    k: int
    summary_queries: int
    hard_queries: int
    unfound: tuple[UnfoundTool, ...]
    duplicates: tuple[DuplicatePair, ...]
    descriptions: tuple[DescriptionIssue, ...]
    names: tuple[NameIssue, ...]
    catalogue: str = ""
    #: What each provider is sent differently (schema changes, aliases), per tool.
    schemas: tuple[SchemaIssue, ...] = ()
    seconds: float | None = field(default=None, compare=False)

    def counts(self) -> dict[str, Any]:
        """How many findings of each kind: the summary a host reads first."""
        by_issue = {kind: 0 for kind in ISSUE_KINDS}
        for d in self.descriptions:
            by_issue[d.issue] += 1
        by_provider = {rule.provider: 0 for rule in NAME_RULES}
        for n in self.names:
            for p in n.refused_by:
                by_provider[p] += 1
        return {
            "summary_queries": self.summary_queries,
            "hard_queries": self.hard_queries,
            "unfound_by_summary": sum(u.query_kind == "summary" for u in self.unfound),
            "unfound_without_name_words": sum(
                u.query_kind == "summary_without_name" for u in self.unfound
            ),
            "unfound_tools": len({u.name for u in self.unfound}),
            "duplicate_pairs": len(self.duplicates),
            "description_issues": by_issue,
            "refused_names": by_provider,
            "refused_name_tools": len(self.names),
            "schema_changes": {
                p: sum(s.provider == p for s in self.schemas) for p in sorted(PROVIDERS)
            },
        }

    def as_dict(self) -> dict[str, Any]:
        """The whole report as JSON-ready values (the ``--json`` output)."""
        out: dict[str, Any] = {
            "catalogue": self.catalogue,
            "engine": self.engine,
            "tools": self.tools,
            "k": self.k,
            "counts": self.counts(),
            "unfound": [u.as_dict() for u in self.unfound],
            "duplicates": [d.as_dict() for d in self.duplicates],
            "descriptions": [d.as_dict() for d in self.descriptions],
            "names": [n.as_dict() for n in self.names],
            "schemas": [s.as_dict() for s in self.schemas],
            "name_rules": [
                {"provider": r.provider, "rule": r.rule, "source": r.source} for r in NAME_RULES
            ],
        }
        if self.seconds is not None:
            out["seconds"] = round(self.seconds, 3)
        return out


# -- the checks ----------------------------------------------------------------------------

_TITLE_SEPARATOR = re.compile(r"\s[|¦»›]\s|\s::\s")
_SENTENCE_END = (".", "!", "?", ":", ";", "…")


#: Terminal escape sequences (CSI ``ESC [ ... m``, OSC ``ESC ] ... BEL``), and the
#: character categories safe_text drops: control, format (bidi, zero-width), private use.
_ESCAPE_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")
_CONTROL_CATEGORIES = frozenset({"Cc", "Cf", "Co", "Cs"})


def _control_chars(text: str) -> int:
    """How many control, format or private-use characters the text has (tab, newline aside)."""
    return sum(
        1 for ch in text if ch not in "\t\n\r" and unicodedata.category(ch) in _CONTROL_CATEGORIES
    )


def _open_brackets(text: str) -> int:
    """How many more brackets the text opens than it closes (escape sequences ignored)."""
    text = _ESCAPE_SEQUENCE.sub("", text)
    return sum(text.count(c) for c in "([{") - sum(text.count(c) for c in ")]}")


def _is_title_like(summary: str) -> bool:
    """Whether a first sentence reads as a heading rather than a sentence (module docs)."""
    if summary.startswith("#") or _TITLE_SEPARATOR.search(summary):
        return True
    if summary.rstrip(")]}\"'`").endswith(_SENTENCE_END):
        return False
    words = [w for w in re.findall(r"[^\W\d_]+", summary) if len(w) >= 4]
    return len(words) >= 2 and all(w[0].isupper() for w in words)


def description_issues(name: str, description: str) -> list[DescriptionIssue]:
    """The problems of one tool's description under the heuristics of the module docs."""
    if not description.strip():
        return [DescriptionIssue(name, "empty", "", "no description: found by its name only")]
    summary, _ = split_description(description)
    out: list[DescriptionIssue] = []
    words = sum(any(c.isalnum() for c in w) for w in summary.split())
    if words < SUMMARY_MIN_WORDS:
        out.append(
            DescriptionIssue(
                name,
                "too_short",
                summary,
                f"first sentence has {words} word(s), fewer than {SUMMARY_MIN_WORDS}",
            )
        )
    if len(summary) > SUMMARY_MAX_CHARS:
        out.append(
            DescriptionIssue(
                name,
                "too_long",
                summary,
                f"first sentence has {len(summary)} characters, over {SUMMARY_MAX_CHARS}: "
                "end it with '. ' where it ends",
            )
        )
    opened = _open_brackets(summary)
    if opened > 0:
        out.append(
            DescriptionIssue(
                name,
                "open_bracket",
                summary,
                f"first sentence ends inside {opened} open bracket(s)",
            )
        )
    if _is_title_like(summary):
        out.append(
            DescriptionIssue(
                name,
                "title_like",
                summary,
                "first sentence reads as a title: say what the tool does, in a sentence",
            )
        )
    controls = _control_chars(description)
    if controls:
        out.append(
            DescriptionIssue(
                name,
                "control_chars",
                summary,
                f"description has {controls} control or invisible character(s) (terminal "
                "escapes, bidi or zero-width marks): the tool list sends them to the model",
            )
        )
    return out


def name_issue(name: str) -> NameIssue | None:
    """Which providers refuse a name, or ``None`` when every one takes it."""
    refused = tuple(rule.provider for rule in NAME_RULES if not rule.accepts(name))
    return NameIssue(name, refused) if refused else None


def _without_name_words(summary: str, name_terms: set[str], tokens: Any) -> str:
    """The summary with every word dropped whose index terms meet the name's."""
    kept = [w for w in summary.split() if not set(tokens(w)) & name_terms]
    return " ".join(kept)


def _unfound(
    name: str, kind: QueryKind, query: str, hits: Sequence[SearchHit], k: int
) -> UnfoundTool | None:
    """The finding for one self-query, or ``None`` when the tool is in the first ``k``."""
    ranked = [h.name for h in hits]
    rank = ranked.index(name) + 1 if name in ranked else None
    if rank is not None and rank <= k:
        return None
    return UnfoundTool(name, kind, query, rank, tuple(ranked[:k]))


def _mutual_pairs(hits_by_name: Mapping[str, Sequence[SearchHit]]) -> dict[tuple[str, str], float]:
    """Pairs each in the other's first two summary hits with close scores: pair -> ratio."""
    top2 = {n: {h.name for h in hits[:2]} for n, hits in hits_by_name.items()}
    scores = {n: {h.name: h.score for h in hits} for n, hits in hits_by_name.items()}
    out: dict[tuple[str, str], float] = {}
    for a in sorted(top2):
        for b in sorted(top2[a]):
            if b == a or a not in top2.get(b, ()) or (b, a) in out:
                continue
            ratios = []
            for query_of in (a, b):
                sa, sb = scores[query_of].get(a, 0.0), scores[query_of].get(b, 0.0)
                lo, hi = min(sa, sb), max(sa, sb)
                ratios.append(lo / hi if hi > 0 else 0.0)
            ratio = min(ratios)
            if ratio >= MUTUAL_SCORE_RATIO:
                out[(min(a, b), max(a, b))] = ratio
    return out


def _overlap_pairs(terms: Mapping[str, frozenset[str]]) -> dict[tuple[str, str], float]:
    """Pairs whose summary terms overlap by ``TERM_OVERLAP`` or more: pair -> Jaccard."""
    postings: dict[str, list[str]] = {}
    for n in sorted(terms):
        for t in terms[n]:
            postings.setdefault(t, []).append(n)
    out: dict[tuple[str, str], float] = {}
    for a in sorted(terms):
        ta = terms[a]
        if not ta:
            continue
        shared: dict[str, int] = {}
        for t in ta:
            for b in postings[t]:
                if b > a:
                    shared[b] = shared.get(b, 0) + 1
        for b, s in shared.items():
            union = len(ta) + len(terms[b]) - s
            if union >= TERM_OVERLAP_MIN_TERMS and s / union >= TERM_OVERLAP:
                out[(a, b)] = s / union
    return out


def _jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    """Shared terms over all terms of two sets (0 for two empty sets)."""
    union = len(x | y)
    return len(x & y) / union if union else 0.0


def diagnose(registry: ToolRegistry, *, k: int = 3, catalogue: str = "") -> DoctorReport:
    """Examine every tool of ``registry`` (module docs) and return the findings, sorted."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a whole number >= 1, got {k!r}")
    tools = registry.tools()
    tokens = backend(registry.engine).tokens
    summaries: dict[str, str] = {}
    summary_terms: dict[str, frozenset[str]] = {}
    descriptions: list[DescriptionIssue] = []
    names: list[NameIssue] = []
    queries: list[tuple[str, QueryKind, str]] = []
    for tool in tools:
        descriptions.extend(description_issues(tool.name, tool.description))
        issue = name_issue(tool.name)
        if issue is not None:
            names.append(issue)
        summary = split_description(tool.description)[0]
        if not tokens(summary):
            continue
        summaries[tool.name] = summary
        summary_terms[tool.name] = frozenset(tokens(summary))
        queries.append((tool.name, "summary", summary))
        harder = _without_name_words(summary, set(tokens(tool.name)), tokens)
        if len(set(tokens(harder))) >= HARD_QUERY_MIN_TERMS and harder != summary:
            queries.append((tool.name, "summary_without_name", harder))
    depth = max(k, DEPTH)
    results = registry.search_many([q for _, _, q in queries], k=depth)
    unfound: list[UnfoundTool] = []
    own_hits: dict[str, Sequence[SearchHit]] = {}
    for (name, kind, query), hits in zip(queries, results):
        if kind == "summary":
            own_hits[name] = hits
        found = _unfound(name, kind, query, hits, k)
        if found is not None:
            unfound.append(found)
    mutual = _mutual_pairs(own_hits)
    overlap = _overlap_pairs(summary_terms)
    pairs: list[DuplicatePair] = []
    told_apart = {n for n, hits in own_hits.items() if hits and hits[0].name == n}
    for a, b in sorted(set(mutual) | set(overlap)):
        if a in told_apart and b in told_apart:
            continue  # each is first for its own summary: the index separates them
        jac = overlap.get((a, b), _jaccard(summary_terms[a], summary_terms[b]))
        ratio = mutual.get((a, b))
        similarity = max(jac, ratio if ratio is not None else 0.0)
        pairs.append(DuplicatePair(a, b, similarity, ratio, jac, ratio is not None))
    pairs.sort(key=lambda p: (-p.similarity, p.a, p.b))
    kind_order = {"summary": 0, "summary_without_name": 1}
    unfound.sort(key=lambda u: (kind_order[u.query_kind], u.name))
    return DoctorReport(
        tools=len(tools),
        engine=registry.engine,
        k=k,
        summary_queries=sum(kind == "summary" for _, kind, _ in queries),
        hard_queries=sum(kind == "summary_without_name" for _, kind, _ in queries),
        unfound=tuple(unfound),
        duplicates=tuple(pairs),
        descriptions=tuple(descriptions),
        names=tuple(names),
        catalogue=catalogue,
        schemas=tuple(schema_issues(tools)),
    )


# -- the human-readable report -------------------------------------------------------------


def _clip(text: str, width: int = 90) -> str:
    """The text on one line, cut to ``width`` characters with an ellipsis."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 3] + "..."


def _more(shown: int, total: int) -> list[str]:
    """The line saying how many findings were left out, if any."""
    return (
        [f"  ... and {total - shown} more (--limit 0 or --json for all)"] if total > shown else []
    )


def format_report(report: DoctorReport, *, limit: int = 20) -> str:
    """The report as text in sections with counts; ``limit`` findings a section (0: all)."""
    counts = report.counts()
    cap = limit if limit > 0 else None
    where = f" in {report.catalogue}" if report.catalogue else ""
    took = f", {report.seconds:.2f} s" if report.seconds is not None else ""
    lines = [f"toolsurface doctor: {report.tools} tools{where}, engine {report.engine}{took}", ""]

    lines.append(
        f"Not found in the first {report.k} by their own first sentence: "
        f"{counts['unfound_by_summary']} of {report.summary_queries} tools; by it without "
        f"their name's words: {counts['unfound_without_name_words']} of {report.hard_queries}"
        f" ({counts['unfound_tools']} tools in all)"
    )
    for kind, label in (("summary", "summary"), ("summary_without_name", "without name words")):
        found = [u for u in report.unfound if u.query_kind == kind]
        for u in found[:cap]:
            where_ranked = f"rank {u.rank}" if u.rank else f"not in the first {DEPTH}"
            lines.append(f"  {u.name} [{label}] {where_ranked}: {_clip(u.query, 70)!r}")
            lines.append(f"      above: {', '.join(u.above)}")
        lines.extend(_more(len(found[:cap]), len(found)))
    lines.append("")

    lines.append(
        f"Near-duplicate pairs competing for the same requests: {counts['duplicate_pairs']}"
    )
    for p in report.duplicates[:cap]:
        evidence = [f"summary terms {p.term_overlap:.0%} shared"]
        if p.score_ratio is not None:
            evidence.insert(0, f"each other's top 2, scores within {1 - p.score_ratio:.0%}")
        lines.append(f"  {p.similarity:.2f}  {p.a}  ~  {p.b}  ({'; '.join(evidence)})")
    lines.extend(_more(len(report.duplicates[:cap]), len(report.duplicates)))
    lines.append("")

    by_issue = counts["description_issues"]
    lines.append(
        f"Description problems: {len(report.descriptions)} ("
        + ", ".join(f"{kind.replace('_', ' ')} {by_issue[kind]}" for kind in ISSUE_KINDS)
        + ")"
    )
    for d in report.descriptions[:cap]:
        shown = f": {_clip(d.summary, 60)!r}" if d.summary else ""
        lines.append(f"  {d.name} [{d.issue.replace('_', ' ')}] {d.detail}{shown}")
    lines.extend(_more(len(report.descriptions[:cap]), len(report.descriptions)))
    lines.append("")

    refused = counts["refused_names"]
    lines.append(
        f"Names a provider refuses: {counts['refused_name_tools']} tools ("
        + ", ".join(f"{p} {refused[p]}" for p in refused)
        + ")"
    )
    for n in report.names[:cap]:
        lines.append(f"  {n.name} ({len(n.name)} chars): refused by {', '.join(n.refused_by)}")
    lines.extend(_more(len(report.names[:cap]), len(report.names)))
    if report.names:
        for rule in NAME_RULES:
            lines.append(f"    {rule.provider}: {rule.rule} ({rule.source})")
    changed = counts["schema_changes"]
    lines.append("")
    lines.append(
        "Sent otherwise than registered (schemas rewritten, names aliased): "
        + ", ".join(f"{p} {changed[p]} tools" for p in changed)
    )
    for s in report.schemas[:cap]:
        lines.append(f"  {s.name} to {s.provider}: {_clip('; '.join(s.changes), 120)}")
    lines.extend(_more(len(report.schemas[:cap]), len(report.schemas)))
    return "\n".join(lines) + "\n"
