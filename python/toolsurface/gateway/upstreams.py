"""The gateway's upstreams: each connected, watched, and retried with backoff when it is lost.

Every upstream runs in a supervisor task of one task group: it starts the server (a child
over stdio, or a streamable-HTTP or SSE session), connects it through the MCP adapter as a
dynamic group of the shared registry, and watches it (the transport ending, a ping that
fails, a call that finds the connection closed). A lost upstream's tools leave the registry
(its group with them) and ``on_change`` is awaited so the server can send
``tools/list_changed``; it is retried after a growing, jittered delay, and its tools come
back when it does. A call to a tool of an upstream that is down answers a tool error saying
so; every forwarded call is bounded by the upstream's ``call_timeout``. Leaving the
``async with`` cancels every supervisor, which stops its child process.
"""

from __future__ import annotations

import contextlib
import logging
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TextIO, TypeGuard, TypeVar

import anyio
import anyio.abc
from mcp import ClientSession, MCPError, StdioServerParameters, types
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, INVALID_PARAMS, REQUEST_TIMEOUT
from pydantic import BaseModel, ValidationError

from toolsurface.adapters.mcp import (
    McpAdapterError,
    McpServerLink,
    connect_server,
    is_tools_list_changed,
    message_handler,
)
from toolsurface.gateway.callers import Caller, InFlight
from toolsurface.gateway.config import Upstream
from toolsurface.gateway.lane import (
    CLOSED,
    CallLane,
    LaneLostMidCallError,
    UpstreamReplyError,
    WatchedStream,
)
from toolsurface.gateway.stdio_upstream import TOO_LARGE, stdio_upstream
from toolsurface.registry import ToolRegistry

__all__ = ["Capability", "ChangeCallback", "NoticeCallback", "UpstreamSet", "UpstreamState"]

_log = logging.getLogger("toolsurface.gateway")

#: Awaited after an upstream's tools entered or left the registry (so clients list again).
ChangeCallback = Callable[[], Awaitable[None]]
UpstreamState = Literal["starting", "up", "down"]
#: Awaited with an upstream's name and each notification it sends beside tools/list_changed.
NoticeCallback = Callable[[str, Any], Awaitable[None]]
#: What an upstream may offer beside tools (from its ``initialize`` answer).
Capability = Literal["resources", "subscribe", "prompts", "completions", "logging"]

_T = TypeVar("_T", bound=BaseModel)


#: The most content blocks an upstream's tool result may hold to be passed on. Checking each
#: block is the gateway's, on its event loop: the half million of a hostile result held
#: every other client for some 20 s. A result past it is answered as a tool error naming
#: its count, before any block is read.
RESULT_MAX_BLOCKS = 10_000


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    """A tool result of one text, as sent on the wire."""
    return {"content": [{"type": "text", "text": text}], "isError": error}


def _too_large(data: object) -> TypeGuard[dict[str, int]]:
    """Whether an error's data is this gateway's own for an answer too large to read."""
    return (
        isinstance(data, dict)
        and data.get("reason") == TOO_LARGE
        and all(type(data.get(key)) is int for key in ("bytes", "limit"))
    )


def _is_closed(exc: BaseException) -> bool:
    """Whether an exception says the upstream's connection is gone."""
    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    if isinstance(exc, McpAdapterError):
        return "closed" in str(exc)
    return isinstance(exc, CLOSED)


class _Supervisor:
    """One upstream's life: connect, watch, drop its tools when lost, retry with backoff."""

    def __init__(self, owner: UpstreamSet, spec: Upstream) -> None:
        self.owner = owner
        self.spec = spec
        self.state: UpstreamState = "starting"
        self.link: McpServerLink | None = None
        #: The live session and its lane, for forwarded calls (None while not connected).
        self.session: ClientSession | None = None
        self.lane: CallLane | None = None
        #: The forwarded calls running now and their callers (callers.py).
        self.in_flight = InFlight(owner.default_caller)
        #: Registry name to server name of the tools last seen, kept while the upstream is down.
        self.known: dict[str, str] = {}
        self.attempts = 0
        self.first_attempt = anyio.Event()
        self._lost: anyio.Event | None = None
        self._tasks: anyio.abc.TaskGroup | None = None

    # -- reporting --------------------------------------------------------------------------

    def _redact(self, text: str) -> str:
        for secret in self.spec.secrets():
            text = text.replace(secret, "***")
        return text

    def describe(self, exc: BaseException) -> str:
        """An exception as one line, with the upstream's secrets blanked out."""
        inner = getattr(exc, "exceptions", None)  # an exception group of one: its member
        if isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], BaseException):
            return self.describe(inner[0])
        text = str(exc) or type(exc).__name__
        return self._redact(f"{type(exc).__name__}: {text}" if str(exc) else text)

    def lose(self, why: str) -> None:
        """Mark the live connection lost (idempotent); the supervisor then reconnects."""
        if self._lost is not None and not self._lost.is_set():
            self._lost.set()
            if self.owner.closing or self.state != "up":  # a failed start is logged as one
                return
            _log.warning(
                "toolsurface gateway: upstream %r (%s) lost: %s",
                self.spec.name,
                self.spec.shown,
                why,
            )
            self._lost.set()

    # -- the loop ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect, serve until lost, then wait and retry, until cancelled."""
        spread = random.Random()
        while True:
            self.attempts += 1
            try:
                await self._connect_and_watch()
            except Exception as exc:  # an upstream's failure stays its own
                verb = "did not start" if self.state == "starting" else "failed"
                _log.error(
                    "toolsurface gateway: upstream %r (%s) %s: %s",
                    self.spec.name,
                    self.spec.shown,
                    verb,
                    self.describe(exc),
                )
            finally:
                self.first_attempt.set()
            self.state = "down"
            delay = self.spec.supervision.retry_delay(self.attempts - 1, spread.uniform(-1.0, 1.0))
            _log.warning(
                "toolsurface gateway: upstream %r is unavailable; retrying in %.2f s",
                self.spec.name,
                delay,
            )
            await anyio.sleep(delay)

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        spec = self.spec
        if spec.transport == "stdio":
            params = StdioServerParameters(
                command=spec.command or "",
                args=list(spec.args),
                env=dict(spec.env) if spec.env else None,
                cwd=spec.cwd,
            )
            async with stdio_upstream(params, self.owner.errlog, name=spec.name) as (read, write):
                yield read, write
        elif spec.transport == "http":
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(spec.headers or {}))
            async with client, streamable_http_client(spec.url or "", http_client=client) as pair:
                yield pair[0], pair[1]
        else:
            from mcp.client.sse import sse_client

            async with sse_client(spec.url or "", headers=dict(spec.headers or {})) as pair:
                yield pair[0], pair[1]

    async def _connect_and_watch(self) -> None:
        spec, owner = self.spec, self.owner
        lost = anyio.Event()
        self._lost = lost
        handler = message_handler(self._on_message)
        async with contextlib.AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(self._transport())
            lane = CallLane(write)
            watched = WatchedStream(read, self._ended, lane, self._progress)
            session = await stack.enter_async_context(
                ClientSession(
                    watched,
                    write,
                    message_handler=handler,
                    sampling_callback=self._sampling,
                    elicitation_callback=self._elicitation,
                    list_roots_callback=self._roots,
                    logging_callback=self._logging,
                )
            )
            with anyio.fail_after(spec.supervision.connect_timeout):
                await session.initialize()
                link = await connect_server(owner.registry, spec.name, session, handler=handler)
            stack.push_async_callback(self._drop, link)
            self.link, self.session, self.lane = link, session, lane
            owner.links[spec.name] = link
            self.known = {n: link.server_name(n) for n in link.names()}
            was = self.state
            self.state, self.attempts = "up", 0
            self.first_attempt.set()
            level = logging.WARNING if was == "down" else logging.INFO
            _log.log(
                level,
                "toolsurface gateway: upstream %r (%s) %s with %d tools",
                spec.name,
                spec.shown,
                "is back" if was == "down" else "connected",
                len(self.known),
            )
            await owner.changed()
            async with anyio.create_task_group() as tasks:
                self._tasks = tasks
                tasks.start_soon(self._heartbeat, session, lost)
                await lost.wait()
                tasks.cancel_scope.cancel()
            self._tasks = None

    def _ended(self) -> None:
        self.lose("its connection ended (the process exited or the stream closed)")

    async def _drop(self, link: McpServerLink) -> None:
        """Take a lost link's tools out of the registry, then tell the server (not on close)."""
        if link.names():
            self.known = {n: link.server_name(n) for n in link.names()}
        self.state = "down"
        self.link = self.session = self.lane = None
        if self.owner.links.get(self.spec.name) is link:
            del self.owner.links[self.spec.name]
        # Shielded: a transport that failed cancels its task group, and so this unwinding,
        # yet the tools must still leave and the client must still be told.
        with anyio.CancelScope(shield=True), anyio.move_on_after(5.0):
            await link.close()
            if not self.owner.closing:
                await self.owner.changed()

    async def _heartbeat(self, session: ClientSession, lost: anyio.Event) -> None:
        sup = self.spec.supervision
        while not lost.is_set():
            await anyio.sleep(sup.ping_interval)
            try:
                with anyio.fail_after(sup.ping_timeout):
                    await session.send_ping()
            except TimeoutError:
                self.lose(f"no answer to a ping within {sup.ping_timeout:g} s")
            except Exception as exc:
                self.lose(f"a ping failed: {self.describe(exc)}")

    async def _on_message(self, message: object) -> None:
        """After the upstream's own tools/list_changed, tell the server once the link re-listed."""
        if isinstance(message, BaseException):
            _log.debug(
                "toolsurface gateway: upstream %r: %s", self.spec.name, self.describe(message)
            )
        elif is_tools_list_changed(message) and self._tasks is not None:
            self._tasks.start_soon(self._after_refresh)
        elif self.owner.on_notice is not None:
            try:
                await self.owner.on_notice(self.spec.name, message)
            except Exception as exc:  # a notice lost is logged, never the connection's end
                _log.warning(
                    "toolsurface gateway: upstream %r: forwarding a notice failed: %s",
                    self.spec.name,
                    self.describe(exc),
                )

    async def _after_refresh(self) -> None:
        link = self.link
        if link is not None:
            await link.wait_idle()
            self.known = {n: link.server_name(n) for n in link.names()}
            await self.owner.changed()

    # -- the upstream's requests to its client, passed on to the caller (callers.py) ---------

    async def _sampling(self, context: Any, params: types.CreateMessageRequestParams) -> Any:
        caller = self.in_flight.route()
        if caller is None:
            return self.in_flight.refusal(self.spec.name, "sampling/createMessage")
        result = types.CreateMessageResultWithTools if params.tools else types.CreateMessageResult
        return await caller.ask(types.CreateMessageRequest(params=params), result)

    async def _elicitation(self, context: Any, params: types.ElicitRequestParams) -> Any:
        caller = self.in_flight.route()
        if caller is None:
            return self.in_flight.refusal(self.spec.name, "elicitation/create")
        return await caller.ask(types.ElicitRequest(params=params), types.ElicitResult)

    async def _roots(self, context: Any) -> Any:
        caller = self.in_flight.route()
        if caller is None:
            return self.in_flight.refusal(self.spec.name, "roots/list")
        return await caller.ask(types.ListRootsRequest(), types.ListRootsResult)

    async def _progress(self, params: Mapping[str, Any]) -> bool:
        """Pass on a forwarded call's progress to its caller; whether it was one of ours."""
        caller = self.in_flight.by_token(params.get("progressToken"))
        if caller is None:
            return False
        try:
            await caller.progress(types.ProgressNotificationParams.model_validate(params))
        except Exception as exc:  # progress lost is logged; the call goes on
            _log.debug("toolsurface gateway: progress of %r lost: %r", self.spec.name, exc)
        return True

    async def _logging(self, params: types.LoggingMessageNotificationParams) -> None:
        caller = self.in_flight.route()
        if caller is None:  # several sessions' calls, or none: shown to no one
            return
        await caller.notify(types.LoggingMessageNotification(params=params))

    # -- capabilities and requests beside tools ---------------------------------------------

    def offers(self, capability: Capability) -> bool:
        """Whether the live upstream said it offers ``capability`` (False while it is down)."""
        session = self.session
        caps = session.server_capabilities if session is not None and self.state == "up" else None
        if caps is None:
            return False
        if capability == "subscribe":
            return caps.resources is not None and bool(caps.resources.subscribe)
        return getattr(caps, capability, None) is not None

    def down_error(self, what: str) -> MCPError:
        """The error for a request that needs the upstream while it is down."""
        return MCPError(
            CONNECTION_CLOSED,
            f"The server of {what} ({self.spec.name!r}) is not connected right now and the "
            "gateway is retrying it; try again shortly.",
        )

    async def request(self, request: BaseModel, result: type[_T]) -> _T:
        """Send one request beside tools (a read, a prompt, a listing) to the live upstream.

        It is bounded by the call timeout; the upstream's error reply comes back as its own,
        its secrets blanked out.
        """
        session = self.session
        method = str(getattr(request, "method", "request"))
        if session is None or self.state != "up":
            raise self.down_error(method)
        timeout = self.spec.supervision.call_timeout
        try:
            with anyio.fail_after(timeout):
                return await session.send_request(request, result)  # type: ignore[arg-type]
        except TimeoutError:
            raise MCPError(
                REQUEST_TIMEOUT,
                f"{method}: server {self.spec.name!r} did not answer within {timeout:g} s",
            ) from None
        except MCPError as exc:  # a lost transport is seen by the watched stream, not here
            raise MCPError(exc.code, self._redact(exc.message), exc.data) from None
        except ValidationError as exc:
            raise MCPError(
                INTERNAL_ERROR,
                f"{method}: server {self.spec.name!r} answered no valid result "
                f"({exc.error_count()} problems, first: {self._redact(_first(exc))})",
            ) from None

    # -- calls ------------------------------------------------------------------------------

    def unavailable(self, name: str) -> dict[str, Any]:
        """The tool error for a call while the upstream is down."""
        return _text(
            f"Tool {name!r} is unavailable: its server {self.spec.name!r} is not connected "
            "right now and the gateway is retrying it; the call did not run. Try again shortly.",
            error=True,
        )

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Forward a call on the lane, bounded by the call timeout; its result as sent.

        A result that is no tool result, or breaks the tool's declared output schema, is
        a tool error, as are the upstream's error replies; a lost connection is reported.
        """
        link, session, lane = self.link, self.session, self.lane
        if link is None or session is None or lane is None or self.state != "up":
            return self.unavailable(name)
        timeout = self.spec.supervision.call_timeout
        server_name = link.server_name(name)
        key, token = self.in_flight.enter(None)
        try:
            with anyio.fail_after(timeout):
                raw = await lane.call(server_name, arguments, progress_token=token)
                blocks = raw.get("content")
                if isinstance(blocks, list) and len(blocks) > RESULT_MAX_BLOCKS:
                    return _text(
                        f"Tool {name!r} answered {len(blocks):,} content blocks; the gateway "
                        f"passes at most {RESULT_MAX_BLOCKS:,} in one result, so none was "
                        "passed on. Ask the tool for less (a page, a filter) if it can.",
                        error=True,
                    )
                result = types.CallToolResult.model_validate(raw, by_name=False)
                if not result.is_error:
                    await session.validate_tool_result(server_name, result)
                return raw
        except TimeoutError:
            return _text(
                f"Tool {name!r} did not answer within {timeout:g} s (server {self.spec.name!r}).",
                error=True,
            )
        except UpstreamReplyError as exc:
            reply = exc.error
            if _too_large(reply.data):
                return _text(
                    f"Tool {name!r} answered {reply.data['bytes']:,} bytes in one message; the "
                    f"gateway passes at most {reply.data['limit']:,}, so none of it was passed "
                    "on. Ask the tool for less (a page, a filter) if it can.",
                    error=True,
                )
            return _text(
                f"Tool {name!r} failed upstream: {self._redact(reply.message)} "
                f"(error {reply.code})",
                error=True,
            )
        except ValidationError as exc:
            return _text(
                f"Tool {name!r} failed upstream: it answered no valid tool result "
                f"({exc.error_count()} problems, first: {self._redact(_first(exc))})",
                error=True,
            )
        except LaneLostMidCallError:
            self.lose(f"the connection was lost during a call of {name!r}")
            return _text(
                f"Tool {name!r}: the connection to its server {self.spec.name!r} was lost while "
                "the call was running, so the call may have run, in whole or in part. Check its "
                "effect before calling it again; the gateway is reconnecting the server.",
                error=True,
            )
        except Exception as exc:  # the upstream failed: a tool error, never a gateway crash
            if _is_closed(exc):
                self.lose(f"a call of {name!r} found the connection closed")
                return self.unavailable(name)
            return _text(f"Tool {name!r} failed upstream: {self.describe(exc)}", error=True)
        finally:
            self.in_flight.leave(key, token)


def _first(exc: ValidationError) -> str:
    """A validation error's first problem, as one short line."""
    first = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "result"
    return f"{where}: {first.get('msg', '')}"[:200]


class UpstreamSet:
    """Every upstream of a config, supervised in one task group; ``async with`` runs them.

    ``links`` holds the live links by upstream name (the dict is updated in place, so a
    holder of it sees upstreams come and go). ``on_change`` is awaited after an upstream's
    tools entered or left the registry.
    """

    def __init__(
        self,
        registry: ToolRegistry,
        upstreams: Sequence[Upstream],
        *,
        on_change: ChangeCallback | None = None,
        on_notice: NoticeCallback | None = None,
        default_caller: Callable[[], Caller | None] | None = None,
        errlog: TextIO | None = None,
    ) -> None:
        #: Who an upstream's request goes to while none of its calls runs (the stdio client).
        self.default_caller = default_caller
        self.registry = registry
        self.on_change = on_change
        self.on_notice = on_notice
        self.errlog = errlog if errlog is not None else sys.stderr
        self.links: dict[str, McpServerLink] = {}
        self.closing = False
        #: Set once every first attempt is over: changes before that are the start itself.
        self.started = False
        self.supervisors = {u.name: _Supervisor(self, u) for u in upstreams}
        self._group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> UpstreamSet:
        """Start every supervisor and wait for each one's first attempt (bounded)."""
        group = anyio.create_task_group()
        await group.__aenter__()
        self._group = group
        for sup in self.supervisors.values():
            group.start_soon(sup.run, name=f"toolsurface upstream {sup.spec.name}")
        longest = max(
            (s.spec.supervision.connect_timeout for s in self.supervisors.values()), default=0
        )
        with anyio.move_on_after(longest + 5.0):
            for sup in self.supervisors.values():
                await sup.first_attempt.wait()
        self.started = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop every supervisor: each closes its session and stops its child."""
        self.closing = True
        group, self._group = self._group, None
        if group is not None:
            group.cancel_scope.cancel()
            await group.__aexit__(None, None, None)

    async def changed(self) -> None:
        """Await ``on_change``; its failure is logged, never allowed to stop a supervisor."""
        if self.on_change is None or self.closing or not self.started:
            return
        try:
            await self.on_change()
        except Exception as exc:
            _log.warning("toolsurface gateway: telling the client of a change failed: %r", exc)

    def offering(self, capability: Capability) -> list[str]:
        """The live upstreams offering ``capability``, in config order."""
        return [name for name, sup in self.supervisors.items() if sup.offers(capability)]

    def offers(self, upstream: str, capability: Capability) -> bool:
        """Whether upstream ``upstream`` is live and offers ``capability``."""
        sup = self.supervisors.get(upstream)
        return sup is not None and sup.offers(capability)

    def down_error(self, upstream: str, what: str) -> MCPError:
        """The error for a request of ``what`` while its upstream is down."""
        return self.supervisors[upstream].down_error(what)

    def describe(self, upstream: str, exc: BaseException) -> str:
        """An upstream's failure as one line, its secrets blanked out."""
        sup = self.supervisors.get(upstream)
        return str(exc) if sup is None else sup.describe(exc)

    async def request(self, upstream: str, request: BaseModel, result: type[_T]) -> _T:
        """Send a request beside tools to one upstream (see ``_Supervisor.request``)."""
        sup = self.supervisors.get(upstream)
        if sup is None:
            raise MCPError(INVALID_PARAMS, f"no upstream named {upstream!r}")
        return await sup.request(request, result)

    def state(self, upstream: str) -> UpstreamState | None:
        """An upstream's state (``None`` for a name not in the config)."""
        sup = self.supervisors.get(upstream)
        return None if sup is None else sup.state

    def _supervisor_of(self, name: str) -> _Supervisor | None:
        sup = self.supervisors.get(name.split("__", 1)[0])
        if sup is None:
            return None
        if sup.link is not None and name in sup.link:
            return sup
        return sup if name in sup.known else None

    def owner(self, name: str) -> tuple[str, str] | None:
        """The upstream a gateway tool name belongs to (live, or last seen if it is down)."""
        sup = self._supervisor_of(name)
        if sup is None:
            return None
        if sup.link is not None and name in sup.link.names():
            return sup.spec.name, sup.link.server_name(name)
        return sup.spec.name, sup.known[name]

    def unavailable(self, name: str) -> dict[str, Any] | None:
        """The tool error for a tool whose upstream is down now, or ``None`` if it is not."""
        sup = self._supervisor_of(name)
        if sup is None or (sup.state == "up" and sup.link is not None):
            return None
        return sup.unavailable(name)

    async def call(self, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Forward a call to its upstream; its result as sent, every failure a tool error."""
        sup = self._supervisor_of(name)
        if sup is None:
            return _text(f"Tool {name!r} is not available right now.", error=True)
        return await sup.call(name, arguments)
