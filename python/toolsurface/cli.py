"""The command line: ``toolsurface search`` (and ``eval``) over a catalogue file or the demo."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from toolsurface._engine import engine
from toolsurface._version import __version__
from toolsurface.admission.text import safe_text
from toolsurface.catalogue import demo_catalogue, load_catalogue, record_shape
from toolsurface.errors import ToolsurfaceError
from toolsurface.models import Tool
from toolsurface.registry import DEFAULT_LEXICON, ToolRegistry
from toolsurface.retrieval.fields import split_description

__all__ = ["main"]


def _at_least(low: int) -> Any:
    """An argparse type: a whole number of at least ``low``, else a message naming it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        return value

    parse.__name__ = f"whole number >= {low}"
    return parse


def _ranking_switches(parser: argparse.ArgumentParser) -> None:
    """The flags that turn the semantic extra's rankings off for one command."""
    parser.add_argument(
        "--no-semantic",
        action="store_true",
        help="lexical ranking alone, even with the semantic extra installed",
    )
    parser.add_argument(
        "--no-english-encoder",
        action="store_true",
        help="with the semantic extra, rank without its English encoder (which reads English "
        "requests and the English glosses of others): faster; as TOOLSURFACE_ENGLISH_ENCODER=off",
    )


def _registry(
    path: str | None,
    engine_name: str | None,
    lexicon: Any = DEFAULT_LEXICON,
    no_semantic: bool = False,
    no_english: bool = False,
) -> tuple[ToolRegistry, str]:
    if path is None:
        tools: list[Tool] = demo_catalogue()
        label = "demo catalogue"
    else:
        fmt, tools = load_catalogue(path)
        label = f"{path} ({fmt})"
    # The semantic ranking follows TOOLSURFACE_SEMANTIC and the extra unless --no-semantic.
    semantic = False if no_semantic else None
    registry = ToolRegistry(
        engine=engine_name,  # type: ignore[arg-type]
        lexicon=lexicon,
        semantic=semantic,
        english=False if no_english else None,
    )
    registry.register_many(tools, where=label)
    return registry, label


def _english_on(registry: ToolRegistry) -> bool:
    """Whether English requests are ranked with the English encoder too."""
    return registry.english is not None and registry.fusion.english_weight > 0.0


def _fused_label(registry: ToolRegistry) -> str:
    """What is fused with the lexical ranking, for the first line a command prints."""
    if registry.semantic is None:
        return ""
    return " + semantic + English encoder" if _english_on(registry) else " + semantic"


def _cmd_search(args: argparse.Namespace) -> int:
    registry, label = _registry(
        args.catalogue, args.engine, DEFAULT_LEXICON, args.no_semantic, args.no_english_encoder
    )
    hits = registry.search(args.query, k=args.k, explain=args.explain)
    if args.json:
        out: dict[str, Any] = {
            "query": args.query,
            "engine": registry.engine,
            "semantic": registry.semantic is not None,
            "english_encoder": _english_on(registry),
            "catalogue": label,
            "tools": len(registry),
            "hits": [
                {
                    "rank": h.rank,
                    "name": h.name,
                    "score": round(h.score, 6),
                    "fallback": h.fallback,
                    "summary": split_description(registry.get(h.name).description)[0],
                    **(
                        {
                            "explanation": [
                                {
                                    "term": c.term,
                                    "query_weight": c.query_weight,
                                    "fields": {f: round(v, 6) for f, v in c.fields.items() if v},
                                }
                                for c in h.explanation
                            ]
                        }
                        if h.explanation is not None
                        else {}
                    ),
                }
                for h in hits
            ],
        }
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    fused = _fused_label(registry)
    print(f"{len(hits)} of {len(registry)} tools in {label}, engine {registry.engine}{fused}")
    if hits and hits[0].fallback:
        print("(no exact term matched: ranked by similar word forms)")
    width = max((len(h.name) for h in hits), default=0)
    for h in hits:
        # A third party's text: control characters (terminal escapes) never reach the tty.
        summary = safe_text(split_description(registry.get(h.name).description)[0], 90)
        print(f"{h.rank:>3}  {h.score:8.4f}  {h.name:<{width}}  {summary}")
        for c in h.explanation or ():
            parts = ", ".join(f"{f} {v:.4f}" for f, v in c.fields.items() if v)
            print(f"{'':>15}{c.term} (weight {c.query_weight:g}): {parts}")
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from toolsurface.evaluation import (
        DEMO_QUERIES,
        check_expected,
        declare_server_groups,
        demo_queries,
        evaluate,
        load_aliases,
        load_queries,
    )

    if args.queries is None and args.catalogue is not None:
        raise ValueError(
            f"--catalogue {args.catalogue}: give its labelled requests with --queries FILE "
            "(the bundled requests are labelled for the demo catalogue only)"
        )
    lexicon = None if args.no_lexicon else DEFAULT_LEXICON
    registry, label = _registry(
        args.catalogue, args.engine, lexicon, args.no_semantic, args.no_english_encoder
    )
    # The demo's names are server__tool too: a group per server, as the MCP adapter makes;
    # and server records, in one JSON array or a line each.
    if not args.no_server_groups and (
        args.catalogue is None or record_shape(args.catalogue) == "server-records"
    ):
        declare_server_groups(registry)
    queries = load_queries(args.queries) if args.queries else demo_queries()
    aliases = load_aliases(args.catalogue) if args.catalogue else {}
    check_expected(queries, set(registry.names()) | set(aliases))

    def rank(texts: Sequence[str]) -> list[list[str]]:
        return [[h.name for h in hits] for hits in registry.search_many(list(texts), k=10)]

    metrics, misses = evaluate(queries, rank, aliases=aliases)
    if args.json:
        out = {
            "catalogue": label,
            "queries": args.queries or DEMO_QUERIES,
            "engine": registry.engine,
            "semantic": registry.semantic is not None,
            "english_encoder": _english_on(registry),
            "metrics": metrics,
            "misses": [
                {
                    "id": m.query.id,
                    "query": m.query.query,
                    "expected": sorted(m.query.expected),
                    "rank": m.first_rank,
                    "above": list(m.above),
                }
                for m in misses
            ],
        }
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    if args.misses:
        for m in misses:
            where = f"rank {m.first_rank}" if m.first_rank else "not in top 10"
            print(f"MISS {m.query.id} [{m.query.lang}/{m.query.style}] {m.query.query!r}: {where}")
            print(f"     expected {sorted(m.query.expected)[:3]}; above: {list(m.above)}")
    fused = _fused_label(registry)
    print(
        f"{len(queries)} queries, {len(registry)} tools in {label}, engine {registry.engine}{fused}"
    )
    header = ["group", "n", "R@1", "R@3", "R@5", "R@10", "MRR", "nDCG@10"]
    print("  ".join(f"{h:>12}" if i == 0 else f"{h:>7}" for i, h in enumerate(header)))
    keys = ("queries", "recall@1", "recall@3", "recall@5", "recall@10", "mrr", "ndcg@10")
    for group, figures in metrics.items():
        row = [figures[key] for key in keys]
        cells = [f"{int(row[0]):>7}"] + [f"{v:>7.4f}" for v in row[1:]]
        print(f"{group:>12}  " + "  ".join(cells))
    return 0


def _cmd_doctor(args: argparse.Namespace) -> int:
    """Report what keeps a catalogue's tools from being found or sent; findings exit 0."""
    import dataclasses
    import time

    from toolsurface.doctor import diagnose, format_report

    started = time.perf_counter()
    registry, label = _registry(
        args.catalogue, args.engine, DEFAULT_LEXICON, args.no_semantic, args.no_english_encoder
    )
    report = diagnose(registry, k=args.k, catalogue=label)
    report = dataclasses.replace(report, seconds=time.perf_counter() - started)
    if args.json:
        json.dump(report.as_dict(), sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_report(report, limit=args.limit))
    return 0


def _secret_env(var: str, flag: str, *, required: bool) -> str | None:
    """A secret read from the environment variable ``var`` (never from the command line)."""
    value = os.environ.get(var, "")
    if not value:
        if required:
            raise ValueError(f"{flag} {var}: the environment variable is not set or empty")
        return None
    return value


def _cmd_gateway(args: argparse.Namespace) -> int:
    """Serve the gateway over stdio or streamable HTTP (needs the ``mcp`` extra)."""
    import anyio

    from toolsurface.gateway.clients import ClientTokens
    from toolsurface.gateway.config import (
        check_upstream_names,
        config_server_names,
        read_allowed_hosts,
        read_config,
        read_policy,
    )
    from toolsurface.gateway.http import is_loopback, listening_socket, parse_listen
    from toolsurface.gateway.server import Gateway
    from toolsurface.gateway.store import MemoryStore, open_store
    from toolsurface.gateway.store.redis import RedisStore

    explicit = args.mark_key_env is not None
    key_var = args.mark_key_env or "TOOLSURFACE_MARK_KEY"
    mark_key = _secret_env(key_var, "--mark-key-env", required=explicit)
    if mark_key is not None and len(mark_key.encode("utf-8")) < 16:
        raise ValueError(f"--mark-key-env {key_var}: the mark key must be 16 bytes or more")
    token = _secret_env(args.token_env, "--token-env", required=True) if args.token_env else None
    if token is not None and args.http is None:
        raise ValueError("--token-env: a bearer token is for --http only")
    if args.allow_host and args.http is None:
        raise ValueError("--allow-host: a Host to answer is for --http only")
    if args.clients and args.http is None:
        raise ValueError("--clients: per-client tokens are for --http only")
    if args.log_format is not None:
        from toolsurface.gateway.logs import configure_logs

        configure_logs(args.log_format)
    # Read (and checked) at start: a broken file stops the gateway naming the field. A
    # section of a policy or client naming no server of the config is refused (misspelt,
    # its deny would apply to nothing).
    upstreams = read_config(args.config)
    known = config_server_names(args.config)
    clients = ClientTokens(args.clients, known) if args.clients else None
    store = open_store(args.store, ttl=args.store_ttl, max_sessions=args.store_max_sessions)
    if isinstance(store, RedisStore):
        if mark_key is None:
            raise ValueError(
                f"--store {store.url}: a Redis store is shared, so its snapshots must be "
                f"sealed: set {key_var} (16+ bytes, the same in every gateway process)"
            )
        store.ping()
    if not 1 <= args.learn_sessions <= 16:
        raise ValueError(f"--learn-sessions {args.learn_sessions}: must be 1 to 16")
    if args.max_sessions < 1:
        raise ValueError(f"--max-sessions {args.max_sessions}: must be at least 1")
    policy = read_policy(args.policy)
    check_upstream_names(policy.servers, known, f"policy {args.policy}: servers")
    # The flags' names and the config file's ``allowHosts``, both (read at start, with the file).
    allow = tuple(dict.fromkeys([*(args.allow_host or ()), *read_allowed_hosts(args.config)]))
    gateway = Gateway(
        upstreams,
        policy=policy,
        store=store,
        session_id=args.session,
        mark_key=mark_key.encode("utf-8") if mark_key else None,
        max_sessions=args.max_sessions,
        learn=args.learn,
        learn_sessions=args.learn_sessions,
        semantic=False if args.no_semantic else None,
    )
    if args.http is None:
        anyio.run(gateway.serve_stdio)
        return 0
    host, port = parse_listen(args.http)
    if not is_loopback(host) and token is None and clients is None:
        raise ValueError(
            f"--http {args.http}: {host} is not a loopback address; serving other machines "
            "needs bearer tokens (--token-env VAR or --clients FILE)"
        )
    if isinstance(store, MemoryStore):
        print(
            "toolsurface gateway: no --store: sessions live in this process only",
            file=sys.stderr,
        )
    sock = listening_socket(host, port)
    anyio.run(lambda: gateway.serve_http(sock, token=token, allow_hosts=allow, clients=clients))
    return 0


def _cmd_plan(args: argparse.Namespace) -> int:
    from toolsurface.providers import name_problems
    from toolsurface.surface import SurfaceLimits, ToolSurface, estimate_tokens
    from toolsurface.tools.toolsearch import tool_search_tool

    registry, label = _registry(
        args.catalogue, args.engine, DEFAULT_LEXICON, args.no_semantic, args.no_english_encoder
    )
    prefixes = sorted({n.split("__", 1)[0] for n in registry.names() if "__" in n})
    for prefix in prefixes:
        registry.declare_group(prefix, prefix=f"{prefix}__", dynamic=True)
    in_file = len(registry)
    if not args.no_discovery:
        search_tool = tool_search_tool()
        if search_tool.name in registry:
            raise ValueError(
                f"the catalogue has a tool named {search_tool.name!r}, the discovery tool's "
                "name: plan without it (--no-discovery), or rename the catalogue's tool"
            )
        registry.register(search_tool)
    limits = SurfaceLimits(window_tokens=args.window, max_advertised_tools=args.max_tools)
    surface = ToolSurface(registry, limits=limits, provider=args.provider)
    plan = surface.plan()
    tokens = [estimate_tokens(t) for t in plan.tools]
    refused = name_problems(plan.names, args.provider)
    limit = surface.limits.max_advertised_tools
    if args.json:
        out = {
            "catalogue": label,
            "provider": args.provider,
            "tools_registered": len(registry),
            "catalogue_tools": in_file,
            "limits": {"window_tokens": args.window, "max_advertised_tools": limit},
            "held_back": list(plan.held_back),
            "reasons": list(plan.reasons),
            "tools": [
                {"name": t.name, "source": src, "tokens": n}
                for t, src, n in zip(plan.tools, plan.sources, tokens, strict=True)
            ],
            "tool_tokens": sum(tokens),
            "catalogue_block": plan.catalogue,
            "refused_names": refused,
        }
        json.dump(out, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console
    from rich.panel import Panel
    from rich.table import Table

    console = Console()
    console.print(
        f"[bold]{in_file}[/] tools in {label}; provider [bold]{args.provider}[/]"
        f" (at most {limit if limit is not None else 'any number of'} tools)"
        + (f", window {args.window:,} tokens" if args.window else "")
    )
    console.print(
        f"Advertised: [bold]{len(plan.tools)}[/] tools, about {sum(tokens):,} tokens; "
        f"held back: [bold]{len(plan.held_back)}[/] groups"
    )
    for reason in plan.reasons[:12]:
        console.print(f"  - {reason}", highlight=False, markup=False)
    if plan.catalogue:
        console.print(Panel(plan.catalogue, title="catalogue block (system prompt)"), markup=False)
    table = Table(title="tool list, in order")
    table.add_column("#", justify="right")
    table.add_column("tool")
    table.add_column("source")
    table.add_column("tokens", justify="right")
    for i, (t, src, n) in enumerate(zip(plan.tools, plan.sources, tokens, strict=True), 1):
        table.add_row(str(i), t.name, src, str(n))
    console.print(table)
    if refused:
        console.print(f"[bold red]{args.provider} would refuse {len(refused)} name(s):[/]")
        for name, why in refused.items():
            console.print(f"  {name}: {why}", markup=False)
    return 0


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="toolsurface",
        description="Find the right tool among hundreds, in English or Russian.",
    )
    parser.add_argument("--version", action="version", version=f"toolsurface {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    search = sub.add_parser("search", help="rank a catalogue's tools for a request")
    search.add_argument("query", help="the request, in English or Russian")
    search.add_argument(
        "--catalogue",
        metavar="FILE",
        help="MCP tools/list result, OpenAI/Anthropic tools array or JSON Lines "
        "(default: the bundled demo catalogue)",
    )
    search.add_argument("-k", type=_at_least(1), default=10, help="how many hits (default 10)")
    search.add_argument("--explain", action="store_true", help="show what each term added")
    search.add_argument("--json", action="store_true", help="print JSON for a machine")
    search.add_argument(
        "--engine",
        choices=("native", "pure"),
        default=None,
        help=f"default: live ({_live_engine()})",
    )
    _ranking_switches(search)
    search.set_defaults(func=_cmd_search)
    ev = sub.add_parser("eval", help="measure retrieval quality on labelled queries")
    ev.add_argument("--catalogue", metavar="FILE", help="tool catalogue (default: the demo)")
    ev.add_argument(
        "--queries",
        metavar="FILE",
        help="JSON Lines or BFCL JSON (default: the bundled requests for the demo catalogue)",
    )
    ev.add_argument("--json", action="store_true", help="print JSON for a machine")
    ev.add_argument("--misses", action="store_true", help="list every query not ranked first")
    ev.add_argument(
        "--no-server-groups",
        action="store_true",
        help="with a server-records catalogue or the demo, declare no group per server "
        "(no mentions, §8)",
    )
    ev.add_argument("--no-lexicon", action="store_true", help="turn query expansion off")
    ev.add_argument("--engine", choices=("native", "pure"), default=None)
    _ranking_switches(ev)
    ev.set_defaults(func=_cmd_eval)
    doc = sub.add_parser("doctor", help="report tools hard to find, duplicates, bad names")
    doc.add_argument("--catalogue", metavar="FILE", help="tool catalogue (default: the demo)")
    doc.add_argument(
        "-k", type=_at_least(1), default=3, help="a tool must be in this many hits (3)"
    )
    doc.add_argument("--json", action="store_true", help="print JSON for a machine")
    doc.add_argument(
        "--limit", type=_at_least(0), default=20, help="findings shown a section (0: all)"
    )
    doc.add_argument("--engine", choices=("native", "pure"), default=None)
    _ranking_switches(doc)
    doc.set_defaults(func=_cmd_doctor)
    pl = sub.add_parser("plan", help="show what a request would hold back and send")
    pl.add_argument("--catalogue", metavar="FILE", help="tool catalogue (default: the demo)")
    pl.add_argument(
        "--provider",
        default="openai",
        choices=("openai", "openai-responses", "anthropic", "gemini"),
        help="whose limits and name rules apply (default openai)",
    )
    pl.add_argument(
        "--window", type=_at_least(1), default=None, help="the model's window in tokens"
    )
    pl.add_argument("--max-tools", type=_at_least(1), default=None, help="override the count limit")
    pl.add_argument("--no-discovery", action="store_true", help="without ToolSearch")
    pl.add_argument("--json", action="store_true", help="print JSON for a machine")
    pl.add_argument("--engine", choices=("native", "pure"), default=None)
    _ranking_switches(pl)
    pl.set_defaults(func=_cmd_plan)
    gw = sub.add_parser("gateway", help="serve MCP: upstream servers behind one surface")
    gw.add_argument("--config", required=True, help="the mcpServers JSON of an MCP client")
    gw.add_argument("--policy", help="allow and deny globs, per upstream (JSON)")
    gw.add_argument(
        "--store",
        help="where sessions are kept: a directory, or redis://host:port/db (shared by processes)",
    )
    gw.add_argument("--store-ttl", type=float, help="forget a session idle this many seconds")
    gw.add_argument(
        "--store-max-sessions",
        type=int,
        default=10_000,
        metavar="N",
        help="sessions the store keeps (the least recently written dropped; default 10000)",
    )
    gw.add_argument("--session", default="stdio", help="the stdio session id (default: stdio)")
    gw.add_argument("--http", metavar="HOST:PORT", help="serve streamable HTTP (host 127.0.0.1)")
    gw.add_argument("--token-env", metavar="VAR", help="require the bearer token in env VAR")
    gw.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        help="also answer HTTP requests whose Host is NAME (or NAME:PORT); repeatable",
    )
    gw.add_argument(
        "--mark-key-env",
        metavar="VAR",
        help="read the snapshot sealing key from env VAR (default TOOLSURFACE_MARK_KEY)",
    )
    gw.add_argument(
        "--max-sessions",
        type=int,
        default=1024,
        help="surfaces held in memory (least recently used dropped; the store keeps them)",
    )
    gw.add_argument(
        "--learn",
        metavar="FILE",
        help="learn from usage: read learned hints from FILE and keep them there (made if missing)",
    )
    gw.add_argument(
        "--clients",
        metavar="FILE",
        help="per-client bearer tokens, each with its own policy (JSON; re-read when it changes)",
    )
    gw.add_argument(
        "--log-format",
        choices=("text", "json"),
        help="log INFO and up on stderr, as text or one JSON object a line (with access lines)",
    )
    gw.add_argument(
        "--learn-sessions",
        type=int,
        default=3,
        metavar="N",
        help="with --learn: a request ranks once N distinct sessions taught it (default 3)",
    )
    gw.add_argument(
        "--no-semantic",
        action="store_true",
        help="lexical ranking alone, even with the semantic extra installed",
    )
    gw.set_defaults(func=_cmd_gateway)
    return parser


def _live_engine() -> str:
    """The live engine's name for a help text, or why ``TOOLSURFACE_ENGINE`` is refused."""
    try:
        return engine()
    except ToolsurfaceError as exc:
        return str(exc)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (2 for bad input, with a message)."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except BrokenPipeError:
        # The reader stopped early (``| head``): what it read was whole, and there is no one
        # left to tell. Standard output is pointed at devnull so the interpreter's final
        # flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (ToolsurfaceError, ValueError, TypeError, OSError) as exc:
        print(f"toolsurface: error: {exc}", file=sys.stderr)
        return 2
    except RecursionError:
        # The readers name the file for the depths they know of; this is the last guard.
        print("toolsurface: error: an input is nested too deeply to read", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
