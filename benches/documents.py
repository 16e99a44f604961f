"""DocumentRetriever (protocore's ``rank(query, documents, limit)``) against registry.search.

    python benches/documents.py [--catalogue FILE] [--queries FILE] [--rounds N] [--json]

The documents are the real catalogue's tools plus the ToolSearch tool (1,636, the count a
host holding the catalogue and its search tool passes), each tool's parameters flattened
as the reference host flattens them: every top-level property's name and description,
joined by spaces. Measures, in one run:

(a) the first ``rank`` call at 700 and at 1,636 documents (a fresh retriever each time,
    the median of ``--rounds``; the bundled lexicon is compiled once per process, by the
    first retriever made, and that construction is reported on its own), taking turns
    with the floor and the hashing wrapper below;
(b) a later call (the same sequence object) against ``ToolRegistry.search`` for the same
    query on a registry holding the equivalent tools (the real tools, schemas cut to the
    top-level properties' names and descriptions), at 700 documents, over the 600
    development queries: per query the median of ``--rounds`` timed calls of each,
    interleaved, then the median of the per-query ratios; the rankings are checked equal;
(c) the cost of noticing an unchanged catalogue: ``rank(query, docs, 0)`` (the check and
    nothing else) with the same sequence object (median of 20 x ``--rounds`` calls), a new
    list of the same documents, and a new list of equal copies (new document objects, new
    strings; each a fresh list per call, the median of 4 x ``--rounds``), at 700 and 1,636;
    and a new list checked again at once (``invalidate()`` first: warm caches).

Beside them, in the same run: the floor (``ToolRegistry(tools)`` and its first search, the
build the retriever cannot skip) and the wrapper a host wrote before (hash every document's
fields on every call, rebuild a registry when the hash moves), first and later calls.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsurface import Tool, ToolRegistry, engine, tool_search_tool
from toolsurface.adapters.documents import DocumentRetriever
from toolsurface.catalogue import load_catalogue

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"


@dataclass(frozen=True)
class Document:
    """A host's document, as protocore hands it to its retriever."""

    name: str
    description: str
    search_hint: str
    parameters: str


def flatten(schema: dict[str, Any]) -> str:
    """The reference host's parameters text: top-level names and descriptions, joined."""
    out: list[str] = []
    for name, prop in (schema.get("properties") or {}).items():
        out.append(name)
        desc = prop.get("description") if isinstance(prop, dict) else None
        if isinstance(desc, str) and desc:
            out.append(desc)
    return " ".join(out)


def top_level(schema: dict[str, Any]) -> dict[str, Any]:
    """A schema of the same top-level names and descriptions, and nothing else."""
    props = {}
    for name, prop in (schema.get("properties") or {}).items():
        desc = prop.get("description") if isinstance(prop, dict) else None
        props[name] = {"description": desc} if isinstance(desc, str) and desc else {}
    return {"type": "object", "properties": props}


def copy_str(text: str) -> str:
    """An equal string that is another object (so equality compares the characters)."""
    return "".join(list(text))


class HashingWrapper:
    """The host's own wrapper this module replaces: a hash of every document, every call."""

    def __init__(self) -> None:
        self.key = ""
        self.registry = ToolRegistry()

    def rank(self, query: str, documents: list[Document], limit: int) -> list[str]:
        rows = [[d.name, d.description, d.search_hint, d.parameters] for d in documents]
        key = hashlib.sha256(json.dumps(rows).encode()).hexdigest()
        if key != self.key:
            self.registry = ToolRegistry(
                Tool(
                    name=d.name,
                    description=d.description,
                    search_hint=d.search_hint,
                    input_schema={
                        "type": "object",
                        "properties": {"p": {"description": d.parameters}},
                    },
                )
                for d in documents
            )
            self.key = key
        return [h.name for h in self.registry.search(query, limit)]


def median_seconds(fn: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def first_calls(
    docs: list[Document], tools: list[Tool], rounds: int
) -> tuple[float, float, dict[str, float]]:
    """Medians of: our first rank, the floor, the hashing wrapper's first and later calls.

    The three take turns within each round, so drift on a shared machine hits them alike.
    """
    query = "list open pull requests"
    ours, floors, first, later = [], [], [], []
    for _ in range(rounds):
        retriever = DocumentRetriever()
        fresh = list(docs)
        t0 = time.perf_counter()
        retriever.rank(query, fresh, 10)
        t1 = time.perf_counter()
        ToolRegistry(tools).search(query, 10)
        t2 = time.perf_counter()
        wrapper = HashingWrapper()
        t3 = time.perf_counter()
        wrapper.rank(query, docs, 10)
        t4 = time.perf_counter()
        wrapper.rank(query, docs, 10)
        t5 = time.perf_counter()
        ours.append(t1 - t0)
        floors.append(t2 - t1)
        first.append(t4 - t3)
        later.append(t5 - t4)
    med = statistics.median
    return med(ours), med(floors), {"first_s": med(first), "later_s": med(later)}


def later_calls(
    docs: list[Document], tools: list[Tool], queries: list[str], rounds: int
) -> dict[str, Any]:
    retriever = DocumentRetriever()
    registry = ToolRegistry(tools)
    mismatches = sum(
        retriever.rank(q, docs, 10) != [h.name for h in registry.search(q, 10)] for q in queries
    )
    ours, theirs, ratios = [], [], []
    rank, search = retriever.rank, registry.search
    for q in queries:
        a, b = [], []
        for _ in range(rounds):  # interleaved: drift hits both alike
            t0 = time.perf_counter()
            rank(q, docs, 10)
            t1 = time.perf_counter()
            search(q, 10)
            t2 = time.perf_counter()
            a.append(t1 - t0)
            b.append(t2 - t1)
        ours.append(statistics.median(a))
        theirs.append(statistics.median(b))
        ratios.append(ours[-1] / theirs[-1])
    return {
        "rank_us": statistics.median(ours) * 1e6,
        "search_us": statistics.median(theirs) * 1e6,
        "ratio": statistics.median(ratios),
        "mismatches": mismatches,
        "builds": retriever.builds,
    }


def checks(docs: list[Document], rounds: int) -> dict[str, float]:
    retriever = DocumentRetriever()
    retriever.rank("warm", docs, 1)
    same = median_seconds(lambda: retriever.rank("x", docs, 0), rounds * 20)
    # A fresh sequence for every timed call (made beforehand), as a host passes one.
    lists = [list(docs) for _ in range(rounds * 4)]
    copies = [
        [
            Document(*(copy_str(f) for f in (d.name, d.description, d.search_hint, d.parameters)))
            for d in docs
        ]
        for _ in range(rounds * 4)
    ]
    new_list = statistics.median(
        median_seconds(lambda fresh=fresh: retriever.rank("x", fresh, 0), 1) for fresh in lists
    )
    new_copies = statistics.median(
        median_seconds(lambda fresh=fresh: retriever.rank("x", fresh, 0), 1) for fresh in copies
    )
    # The same check on a list just read (warm caches): invalidate() forgets the object.
    warm_list = lists[0]

    def recheck() -> None:
        retriever.invalidate()
        retriever.rank("x", warm_list, 0)

    warm = median_seconds(recheck, rounds * 20)
    assert retriever.builds == 1, "an unchanged catalogue was rebuilt"
    return {
        "warm_new_list_us": warm * 1e6,
        "same_object_us": same * 1e6,
        "new_list_us": new_list * 1e6,
        "equal_copies_us": new_copies * 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _, real = load_catalogue(args.catalogue)
    real = [*real, tool_search_tool()]
    rows = [json.loads(x) for x in Path(args.queries).read_text("utf-8").splitlines() if x.strip()]
    queries = [r["query"] for r in rows]
    docs = [Document(t.name, t.description, t.search_hint, flatten(t.input_schema)) for t in real]
    tools = [t.model_copy(update={"input_schema": top_level(t.input_schema)}) for t in real]

    t0 = time.perf_counter()
    DocumentRetriever()
    construct = time.perf_counter() - t0  # the first in the process: compiles the lexicon

    out: dict[str, Any] = {"engine": engine(), "documents": len(docs), "construct_s": construct}
    out["first_call_s"], out["floor_s"], out["hashing_wrapper"] = {}, {}, {}
    for n in (700, len(docs)):
        made = first_calls(docs[:n], tools[:n], args.rounds)
        out["first_call_s"][n], out["floor_s"][n], out["hashing_wrapper"][n] = made
    out["later_700"] = later_calls(docs[:700], tools[:700], queries, args.rounds)
    out["checks_us"] = {n: checks(docs[:n], args.rounds) for n in (700, len(docs))}
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"engine {out['engine']}, {len(docs)} documents, {len(queries)} queries")
    print(f"first DocumentRetriever() in the process (lexicon compiled): {construct:.3f} s")
    for n, s in out["first_call_s"].items():
        print(f"first rank at {n} documents: {s:.3f} s")
    for n, s in out["floor_s"].items():
        print(f"floor at {n}: ToolRegistry(tools) and its first search {s:.3f} s")
    for n, h in out["hashing_wrapper"].items():
        print(
            f"hashing wrapper at {n}: first call {h['first_s']:.3f} s, "
            f"later call {h['later_s'] * 1e3:.1f} ms"
        )
    later = out["later_700"]
    print(
        f"later call at 700: rank {later['rank_us']:.1f} us, search {later['search_us']:.1f} us, "
        f"median ratio {later['ratio']:.3f} ({later['mismatches']} rankings differ, "
        f"{later['builds']} build)"
    )
    for n, c in out["checks_us"].items():
        print(
            f"check at {n}: same object {c['same_object_us']:.2f} us, new list "
            f"{c['new_list_us']:.1f} us (warm {c['warm_new_list_us']:.1f} us), "
            f"equal copies {c['equal_copies_us']:.1f} us"
        )


if __name__ == "__main__":
    main()
