"""Many concurrent HTTP sessions against the gateway: errors, latency, memory, lost sessions.

    python benches/gateway_sessions.py [--sessions 50] [--calls 100] [--redis] [--json]

Each session is the MCP SDK's own streamable-HTTP client and ``ClientSession`` against a
real ``toolsurface gateway --http`` process fronting the project's demo ops server and
``mcp-server-time``. A session loads two ops tools with ToolSearch, then makes its calls:
one in five a ToolSearch query (English and Russian, which may load more tools), the rest
calls forwarded to the demo server. Every call is timed from the client (the round trip:
client, gateway, upstream and back). Reported: calls, errors, p50 and p99, and the
gateway's resident memory before the sessions and after them, per session.

With ``--redis`` a real ``redis-server`` is started and two gateway processes share it
behind one address: each session's requests alternate between them (a balancer that
falls back to the other process when one does not answer). Halfway, every session lists
its tools, gateway A is stopped and started again while the sessions go on through B, and
every session lists again: a session whose list changed, or that the gateways no longer
know, is lost. The figures go in docs/gateway.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import httpx2
from gateway_procs import GatewayProcess, client, free_port, names, write_config

QUERIES = [
    "restart a service",
    "покажи дежурных по команде",
    "open tickets assigned to me",
    "проверить состояние сервиса",
    "what time is it in Tokyo",
]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("ops__list_tickets", {}),
    ("ops__get_service_health", {"service": "api"}),
]


class Balancer(httpx2.AsyncBaseTransport):
    """One address for several gateways: requests take turns; a process down is skipped."""

    def __init__(self, ports: list[int]) -> None:
        self.ports = ports
        self.turn = 0
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send to the next gateway; on a refused connection, to the one after."""
        self.turn += 1
        last: Exception | None = None
        for i in range(len(self.ports)):
            port = self.ports[(self.turn + i) % len(self.ports)]
            request.url = request.url.copy_with(port=port)
            try:
                return await self._inner.handle_async_request(request)
            except (httpx2.ConnectError, httpx2.RemoteProtocolError) as exc:
                last = exc
        assert last is not None
        raise last

    async def aclose(self) -> None:
        """Close the connections."""
        await self._inner.aclose()


class Halfway:
    """Every session at its halfway point (then the restart), before any goes on."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived = 0
        self.all_there = asyncio.Event()

    async def wait(self) -> None:
        """Arrive, and wait for the others."""
        self.arrived += 1
        if self.arrived >= self.parties:
            self.all_there.set()
        await self.all_there.wait()


@dataclass
class Tally:
    """What the sessions measured."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)


def rss_kib(pid: int) -> int:
    """A process's resident memory, KiB (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def one_session(
    n: int,
    url: str,
    calls: int,
    tally: Tally,
    balancer: Balancer | None,
    halfway: Halfway | None,
    resumed: asyncio.Event | None,
) -> None:
    """One client session: load, then ``calls`` calls; at halfway, the lost-session check."""
    async with client(url, router=balancer) as session:
        await session.call_tool("ToolSearch", {"select": [c[0] for c in CALLS]})
        for i in range(calls):
            if halfway is not None and resumed is not None and i == calls // 2:
                before = names(await session.list_tools())
                await halfway.wait()
                await resumed.wait()
                after = names(await session.list_tools())
                if after != before:
                    tally.lost.append(f"session {n}: {before} then {after}")
            if i % 5 == 0:
                name, args = "ToolSearch", {"query": QUERIES[(n + i) % len(QUERIES)]}
            else:
                name, args = CALLS[i % len(CALLS)]
            start = time.perf_counter()
            try:
                result = await session.call_tool(name, args)
            except Exception as exc:  # a failed request is counted, the run goes on
                tally.errors.append(f"session {n} call {i}: {exc!r}")
                continue
            tally.latencies.append(time.perf_counter() - start)
            if result.is_error:
                tally.errors.append(f"session {n} call {i}: {result.content}")


async def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Start the gateways (and Redis), run the sessions, and collect the figures."""
    write_config(tmp)
    redis_proc: subprocess.Popen[str] | None = None
    store = str(tmp / "store")
    if args.redis:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        port = free_port()
        redis_argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp)]
        redis_argv += ["--save", "", "--appendonly", "no"]
        redis_proc = subprocess.Popen(
            redis_argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        assert redis_proc.stdout is not None
        for line in redis_proc.stdout:
            if "Ready to accept connections" in line:
                break
        store = f"redis://127.0.0.1:{port}/0"
    gateways = [GatewayProcess(tmp, store=store).spawn()]
    if args.redis:
        gateways.append(GatewayProcess(tmp, store=store).spawn())
    tally = Tally()
    try:
        for gw in gateways:
            gw.wait_ready()
        rss_before = sum(rss_kib(gw.pid) for gw in gateways)
        halfway = Halfway(args.sessions + 1) if args.redis else None
        resumed = asyncio.Event() if args.redis else None
        ports = [gw.port for gw in gateways]
        sessions = [
            one_session(
                n,
                gateways[0].url,
                args.calls,
                tally,
                Balancer(ports) if args.redis else None,
                halfway,
                resumed,
            )
            for n in range(args.sessions)
        ]
        started = time.perf_counter()
        tasks = [asyncio.ensure_future(s) for s in sessions]
        restart_s = None
        if halfway is not None and resumed is not None:
            await halfway.wait()
            t0 = time.perf_counter()
            gateways[0].stop()  # A goes away; the sessions go on through B
            resumed.set()
            await asyncio.to_thread(gateways[0].start)
            restart_s = time.perf_counter() - t0
        results = await asyncio.gather(*tasks, return_exceptions=True)
        wall = time.perf_counter() - started
        for n, res in enumerate(results):
            if isinstance(res, BaseException):
                tally.errors.append(f"session {n}: {res!r}")
        rss_after = sum(rss_kib(gw.pid) for gw in gateways)
    finally:
        for gw in gateways:
            gw.stop()
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
    lat = sorted(tally.latencies)
    return {
        "variant": "two gateways sharing Redis, A restarted halfway" if args.redis else "one",
        "sessions": args.sessions,
        "calls": len(lat) + len(tally.errors),
        "errors": len(tally.errors),
        "error_samples": tally.errors[:5],
        "lost_sessions": len(tally.lost) if args.redis else None,
        "lost_samples": tally.lost[:5],
        "p50_ms": round(statistics.median(lat) * 1e3, 2) if lat else None,
        "p99_ms": round(lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1e3, 2) if lat else None,
        "calls_per_s": round(len(lat) / wall, 1),
        "rss_before_mib": round(rss_before / 1024, 1),
        "rss_after_mib": round(rss_after / 1024, 1),
        "rss_per_session_kib": round((rss_after - rss_before) / args.sessions, 1),
        "restart_s": round(restart_s, 2) if restart_s is not None else None,
    }


def main() -> int:
    """Parse the arguments, run, print a table (or JSON); the exit status 1 on any error."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=50)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--redis", action="store_true", help="two gateways sharing Redis")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = asyncio.run(run(args, Path(tmp)))
    if args.json:
        print(json.dumps(out, ensure_ascii=False, indent=2))
    else:
        rows = [(k, out[k]) for k in out if not k.endswith("_samples") and out[k] is not None]
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k:<{width}}  {v}")
        for sample in out["error_samples"] + out["lost_samples"]:
            print("  ", sample)
    return 1 if out["errors"] or out["lost_sessions"] else 0


if __name__ == "__main__":
    sys.exit(main())
