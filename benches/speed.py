"""Speed and size of ours against other BM25 libraries, as the catalogue grows, in one run.

    python benches/speed.py [--sizes 1635,10000] [--engines native,pure] [--peers all]
                            [--rounds 3] [--json OUT] [--plot docs/performance.png]
    python benches/speed.py --build-only --sizes 100000 [--repeat 3] [--dump-fields F]

``--build-only`` times only ours (native) building each size, ``--repeat`` times, each in a
fresh process: registering the tools, building the index, and the index's digest (equal
for identical indexes, so a change of the build can be checked to leave it so), and, apart,
registering the same tools given as mappings (as a host gets them from MCP: validated and
their schemas copied);
``--dump-fields`` writes the catalogue's field texts for the core's profiling harness
(``crates/toolsurface-core/examples/bench.rs``, whose ``digest`` mode prints the same kind
of digest from Rust alone).

Per catalogue size and per system (ours per engine, each peer of ``benches/peers.py``):

- **build**: seconds to build the index from the tools (ours: ``register_many`` plus the
  index; peers: their tokenising plus their index; the peers' document text is made before
  the clock starts). Measured in a fresh subprocess per system, after the system's one-off
  warm-up (numba JIT, the bundled lexicon, model load), so that the memory figures below
  are clean; ``--build-runs`` times (default 3, the systems taking turns), the median kept
  (each run's time is in the JSON; the memory figures are the first good run's). Ours'
  registering and indexing medians are taken apart, so they need not add up to its build
  median.
- **index memory**, several figures, all in the JSON; the table shows one and says which:
  ``memory_bytes`` (ours native: ``registry._current().index.memory_bytes()``, the
  index's own count of its arrays), ``tracemalloc`` (bytes still allocated after a second
  build traced by tracemalloc: Python objects and numpy arrays; it does *not* see
  allocations made by Rust or C++ code outside Python's allocator, so it reads near zero
  for tantivy, rank-bm25-rs, bm25-rs, bm25-turbo and ours native), ``RSS delta``
  (resident set growth of the worker over the timed build, after ``gc.collect()``: sees
  everything, includes allocator slack and transient garbage; page granularity, noisy
  below a few MB) and ``RSS delta, trimmed`` (the same after glibc's ``malloc_trim(0)``
  hands free heap pages back: closer to what the index keeps). The table uses
  ``memory_bytes`` where the index gives it, ``tracemalloc`` for pure-Python/numpy indexes
  (ours pure, rank_bm25, bm25s, dense), and the trimmed RSS delta for the native peers.
  Only the RSS columns measure every system the same way; ours' ``memory_bytes`` leaves
  out what the registry keeps in Python (each tool's field texts: the traced figure).
- **latency**: per query, median of ``--rounds`` timed runs after one warm-up pass; then
  the median and p90 of those over 200 English and 200 Russian requests from dev.jsonl
  (a fixed sample). All systems are built in this process and timed *interleaved* (each
  query, each round, in shuffled system order, garbage collector paused), so drift on a
  shared machine hits every system alike; the dense model is timed on its own afterwards
  (torch's threads keep spinning after a call and would slow whatever runs next). A
  system whose warm-up pass took longer than ``--budget`` seconds gets fewer rounds (at
  least one).
- **batch QPS**: the 400 requests through the batch path (``search_many`` for ours, the
  peer's own batch call where it has one, else a loop), median of ``--batch-rounds``.
- **ratios**, printed: ours native / each system, median over queries of the per-query
  ratio of latencies (below 1: ours faster), with the inverse as a speed-up.

Growing the catalogue (sizes above the real 1,635 tools). The real tools come first; each
further tool takes a real tool as its template (cycling through the catalogue in a fixed
shuffled order) and keeps its structure: the same parameter names and schema shape, the
same layout of description text. In its description and in every ``description`` string of
its schema, each content word (3+ letters, not a stopword) is replaced with probability
``--replace`` (default 0.3) by a word drawn from the real catalogue's content-word frequency
distribution (so term statistics stay Zipf-like and realistic), keeping capitalisation; the
words of its tool name are replaced with the same probability by words drawn from the real
tool names' word distribution. Its name is ``<server>-<n>__<new tool name>`` with ``n`` a
global counter, so names are unique and servers keep their names as words: each synthetic
tool has a server of its own (``servers="per-tool"``, the default, and the worst case for
what a host keeps per server). With ``servers="copies"`` the n-th pass over the catalogue
makes copy ``n`` of every server instead (``<server>-<n>__``), so servers keep the real
ones' sizes (48 tools on average) as a host with many MCP servers has them; a name a
rewrite made twice within a copy gets ``_2``, ``_3``, ... appended. Seeded: the same
``--seed`` gives the same catalogues.

Caps: ``ours (pure)`` and ``rank_bm25`` (pure-Python indexes) run only up to
``--slow-max-size`` tools (default 10,000: there, under load, the pure engine took 20 s
to build and 5 ms a query, rank_bm25 70 ms a query; at 100,000 each is built three times,
worker timed, worker traced and for latency, at several minutes each); the dense model,
included only when named in ``--peers`` (e.g. ``--peers all,dense``), up to
``--dense-max-size`` (default 1,635: embedding 10,000 tools takes minutes on 2 cores).
Skipped cells are listed, never silent.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pickle
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from peers import (
    LEXICAL_PEERS,
    DenseAdapter,
    OursAdapter,
    Peer,
    package_versions,
    peer_text,
)

import toolsurface
from toolsurface.catalogue import load_catalogue
from toolsurface.cli import _at_least
from toolsurface.models import Tool

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SLOW = ("ours-pure", "rank_bm25")

# -- systems -----------------------------------------------------------------------------------


def make_system(key: str) -> Peer:
    if key.startswith("ours-"):
        return OursAdapter(key.split("-", 1)[1])
    if key == "dense":
        return DenseAdapter()
    return LEXICAL_PEERS[key]()


def label_of(key: str) -> str:
    if key.startswith("ours-"):
        return f"ours ({key.split('-', 1)[1]})"
    return {"dense": DenseAdapter.label}.get(key, key)


def memory_choice(key: str, row: Mapping[str, Any]) -> tuple[int | None, str]:
    """The memory figure the table shows for a system, and its source."""
    if row.get("memory_bytes") is not None:
        return row["memory_bytes"], "memory_bytes"
    if not row.get("native_memory", True):
        return row.get("traced_bytes"), "tracemalloc"
    return row.get("rss_trimmed", row.get("rss_delta")), "RSS delta, trimmed"


# -- the grown catalogue -----------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z]+")
_NAME_PART = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9]+")
_STOP = frozenset(
    """the and for with from that this are was were will can not you your its has have had
    any all each which when what where who how than then them they their there these those
    into onto over under per via but also may must should would could such other more most
    only use used using given list get set one two see e.g etc""".split()
)


class _Sampler:
    """Words drawn by their frequency in the real catalogue."""

    def __init__(self, counts: Counter[str], rng: random.Random) -> None:
        self.words = list(counts)
        weights = [counts[w] for w in self.words]
        total = 0
        self.cum = []
        for w in weights:
            total += w
            self.cum.append(total)
        self.rng = rng
        self._pool: list[str] = []

    def draw(self) -> str:
        if not self._pool:
            self._pool = self.rng.choices(self.words, cum_weights=self.cum, k=65536)
        return self._pool.pop()


def _content(word: str) -> bool:
    return len(word) >= 3 and word.lower() not in _STOP


def _casing(template: str, word: str) -> str:
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[0].isupper():
        return word.capitalize()
    return word


def _schema_texts(schema: Any) -> list[str]:
    out: list[str] = []
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "description" and isinstance(value, str):
                out.append(value)
            else:
                out.extend(_schema_texts(value))
    elif isinstance(schema, list):
        for item in schema:
            out.extend(_schema_texts(item))
    return out


def _rewrite_schema(schema: Any, fn: Callable[[str], str]) -> Any:
    if isinstance(schema, Mapping):
        return {
            k: fn(v) if k == "description" and isinstance(v, str) else _rewrite_schema(v, fn)
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_rewrite_schema(v, fn) for v in schema]
    return schema


def learned_pairs(tools: Sequence[Tool], seed: int) -> list[tuple[str, str]]:
    """One request to learn for a tenth of ``tools``: words of its own description reordered.

    What a host that learns has taught (``benches/host_search.py``, ``setup_stages.py``).
    """
    rng = random.Random(seed)
    pairs = []
    for tool in rng.sample(list(tools), max(1, len(tools) // 10)):
        words = tool.description.split()[:8]
        rng.shuffle(words)
        if words:
            pairs.append((" ".join(words), tool.name))
    return pairs


#: How synthetic tools get servers (see the module's docstring).
SERVERS = ("per-tool", "copies")


def grow_catalogue(
    real: Sequence[Tool], size: int, replace: float, seed: int, servers: str = "per-tool"
) -> list[Tool]:
    """The real tools, then synthetic ones up to ``size`` (see the module's docstring)."""
    if servers not in SERVERS:
        raise ValueError(f"servers must be one of {SERVERS}, got {servers!r}")
    rng = random.Random(seed)
    if size <= len(real):
        return list(real[:size])
    desc_counts: Counter[str] = Counter()
    name_counts: Counter[str] = Counter()
    for t in real:
        for text in [t.description, *_schema_texts(t.input_schema)]:
            desc_counts.update(w.lower() for w in _WORD.findall(text) if _content(w))
        tool_name = t.name.split("__", 1)[-1]
        name_counts.update(p.lower() for p in _NAME_PART.findall(tool_name) if p.isalnum())
    desc_words, name_words = _Sampler(desc_counts, rng), _Sampler(name_counts, rng)

    def rewrite(text: str) -> str:
        def one(m: re.Match[str]) -> str:
            w = m.group(0)
            if _content(w) and rng.random() < replace:
                return _casing(w, desc_words.draw())
            return w

        return _WORD.sub(one, text)

    def rename(tool_name: str) -> str:
        parts = []
        for p in _NAME_PART.findall(tool_name):
            if p.isalnum() and not p.isdigit() and rng.random() < replace:
                parts.append(_casing(p, name_words.draw()))
            else:
                parts.append(p)
        return "".join(parts)

    order = list(real)
    rng.shuffle(order)
    out = list(real)
    taken = {t.name for t in real}
    n = 0
    while len(out) < size:
        template = order[n % len(order)]
        n += 1
        server, _, tool_name = template.name.rpartition("__")
        copy = n if servers == "per-tool" else (n - 1) // len(order) + 1
        prefix = f"{server or 'syn'}-{copy}__"
        base = name = (prefix + rename(tool_name))[:128]
        again = 1
        while name in taken:  # only a copy can repeat a name: per tool, the prefix is unique
            again += 1
            name = f"{base[: 128 - len(str(again)) - 1]}_{again}"
        taken.add(name)
        out.append(
            Tool(
                name=name,
                description=rewrite(template.description),
                input_schema=_rewrite_schema(template.input_schema, rewrite),
            )
        )
    return out


# -- measuring ---------------------------------------------------------------------------------


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def malloc_trim() -> bool:
    """Hand the C heap's free pages back to the system (glibc), so RSS shows what is kept."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        return False
    return True


def worker(key: str, data_path: str) -> dict[str, Any]:
    """In a fresh process: warm up, timed build with RSS delta, then a traced build."""
    with open(data_path, "rb") as f:
        tools, names, texts = pickle.load(f)
    system = make_system(key)
    system.warm_up(for_search=False)
    gc.collect()
    rss0 = rss_bytes()
    t0 = time.perf_counter()
    system.build(names, texts, tools)
    build_s = time.perf_counter() - t0
    gc.collect()
    rss_delta = rss_bytes() - rss0
    trimmed = rss_delta if not malloc_trim() else rss_bytes() - rss0
    mem = system.memory_bytes()
    traced = make_system(key)
    traced.warm_up(for_search=False)
    gc.collect()
    tracemalloc.start()
    traced.build(names, texts, tools)
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return {
        "build_s": build_s,
        "rss_delta": rss_delta,
        "rss_trimmed": trimmed,
        "memory_bytes": mem,
        "traced_bytes": current,
        "traced_peak_bytes": peak,
        "native_memory": system.native_memory,
        "batch_path": system.batch_path,
        **getattr(system, "build_parts", {}),
    }


def build_worker(data_path: str) -> dict[str, Any]:
    """In a fresh process: ours (native) built once, timed in its two parts, and digested."""
    with open(data_path, "rb") as f:
        tools, names, texts = pickle.load(f)
    system = OursAdapter("native")
    system.warm_up(for_search=False)
    gc.collect()
    system.build(names, texts, tools)
    index = system.registry._current().index
    digest = getattr(index, "digest", None)
    # A host gets its tools as mappings (MCP's JSON): registering those also validates
    # each one and copies its schema. Timed on a second registry, the mappings made first.
    from toolsurface.registry import ToolRegistry

    mappings = [t.model_dump(exclude_defaults=True) for t in tools]
    gc.collect()
    fresh = ToolRegistry(engine="native")
    t0 = time.perf_counter()
    fresh.register_many(mappings)
    from_mappings = time.perf_counter() - t0
    return {
        **system.build_parts,
        "register_mappings_s": from_mappings,
        "digest": f"{digest():016x}" if digest is not None else None,
    }


def build_only(args: argparse.Namespace, real: Sequence[Tool], tmp: str) -> None:
    """``--build-only``: ours (native) built ``--repeat`` times per size, each in a fresh
    process; the registering and index parts, their medians, and the index digest."""
    for size in [int(s) for s in args.sizes.split(",") if s.strip()]:
        tools = grow_catalogue(real, size, args.replace, args.seed)
        data_path = os.path.join(tmp, f"catalogue-{size}.pickle")
        with open(data_path, "wb") as f:
            pickle.dump((tools, [t.name for t in tools], []), f)
        if args.dump_fields:
            from toolsurface.registry import tool_fields

            rows = [[t.name, list(tool_fields(t))] for t in tools]
            Path(args.dump_fields).write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
        runs = []
        for _ in range(args.repeat):
            cmd = [sys.executable, __file__, "--build-worker", "--data", data_path]
            done = subprocess.run(cmd, capture_output=True, text=True, check=False)
            lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
            if done.returncode != 0 or not lines:
                sys.exit(f"build worker failed: {done.stderr.strip()[-400:]}")
            r = json.loads(lines[-1])
            runs.append(r)
            print(
                f"[{size}] register {r['register_s']:.3f} s  index {r['index_s']:.3f} s  "
                f"digest {r['digest']}  (register from mappings {r['register_mappings_s']:.3f} s)",
                flush=True,
            )
        reg = statistics.median(r["register_s"] for r in runs)
        idx = statistics.median(r["index_s"] for r in runs)
        maps = statistics.median(r["register_mappings_s"] for r in runs)
        print(
            f"[{size}] median of {len(runs)}: register {reg:.3f} s  index {idx:.3f} s  "
            f"(register from mappings {maps:.3f} s)"
        )
        os.remove(data_path)


def median_build(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """One system's build row from its fresh-process runs: the first good run's figures
    (memory included), each time the median of the good runs, every good run's time, and the
    errors of any that failed."""
    done = [r for r in runs if "error" not in r]
    if not done:
        return runs[0]
    row = dict(done[0])
    failed = [r["error"] for r in runs if "error" in r]
    if failed:
        row["build_errors"] = failed
    for key in ("build_s", "register_s", "index_s"):
        if key in row:
            row[f"{key}_runs"] = [r[key] for r in done]
            row[key] = statistics.median(row[f"{key}_runs"])
    return row


def run_worker(key: str, data_path: str, timeout: float) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--worker", key, "--data", data_path]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"build worker timed out after {timeout:.0f} s"}
    lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or "").strip().splitlines()[-3:]
        return {"error": f"worker exit {done.returncode}: {' | '.join(tail)}"}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def pick_queries(path: Path, per_lang: int, seed: int) -> dict[str, list[str]]:
    rows = [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]
    out: dict[str, list[str]] = {}
    rng = random.Random(seed)
    for lang in ("en", "ru"):
        pool = [r["query"] for r in rows if r.get("lang") == lang]
        picked = sorted(rng.sample(range(len(pool)), min(per_lang, len(pool))))
        out[lang] = [pool[i] for i in picked]
    return out


def percentile(xs: Sequence[float], p: float) -> float:
    s = sorted(xs)
    if not s:
        return float("nan")
    i = min(len(s) - 1, max(0, round(p / 100 * (len(s) - 1))))
    return s[i]


def time_latency(
    systems: dict[str, Peer], queries: list[str], rounds: int, budget: float, seed: int
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Per system, per query: the median of its timed runs, interleaved across systems."""
    given: dict[str, int] = {}
    for key, s in systems.items():  # warm-up pass, which also sizes the rounds
        t0 = time.perf_counter()
        for q in queries:
            s.search(q, 10)
        spent = time.perf_counter() - t0
        given[key] = max(1, min(rounds, int(budget / max(spent, 1e-9))))
    times: dict[str, list[list[float]]] = {k: [[] for _ in queries] for k in systems}
    rng = random.Random(seed)
    # Those that may share the loop are interleaved; the others (dense) each run alone.
    groups = [[k for k, s in systems.items() if s.interleave]]
    groups += [[k] for k, s in systems.items() if not s.interleave]
    perf = time.perf_counter
    for order in groups:
        gc.collect()
        gc.disable()
        try:
            for r in range(max((given[k] for k in order), default=0)):
                for qi, q in enumerate(queries):
                    rng.shuffle(order)
                    for key in order:
                        if r >= given[key]:
                            continue
                        search = systems[key].search
                        t0 = perf()
                        search(q, 10)
                        times[key][qi].append(perf() - t0)
                gc.enable()
                gc.collect()
                gc.disable()
        finally:
            gc.enable()
    return {k: [statistics.median(ts) for ts in v] for k, v in times.items()}, given


def time_batch(system: Peer, queries: list[str], rounds: int, budget: float) -> float:
    """Queries per second through the batch path: median of ``rounds`` (fewer if slow)."""
    spent: list[float] = []
    while len(spent) < rounds:
        t0 = time.perf_counter()
        system.search_batch(queries, 10)
        spent.append(time.perf_counter() - t0)
        if sum(spent) > budget:
            break
    return len(queries) / statistics.median(spent)


# -- reporting ---------------------------------------------------------------------------------


def us(x: float | None) -> str:
    return "-" if x is None else f"{x * 1e6:,.0f}"


def mb(x: float | None) -> str:
    return "-" if x is None else f"{x / 1e6:,.1f}"


def print_size(size: int, result: dict[str, Any]) -> None:
    rows = result["systems"]
    print(f"\n## {size:,} tools\n")
    print(
        "| system | build s | index MB | figure used | RSS Δ MB | trimmed MB | traced MB "
        "| en p50 µs "
        "| en p90 µs | ru p50 µs | ru p90 µs | all p50 µs | rounds | batch QPS | batch path |"
    )
    print(
        "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: "
        "| ---: | ---: | --- |"
    )
    for key, r in rows.items():
        if "error" in r:
            print(f"| {label_of(key)} | error: {r['error']} |")
            continue
        lat = r["latency"]
        print(
            f"| {label_of(key)} | {r['build_s']:.3f} | {mb(r['memory'])} | {r['memory_source']} "
            f"| {mb(r['rss_delta'])} | {mb(r.get('rss_trimmed'))} | {mb(r['traced_bytes'])} "
            f"| {us(lat['en']['p50'])} | {us(lat['en']['p90'])} | {us(lat['ru']['p50'])} "
            f"| {us(lat['ru']['p90'])} | {us(lat['all']['p50'])} | {r['rounds']} "
            f"| {r['batch_qps']:,.0f} | {r['batch_path']} |"
        )
    ours = rows.get("ours-native", {})
    builds = max((len(r.get("build_s_runs", [])) for r in rows.values()), default=0)
    if builds > 1:
        print(f"\nbuild s: the median of up to {builds} fresh-process builds a system.")
    if "index_s" in ours:
        ratio = ours["memory_bytes"] / ours["text_bytes"] if ours.get("text_bytes") else 0.0
        runs = ", ".join(f"{x:.3f}" for x in ours.get("index_s_runs", []))
        print(
            f"\nours (native) build: {ours['register_s']:.3f} s registering the tools "
            f"(validation in Python) + {ours['index_s']:.3f} s building the index (field "
            f"texts made and indexed in Rust{'; runs ' + runs if runs else ''}); "
            f"indexed text {mb(ours['text_bytes'])} MB of UTF-8, index memory_bytes "
            f"{ratio:.2f}x that."
        )
    if result["skipped"]:
        print(
            "\nSkipped: "
            + "; ".join(f"{label_of(k)} ({why})" for k, why in result["skipped"].items())
            + "."
        )
    ratios = result.get("ratios")
    if ratios:
        print(
            "\nours (native) / system: median over queries of the per-query latency ratio "
            "(below 1: ours faster; in brackets the speed-up, system / ours); build, memory "
            "and batch QPS as plain ratios.\n"
        )
        print(
            "| system | en | ru | all | build | memory (figure used) | memory (RSS Δ trimmed) "
            "| batch QPS (ours/system) |"
        )
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")

        def num(v: float | None) -> str:
            return "-" if v is None else f"{v:.2f}"

        for key, x in ratios.items():
            cells = [f"{x[g]:.3f} ({1 / x[g]:.1f}x)" if x[g] else "-" for g in ("en", "ru", "all")]
            print(
                f"| {label_of(key)} | " + " | ".join(cells) + f" | {num(x['build'])} "
                f"| {num(x['memory'])} | {num(x['memory_rss'])} | {num(x['batch_qps'])} |"
            )


def plot(report: dict[str, Any], out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[str, dict[str, list[tuple[int, float]]]] = {}
    for size_s, res in report["sizes"].items():
        size = int(size_s)
        for key, r in res["systems"].items():
            if "error" in r:
                continue
            s = series.setdefault(key, {"lat": [], "mem": [], "rss": [], "build": []})
            s["lat"].append((size, r["latency"]["all"]["p50"] * 1e6))
            if r["memory"]:
                s["mem"].append((size, r["memory"] / 1e6))
            rss = r.get("rss_trimmed", r["rss_delta"])
            if rss > 0:
                s["rss"].append((size, rss / 1e6))
            s["build"].append((size, r["build_s"]))
    fig, grid = plt.subplots(2, 2, figsize=(13, 10))
    axes = grid.flatten()
    titles = (
        "median latency per query (µs)",
        "index build (s)",
        "index memory (MB), figure used in the tables",
        "worker RSS growth over the build after malloc_trim (MB), same method for all",
    )
    for ax, what, title in zip(axes, ("lat", "build", "mem", "rss"), titles):
        for key, s in series.items():
            pts = sorted(s[what])
            if not pts:
                continue
            style = "-o" if key.startswith("ours") else "--o"
            width = 2.5 if key == "ours-native" else 1.2
            ax.plot(
                [p[0] for p in pts],
                [p[1] for p in pts],
                style,
                label=label_of(key),
                linewidth=width,
                markersize=4,
            )
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("tools in the catalogue")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        f"toolsurface {report['toolsurface']} against other retrievers, "
        f"{os.cpu_count()} cores (log-log)"
    )
    fig.tight_layout()
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


# -- main --------------------------------------------------------------------------------------


def native_available() -> bool:
    try:
        from toolsurface import _native  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes",
        default="1635,10000",
        help="default 1635,10000 (a few minutes); the full run: 1635,10000,100000",
    )
    parser.add_argument("--engines", default="native,pure")
    parser.add_argument(
        "--peers",
        default="all",
        help=f"comma list of {', '.join(LEXICAL_PEERS)}, dense; all = every lexical peer; none",
    )
    parser.add_argument("--rounds", type=int, default=3, help="timed runs per query")
    parser.add_argument(
        "--build-runs",
        type=_at_least(1),
        default=3,
        help="fresh-process builds per system and size (build times: their median)",
    )
    parser.add_argument("--batch-rounds", type=int, default=3)
    parser.add_argument(
        "--budget",
        type=float,
        default=20.0,
        help="seconds of latency timing per system and size, roughly",
    )
    parser.add_argument("--per-lang", type=int, default=200)
    parser.add_argument("--slow-max-size", type=int, default=10_000)
    parser.add_argument("--dense-max-size", type=int, default=1635)
    parser.add_argument("--replace", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=20261130)
    parser.add_argument("--worker-timeout", type=float, default=1800)
    parser.add_argument("--json", dest="json_out", help="write the figures to this file")
    parser.add_argument("--plot", help="draw latency, memory and build vs size to this PNG")
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--queries", default=str(SHARED / "queries" / "dev.jsonl"))
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="only time ours (native) building each size, --repeat times, fresh processes",
    )
    parser.add_argument("--repeat", type=int, default=3, help="builds per size (--build-only)")
    parser.add_argument(
        "--dump-fields",
        help="with --build-only: write [[name, [five field texts]], ...] of the (last) size "
        "here, the FIELDS.json of crates/toolsurface-core/examples/bench.rs",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--build-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        print(json.dumps(worker(args.worker, args.data)))
        return
    if args.build_worker:
        print(json.dumps(build_worker(args.data)))
        return
    if args.build_only:
        _, real = load_catalogue(args.catalogue)
        build_only(args, real, tempfile.mkdtemp(prefix="ts-speed-"))
        return

    notes: list[str] = []
    keys: list[str] = []
    for e in [e.strip() for e in args.engines.split(",") if e.strip()]:
        if e == "native" and not native_available():
            notes.append("ours (native) not run: toolsurface._native does not import")
            continue
        keys.append(f"ours-{e}")
    wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in wanted:
        if p == "all":
            keys += [k for k in LEXICAL_PEERS if k not in keys]
        elif p in LEXICAL_PEERS or p == "dense":
            keys.append(p)
        elif p != "none":
            notes.append(f"unknown peer {p!r} ignored")
    usable = []
    for k in keys:  # a peer whose package is missing is named, not silently dropped
        try:
            make_system(k)
        except Exception as exc:
            notes.append(f"{label_of(k)} not run ({type(exc).__name__}: {exc})")
            continue
        usable.append(k)
    keys = usable

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    _, real = load_catalogue(args.catalogue)
    by_lang = pick_queries(Path(args.queries), args.per_lang, args.seed)
    queries = by_lang["en"] + by_lang["ru"]
    n_en = len(by_lang["en"])
    report: dict[str, Any] = {
        "toolsurface": toolsurface.__version__,
        "live_engine": toolsurface.engine(),
        "cores": os.cpu_count(),
        "versions": package_versions(),
        "args": {k: v for k, v in vars(args).items() if k not in ("worker", "data")},
        "queries": {"en": n_en, "ru": len(by_lang["ru"])},
        "notes": notes,
        "sizes": {},
    }
    print(
        f"toolsurface {toolsurface.__version__}, {os.cpu_count()} cores; systems: "
        f"{', '.join(label_of(k) for k in keys)}",
        file=sys.stderr,
    )
    tmp = tempfile.mkdtemp(prefix="ts-speed-")
    for size in sizes:
        t0 = time.perf_counter()
        tools = grow_catalogue(real, size, args.replace, args.seed)
        names = [t.name for t in tools]
        texts = [peer_text(t) for t in tools]
        data_path = os.path.join(tmp, f"catalogue-{size}.pickle")
        with open(data_path, "wb") as f:
            pickle.dump((tools, names, texts), f)
        print(
            f"[{size}] catalogue of {len(tools)} tools made in {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
        skipped: dict[str, str] = {}
        run_keys = []
        for k in keys:
            if k in SLOW and size > args.slow_max_size:
                skipped[k] = f"over --slow-max-size {args.slow_max_size}"
            elif k == "dense" and size > args.dense_max_size:
                skipped[k] = f"over --dense-max-size {args.dense_max_size}"
            else:
                run_keys.append(k)
        # Build time and memory: --build-runs fresh processes per system, the systems taking
        # turns, so drift hits all alike; the build times are the medians of the runs.
        runs: dict[str, list[dict[str, Any]]] = {k: [] for k in run_keys}
        for turn in range(args.build_runs):
            for k in run_keys:
                if turn and "error" in runs[k][0]:
                    continue
                t1 = time.perf_counter()
                runs[k].append(run_worker(k, data_path, args.worker_timeout))
                print(
                    f"[{size}] {label_of(k)}: build worker {time.perf_counter() - t1:.1f} s "
                    f"{runs[k][-1].get('error', '')}",
                    file=sys.stderr,
                )
        rows = {k: median_build(v) for k, v in runs.items()}
        systems: dict[str, Peer] = {}
        for k in run_keys:  # latency: all built here, timed interleaved
            if "error" in rows[k]:
                continue
            s = make_system(k)
            s.warm_up()
            s.build(names, texts, tools)
            systems[k] = s
        t1 = time.perf_counter()
        per_query, given = time_latency(systems, queries, args.rounds, args.budget, args.seed)
        print(f"[{size}] latency timed in {time.perf_counter() - t1:.1f} s", file=sys.stderr)
        for k, s in systems.items():
            r = rows[k]
            pq = per_query[k]
            groups = {"en": pq[:n_en], "ru": pq[n_en:], "all": pq}
            r["latency"] = {
                g: {
                    "p50": statistics.median(v),
                    "p90": percentile(v, 90),
                    "mean": statistics.fmean(v),
                }
                for g, v in groups.items()
            }
            r["per_query_s"] = pq
            r["rounds"] = given[k]
            r["batch_qps"] = time_batch(s, queries, args.batch_rounds, args.budget)
            r["memory"], r["memory_source"] = memory_choice(k, r)
        systems.clear()
        gc.collect()
        result: dict[str, Any] = {"tools": len(tools), "systems": rows, "skipped": skipped}
        base = rows.get("ours-native")
        if base and "latency" in base:
            ratios = {}
            for k, r in rows.items():
                if k == "ours-native" or "latency" not in r:
                    continue
                x: dict[str, float | None] = {}
                for g, lo, hi in (
                    ("en", 0, n_en),
                    ("ru", n_en, len(queries)),
                    ("all", 0, len(queries)),
                ):
                    pairs = [
                        a / b
                        for a, b in zip(base["per_query_s"][lo:hi], r["per_query_s"][lo:hi])
                        if b > 0
                    ]
                    x[g] = statistics.median(pairs) if pairs else None
                x["build"] = base["build_s"] / r["build_s"] if r["build_s"] else None
                x["memory"] = (
                    base["memory"] / r["memory"]
                    if base["memory"] and r["memory"] and r["memory"] > 0
                    else None
                )
                x["memory_rss"] = (
                    base["rss_trimmed"] / r["rss_trimmed"]
                    if base["rss_trimmed"] > 0 and r["rss_trimmed"] > 0
                    else None
                )
                x["batch_qps"] = base["batch_qps"] / r["batch_qps"] if r["batch_qps"] else None
                ratios[k] = x
            result["ratios"] = ratios
        report["sizes"][str(size)] = result
        print_size(size, result)
        sys.stdout.flush()
        os.remove(data_path)
    if notes:
        print("\nNotes: " + "; ".join(notes) + ".")
    print("\nVersions: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items()))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(report, indent=1), "utf-8")
    if args.plot:
        plot(report, args.plot)
        print(f"\nplot: {args.plot}")


if __name__ == "__main__":
    main()
