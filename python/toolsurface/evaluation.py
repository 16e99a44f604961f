"""Retrieval quality: recall@k, MRR and nDCG@10 over labelled queries, by language and style.

Query files are JSON Lines (``id``, ``query``, ``lang``, ``style``, ``expected``) or the BFCL
JSON list (``id``, ``query``, ``expected``, ``category``). For BFCL catalogues whose records
carry ``original_name``, any function sharing the expected one's original name is a hit.
An expected name the catalogue does not hold is a label error (:func:`check_expected`), not
a miss.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from toolsurface._internal.json_check import JsonTextError, json_lines, loads
from toolsurface.admission.text import nearest_names
from toolsurface.errors import CatalogueFormatError

__all__ = [
    "CUTOFFS",
    "DEMO_QUERIES",
    "EvalQuery",
    "GroupMetrics",
    "Miss",
    "check_expected",
    "declare_server_groups",
    "demo_queries",
    "evaluate",
    "load_aliases",
    "load_queries",
    "parse_queries",
]

#: The recall cut-offs reported.
CUTOFFS = (1, 3, 5, 10)
Ranker = Callable[[Sequence[str]], Sequence[Sequence[str]]]


@dataclass(frozen=True)
class EvalQuery:
    """One labelled request: its text, language, style and the acceptable tool names."""

    id: str
    query: str
    lang: str
    style: str
    expected: frozenset[str]
    where: str = ""


@dataclass
class GroupMetrics:
    """Metrics of a group of queries (all, one language, one style, or both)."""

    count: int = 0
    hits_at: dict[int, int] = field(default_factory=lambda: dict.fromkeys(CUTOFFS, 0))
    rr_sum: float = 0.0
    ndcg_sum: float = 0.0

    def add(self, ranks: Sequence[int], answers: Sequence[int]) -> None:
        """Count one query from where its relevant tools ranked (1-based).

        ``answers`` holds the best rank of each distinct answer (an expected tool with its
        aliases; 0 if not in the list): for nDCG a function's pooled copies are one answer.
        """
        self.count += 1
        first = min(ranks) if ranks else None
        for k in CUTOFFS:
            if first is not None and first <= k:
                self.hits_at[k] += 1
        if first is not None:
            self.rr_sum += 1.0 / first
        dcg = sum(1.0 / math.log2(r + 1) for r in answers if 0 < r <= 10)
        ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(answers), 10)))
        self.ndcg_sum += dcg / ideal if ideal else 0.0

    def as_dict(self) -> dict[str, float]:
        """The group's figures: recall@k, MRR and nDCG@10, rounded to four places."""
        n = self.count or 1
        out = {f"recall@{k}": round(self.hits_at[k] / n, 4) for k in CUTOFFS}
        out["mrr"] = round(self.rr_sum / n, 4)
        out["ndcg@10"] = round(self.ndcg_sum / n, 4)
        out["queries"] = self.count
        return out


@dataclass(frozen=True)
class Miss:
    """A query whose expected tool was not first: what ranked above it."""

    query: EvalQuery
    first_rank: int | None
    above: tuple[str, ...]


def declare_server_groups(registry: Any) -> list[str]:
    """Declare a group per server of a catalogue named ``server__name``, as the MCP adapter would.

    Each group is the server's name with prefix ``server__``; its alias is the name with
    its connectors read as spaces (``aws-eks`` is also "aws eks"), the only names the
    catalogue records (a live server's title would be another, ``adapters/mcp.py``). A
    server whose name is already a declared group is left as it is. Returns the groups made.

    >>> from toolsurface import Tool, ToolRegistry
    >>> registry = ToolRegistry([Tool(name="aws-eks__list_clusters", description="List.")])
    >>> declare_server_groups(registry)
    ['aws-eks']
    >>> registry.groups()["aws-eks"].aliases
    ('aws eks',)
    """
    servers = sorted({n.split("__", 1)[0] for n in registry.names() if "__" in n[1:]})
    made = []
    declared = registry.groups()
    for server in servers:
        if not server or server in declared:
            continue
        spaced = " ".join(server.replace("-", " ").replace("_", " ").replace(".", " ").split())
        aliases = [spaced] if spaced and spaced != server else []
        registry.declare_group(server, prefix=f"{server}__", dynamic=True, aliases=aliases)
        made.append(server)
    return made


def load_queries(path: str | Path) -> list[EvalQuery]:
    """Read a query file (JSON Lines or the BFCL JSON list); errors name the line."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CatalogueFormatError(
            f"{p}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        ) from None
    return parse_queries(text, source=str(p))


#: The bundled labelled requests over :func:`toolsurface.catalogue.demo_catalogue`.
DEMO_QUERIES = "demo_queries.jsonl"


def demo_queries() -> list[EvalQuery]:
    """The project's own labelled requests over the demo catalogue, English and Russian.

    Written for this project (``data/README.md``), so a clone reproduces the README's
    demo figure with ``toolsurface eval`` and no other data.

    >>> queries = demo_queries()
    >>> len(queries) >= 120 and {q.lang for q in queries} == {"en", "ru"}
    True
    """
    text = resources.files("toolsurface").joinpath("data").joinpath(DEMO_QUERIES)
    return parse_queries(text.read_text(encoding="utf-8"), source=DEMO_QUERIES)


def parse_queries(text: str, *, source: str) -> list[EvalQuery]:
    """Read query text (JSON Lines or the BFCL JSON list); errors name ``source`` and the line."""
    text = text.lstrip("\ufeff")
    rows: list[tuple[str, Any]] = []
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = loads(text)
        except json.JSONDecodeError as exc:
            raise CatalogueFormatError(
                f"{source}: not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
            ) from None
        except JsonTextError as exc:  # too deep, a number json cannot read, NaN
            raise CatalogueFormatError(f"{source}: {exc}") from None
        rows = [(f"{source} item {i}", row) for i, row in enumerate(data)]
    else:
        for lineno, line in enumerate(json_lines(text), 1):
            if line.strip():
                where = f"{source} line {lineno}"
                try:
                    rows.append((where, loads(line)))
                except json.JSONDecodeError as exc:
                    raise CatalogueFormatError(f"{where}: not JSON ({exc.msg})") from None
                except JsonTextError as exc:
                    raise CatalogueFormatError(f"{where}: {exc}") from None
    if not rows:
        raise CatalogueFormatError(f"{source}: no queries (an empty file or an empty list)")
    out = []
    for where, row in rows:
        if not isinstance(row, Mapping):
            raise CatalogueFormatError(f"{where}: expected an object with query and expected")
        query, expected = row.get("query"), row.get("expected")
        if not isinstance(query, str) or not isinstance(expected, list) or not expected:
            raise CatalogueFormatError(
                f"{where}: expected 'query' (a string) and 'expected' (a non-empty list of names)"
            )
        out.append(
            EvalQuery(
                id=str(row.get("id", where)),
                query=query,
                lang=str(row.get("lang", "en")),
                style=str(row.get("style", row.get("category", "user"))),
                expected=frozenset(str(e) for e in expected),
                where=where,
            )
        )
    return out


#: At most this many unknown expected names are listed in the error.
_UNKNOWN_SHOWN = 5


def check_expected(queries: Sequence[EvalQuery], known: Collection[str]) -> None:
    """Raise if a query expects a tool the catalogue lacks: a typo would score as a miss.

    The error names the query's place in its file (and its id), the name and the nearest
    catalogue names.
    """
    found: list[tuple[EvalQuery, str]] = [
        (q, name) for q in queries for name in sorted(q.expected) if name not in known
    ]
    if not found:
        return
    lines = []
    for q, name in found[:_UNKNOWN_SHOWN]:
        place = q.where or f"query {q.id!r}"
        if q.where and q.id != q.where:
            place += f" (id {q.id!r})"
        near = nearest_names(name, sorted(known))
        hint = f"; nearest: {', '.join(near)}" if near else ""
        lines.append(f"{place}: expected tool {name!r} is not in the catalogue{hint}")
    more = len(found) - _UNKNOWN_SHOWN
    if more > 0:
        lines.append(f"... and {more} more")
    head = "1 expected name is" if len(found) == 1 else f"{len(found)} expected names are"
    raise CatalogueFormatError(f"{head} not in the catalogue:\n" + "\n".join(lines))


def load_aliases(catalogue: str | Path) -> dict[str, frozenset[str]]:
    """For records with ``original_name`` (BFCL): each name -> the names sharing its original."""
    try:
        data = loads(Path(catalogue).read_text(encoding="utf-8").lstrip("\ufeff"))
    except ValueError:  # syntax, not UTF-8, or what json_check.loads refuses
        return {}  # not one JSON list (JSON Lines, say): no BFCL records, so no aliases
    if not isinstance(data, list):
        return {}
    by_original: dict[str, set[str]] = {}
    for row in data:
        if isinstance(row, Mapping) and "original_name" in row and "name" in row:
            by_original.setdefault(str(row["original_name"]), set()).add(str(row["name"]))
    aliases: dict[str, frozenset[str]] = {}
    for names in by_original.values():
        frozen = frozenset(names)
        for n in names:
            aliases[n] = frozen
    return aliases


def evaluate(
    queries: Sequence[EvalQuery],
    rank: Ranker,
    *,
    aliases: Mapping[str, frozenset[str]] | None = None,
    depth: int = 10,
) -> tuple[dict[str, dict[str, float]], list[Miss]]:
    """Score a ranker (queries in, names best first out) on labelled queries.

    Returns the metrics by group ("all", "lang=en", "style=user", "en/user", ...) and the
    queries whose expected tool was not ranked first.
    """
    aliases = aliases or {}
    rankings = rank([q.query for q in queries])
    groups: dict[str, GroupMetrics] = {}
    misses: list[Miss] = []
    for q, ranked in zip(queries, rankings, strict=True):
        classes = _answers(q.expected, aliases)
        relevant = set().union(*classes)
        top = list(ranked)[:depth]
        ranks = [i for i, name in enumerate(top, 1) if name in relevant]
        best = [min((i for i, n in enumerate(top, 1) if n in c), default=0) for c in classes]
        for key in _group_keys(q):
            groups.setdefault(key, GroupMetrics()).add(ranks, best)
        if not ranks or ranks[0] != 1:
            first = ranks[0] if ranks else None
            above = tuple(top[: (first - 1) if first else 3])
            misses.append(Miss(q, first, above))
    return {k: v.as_dict() for k, v in sorted(groups.items())}, misses


def _answers(
    expected: Iterable[str], aliases: Mapping[str, frozenset[str]]
) -> list[frozenset[str]]:
    """The distinct answers of a query: each expected name with its aliases, overlaps merged."""
    classes: list[set[str]] = []
    for name in sorted(expected):
        members = {name} | aliases.get(name, frozenset())
        joined = [c for c in classes if c & members]
        for c in joined:
            members |= c
            classes.remove(c)
        classes.append(members)
    return [frozenset(c) for c in classes]


def _group_keys(q: EvalQuery) -> Iterable[str]:
    return ("all", f"lang={q.lang}", f"style={q.style}", f"{q.lang}/{q.style}")
