"""A small MCP server over streamable HTTP for the gateway's tests (MCPServer under uvicorn).

``python http_server.py PORT`` serves ``/mcp`` on 127.0.0.1:PORT (``PORT --sse``: the legacy
SSE transport instead, its stream at ``/sse`` and its messages at ``/messages/``). Every
request must carry
the header ``X-Upstream-Key`` equal to the environment's ``UPSTREAM_KEY`` (401 otherwise),
so a working call shows the gateway sent the configured headers; the tool ``whoami`` answers
the ``X-Tenant`` header it was sent (never the key).
"""

from __future__ import annotations

import os
import sys
from contextvars import ContextVar
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer

KEY = os.environ["UPSTREAM_KEY"]
_tenant: ContextVar[str] = ContextVar("tenant", default="")

mcp = MCPServer("http-notes", instructions="Notes kept by a remote server.")


@mcp.tool()
def add_note(title: str, text: str) -> str:
    """Save a short note under a title in the remote notebook."""
    return f"Saved note {title!r} ({len(text)} chars)"


@mcp.tool()
def whoami() -> str:
    """Tell which tenant the notebook serves this request for."""
    return f"tenant={_tenant.get()}"


class RequireKey:
    """ASGI middleware: a request without the right X-Upstream-Key is answered 401."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]
            }
            if headers.get("x-upstream-key") != KEY:
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"missing key"})
                return
            _tenant.set(headers.get("x-tenant", ""))
        await self.app(scope, receive, send)


if __name__ == "__main__":
    port = int(sys.argv[1])
    app = RequireKey(mcp.sse_app() if "--sse" in sys.argv[2:] else mcp.streamable_http_app())
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
