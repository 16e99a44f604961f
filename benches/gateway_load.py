"""The gateway under load beside the same upstream direct and FastMCP's proxy, in one run.

    python benches/gateway_load.py [--sessions 10,100,500] [--calls-total 2000]
                                   [--fastmcp-python PATH] [--quick] [--json]

The upstream is the project's demo ops server (``tests/mcp_servers/demo_server.py``)
served over streamable HTTP by the SDK (stateful sessions, under uvicorn). For each count
of concurrent sessions, each of these is measured in turn, every one fresh (its own
upstream process, and its own front process), from the same client process:

- ``gateway``: ``toolsurface gateway --http`` with ``--store DIR``, fronting the upstream
  over HTTP; each session loads ``ops__get_ticket`` with ToolSearch, then calls it;
- ``gateway --store-ttl``: the same with ``--store-ttl 300`` (sessions expire when idle);
- ``direct``: the upstream itself; each session calls ``get_ticket``;
- ``fastmcp proxy``: FastMCP's ``create_proxy(URL, mode="auto")`` served over HTTP by
  FastMCP, in front of the upstream (a fresh upstream session per request, its default;
  ``mode="auto"`` because with its default mode, mirroring each request's protocol era, no
  call of 10 concurrent sessions was answered in a minute on this machine, while 5 were);
  each session calls ``get_ticket`` (FastMCP runs with the Python given
  by ``--fastmcp-python`` or ``TOOLSURFACE_FASTMCP_PYTHON``, an environment of its own
  with ``fastmcp``; without one it is left out, and the table says so).

Every session is the MCP SDK's own streamable-HTTP client and ``ClientSession`` (one
shared connection pool, no connection limit). The sessions are opened (at most 50
handshakes at a time; one not open 45 s after the first began is an error), then all make
their calls at once: ``--calls-total`` calls split evenly over the sessions (at least 4
each), none started after ``--seconds`` of the call phase (a call unanswered 30 s after
that is given up, an error), every call timed at the client. Reported per target and
count: calls made, errors (a session that did not open is
one, a failed or ``isError`` call one), calls per second over the call phase (all
sessions), p50 and p99 per call, and the resident memory
of the front process (the gateway, the proxy; the upstream when direct) grown from
before the sessions opened to after their calls (sessions still open), per session.
The figures go in docs/gateway.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import httpx2
from gateway_procs import GatewayProcess, free_port
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

SERVERS = Path(__file__).resolve().parent.parent / "tests" / "mcp_servers"
TICKET = {"ticket_id": "OPS-1002"}
#: The demo server over streamable HTTP: ``python -c UPSTREAM PORT``.
UPSTREAM = f"""
import sys
sys.path.insert(0, {str(SERVERS)!r})
import uvicorn
import demo_server
app = demo_server.mcp.streamable_http_app()
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning",
            backlog=4096)
"""
#: FastMCP's proxy of a URL, served over HTTP: ``python -c PROXY URL PORT``.
PROXY = """
import sys
from fastmcp.server import create_proxy
proxy = create_proxy(sys.argv[1], mode="auto")
proxy.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False,
          log_level="warning", uvicorn_config={"backlog": 4096})
"""
#: Handshakes under way at once while the sessions open.
OPENING = 50
#: A session not open (handshake, and the gateway's load) this long after the first
#: began is an error: it makes no call.
OPEN_SECONDS = 45.0
#: A session whose last call is unanswered this long after the call phase's end is given
#: up (an error: the target stalled).
STALL_SECONDS = 30.0
READY_TIMEOUT = 60.0


@dataclass
class Tally:
    """What one target's sessions measured."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    #: Sessions whose calls are over (done, out of time, or never opened).
    ended: int = 0
    #: No session starts a call after this (``time.perf_counter()``).
    deadline: float = float("inf")
    #: A session not open by then is counted as an error and makes no call.
    open_deadline: float = float("inf")


def rss_kib(pid: int) -> int:
    """A process's resident memory, KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class Child:
    """A server child process (upstream or proxy), ready once its port answers HTTP."""

    def __init__(self, argv: list[str], port: int, env: dict[str, str] | None = None) -> None:
        self.port = port
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    async def ready(self) -> None:
        """Wait until the port answers (any HTTP status); fail with stderr if it ended."""
        deadline = time.monotonic() + READY_TIMEOUT
        async with httpx2.AsyncClient(timeout=2.0) as http:
            while True:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read() if self.proc.stderr else ""
                    raise RuntimeError(f"{self.proc.args!r} ended:\n{err}")
                try:
                    await http.get(self.url)
                    return
                except httpx2.HTTPError:
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"{self.url} did not answer") from None
                    await asyncio.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL; wait."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=15)


def upstream() -> Child:
    """A fresh demo server over streamable HTTP."""
    port = free_port()
    return Child([sys.executable, "-c", UPSTREAM, str(port)], port)


async def one_session(
    http: httpx2.AsyncClient,
    url: str,
    tool: str,
    load: bool,
    calls: int,
    tally: Tally,
    opening: asyncio.Semaphore,
    opened: asyncio.Event,
    count_open: list[int],
    sessions: int,
    go: asyncio.Event,
    done: asyncio.Event,
) -> None:
    """Open a session (one untimed call), wait for all, make ``calls`` timed calls, hold."""
    async with AsyncExitStack() as stack:
        try:
            async with opening:
                read, write = await stack.enter_async_context(
                    streamable_http_client(url, http_client=http)
                )
                session = await stack.enter_async_context(ClientSession(read, write))
                left = max(0.1, tally.open_deadline - time.perf_counter())
                await asyncio.wait_for(session.initialize(), left)
                if load:
                    left = max(0.1, tally.open_deadline - time.perf_counter())
                    select = session.call_tool("ToolSearch", {"select": [tool]})
                    await asyncio.wait_for(select, left)
        except Exception as exc:
            tally.errors.append(f"open: {exc!r}")
            tally.ended += 1
            return
        finally:
            count_open[0] += 1
            if count_open[0] >= sessions:
                opened.set()
        await go.wait()
        for i in range(calls):
            if time.perf_counter() > tally.deadline:
                break
            start = time.perf_counter()
            try:
                result = await session.call_tool(tool, TICKET)
            except Exception as exc:  # counted; the run goes on
                tally.errors.append(f"call {i}: {exc!r}")
                continue
            tally.latencies.append(time.perf_counter() - start)
            if result.is_error:
                tally.errors.append(f"call {i}: {result.content}")
        tally.ended += 1
        await done.wait()  # held open until every session's calls are done (memory read)


async def measure(
    url: str, pid: int, tool: str, load: bool, sessions: int, calls: int, seconds: float
) -> dict[str, Any]:
    """Open ``sessions`` sessions on ``url``, run their calls, and read the figures.

    No call starts after ``seconds`` of the call phase: a slow target makes fewer calls.
    """
    tally = Tally()
    limits = httpx2.Limits(max_connections=None, max_keepalive_connections=None)
    timeout = httpx2.Timeout(120.0, read=300.0)
    async with httpx2.AsyncClient(limits=limits, timeout=timeout) as http:
        rss_before = rss_kib(pid)
        opening, opened, go, done = asyncio.Semaphore(OPENING), *(asyncio.Event() for _ in "ogd")
        count_open = [0]
        tally.open_deadline = time.perf_counter() + OPEN_SECONDS
        tasks = [
            asyncio.ensure_future(
                one_session(
                    http,
                    url,
                    tool,
                    load,
                    calls,
                    tally,
                    opening,
                    opened,
                    count_open,
                    sessions,
                    go,
                    done,
                )
            )
            for _ in range(sessions)
        ]
        t0 = time.perf_counter()
        await opened.wait()  # every session open, or given up at its open deadline
        open_s = time.perf_counter() - t0
        started = time.perf_counter()
        tally.deadline = started + seconds
        go.set()
        while tally.ended < sessions and time.perf_counter() < tally.deadline + STALL_SECONDS:
            await asyncio.sleep(0.01)
        wall = time.perf_counter() - started
        stalled = sessions - tally.ended  # a call still unanswered: an error each
        tally.errors.extend(["stalled: a call unanswered"] * stalled)
        rss_after = rss_kib(pid)
        done.set()
        for task in tasks if stalled else ():
            task.cancel()
        await asyncio.wait(tasks, timeout=STALL_SECONDS)
    lat = sorted(tally.latencies)
    return {
        "sessions": sessions,
        "calls": len(lat) + len(tally.errors),
        "planned": sessions * calls,
        "errors": len(tally.errors),
        "error_samples": sorted(set(tally.errors))[:3],
        "calls_per_s": round(len(lat) / wall, 1) if wall else None,
        "p50_ms": round(statistics.median(lat) * 1e3, 1) if lat else None,
        "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3, 1) if lat else None,
        "open_s": round(open_s, 2),
        "rss_before_mib": round(rss_before / 1024, 1),
        "rss_after_mib": round(rss_after / 1024, 1),
        "rss_per_session_kib": round((rss_after - rss_before) / sessions, 1),
    }


async def gateway_target(
    tmp: Path, sessions: int, calls: int, seconds: float, ttl: float | None
) -> dict[str, Any]:
    """The gateway (``--store``, with ``--store-ttl`` if given) over a fresh upstream."""
    up = upstream()
    try:
        await up.ready()
        work = Path(tempfile.mkdtemp(dir=tmp))
        servers = {"ops": {"type": "http", "url": up.url}}
        (work / "mcp.json").write_text(json.dumps({"mcpServers": servers}), "utf-8")
        (work / "policy.json").write_text("{}", "utf-8")
        extra = ["--store-ttl", str(ttl)] if ttl is not None else []
        extra += ["--max-sessions", str(max(1024, 2 * sessions))]
        gw = GatewayProcess(work, store=str(work / "store"), extra=extra)
        with gw:
            return await measure(gw.url, gw.pid, "ops__get_ticket", True, sessions, calls, seconds)
    finally:
        up.stop()


async def direct_target(sessions: int, calls: int, seconds: float) -> dict[str, Any]:
    """The upstream itself."""
    up = upstream()
    try:
        await up.ready()
        return await measure(up.url, up.proc.pid, "get_ticket", False, sessions, calls, seconds)
    finally:
        up.stop()


async def proxy_target(python: str, sessions: int, calls: int, seconds: float) -> dict[str, Any]:
    """FastMCP's proxy of a fresh upstream."""
    up = upstream()
    proxy: Child | None = None
    try:
        await up.ready()
        port = free_port()
        proxy = Child([python, "-c", PROXY, up.url, str(port)], port)
        await proxy.ready()
        return await measure(
            proxy.url, proxy.proc.pid, "get_ticket", False, sessions, calls, seconds
        )
    finally:
        if proxy is not None:
            proxy.stop()
        up.stop()


def fastmcp_python(given: str | None) -> str | None:
    """The Python whose environment has ``fastmcp`` (None: none found)."""
    for candidate in (given, os.environ.get("TOOLSURFACE_FASTMCP_PYTHON"), sys.executable):
        if not candidate or not (Path(candidate).exists() or shutil.which(candidate)):
            continue
        probe = subprocess.run(
            [candidate, "-c", "import fastmcp; print(fastmcp.__version__)"],
            capture_output=True,
            text=True,
            check=False,
        )
        if probe.returncode == 0:
            return candidate
    return None


async def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Every target at every count of sessions, one after another."""
    python = fastmcp_python(args.fastmcp_python)
    version = None
    if python is not None:
        version = subprocess.run(
            [python, "-c", "import fastmcp; print(fastmcp.__version__)"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    rows: list[dict[str, Any]] = []
    for sessions in args.sessions:
        calls = max(4, args.calls_total // sessions)
        secs = args.seconds
        targets: list[tuple[str, Any]] = [
            ("gateway", partial(gateway_target, tmp, sessions, calls, secs, None)),
            ("gateway --store-ttl 300", partial(gateway_target, tmp, sessions, calls, secs, 300.0)),
            ("direct", partial(direct_target, sessions, calls, secs)),
        ]
        if python is not None:
            proxy = f"fastmcp {version} proxy"
            targets.append((proxy, partial(proxy_target, python, sessions, calls, secs)))
        for name, target in targets:
            if args.targets and not any(t in name for t in args.targets):
                continue
            row = {"target": name, **(await target())}
            print(json.dumps(row, ensure_ascii=False), file=sys.stderr, flush=True)
            rows.append(row)
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python", *sys.argv]),
        "fastmcp": version,
        "cpus": os.cpu_count(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "rows": rows,
    }


def table(out: dict[str, Any]) -> str:
    """The rows as a Markdown table."""
    head = (
        "| sessions | target | calls | errors | calls/s | p50 | p99 | memory per session |\n"
        "|---:|---|---:|---:|---:|---:|---:|---:|"
    )
    lines = [head]
    for r in out["rows"]:
        lines.append(
            f"| {r['sessions']} | {r['target']} | {r['calls']:,} | {r['errors']} | "
            f"{r['calls_per_s']} | {r['p50_ms']} ms | {r['p99_ms']} ms | "
            f"{r['rss_per_session_kib']} KiB |"
        )
    if out["fastmcp"] is None:
        lines.append("\n(FastMCP's proxy not run: no Python with fastmcp; see --fastmcp-python)")
    return "\n".join(lines)


def main() -> int:
    """Parse the arguments, run, print the table (or JSON); exit status 1 on any error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sessions",
        type=lambda s: [int(x) for x in s.split(",")],
        default=[10, 100, 500],
        help="comma-separated counts of concurrent sessions (10,100,500)",
    )
    parser.add_argument("--calls-total", type=int, default=2000, help="calls per count")
    parser.add_argument(
        "--seconds", type=float, default=10.0, help="no call starts later in a call phase"
    )
    parser.add_argument("--fastmcp-python", help="a Python with fastmcp installed")
    parser.add_argument(
        "--targets", type=lambda s: s.split(","), help="only these (gateway,direct,fastmcp)"
    )
    parser.add_argument("--quick", action="store_true", help="10,50 sessions, 400 calls")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.calls_total = [10, 50], 400
    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(run(args, Path(tmp)))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        print(f"{out['date']}, {out['cpus']} CPUs, load {out['load_average']}: {out['command']}")
        print(table(out))
        for r in out["rows"]:
            for sample in r["error_samples"]:
                print(f"  {r['sessions']} {r['target']}: {sample}")
    return 1 if any(r["errors"] for r in out["rows"]) else 0


if __name__ == "__main__":
    sys.exit(main())
