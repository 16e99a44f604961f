"""A host loop over toolsurface, driven by a scripted fake model: no network, no API key.

    python examples/host_loop.py                       # the whole run, printed
    python examples/host_loop.py --json                # the same, and a JSON summary on stdout
    python examples/host_loop.py --stop-after 4 --snapshot state.json   # stop mid-run ...
    python examples/host_loop.py --resume state.json   # ... and go on in a fresh process

The host connects a real MCP server over stdio (mcp-server-time, or the repository's demo
server when that is not installed), carries the bundled demo catalogue (a dynamic group per
``xxx__`` prefix, as if each were a connected server) and three tools of its own, and plays
a scripted conversation: Russian ToolSearch requests, loaded tools called (the MCP one on
the real server), a blind call that fails on its arguments, a misspelt name, a message of
80 calls, a compaction with a snapshot restored into a fresh ToolSurface. Each request's
tools, and what changed, are printed. ``--provider openai`` renders for OpenAI; ``--server
demo`` uses the demo server.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib.util
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from toolsurface import (
    TOOL_SEARCH_NAME,
    RequestPlan,
    SurfaceLimits,
    Tool,
    ToolCall,
    ToolRegistry,
    ToolSurface,
    Verdict,
    tool_search_tool,
)
from toolsurface.adapters.mcp import McpServerLink, connect_server, message_handler
from toolsurface.catalogue import demo_catalogue

SYSTEM = "You are an engineering assistant. Answer in the user's language."
SESSION_ID = "example-session"
#: Fixed so that the bytes repeat in any process; a real host keeps a secret key of its own.
MARK_KEY = b"toolsurface-example-mark-key"
#: Small on purpose, so that the compaction has loads to unload (the default cap is 16).
LIMITS = SurfaceLimits(max_loaded_entries=8)
DEMO_SERVER = Path(__file__).resolve().parents[1] / "tests" / "mcp_servers" / "demo_server.py"

PATH = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
HOST_TOOLS = [
    Tool(name="read_file", description="Read a text file of the workspace.", input_schema=PATH),
    Tool(name="write_file", description="Write a text file of the workspace.", input_schema=PATH),
    Tool(name="run_tests", description="Run the workspace's test suite and report failures."),
]


@dataclass(frozen=True)
class Server:
    """An MCP server to start over stdio, and what the scripted model asks of it."""

    name: str
    args: tuple[str, ...]
    ask: str
    query: str
    tool: str
    misspelt: str
    arguments: dict[str, Any]


TIME = Server(
    "time",
    ("-m", "mcp_server_time", "--local-timezone", "Etc/UTC"),  # the zone is in its schema
    "который час в Токио",
    "текущее время в Токио",
    "time__get_current_time",
    "time__get_curent_time",
    {"timezone": "Asia/Tokyo"},
)
DEMO = Server(
    "ops",
    (str(DEMO_SERVER),),
    "как здоровье сервиса api",
    "покажи здоровье сервиса",
    "ops__get_service_health",
    "ops__get_servise_health",
    {"service": "api"},
)


@dataclass(frozen=True)
class Turn:
    """One message of the scripted model, the user's message before it, and what follows it."""

    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    user: str = ""
    then: str = ""  # "end_turn" (the user's turn is over) or "compact" (the host compacts)


def script(server: Server) -> list[Turn]:
    """The fake model's messages in order: it never reads what it is sent."""
    logs = tuple(("read_file", {"path": f"logs/build-{i:02}.log"}) for i in range(80))
    return [
        Turn(
            "Поищу инструмент для пулреквестов.",
            ((TOOL_SEARCH_NAME, {"query": "покажи открытые пулреквесты"}),),
            user=f"Покажи открытые пулреквесты в acme/api и скажи, {server.ask}.",
        ),
        Turn("", (("github__list_pull_requests", {"owner": "acme", "repo": "api"}),)),
        Turn("", (("github__get_file_contents", {"owner": "acme", "repo": "api"}),)),  # blind
        Turn("Теперь второй вопрос.", ((TOOL_SEARCH_NAME, {"query": server.query}),)),
        Turn("", ((server.misspelt, server.arguments),)),  # a misremembered name
        Turn("", ((server.tool, server.arguments),)),
        Turn("Открыты два пулреквеста, #412 и #415; второй ответ выше.", then="end_turn"),
        Turn("Читаю все логи разом.", logs, user="Прочитай 80 логов сборки.", then="compact"),
        Turn("Дочитываю то, что не запустилось.", logs[64:]),
        Turn("Готово: в логах две ошибки компиляции.", then="end_turn"),
    ]


def build_registry() -> ToolRegistry:
    """The catalogue the host carries before any MCP server connects."""
    registry = ToolRegistry()  # the native engine when built; TOOLSURFACE_ENGINE=pure for the twin
    registry.register_many(tool.model_copy(update={"group": "workspace"}) for tool in HOST_TOOLS)
    registry.declare_group("workspace", load="eager")  # the host's own: never held back for size
    catalogue = demo_catalogue()
    registry.register_many(catalogue)
    for prefix in sorted({tool.name.split("__")[0] for tool in catalogue}):
        registry.declare_group(prefix, prefix=f"{prefix}__", dynamic=True)
    registry.register(tool_search_tool())  # without it nothing is held back for size
    return registry


def new_surface(registry: ToolRegistry, provider: str) -> ToolSurface:
    """One run's surface; the same arguments in every process give the same bytes."""
    return ToolSurface(
        registry, limits=LIMITS, provider=provider, session_id=SESSION_ID, mark_key=MARK_KEY
    )


def request_bytes(plan: RequestPlan, provider: str) -> bytes:
    """The request's head, as a prompt cache sees it: the system text, then the rendered tools."""
    body = {"system": plan.system_text(SYSTEM), "tools": plan.render(provider)}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def canned(name: str, arguments: dict[str, Any]) -> str:
    """The host's stand-in for a demo-catalogue or host tool: a fixed answer."""
    if name == "github__list_pull_requests":
        return json.dumps([{"number": 412, "title": "Retry webhooks"}, {"number": 415}])
    if name == "github__get_file_contents":
        return f"{arguments['path']}: 40 lines"  # KeyError without it
    if name == "read_file":
        return f"{arguments.get('path')}: 120 lines, build passed"
    return f"{name}: done"


def common_prefix(old: tuple[str, ...], new: tuple[str, ...]) -> int:
    """How many tools lead both lists unchanged: what a provider's prompt cache re-reads."""
    kept = 0
    while kept < min(len(old), len(new)) and old[kept] == new[kept]:
        kept += 1
    return kept


@asynccontextmanager
async def connected(registry: ToolRegistry, server: Server) -> AsyncIterator[McpServerLink]:
    """Start the server over stdio and keep its tools in the registry while the block runs."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=list(server.args))
    handler = message_handler()  # follows notifications/tools/list_changed
    async with (
        stdio_client(params) as (read, write),
        ClientSession(read, write, message_handler=handler) as session,
    ):
        await asyncio.wait_for(session.initialize(), 60)
        async with await connect_server(registry, server.name, session, handler=handler) as link:
            yield link


class Host:
    """The host's side of the run: the surface, the requests sent, and what happened."""

    def __init__(
        self, registry: ToolRegistry, link: McpServerLink, provider: str, out: TextIO
    ) -> None:
        self.registry, self.link, self.provider, self.out = registry, link, provider, out
        self.surface = new_surface(registry, provider)
        self.previous: RequestPlan | None = None
        self.digests: list[str] = []
        self.facts: dict[str, Any] = {"capped": 0, "unknown": [], "restored_identical": None}

    def say(self, text: str) -> None:
        """Print a line of the run's log."""
        print(text, file=self.out)

    def send(self) -> None:
        """Plan a request, print its tools and what changed, and keep its digest."""
        plan = self.surface.plan()
        data = request_bytes(plan, self.provider)
        self.digests.append(hashlib.sha256(data).hexdigest())
        base = [n for n, s in zip(plan.names, plan.sources) if s != "loaded"]
        loaded = [n for n, s in zip(plan.names, plan.sources) if s == "loaded"]
        self.say(f"\n== request {len(self.digests)}: {len(plan.names)} tools, {len(data):,} bytes")
        tail = f" + loaded: {', '.join(loaded)}" if loaded else ""
        self.say(f"   tools: {', '.join(base)}{tail}")
        old = self.previous
        if old is None:
            self.say(f"   held back ({len(plan.held_back)} groups): {', '.join(plan.held_back)}")
        else:
            added = [n for n in plan.names if n not in old.names] or ["-"]
            removed = [n for n in old.names if n not in plan.names] or ["-"]
            kept = common_prefix(old.names, plan.names)
            held = "unchanged" if plan.held_back == old.held_back else ", ".join(plan.held_back)
            self.say(f"   added: {', '.join(added)}; removed: {', '.join(removed)}")
            self.say(
                f"   held back: {held}; catalogue: "
                f"{'unchanged' if plan.catalogue == old.catalogue else 'changed'}; "
                f"first {kept} tools as before"
            )
        self.previous = plan

    async def run_tool(self, verdict: Verdict) -> str:
        """Run one admitted call: ToolSearch on the surface, MCP tools on the server."""
        call = verdict.call
        if call.name == TOOL_SEARCH_NAME:
            return self.surface.tool_search(call.arguments).text  # the surface loads
        if call.name in self.link.names():
            result = await self.link.call(call.name, call.arguments)
            return "\n".join(getattr(block, "text", "") for block in result.content)
        try:
            return canned(call.name, call.arguments)
        except KeyError as exc:  # a failure on the arguments: a blind call's ends with its line
            return self.surface.failure_text(
                verdict, f"missing argument {exc}", argument_error=True
            )

    async def answer(self, step: int, turn: Turn) -> None:
        """Take one model message: admit its calls, run those that may run, print the results."""
        if turn.user:
            self.say(f"   user: {turn.user}")
        self.say(f"   model: {turn.text or '(tool calls only)'}")
        calls = [ToolCall(n, a, id=f"call_{step}_{i}") for i, (n, a) in enumerate(turn.calls)]
        verdicts = self.surface.admit(calls)  # one verdict a call; a run also marks the use
        # Every call gets a result, run or not; a real host sends them in the next request.
        results = [await self.run_tool(v) if v.runs else v.message for v in verdicts]
        if len(calls) > 3:
            ran = sum(v.runs for v in verdicts)
            capped = [v for v in verdicts if v.not_run == "capped"]
            self.facts["capped"] += len(capped)
            self.say(f"   {len(calls)} calls: {ran} ran, {len(capped)} not run")
            if capped:
                self.say(f"   <- {capped[0].message}")
            return
        for verdict, text in zip(verdicts, results):
            shown = json.dumps(verdict.call.arguments, ensure_ascii=False)
            blind = "  (blind: not in the list sent)" if verdict.blind else ""
            self.say(f"   -> {verdict.call.name}({shown}){blind}")
            lines = text.splitlines()
            more = [f"(and {len(lines) - 6} more lines)"] if len(lines) > 6 else []
            self.say("\n".join(f"      {line}" for line in lines[:6] + more))
            if verdict.not_run == "unknown":
                self.facts["unknown"].append(text)

    def after(self, turn: Turn) -> None:
        """Tell the surface about a turn end or a compaction; after one, resume from a snapshot."""
        if turn.then == "end_turn":
            self.surface.end_turn()  # a safe point to unload over the cap
        if turn.then != "compact":
            return
        self.surface.compaction()  # the host summarised the conversation; loads are trimmed
        stored = self.surface.snapshot().to_json()  # what a host writes beside its transcript
        fresh = new_surface(self.registry, self.provider)
        fresh.restore(stored)
        same = request_bytes(fresh.plan(), self.provider) == request_bytes(
            self.surface.plan(), self.provider
        )
        self.facts["restored_identical"] = same
        self.say(f"   compacted; a {len(stored)}-byte snapshot restored into a fresh ToolSurface")
        self.say(f"   the next request is byte for byte the same: {'yes' if same else 'NO'}")
        self.surface = fresh


def choose_server(wanted: str, out: TextIO) -> Server:
    """The time server when it is installed (or asked for), else the repository's demo server."""
    if wanted == "demo":
        return DEMO
    if importlib.util.find_spec("mcp_server_time") is not None:
        return TIME
    if wanted == "time":
        raise SystemExit("mcp-server-time is not installed: pip install mcp-server-time")
    print("mcp-server-time is not installed (pip install mcp-server-time): using the", file=out)
    print(f"repository's demo server instead, {DEMO_SERVER}", file=out)
    return DEMO


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    """Run the script (or its rest, from a snapshot file) and return the run's summary."""
    out = sys.stderr if args.json else sys.stdout
    state = json.loads(Path(args.resume).read_text("utf-8")) if args.resume else None
    if state is not None:
        args.provider, args.server = state["provider"], state["server"]
    server = choose_server(args.server, out)
    registry = build_registry()
    async with connected(registry, server) as link:
        host = Host(registry, link, args.provider, out)
        start = 0
        if state is not None:
            start, host.digests, host.facts = state["step"], state["requests"], state["facts"]
            host.surface.restore(state["snapshot"])
            host.say(f"resumed from {args.resume} at message {start + 1} in a fresh process")
        turns = script(server)
        for step in range(start, len(turns)):
            if args.stop_after is not None and step == args.stop_after:
                saved = {"step": step, "provider": args.provider, "server": server.name}
                saved |= {"requests": host.digests, "facts": host.facts}
                saved["snapshot"] = host.surface.snapshot().model_dump(mode="json")
                Path(args.snapshot).write_text(json.dumps(saved, ensure_ascii=False), "utf-8")
                host.say(f"\nstopped after {step} messages; go on: --resume {args.snapshot}")
                break
            host.send()
            await host.answer(step, turns[step])
            host.after(turns[step])
        else:
            host.say(f"\nfinal request sha256: {host.digests[-1]}")
    return {
        "provider": args.provider,
        "server": server.name,
        "engine": registry.engine,
        "resumed_at": start if state is not None else None,
        "stopped_at": args.stop_after,
        "requests": host.digests,
        "final_sha256": host.digests[-1] if host.digests else None,
        **host.facts,
    }


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, run the loop, print the JSON summary when asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--provider", choices=["anthropic", "openai"], default="anthropic")
    parser.add_argument("--server", choices=["auto", "time", "demo"], default="auto")
    parser.add_argument("--json", action="store_true", help="a JSON summary on stdout")
    parser.add_argument("--stop-after", type=int, metavar="N", help="stop after N messages")
    parser.add_argument("--snapshot", metavar="FILE", help="where --stop-after writes the state")
    parser.add_argument("--resume", metavar="FILE", help="go on from a --snapshot file")
    args = parser.parse_args(argv)
    if (args.stop_after is None) != (args.snapshot is None):
        parser.error("--stop-after and --snapshot go together")
    if args.stop_after is not None and not 0 <= args.stop_after < len(script(TIME)):
        parser.error(f"--stop-after takes 0 to {len(script(TIME)) - 1}")
    if importlib.util.find_spec("mcp") is None:
        parser.error("the MCP SDK is needed: pip install 'toolsurface[mcp]' mcp-server-time")
    summary = asyncio.run(main_async(args))
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=2))
    if summary["restored_identical"] is False:
        print("error: the restored surface planned a different request", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
