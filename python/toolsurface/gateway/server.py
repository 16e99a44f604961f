"""The gateway itself: upstream MCP servers in one registry, one surface a session over it.

Each upstream of the config is started and connected through the MCP adapter as a dynamic
group named by its key (its ``tools/list_changed`` followed). The registry and the policy
are shared by every session; each session has its own surface over them (see
:mod:`toolsurface.gateway.sessions`). Its ``tools/list`` is the session's plan (what is
listed, ToolSearch, what was loaded); the catalogue block is the server's ``instructions``;
a ToolSearch load or a blind call sends ``notifications/tools/list_changed``; every call
goes through admission (the cap, unknown names, blind calls, rules) and is forwarded to its
upstream under the upstream's own name, whose errors come back as tool errors. The session's
snapshot is written after every change, so a restarted gateway resumes with the same tools.
Resources, templates, prompts, completions and subscriptions are forwarded as they are
(:mod:`toolsurface.gateway.forward`), and an upstream's requests during a call go to the
client that made it (:mod:`toolsurface.gateway.callers`). Served over stdio here (one
session; the transport is :mod:`toolsurface.gateway.stdio`) and over streamable HTTP by
:mod:`toolsurface.gateway.http`, whose sessions hear of changes on their GET streams
(:mod:`toolsurface.gateway.streams`). What a stream is told is told under the client that
opened it: its session is planned under that client's policy, and news of an upstream the
client does not see never reaches it.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import time
import weakref
from collections.abc import Awaitable, Callable, Hashable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions

from toolsurface.adapters.mcp import McpServerLink
from toolsurface.admission.admit import ToolCall
from toolsurface.gateway.callers import CALLER, Caller
from toolsurface.gateway.clients import CLIENT, Client, ClientTokens
from toolsurface.gateway.config import Policy, Upstream
from toolsurface.gateway.fastpath import FastCalls, Notify
from toolsurface.gateway.forward import Forwarder
from toolsurface.gateway.metrics import GatewayMetrics
from toolsurface.gateway.namespace import split_uri
from toolsurface.gateway.sessions import CURRENT, Sessions, UnknownSessionError
from toolsurface.gateway.stdio import serve_stdio_streams
from toolsurface.gateway.store import MemoryStore, SessionStore
from toolsurface.gateway.streams import EventStreams
from toolsurface.gateway.upstreams import UpstreamSet
from toolsurface.registry import ToolRegistry
from toolsurface.retrieval.hints.learned import LEARNED_MIN_SESSIONS, LearnedHints
from toolsurface.surface.events import Event
from toolsurface.surface.surface import ToolSurface
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, tool_search_tool

__all__ = ["Gateway"]

_log = logging.getLogger("toolsurface.gateway")

R = TypeVar("R")
#: A request handler of the SDK's lowlevel server: (request context, params) to a result.
Handler = Callable[[Any, Any], Awaitable[R]]


class _Server(Server[Any]):
    """The SDK's server, advertising ``listChanged`` of tools, resources and prompts.

    Its instructions are made again for every handshake (``instructions_of``), so a client
    that initialises after an upstream came up or back finds it in the catalogue.
    """

    def __init__(self, *args: Any, instructions_of: Callable[[], str | None], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._instructions_of = instructions_of

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        """The SDK's options, every ``list_changed`` on unless the caller says otherwise."""
        self.instructions = self._instructions_of()
        everything = NotificationOptions(
            tools_changed=True, resources_changed=True, prompts_changed=True
        )
        return super().create_initialization_options(
            notification_options or everything,
            experimental_capabilities,
            extensions,
        )


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    """A tool result of one text, as sent on the wire."""
    return {"content": [{"type": "text", "text": text}], "isError": error}


class Gateway:
    """Upstreams in one registry, and a surface per client session over them, served over MCP."""

    def __init__(
        self,
        upstreams: list[Upstream],
        *,
        policy: Policy | None = None,
        store: SessionStore | None = None,
        session_id: str = "stdio",
        mark_key: bytes | None = None,
        max_sessions: int = 1024,
        learn: str | os.PathLike[str] | None = None,
        learn_sessions: int = LEARNED_MIN_SESSIONS,
        semantic: bool | None = None,
    ) -> None:
        self.upstreams = upstreams
        self.policy = policy or Policy()
        self.store: SessionStore = store if store is not None else MemoryStore()
        self.session_id = session_id
        self.mark_key = mark_key
        # What sessions teach ranks once ``learn_sessions`` distinct sessions taught it.
        # ``semantic``: the registry's switch (None: TOOLSURFACE_SEMANTIC, else the extra).
        self.registry = ToolRegistry(
            learned=LearnedHints(min_sessions=learn_sessions), semantic=semantic
        )
        self.registry.register(tool_search_tool())
        #: Where learned hints are kept (``--learn``); None: sessions learn nothing.
        self.learn = Path(learn) if learn is not None else None
        if self.learn is not None and self.learn.exists():
            count = self.registry.load_learned(self.learn)
            _log.info("toolsurface gateway: %d learned requests read from %s", count, self.learn)
            trusted = sum(r.by_host for _, r in self.registry.learned_hints)
            if trusted:  # sessions never teach as the host: an older gateway's file
                _log.warning(
                    "toolsurface gateway: %d learned request(s) in %s were not taught by "
                    "sessions (a version-1 file?): they rank whole, unchecked; delete the "
                    "file to drop them",
                    trusted,
                    self.learn,
                )
        self._learned_unsaved = False
        self._learned_lock = anyio.Lock()
        self.links: dict[str, McpServerLink] = {}
        self.upstream_set: UpstreamSet | None = None
        # The stdio client, to tell of an upstream's tools coming and going; HTTP sessions
        # are told on their GET streams (streams.py).
        self._client: Any = None
        self.streams = EventStreams()
        self.sessions = Sessions(self.new_surface, self.store, capacity=max_sessions)
        #: Each held surface's state_key() when this gateway last planned it.
        self._planned: weakref.WeakKeyDictionary[ToolSurface, Hashable] = (
            weakref.WeakKeyDictionary()
        )
        #: Plain calls of the stdio client, answered without the SDK's server (fastpath.py).
        self.fast = FastCalls(self._call)
        #: Counted for ``/metrics`` (ops.py).
        self.metrics = GatewayMetrics()
        #: Resources, templates, prompts, completions and subscriptions (forward.py).
        self.forward = Forwarder(
            lambda: self.upstream_set,
            self.policy,
            session_of=self._session,
            on_forward=self.metrics.forwarded,
        )
        #: The clients of ``--clients`` (HTTP), read again as the file changes (clients.py).
        self.clients: ClientTokens | None = None
        #: The upstreams offering resources, and prompts, when the client was last told.
        self._offering: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())

    def new_surface(self, session_id: str) -> ToolSurface:
        """A fresh surface of a session: the shared registry, policy and mark key.

        Its policy is the gateway's narrowed by the client of the request that made it, for
        good: a session serves one client (ops.py), and a surface decides once per registry
        generation, so a policy read from whoever happens to plan it could keep another's.
        """
        return ToolSurface(
            self.registry,
            policy=functools.partial(self._admits, CLIENT.get()),
            session_id=session_id,
            mark_key=self.mark_key,
            learn_from_usage=self.learn is not None,
            on_event=self._on_event if self.learn is not None else None,
        )

    def _on_event(self, event: Event) -> None:
        if event.kind == "tool_hint_learned":
            self._learned_unsaved = True

    async def _save_learned(self) -> None:
        """Write the learned hints to ``--learn``'s file (atomically, off the event loop)."""
        if self.learn is None:
            return
        async with self._learned_lock:
            if not self._learned_unsaved:
                return
            self._learned_unsaved = False
            try:
                await anyio.to_thread.run_sync(self.registry.save_learned, self.learn)
            except OSError as exc:  # the hints stay learned in memory; the next change retries
                self._learned_unsaved = True
                _log.warning("toolsurface gateway: saving %s failed: %s", self.learn, exc)
        # The index with the new hints is built here, not by the next search on the loop.
        await anyio.to_thread.run_sync(self.registry.prepare)

    def _owner(self, name: str) -> tuple[str, str] | None:
        """The upstream a gateway tool name belongs to, and the upstream's own name for it."""
        upstreams = self.upstream_set
        return None if upstreams is None else upstreams.owner(name)

    async def _upstreams_changed(self) -> None:
        """An upstream's tools came or went: tell the stdio client if its list moved."""
        # The index of the new catalogue is built off the loop, not by the next search on it.
        await anyio.to_thread.run_sync(self.registry.prepare)
        await self.forward.upstreams_changed()
        offering = self._offering_now()
        # The upstreams that began or ceased to offer resources, and prompts.
        resources, prompts = (set(offering[i]) ^ set(self._offering[i]) for i in (0, 1))
        self._offering = offering
        for session in self.streams.sessions():
            await self._tell_stream(session, resources=resources, prompts=prompts)
        client = self._client
        if client is None:
            return
        async with self.sessions.use(self.session_id, create=True) as surface:
            moved = self._replanned(surface, surface.last_plan_names())
        if moved:
            await client.send_tool_list_changed()
        if resources:
            await client.send_resource_list_changed()
        if prompts:
            await client.send_prompt_list_changed()

    def _stream_client(self, session: str) -> tuple[bool, Client | None]:
        """Whether the session's stream may still be told anything, and under which client.

        The client is the one whose request opened the stream, as the tokens file reads
        now; one the file no longer has is told nothing more (its stream is closed).
        """
        client = self.streams.client_of(session)
        if client is None or self.clients is None:
            return True, client
        now = self.clients.named(client.name)
        if now is None:
            self.streams.close(session)
            return False, None
        return True, now

    async def _tell_stream(self, session: str, *, resources: set[str], prompts: set[str]) -> None:
        """Push an HTTP session what an upstream's change moved for it, on its GET stream.

        Planned under the stream's client, so its surface is that client's (a plan made
        under the gateway's policy alone would hand it another client's tools).
        """
        live, client = self._stream_client(session)
        if not live:
            return
        mark = CLIENT.set(client)
        try:
            async with self.sessions.use(session) as surface:
                moved = self._replanned(surface, surface.last_plan_names())
        except UnknownSessionError:  # ended or expired elsewhere: its stream goes too
            self.streams.close(session)
            return
        finally:
            CLIENT.reset(mark)
        if moved:
            self.streams.notify(session, "notifications/tools/list_changed")
        # News of an upstream the client does not see is no news of its.
        if any(client is None or client.sees(u) for u in resources):
            self.streams.notify(session, "notifications/resources/list_changed")
        if any(client is None or client.sees(u) for u in prompts):
            self.streams.notify(session, "notifications/prompts/list_changed")

    def _offering_now(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        upstreams = self.upstream_set
        if upstreams is None:
            return ((), ())
        return tuple(upstreams.offering("resources")), tuple(upstreams.offering("prompts"))

    async def _upstream_notice(self, upstream: str, message: Any) -> None:
        """An upstream's notification beside tools/list_changed, passed on to who it concerns."""
        if isinstance(message, types.ResourceUpdatedNotification):
            await self.forward.resource_updated(upstream, message.params.uri, self._deliver_update)
            return
        if isinstance(message, types.ResourceListChangedNotification):
            method = "notifications/resources/list_changed"
        elif isinstance(message, types.PromptListChangedNotification):
            method = "notifications/prompts/list_changed"
        else:
            return
        for session in self.streams.sessions():
            live, owner = self._stream_client(session)
            if live and (owner is None or owner.sees(upstream)):
                self.streams.notify(session, method)
        client = self._client
        if client is not None:
            await client.send_notification(message)

    async def _deliver_update(self, session: str, uri: str) -> None:
        """Tell one session its resource changed: the stdio client, or an HTTP GET stream.

        A stream is told only while its client's policy still admits the resource (the
        tokens file may have narrowed it since it subscribed).
        """
        if session in self.streams:
            live, client = self._stream_client(session)
            parts = split_uri(uri)
            if not live or parts is None:
                return
            mark = CLIENT.set(client)
            try:
                still = self.forward.admits_uri(*parts)
            finally:
                CLIENT.reset(mark)
            if still:
                self.streams.notify(session, "notifications/resources/updated", {"uri": uri})
        elif session == self.session_id and self._client is not None:
            await self._client.send_resource_updated(uri)

    def _replanned(self, surface: ToolSurface, before: tuple[str, ...]) -> bool:
        """Whether the session's tool names now differ from ``before`` (planned if need be).

        The session is planned again unless nothing moved since its last plan here: a
        surface's plan depends on its state and the registry, both in its ``state_key``:
        while that is the key of the last plan made here, the names are those of that plan.
        """
        state = surface.state_key()
        if self._planned.get(surface) == state:
            return surface.last_plan_names() != before
        names = surface.plan().names
        self._planned[surface] = surface.state_key()
        return names != before

    def _admits(self, client: Client | None, name: str) -> bool:
        """Whether ``client`` (None: no client's request) may see and call the tool ``name``."""
        if name == TOOL_SEARCH_NAME:
            return True
        if not self.policy.admits(name, self._owner):
            return False
        return client is None or client.admits(name, self._owner)

    def told_of(self, client: Client) -> Callable[[str], bool]:
        """Which upstreams ``client`` may be told of (``/readyz``, ``/metrics``).

        One it sees (``Client.sees``) unless the gateway's policy or its own denies
        everything of it (``Policy.closes``): a name it can meet nothing of may say as much
        as a tool's.
        """

        def told(upstream: str) -> bool:
            return (
                client.sees(upstream)
                and not self.policy.closes(upstream)
                and not client.policy.closes(upstream)
            )

        return told

    def upstream_states(self) -> dict[str, bool]:
        """Each upstream, and whether it is connected now (``/readyz``, ``/metrics``)."""
        upstreams = self.upstream_set
        if upstreams is None:
            return {u.name: False for u in self.upstreams}
        return {u.name: upstreams.state(u.name) == "up" for u in self.upstreams}

    async def connect(self, stack: contextlib.AsyncExitStack) -> None:
        """Start and connect every upstream (supervised: a lost one is retried; upstreams.py)."""
        self.upstream_set = await stack.enter_async_context(
            UpstreamSet(
                self.registry,
                self.upstreams,
                on_change=self._upstreams_changed,
                on_notice=self._upstream_notice,
                default_caller=self._default_caller,
            )
        )
        self.links = self.upstream_set.links
        self._offering = self._offering_now()

    def _session(self) -> str:
        """The session of the request being served: HTTP's, or the stdio session."""
        current = CURRENT.get()
        return current[0] if current is not None else self.session_id

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        """``tools/list``: the session's plan."""
        if CURRENT.get() is None:
            self._client = ctx.session
            self.fast.enable(getattr(ctx, "protocol_version", ""))
        async with self.sessions.use(self._session(), create=True) as surface:
            definitions = surface.plan().definitions()
            self._planned[surface] = surface.state_key()
        tools = [
            types.Tool(name=d["name"], description=d["description"], input_schema=d["input_schema"])
            for d in definitions
        ]
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: Any, params: Any) -> types.CallToolResult:
        """``tools/call``: ToolSearch on the session's surface, any other tool admitted and run.

        The session is held only while its surface changes, not while an upstream runs.
        """
        if CURRENT.get() is None:
            self._client = ctx.session
            self.fast.enable(getattr(ctx, "protocol_version", ""))

        async def notify() -> None:  # on the call's own response stream: HTTP has no other
            notice = types.ToolListChangedNotification()
            await ctx.session.send_notification(notice, related_request_id=ctx.request_id)

        meta = ctx.meta
        session = self._session()
        caller = Caller(
            ctx.session,
            session,
            ctx.request_id,
            meta.get("progress_token") if meta is not None else None,
            # HTTP is stateless: a request to the client goes on its GET stream (streams.py).
            functools.partial(self.streams.ask, session) if CURRENT.get() is not None else None,
        )
        mark = CALLER.set(caller)  # the upstream's requests during the call go to this client
        try:
            raw = await self._call(params.name, params.arguments or {}, notify)
        finally:
            CALLER.reset(mark)
        return types.CallToolResult.model_validate(raw, by_name=False)

    def _default_caller(self) -> Caller | None:
        """Who an upstream's request goes to while none of its calls runs: the stdio client."""
        client = self._client
        return None if client is None else Caller(client, self.session_id)

    async def _call(
        self, name: str, arguments: Mapping[str, Any], notify: Notify
    ) -> dict[str, Any]:
        """A call, by the SDK's server or the pass-through: its result as JSON.

        ``notify`` is awaited if the list moved; a forwarded call's result is the upstream's,
        as it sent it.
        """
        forward: str | None = None
        answer: dict[str, Any] | None = None
        upstreams = self.upstream_set
        down = None
        if upstreams is not None and self._admits(CLIENT.get(), name):
            down = upstreams.unavailable(name)
        async with self.sessions.use(self._session(), create=True) as surface:
            before = surface.last_plan_names()
            if down is not None:  # a tool of an upstream being retried: say so, not "unknown"
                answer = down
            elif name == TOOL_SEARCH_NAME:
                self.metrics.inc("toolsurface_gateway_searches_total")
                result = surface.tool_search(dict(arguments))
                answer = _text(result.text, error=result.refused)
            else:
                (verdict,) = surface.admit([ToolCall(name, dict(arguments))])
                if verdict.runs:
                    forward = verdict.call.name
                else:
                    answer = _text(verdict.message, error=True)
            changed = self._replanned(surface, before)
        if changed:
            await notify()
        if self._learned_unsaved:
            await self._save_learned()
        if forward is not None:
            answer = await self._forward(forward, arguments)
        assert answer is not None  # a call either runs (forward) or is answered here
        return answer

    async def _forward(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        assert self.upstream_set is not None  # a call is forwarded only once connected
        started = time.perf_counter()
        result: dict[str, Any] | None = None
        try:
            result = await self.upstream_set.call(name, arguments)
            return result
        finally:
            owner = self._owner(name)
            error = result is None or bool(result.get("isError"))
            seconds = time.perf_counter() - started
            self.metrics.call(owner[0] if owner else "?", error, seconds)

    def instructions(self) -> str | None:
        """The server's instructions: the catalogue block of a new session's plan, now."""
        return self.new_surface("instructions").plan().catalogue or None

    def server(self) -> Server[Any]:
        """The MCP server: instructions carry the catalogue block of a new session's plan."""
        return _Server(
            "toolsurface-gateway",
            instructions_of=self.instructions,
            on_list_tools=self.list_tools,
            on_call_tool=self.call_tool,
            on_list_resources=self._client_seen(self.forward.list_resources),
            on_list_resource_templates=self._client_seen(self.forward.list_resource_templates),
            on_read_resource=self._client_seen(self.forward.read_resource),
            on_subscribe_resource=self._client_seen(self.forward.subscribe),
            on_unsubscribe_resource=self._client_seen(self.forward.unsubscribe),
            on_list_prompts=self._client_seen(self.forward.list_prompts),
            on_get_prompt=self._client_seen(self.forward.get_prompt),
            on_completion=self._client_seen(self.forward.complete),
        )

    def _client_seen(
        self, handler: Callable[[Any, Any], Awaitable[R]]
    ) -> Callable[[Any, Any], Awaitable[R]]:
        """``handler``, after noting the stdio client (to tell it of changes) on each request."""

        async def seen(ctx: Any, params: Any) -> R:
            if CURRENT.get() is None:
                self._client = ctx.session
            return await handler(ctx, params)

        return seen

    async def serve_stdio(self) -> None:
        """Connect the upstreams, then serve this process's stdin and stdout until EOF."""
        async with contextlib.AsyncExitStack() as stack:
            await self.connect(stack)
            server = self.server()
            options = server.create_initialization_options()
            async with serve_stdio_streams(self.fast) as (read, write):
                await server.run(read, write, options)

    async def serve_http(
        self,
        sock: socket.socket,
        *,
        token: str | None = None,
        allow_hosts: tuple[str, ...] = (),
        clients: ClientTokens | None = None,
    ) -> None:
        """Connect the upstreams, then serve streamable HTTP on ``sock`` until stopped.

        ``/healthz``, ``/readyz`` and ``/metrics`` are answered beside ``/mcp``; with
        ``clients`` each client's own token replaces ``token`` (ops.py).

        The ``Host`` of every request is checked (:class:`~toolsurface.gateway.http.HostCheck`)
        before anything else, whatever address is bound; the SDK's own check, which covers
        only 127.0.0.1, localhost and ::1 and runs after a session is opened, is off.
        """
        from mcp.server.transport_security import TransportSecuritySettings

        from toolsurface.gateway.http import HostCheck, SessionsMiddleware, serve_http
        from toolsurface.gateway.ops import OpsMiddleware

        host = str(sock.getsockname()[0])
        hosts = HostCheck(host, allow_hosts)
        self.clients = clients
        off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        async with contextlib.AsyncExitStack() as stack:
            await self.connect(stack)
            app = self.server().streamable_http_app(
                stateless_http=True, host=host, transport_security=off
            )
            inner = None if clients is not None else token  # a client's token is checked first
            middleware = SessionsMiddleware(
                app, self.sessions, token=inner, hosts=hosts, streams=self.streams
            )
            ops = OpsMiddleware(middleware, self, hosts=hosts, token=token, clients=clients)
            await serve_http(ops, sock, on_exit=self.streams.close_all)
