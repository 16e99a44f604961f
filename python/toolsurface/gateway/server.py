"""The gateway itself: upstream MCP servers in one registry, one surface served over MCP.

Each upstream of the config is started and connected through the MCP adapter as a dynamic
group named by its key (its ``tools/list_changed`` followed). The gateway serves MCP over
stdio: its ``tools/list`` is the surface's plan (what is listed, ToolSearch, what was
loaded); the catalogue block is the server's ``instructions``; a ToolSearch load or a blind
call sends ``notifications/tools/list_changed``; every call goes through admission (the cap,
unknown names, blind calls, rules) and is forwarded to its upstream under the upstream's
own name, whose errors come back as tool errors. The session's snapshot is written after
every call, so a restarted gateway resumes with the same tool list.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Mapping
from typing import Any

from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.stdio import stdio_server

from toolsurface.adapters.mcp import McpServerLink
from toolsurface.dispatch import ToolCall
from toolsurface.gateway.config import Policy, Upstream
from toolsurface.gateway.store import DirectoryStore
from toolsurface.gateway.upstreams import UpstreamSet
from toolsurface.registry import ToolRegistry
from toolsurface.surface.surface import ToolSurface
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, tool_search_tool

__all__ = ["Gateway"]

_log = logging.getLogger("toolsurface.gateway")


def _text(text: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=error)


class Gateway:
    """Upstreams in one registry and one session's surface over them, served over MCP."""

    def __init__(
        self,
        upstreams: list[Upstream],
        *,
        policy: Policy | None = None,
        store: DirectoryStore | None = None,
        session_id: str = "stdio",
        mark_key: bytes | None = None,
    ) -> None:
        self.upstreams = upstreams
        self.policy = policy or Policy()
        self.store = store
        self.session_id = session_id
        self.registry = ToolRegistry()
        self.registry.register(tool_search_tool())
        self.links: dict[str, McpServerLink] = {}
        self.surface = ToolSurface(
            self.registry,
            policy=self._admits,
            session_id=session_id,
            mark_key=mark_key,
        )

    def _owner(self, name: str) -> tuple[str, str] | None:
        """The upstream a gateway tool name belongs to, and the upstream's own name for it."""
        upstreams = getattr(self, "upstream_set", None)
        return None if upstreams is None else upstreams.owner(name)

    async def _upstreams_changed(self) -> None:
        """An upstream's tools entered or left the registry: tell the client if its list moved."""
        before = self.surface.last_plan_names()
        client = getattr(self, "_client", None)
        if self.surface.plan().names != before and client is not None:
            await client.send_tool_list_changed()

    def _admits(self, name: str) -> bool:
        return name == TOOL_SEARCH_NAME or self.policy.admits(name, self._owner)

    async def connect(self, stack: contextlib.AsyncExitStack) -> None:
        """Start and connect every upstream (supervised: a lost one is retried; upstreams.py)."""
        self.upstream_set = await stack.enter_async_context(
            UpstreamSet(self.registry, self.upstreams, on_change=self._upstreams_changed)
        )
        self.links = self.upstream_set.links
        saved = self.store.load(self.session_id) if self.store is not None else None
        if saved is not None:
            dropped = self.surface.restore(saved)
            _log.info("toolsurface gateway: resumed %r, dropped %s", self.session_id, dropped)

    def _save(self) -> None:
        if self.store is None:
            return
        text = self.surface.snapshot().to_json()
        # Only the use clock (and the seal over it) moves on a plain call: such a snapshot
        # is not rewritten, so the store is written when what a resume restores changed.
        data = json.loads(text)
        data.pop("clock", None)
        data.pop("seal", None)
        for entry in data.get("loaded", []):
            entry.pop("last_use", None)
        key = json.dumps(data, sort_keys=True)
        if key != getattr(self, "_saved_key", None):
            self.store.save(self.session_id, text)
            self._saved_key = key

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        """``tools/list``: the surface's plan."""
        self._client = ctx.session
        plan = self.surface.plan()
        tools = [
            types.Tool(name=d["name"], description=d["description"], input_schema=d["input_schema"])
            for d in plan.definitions()
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: Any) -> types.CallToolResult:
        """``tools/call``: ToolSearch on the surface, any other tool admitted and forwarded."""
        self._client = ctx.session
        before = self.surface.last_plan_names()
        arguments: Mapping[str, Any] = params.arguments or {}
        down = self.upstream_set.unavailable(params.name) if self._admits(params.name) else None
        if down is not None:  # a tool of an upstream being retried: say so, not "unknown"
            answer = down
        elif params.name == TOOL_SEARCH_NAME:
            result = self.surface.tool_search(dict(arguments))
            answer = _text(result.text, error=result.refused)
        else:
            (verdict,) = self.surface.admit([ToolCall(params.name, dict(arguments))])
            if not verdict.runs:
                answer = _text(verdict.message, error=True)
            else:
                answer = await self._forward(verdict.call.name, arguments)
        if self.surface.plan().names != before:
            await ctx.session.send_tool_list_changed()
        self._save()
        return answer

    async def _forward(self, name: str, arguments: Mapping[str, Any]) -> types.CallToolResult:
        return await self.upstream_set.call(name, arguments)

    def server(self) -> Server[Any]:
        """The MCP server: instructions carry the catalogue block of the first plan."""
        return Server(
            "toolsurface-gateway",
            instructions=self.surface.plan().catalogue or None,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
        )

    async def serve_stdio(self) -> None:
        """Connect the upstreams, then serve this process's stdin and stdout until EOF."""
        async with contextlib.AsyncExitStack() as stack:
            await self.connect(stack)
            server = self.server()
            options = server.create_initialization_options(NotificationOptions(tools_changed=True))
            async with stdio_server() as (read, write):
                await server.run(read, write, options)
