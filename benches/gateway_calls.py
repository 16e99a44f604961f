"""What the gateway adds to a call, and what its ``tools/list`` saves, in one run.

    python benches/gateway_calls.py [--calls 500] [--warmup 50] [--no-store] [--json]
                                    [--profile FILE]

Two MCP SDK clients run side by side over stdio: one to the project's demo server directly,
one to ``toolsurface gateway`` fronting the same demo server (and, if installed, the
mcp-server-time, -git and -fetch servers, for the token count). The forwarded calls
(``ops__get_ticket`` through the gateway, ``get_ticket`` directly: a canned answer, so the
transport is all there is; and mcp-server-git's ``git_status``, a real piece of work) are
timed ``--calls`` times each, interleaved (direct, gateway, direct, ...) after ``--warmup``
calls each, so both see the same machine. The gateway keeps its snapshots (``--store``), as
the docs run it, unless ``--no-store`` (sessions in its memory). It prints p50 and p99 of
each and their ratios; the issue's target is a gateway p50 at most 1.5x the direct one.
Then it counts, with the project's estimator (``toolsurface.surface.estimate_tokens``), the
tokens of the gateway's first ``tools/list`` plus its instructions (the catalogue block)
against the tokens of every upstream tool.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import PaginatedRequestParams

from toolsurface.models import tool_from_mapping
from toolsurface.surface import estimate_tokens
from toolsurface.surface.limits import estimate_text_tokens

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "tests" / "mcp_servers" / "demo_server.py"
ARGS = {"ticket_id": "OPS-1002"}


def _servers(repo: Path) -> dict[str, Any]:
    py = sys.executable
    servers: dict[str, Any] = {"ops": {"command": py, "args": [str(DEMO)]}}
    for name, module, extra in (
        ("time", "mcp_server_time", ["--local-timezone", "UTC"]),
        ("git", "mcp_server_git", ["--repository", str(repo)]),
        ("fetch", "mcp_server_fetch", []),
    ):
        try:
            __import__(module)
        except ImportError:
            continue
        servers[name] = {"command": py, "args": ["-m", module, *extra]}
    return servers


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _tool_tokens(tools: list[Any], prefix: str = "") -> int:
    total = 0
    for t in tools:
        data = t.model_dump(by_alias=True, mode="json", exclude_none=True)
        tool = tool_from_mapping(
            {
                "name": f"{prefix}{data['name']}",
                "description": data.get("description", ""),
                "input_schema": data.get("inputSchema", {"type": "object"}),
            }
        )
        total += estimate_tokens(tool)
    return total


async def _list_all(session: Any) -> list[Any]:
    """Every page of a session's tools/list."""
    page = await session.list_tools()
    tools = list(page.tools)
    while page.next_cursor:
        page = await session.list_tools(params=PaginatedRequestParams(cursor=page.next_cursor))
        tools.extend(page.tools)
    return tools


async def _session(stack: AsyncExitStack, params: StdioServerParameters) -> Any:
    errlog = stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115 - closed by the stack
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    init = await session.initialize()
    return session, init


async def _run(calls: int, warmup: int, profile: str | None, store: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        os.system(f"git -C {repo} init -q")
        servers = _servers(repo)
        config = Path(tmp) / "mcp.json"
        config.write_text(json.dumps({"mcpServers": servers}), "utf-8")
        env = {"PYTHONPATH": os.pathsep.join(sys.path)}
        if "TOOLSURFACE_ENGINE" in os.environ:
            env["TOOLSURFACE_ENGINE"] = os.environ["TOOLSURFACE_ENGINE"]
        gw_args = ["-m", "toolsurface.cli", "gateway", "--config", str(config)]
        if store:  # as the docs run it: snapshots kept
            gw_args += ["--store", str(Path(tmp) / "store")]
        if profile:  # the gateway under pyinstrument, its report written when it exits
            gw_args = ["-m", "pyinstrument", "-r", "text", "-o", profile, *gw_args]
        async with AsyncExitStack() as stack:
            direct, _ = await _session(
                stack, StdioServerParameters(command=sys.executable, args=[str(DEMO)])
            )
            git = servers.get("git")
            direct_git = None
            if git is not None:
                params = StdioServerParameters(command=git["command"], args=git["args"])
                direct_git, _ = await _session(stack, params)
            gateway, init = await _session(
                stack, StdioServerParameters(command=sys.executable, args=gw_args, env=env)
            )
            listed = await gateway.list_tools()
            gw_tokens = _tool_tokens(listed.tools) + estimate_text_tokens(init.instructions or "")
            every = 0
            counts: dict[str, int] = {}
            for name, spec in servers.items():
                async with AsyncExitStack() as one:
                    params = StdioServerParameters(command=spec["command"], args=spec["args"])
                    session, _ = await _session(one, params)
                    tools = await _list_all(session)
                    counts[name] = len(tools)
                    every += _tool_tokens(tools, f"{name}__")
            pairs: list[tuple[str, Any, str, dict[str, Any]]] = [
                ("direct", direct, "get_ticket", ARGS),
                ("gateway", gateway, "ops__get_ticket", ARGS),
            ]
            if direct_git is not None:
                status = {"repo_path": str(repo)}
                pairs.append(("direct_git", direct_git, "git_status", status))
                pairs.append(("gateway_git", gateway, "git__git_status", status))
            select = [name for label, _, name, _ in pairs if label.startswith("gateway")]
            await gateway.call_tool("ToolSearch", {"select": select})
            for _ in range(warmup):
                for _, session, name, arguments in pairs:
                    await session.call_tool(name, arguments)
            times: dict[str, list[float]] = {label: [] for label, *_ in pairs}
            for _ in range(calls):
                for label, session, name, arguments in pairs:
                    start = time.perf_counter()
                    result = await session.call_tool(name, arguments)
                    times[label].append(time.perf_counter() - start)
                    assert not result.is_error, result
    out: dict[str, Any] = {"calls": calls, "warmup": warmup, "store": store}
    for label, values in times.items():
        out[label] = {
            "p50_ms": statistics.median(values) * 1000,
            "p99_ms": _percentile(values, 0.99) * 1000,
        }
    for suffix in ("", "_git"):
        if f"gateway{suffix}" in out:
            gw, dr = out[f"gateway{suffix}"], out[f"direct{suffix}"]
            out[f"ratio{suffix}_p50"] = gw["p50_ms"] / dr["p50_ms"]
            out[f"ratio{suffix}_p99"] = gw["p99_ms"] / dr["p99_ms"]
            out[f"added{suffix}_p50_ms"] = gw["p50_ms"] - dr["p50_ms"]
    out["tokens"] = {
        "gateway_tools_list_and_instructions": gw_tokens,
        "every_upstream_tool": every,
        "upstream_tools": counts,
    }
    return out


def main() -> None:
    """Run the benchmark and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-store", action="store_true", help="the gateway without --store")
    parser.add_argument("--profile", help="profile the gateway with pyinstrument into FILE")
    args = parser.parse_args()
    out = anyio.run(_run, args.calls, args.warmup, args.profile, not args.no_store)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    store = "with --store" if out["store"] else "without a store"
    print(
        f"forwarded call, {args.calls} each, interleaved after {args.warmup} warm-up calls, "
        f"the gateway {store}"
    )
    for suffix, what in (("", "ops get_ticket (canned answer)"), ("_git", "git git_status")):
        if f"gateway{suffix}" not in out:
            continue
        d, g = out[f"direct{suffix}"], out[f"gateway{suffix}"]
        print(f" {what}")
        print(f"  direct   p50 {d['p50_ms']:.3f} ms   p99 {d['p99_ms']:.3f} ms")
        print(f"  gateway  p50 {g['p50_ms']:.3f} ms   p99 {g['p99_ms']:.3f} ms")
        r50, r99 = out[f"ratio{suffix}_p50"], out[f"ratio{suffix}_p99"]
        added = out[f"added{suffix}_p50_ms"]
        print(f"  ratio    p50 {r50:.2f}x  p99 {r99:.2f}x  added p50 {added:.3f} ms (target 1.5x)")
    t = out["tokens"]
    tools = ", ".join(f"{k} {v}" for k, v in t["upstream_tools"].items())
    print(f"tokens: every upstream tool ({tools}) {t['every_upstream_tool']}")
    print(f"        gateway tools/list + instructions {t['gateway_tools_list_and_instructions']}")


if __name__ == "__main__":
    main()
