"""Helpers for the HTTP gateway tests and benchmark: real gateway processes, real clients.

A gateway is started as ``toolsurface gateway --http`` in its own process, and is ready
when it prints its ``listening on`` line (read from its stderr, never slept for). A client
is the MCP SDK's own streamable-HTTP client and ``ClientSession``; a :class:`Router` puts
several gateway processes behind one address for it, as a load balancer would.
"""

from __future__ import annotations

import importlib.util
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

import toolsurface

DEMO_SERVER = Path(__file__).resolve().parent / "mcp_servers" / "demo_server.py"
#: Where this test process imported toolsurface from (a checkout's python/, or the
#: site-packages of an installed wheel): the gateway child imports the same package.
PACKAGE_PARENT = Path(toolsurface.__file__).resolve().parent.parent
READY_TIMEOUT = 60.0
MARK_KEY = "a test mark key of 16+ bytes"


def free_port() -> int:
    """A TCP port nothing listens on now (bound to port 0, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


#: A raw client's ``initialize``, as the tests that speak JSON-RPC themselves send it.
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def write_config(tmp: Path) -> tuple[Path, Path]:
    """An ``mcpServers`` file (the demo ops server, ``mcp-server-time``) and a policy file."""
    servers: dict[str, Any] = {"ops": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}
    if importlib.util.find_spec("mcp_server_time") is not None:  # a test dependency
        args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
        servers["time"] = {"command": sys.executable, "args": args}
    config = tmp / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), "utf-8")
    policy = tmp / "policy.json"
    policy.write_text(json.dumps({"servers": {"ops": {"deny": ["rotate_secret"]}}}), "utf-8")
    return config, policy


class GatewayProcess:
    """``toolsurface gateway --http 127.0.0.1:PORT`` as a child process, stderr collected."""

    def __init__(
        self,
        tmp: Path,
        *,
        port: int | None = None,
        store: str | None = None,
        extra: list[str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.tmp = tmp
        self.port = port or free_port()
        self.store = store
        self.extra = list(extra or [])
        self.env = dict(env or {})
        self.lines: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._ready: queue.Queue[str | None] = queue.Queue()

    @property
    def pid(self) -> int:
        """The running process's id."""
        assert self._proc is not None
        return self._proc.pid

    @property
    def url(self) -> str:
        """The gateway's MCP endpoint."""
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> GatewayProcess:
        """Start the process and wait until it listens (or fail with its stderr)."""
        return self.spawn().wait_ready()

    def spawn(self) -> GatewayProcess:
        """Start the process; :meth:`wait_ready` waits for it (so several start at once)."""
        config, policy = self.tmp / "mcp.json", self.tmp / "policy.json"
        argv = [sys.executable, "-m", "toolsurface.cli", "gateway", "--config", str(config)]
        argv += ["--policy", str(policy), "--http", f"127.0.0.1:{self.port}"]
        if self.store is not None:
            argv += ["--store", self.store]
        env = {**os.environ, "TOOLSURFACE_MARK_KEY": MARK_KEY, **self.env}
        env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE_PARENT), env.get("PYTHONPATH", "")])
        self._ready = queue.Queue()
        self._proc = subprocess.Popen(
            argv + self.extra,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        threading.Thread(target=self._read, args=(self._proc, self._ready), daemon=True).start()
        return self

    def wait_ready(self) -> GatewayProcess:
        """Wait for the ``listening on`` line; if the process ends first, fail with its stderr."""
        ready = self._ready
        try:
            line = ready.get(timeout=READY_TIMEOUT)
        except queue.Empty:
            line = None
        if line is None:
            self.stop()
            raise RuntimeError("the gateway did not start:\n" + "\n".join(self.lines))
        return self

    def _read(self, proc: subprocess.Popen[str], ready: queue.Queue[str | None]) -> None:
        """Collect one process's stderr; its ``listening on`` line (or its end) to ``ready``."""
        assert proc.stderr is not None
        for line in proc.stderr:
            self.lines.append(line.rstrip("\n"))
            if "listening on http://" in line:
                ready.put(line)
        ready.put(None)

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL) and wait for it."""
        if self._proc is None:
            return
        self._proc.terminate()
        try:
            self._proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait(timeout=15)
        self._proc = None

    def __enter__(self) -> GatewayProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Router(httpx2.AsyncBaseTransport):
    """One address in front of several gateway processes: each request goes to ``port``."""

    def __init__(self, port: int) -> None:
        self.port = port
        self._inner = httpx2.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send the request to the gateway currently chosen."""
        request.url = request.url.copy_with(port=self.port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._inner.aclose()


class Changes:
    """A client message handler counting ``notifications/tools/list_changed``."""

    def __init__(self) -> None:
        self.count = 0

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.count += 1


@asynccontextmanager
async def client(
    url: str,
    *,
    token: str | None = None,
    changes: Changes | None = None,
    router: httpx2.AsyncBaseTransport | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialised SDK client session over streamable HTTP."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    timeout = httpx2.Timeout(30.0, read=60.0)
    async with (
        httpx2.AsyncClient(headers=headers, timeout=timeout, transport=router) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write, message_handler=changes) as session,
    ):
        await session.initialize()
        yield session


def names(listed: Any) -> list[str]:
    """The names of a ``tools/list`` result."""
    return [t.name for t in listed.tools]


def text(result: Any) -> str:
    """The text of a tool result."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")
