"""MCP adapter: a connected server's tools in a ToolRegistry, kept in step with the server.

``connect_server`` lists every page of a session's tools, registers each as
``{server}__{tool}`` (made MCP-safe), and declares the server a dynamic group, so a
:class:`~toolsurface.ToolSurface` holds it back and loads its tools on demand. The returned
:class:`McpServerLink` maps names back for calls, re-lists on ``refresh()`` (scheduled by
:func:`message_handler` when the server sends ``notifications/tools/list_changed``), and
``close()`` removes every trace of the server. It needs the ``mcp`` extra
(``pip install 'toolsurface[mcp]'``); :func:`tools_from_list_result` needs only the library.

```python
handler = message_handler()
server = StdioServerParameters(command="python", args=["-m", "mcp_server_time"])
async with stdio_client(server) as (r, w):
    async with ClientSession(r, w, message_handler=handler) as session:
        await session.initialize()
        link = await connect_server(registry, "time", session, handler=handler)
        result = await link.call("time__get_current_time", {"timezone": "UTC"})
        await link.close()
```
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolsurface.errors import (
    CatalogueFormatError,
    DuplicateToolError,
    ToolDefinitionError,
    ToolsurfaceError,
    UnknownToolError,
)
from toolsurface.groups import GROUP_NAME_PATTERN, LoadMode, ToolGroup
from toolsurface.models import Tool, tool_from_mapping
from toolsurface.registry import ToolRegistry
from toolsurface.retrieval.boosts.mentions import server_aliases

if TYPE_CHECKING:
    from types import TracebackType

    from mcp import ClientSession
    from mcp.types import CallToolResult

__all__ = [
    "MAX_LIST_PAGES",
    "TOOLS_LIST_CHANGED",
    "McpAdapterError",
    "McpServerLink",
    "RefreshResult",
    "SkippedTool",
    "ToolListChangedHandler",
    "connect_server",
    "is_tools_list_changed",
    "mcp_tool_name",
    "message_handler",
    "server_aliases",
    "tools_from_list_result",
]

_log = logging.getLogger("toolsurface.mcp")

#: The notification a server sends when its tool list changed.
TOOLS_LIST_CHANGED = "notifications/tools/list_changed"
#: A listing that is still paging after this many pages is refused (a cursor that never ends).
MAX_LIST_PAGES = 1_000
#: MCP's longest tool name.
MAX_NAME_CHARS = 128
_DIGEST_CHARS = 8
_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]")
_PREFIX = re.compile(r"[A-Za-z0-9_.\-]{1,100}")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

#: What a ClientSession calls with each incoming message (a notification or an exception).
MessageHandler = Callable[[Any], Awaitable[None]]


class McpAdapterError(ToolsurfaceError):
    """An MCP server's listing could not be brought into the registry (paging, a closed link)."""


@dataclass(frozen=True)
class SkippedTool:
    """A server tool left out of the registry, and why, so a host can show it."""

    server_name: str
    reason: str


@dataclass(frozen=True)
class RefreshResult:
    """What one listing changed in the registry: registry names added, replaced, removed."""

    added: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    skipped: tuple[SkippedTool, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the registry moved at all."""
        return bool(self.added or self.replaced or self.removed)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def mcp_tool_name(prefix: str, server_tool: str, *, force_digest: bool = False) -> str:
    """A server tool's registry name, MCP-safe; an altered name ends with its name's hash.

    A name that needed changing (odd characters to ``_``, or cut to 128) always ends with a
    hash of the server's own name, so the name depends on that name alone: two server names
    that clean up alike get different names whatever order the server lists them in.
    """
    name = _UNSAFE.sub("_", f"{prefix}{server_tool}")
    altered = name != f"{prefix}{server_tool}"
    if len(name) > MAX_NAME_CHARS or altered or force_digest:
        room = MAX_NAME_CHARS - _DIGEST_CHARS - 1
        name = f"{name[:room]}_{_digest(server_tool)}"
    return name


def _assign_names(prefix: str, server_names: Iterable[str]) -> dict[str, str]:
    """Registry name per server name, each from its own name alone (never from the order)."""
    return {n: mcp_tool_name(prefix, n) for n in server_names}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _convert(
    items: Iterable[Any], server: str, prefix: str
) -> tuple[list[tuple[Tool, str]], list[SkippedTool]]:
    """MCP tool definitions as registry Tools with their server names; rejects logged."""
    skipped: list[SkippedTool] = []
    valid: list[tuple[str, Mapping[str, Any]]] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        raw = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(item, Mapping) or not isinstance(raw, str) or not raw:
            shown = f"item {i}"
            skipped.append(SkippedTool(shown, "not a tool definition (no non-empty 'name')"))
            continue
        description = item.get("description")
        if description is not None and not isinstance(description, str):
            kind = type(description).__name__
            skipped.append(SkippedTool(raw, f"its description is a {kind}, not a string"))
            continue
        if raw in seen:
            skipped.append(SkippedTool(raw, "listed twice by the server; the first is kept"))
            continue
        seen.add(raw)
        valid.append((raw, item))
    names = _assign_names(prefix, (n for n, _ in valid))
    # A server name kept as is wins its registry name over an altered one, in any order.
    plain = {made for raw, made in names.items() if made == f"{prefix}{raw}"}
    tools: list[tuple[Tool, str]] = []
    taken: set[str] = set()
    for raw, item in valid:
        name = names[raw]
        if name in taken or (name in plain and name != f"{prefix}{raw}"):
            skipped.append(SkippedTool(raw, f"its registry name {name!r} is taken by another"))
            continue
        schema = item.get("inputSchema", item.get("input_schema"))
        # A server's ``title`` is a display name, not a search hint (the host's own field):
        # it is not indexed, so a saved tools/list read by the catalogue reader ranks alike.
        data: dict[str, Any] = {
            "name": name,
            "description": _text(item.get("description")),
            "input_schema": dict(_EMPTY_SCHEMA) if schema is None else schema,
        }
        annotations = item.get("annotations")
        # The SDK's types hold a bool or None here; a raw listing's other values say nothing.
        hint = annotations.get("readOnlyHint") if isinstance(annotations, Mapping) else None
        if isinstance(hint, bool):
            data["read_only"] = hint
        try:
            tool = tool_from_mapping(data, where=f"MCP server {server!r} tool {raw!r}")
        except ToolDefinitionError as exc:
            skipped.append(SkippedTool(raw, str(exc)))
            continue
        taken.add(name)
        tools.append((tool, raw))
    for skip in skipped:
        _log.warning(
            "toolsurface: MCP server %r: tool %r skipped: %s", server, skip.server_name, skip.reason
        )
    return tools, skipped


def _check_names(name: str, prefix: str | None) -> str:
    if not isinstance(name, str) or not GROUP_NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"MCP server name {name!r} must be 1 to 64 letters, digits, '_', '-' or '.' "
            "(it names the group)"
        )
    chosen = f"{name}__" if prefix is None else prefix
    if not isinstance(chosen, str) or not _PREFIX.fullmatch(chosen):
        raise ValueError(
            f"prefix {chosen!r} of MCP server {name!r} must be 1 to 100 letters, digits, "
            "'_', '-' or '.'"
        )
    return chosen


def tools_from_list_result(
    result: Mapping[str, Any], server: str, *, prefix: str | None = None
) -> list[Tool]:
    """Registry Tools from plain ``tools/list`` JSON (result or response); bad ones skipped."""
    chosen = _check_names(server, prefix)
    body: Any = result
    if isinstance(body, Mapping) and isinstance(body.get("result"), Mapping):
        body = body["result"]
    items = body.get("tools") if isinstance(body, Mapping) else None
    if not isinstance(items, list):
        raise CatalogueFormatError(
            f"MCP server {server!r}: expected a tools/list result, "
            '{"tools": [{"name", "description", "inputSchema"}]}'
        )
    return [tool for tool, _ in _convert(items, server, chosen)[0]]


def is_tools_list_changed(message: object) -> bool:
    """Whether a ClientSession message is ``notifications/tools/list_changed`` (mcp 1.x or 2.x)."""
    inner = getattr(message, "root", message)  # mcp 1.x wraps notifications in a RootModel
    return getattr(inner, "method", None) == TOOLS_LIST_CHANGED


class ToolListChangedHandler:
    """A ClientSession ``message_handler`` that schedules the bound link's refresh on a change."""

    # The refresh runs in its own task, never inside the handler: an mcp 1.x session awaits
    # its handler in the receive loop, where awaiting tools/list would deadlock. Every message
    # still goes on to ``inner``, the host's own handler, if any.

    def __init__(self, inner: MessageHandler | None = None) -> None:
        self.inner = inner
        self.link: McpServerLink | None = None

    def bind(self, link: McpServerLink | None) -> None:
        """Point the handler at the link to refresh (``None`` to stop refreshing)."""
        self.link = link

    async def __call__(self, message: object) -> None:
        """Schedule a refresh on a tool-list change, then hand the message to ``inner``."""
        if is_tools_list_changed(message) and self.link is not None:
            self.link.schedule_refresh()
        if self.inner is not None:
            await self.inner(message)


def message_handler(inner: MessageHandler | None = None) -> ToolListChangedHandler:
    """A ``message_handler`` for ``ClientSession``; pass it to ``connect_server(handler=...)``."""
    return ToolListChangedHandler(inner)


async def _list_page(session: ClientSession, server: str, params: Any) -> dict[str, Any]:
    """One page of ``tools/list`` as plain JSON, without the tools the SDK's model refuses.

    The SDK checks a page whole, so one tool with, say, ``"inputSchema": "nope"`` or no
    name would take every other tool of the server with it. When its listing fails, the
    page is asked for again through its dispatcher's raw request (no public call gives a
    page before that check; an SDK without one raises as before) and each tool is validated
    alone. The ones that pass are handed to the session as its own listing would be
    (``_absorb_tool_listing``: a call checks its result against the listed output schema,
    and would otherwise list again and fail again); the others are skipped with a warning
    naming the server, the position and the name when there is one.
    """
    from mcp import types
    from mcp_types import methods
    from pydantic import ValidationError

    send_raw = getattr(getattr(session, "_dispatcher", None), "send_raw_request", None)
    try:
        page = await session.list_tools(params=params)
        return page.model_dump(by_alias=True, mode="json", exclude_none=True)
    except ValidationError:
        if send_raw is None:
            raise
    wire = None if params is None else params.model_dump(by_alias=True, exclude_none=True)
    raw = await send_raw("tools/list", wire, {})
    items = raw.get("tools") if isinstance(raw, dict) else None
    cursor = raw.get("nextCursor") if isinstance(raw, dict) else None
    # Each tool checked as the SDK checks a page (the negotiated version's model, which is
    # stricter than the version-free ``Tool``), alone.
    version = getattr(session, "_negotiated_version", None) or "2025-11-25"
    good: list[types.Tool] = []
    for i, item in enumerate(items if isinstance(items, list) else []):
        try:
            methods.validate_server_result("tools/list", version, {"tools": [item]})
            good.append(types.Tool.model_validate(item, by_name=False))
        except ValidationError as exc:
            name = item.get("name") if isinstance(item, dict) else None
            shown = f"{name[:128]!r}" if isinstance(name, str) else "(no name)"
            _log.warning(
                "toolsurface: MCP server %r: tools/list item %d %s skipped: %s",
                server,
                i,
                shown,
                str(exc).splitlines()[0][:300],
            )
    next_cursor = cursor if isinstance(cursor, str) and cursor else None
    result = types.ListToolsResult(tools=good, next_cursor=next_cursor)
    absorb = getattr(session, "_absorb_tool_listing", None)
    if callable(absorb):
        complete = (params is None or params.cursor is None) and next_cursor is None
        result = absorb(result, complete=complete)
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


async def _list_all(session: ClientSession, server: str) -> list[Any]:
    """Every page of the session's ``tools/list`` as plain JSON items."""
    from mcp.types import PaginatedRequestParams

    items: list[Any] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_LIST_PAGES):
        params = None if cursor is None else PaginatedRequestParams(cursor=cursor)
        data = await _list_page(session, server, params)
        tools = data.get("tools")
        if isinstance(tools, list):
            items.extend(tools)
        nxt = data.get("nextCursor")
        if not isinstance(nxt, str) or not nxt:
            return items
        if nxt in seen:
            raise McpAdapterError(
                f"MCP server {server!r}: tools/list returned cursor {nxt!r} twice; "
                "the listing was not applied"
            )
        seen.add(nxt)
        cursor = nxt
    raise McpAdapterError(
        f"MCP server {server!r}: tools/list still paging after {MAX_LIST_PAGES} pages; "
        "the listing was not applied"
    )


class McpServerLink:
    """One MCP server's tools in a registry (made by ``connect_server``): names, refresh, calls."""

    def __init__(
        self,
        registry: ToolRegistry,
        name: str,
        session: ClientSession,
        *,
        prefix: str,
        handler: ToolListChangedHandler | None = None,
    ) -> None:
        import anyio

        self.registry = registry
        self.name = name
        self.session = session
        self.prefix = prefix
        self.handler = handler
        self.last_refresh: RefreshResult | None = None
        self.refresh_count = 0
        self._to_server: dict[str, str] = {}
        #: The group declaration this link made; it undeclares that one only.
        self._group: ToolGroup | None = None
        self._lock = anyio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._dirty = False
        self._closed = False

    # -- names ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def names(self) -> list[str]:
        """The registry names this link registered, sorted."""
        return sorted(self._to_server)

    def __contains__(self, tool_name: object) -> bool:
        """Whether this link registered the registry name ``tool_name`` (without sorting)."""
        return tool_name in self._to_server

    def server_name(self, tool_name: str) -> str:
        """The server's own name for a registry name (a server name is taken as is)."""
        found = self._to_server.get(tool_name)
        if found is not None:
            return found
        if tool_name in self._to_server.values():
            return tool_name
        raise UnknownToolError(f"MCP server {self.name!r} has no tool named {tool_name!r}")

    def registry_name(self, server_tool: str) -> str:
        """The registry name of one of the server's tools."""
        for reg_name, srv_name in self._to_server.items():
            if srv_name == server_tool:
                return reg_name
        raise UnknownToolError(f"MCP server {self.name!r} has no tool named {server_tool!r}")

    # -- keeping in step --------------------------------------------------------------------

    async def refresh(self) -> RefreshResult:
        """Re-list the server's tools and register new, replace changed, unregister vanished."""
        async with self._lock:
            if self._closed:
                return RefreshResult()
            items = await _list_all(self.session, self.name)
            if self._closed:
                return RefreshResult()
            result = self._apply(items)
            self.last_refresh = result
            self.refresh_count += 1
        if result.changed:
            _log.info(
                "toolsurface: MCP server %r: %d added, %d replaced, %d removed",
                self.name,
                len(result.added),
                len(result.replaced),
                len(result.removed),
            )
        return result

    def _apply(self, items: list[Any]) -> RefreshResult:
        planned, skipped = _convert(items, self.name, self.prefix)
        registry = self.registry
        fresh: list[Tool] = []
        changed: list[Tool] = []
        added: list[str] = []
        rejected = list(skipped)
        keep: dict[str, str] = {}
        for tool, srv in planned:
            if tool.name in self._to_server:
                keep[tool.name] = srv
                try:
                    current: Tool | None = registry.get(tool.name)
                except UnknownToolError:
                    current = None
                if current is None:
                    added.append(tool.name)
                if current != tool:
                    changed.append(tool)
            elif tool.name in registry:
                reason = f"a tool named {tool.name!r} is already registered, not by this server"
                _log.warning(
                    "toolsurface: MCP server %r: tool %r skipped: %s", self.name, srv, reason
                )
                rejected.append(SkippedTool(srv, reason))
            else:
                fresh.append(tool)
                keep[tool.name] = srv
        added.extend(t.name for t in self._register_fresh(fresh, keep, rejected))
        if changed:
            registry.register_many(changed, replace=True, where=f"MCP server {self.name!r}")
        removed = [n for n in self._to_server if n not in keep]
        for name in removed:
            with contextlib.suppress(UnknownToolError):
                registry.unregister(name)
        self._to_server = keep
        replaced = [t.name for t in changed if t.name not in added]
        return RefreshResult(
            added=tuple(sorted(added)),
            replaced=tuple(sorted(replaced)),
            removed=tuple(sorted(removed)),
            skipped=tuple(rejected),
        )

    def _register_fresh(
        self, fresh: list[Tool], keep: dict[str, str], rejected: list[SkippedTool]
    ) -> list[Tool]:
        """Register new tools in one batch; on a race with another writer, one by one."""
        where = f"MCP server {self.name!r}"
        if not fresh:
            return []
        try:
            return self.registry.register_many(fresh, where=where)
        except DuplicateToolError:
            pass
        done: list[Tool] = []
        for tool in fresh:
            try:
                done.append(self.registry.register(tool, where=where))
            except DuplicateToolError as exc:
                srv = keep.pop(tool.name)
                _log.warning("toolsurface: MCP server %r: tool %r skipped: %s", self.name, srv, exc)
                rejected.append(SkippedTool(srv, str(exc)))
        return done

    def schedule_refresh(self) -> None:
        """Refresh soon in a task of the running asyncio loop; changes meanwhile coalesce."""
        if self._closed:
            return
        self._dirty = True
        if self._task is not None and not self._task.done():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            _log.warning(
                "toolsurface: MCP server %r: tool list changed, but no asyncio loop runs to "
                "refresh it; call link.refresh()",
                self.name,
            )
            return
        self._task = loop.create_task(self._refresh_while_dirty())

    async def _refresh_while_dirty(self) -> None:
        while self._dirty and not self._closed:
            self._dirty = False
            try:
                await self.refresh()
            except Exception as exc:
                _log.warning(
                    "toolsurface: MCP server %r: refresh after tools/list_changed failed: %s",
                    self.name,
                    exc,
                )

    async def wait_idle(self) -> None:
        """Wait until a scheduled refresh (if any) has finished."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.shield(task)

    # -- calls and removal ------------------------------------------------------------------

    async def call(
        self, tool_name: str, arguments: Mapping[str, Any] | None = None
    ) -> CallToolResult:
        """Call a tool by its registry name (mapped back to the server's name) on the server."""
        if self._closed:
            raise McpAdapterError(f"MCP server {self.name!r}: the link is closed")
        return await self.session.call_tool(self.server_name(tool_name), dict(arguments or {}))

    async def close(self) -> list[str]:
        """Unregister every tool of the server and undeclare its group; returns the names.

        Idempotent. The session is the host's: it is left open.
        """
        self._closed = True
        if self.handler is not None and self.handler.link is self:
            self.handler.bind(None)
        task, self._task = self._task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        async with self._lock:
            removed = self._drop_all()
        return removed

    disconnect = close

    def _abandon(self) -> None:
        """Close without waiting (no refresh runs): for a connect that failed or was cancelled."""
        self._closed = True
        if self.handler is not None and self.handler.link is self:
            self.handler.bind(None)
        self._drop_all()

    def _drop_all(self) -> list[str]:
        removed = []
        for name in sorted(self._to_server):
            with contextlib.suppress(UnknownToolError):
                self.registry.unregister(name)
            removed.append(name)
        self._to_server.clear()
        group, self._group = self._group, None
        if group is not None and self.registry.groups().get(self.name) is group:
            self.registry.undeclare_group(self.name)
        return removed

    async def __aenter__(self) -> McpServerLink:
        """Use the link in ``async with``; it closes on the way out."""
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the link (the session stays the host's)."""
        await self.close()


async def connect_server(
    registry: ToolRegistry,
    name: str,
    session: ClientSession,
    *,
    prefix: str | None = None,
    load: LoadMode = "auto",
    rules: str | None = None,
    handler: ToolListChangedHandler | None = None,
    aliases: Sequence[str] | None = None,
) -> McpServerLink:
    """Register an initialised session's tools as ``{name}__{tool}`` in a dynamic group ``name``.

    Every page of ``tools/list`` is read; a tool the registry rejects is skipped with a
    warning and the rest go in. ``handler`` (from :func:`message_handler`, given to the
    ``ClientSession``) is bound to the link so a tool-list change refreshes it. A group
    ``name`` that is already declared (a link not yet closed, another session's server, the
    host's own group) is refused with :class:`McpAdapterError`, so a connect never takes
    over a group it did not make, and the link's ``close()`` undeclares only its own; so is a
    prefix that registered tools already carry, so a connect never takes over the host's tools.

    ``aliases`` (default: from the server's ``initialize`` answer, :func:`server_aliases`)
    are the group's other names: a request that mentions one weights the server's tools up
    (``docs/analysis.md`` §8).
    """
    chosen = _check_names(name, prefix)
    if name in registry.groups():
        raise McpAdapterError(
            f"MCP server {name!r}: a group named {name!r} is already declared (a link to "
            "this server not yet closed, or another group of that name); close it first or "
            "connect the server under another name"
        )
    claimed = sorted(n for n in registry.names() if n.startswith(chosen))
    if claimed:
        shown = ", ".join(claimed[:5]) + (
            f" and {len(claimed) - 5} more" if len(claimed) > 5 else ""
        )
        raise McpAdapterError(
            f"MCP server {name!r}: registered tools already carry its prefix {chosen!r} "
            f"({shown}); the server's group would take them over. Connect it under another "
            "name or prefix, or unregister them first"
        )
    if aliases is None:
        found = server_aliases(name, getattr(session, "server_info", None))
        # A title of stopwords or one-letter words could never be mentioned: left out.
        aliases = [a for a in found if registry.terms(a)]
    group = registry.declare_group(
        name, prefix=chosen, dynamic=True, load=load, rules=rules, aliases=aliases
    )
    link = McpServerLink(registry, name, session, prefix=chosen, handler=handler)
    link._group = group
    if handler is not None:
        handler.bind(link)
    try:
        await link.refresh()
    except BaseException:
        link._abandon()
        raise
    return link
