"""What operates an HTTP gateway: health, readiness, metrics, per-client tokens, access logs.

:class:`OpsMiddleware` sits in front of the session middleware (``http.py``). Every request
has its ``Host`` checked first, as there. Then:

- ``GET /healthz``: 200 while the process serves (liveness);
- ``GET /readyz``: 200 when the session store answers and at least one upstream is
  connected, else 503; the JSON body says the store's and each upstream's state: every
  upstream to the bearer of the token (or to anyone when there is none), to a client of the
  tokens file only those it meets something of (``Gateway.told_of``), none to a request
  without a valid one;
- ``GET /metrics``: the Prometheus text format (``metrics.py``), behind the token; a
  client of the tokens file reads no row labelled with an upstream it is not told of;
- anything else goes on to the MCP endpoint. With a clients file (``clients.py``) the
  bearer token names the client: its policy applies to the request (:data:`CLIENT`), and a
  session is bound to the client that opened it, so another client's token cannot use it.

Each answered request is one access line on ``toolsurface.gateway.access`` (INFO): method,
path, status, client and milliseconds, as fields a JSON log keeps (``logs.py``).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

import anyio.to_thread

from toolsurface.gateway.clients import CLIENT, Client, ClientTokens
from toolsurface.gateway.metrics import GatewayMetrics, gauge_rows
from toolsurface.gateway.request_ids import INVALID_REQUEST
from toolsurface.gateway.store import SessionStore, StoreError

__all__ = ["READY_PROBE", "OpsMiddleware"]

_log = logging.getLogger("toolsurface.gateway")
_access = logging.getLogger("toolsurface.gateway.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The session id ``/readyz`` reads to see that the store answers (never written).
READY_PROBE = "toolsurface-readyz-probe"
#: Where a session's client is kept in the store: this, then the session id.
_BINDING = "toolsurface-client-of:"
_SESSION_HEADER = b"mcp-session-id"
#: Session bindings remembered in memory (the store keeps them all).
_BINDINGS_HELD = 4096


class _Hosts(Protocol):
    def admits(self, value: str | None) -> bool: ...


class _Sessions(Protocol):
    def __len__(self) -> int: ...
    def forget_held(self) -> None: ...
    def follow_writes(self, follow: Callable[[str], Awaitable[None]]) -> None: ...


class Operated(Protocol):
    """What the middleware reads of the gateway (``server.Gateway``)."""

    @property
    def store(self) -> SessionStore: ...
    @property
    def sessions(self) -> _Sessions: ...
    @property
    def metrics(self) -> GatewayMetrics: ...

    def upstream_states(self) -> dict[str, bool]: ...
    def told_of(self, client: Client) -> Callable[[str], bool]: ...


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _reply(
    send: Send, status: int, body: bytes, kind: bytes, headers: list[Any] | None = None
) -> None:
    head = [(b"content-type", kind), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _refuse(send: Send, status: int, message: str, headers: list[Any] | None = None) -> None:
    """A JSON-RPC error body (no id), as the SDK and the session middleware answer."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    await _reply(send, status, json.dumps(body).encode(), b"application/json", headers)


_CHALLENGE = [(b"www-authenticate", b'Bearer realm="toolsurface-gateway"')]


def _opened(start: Message) -> str | None:
    """The session id a response start carries (an ``initialize`` opened it), if any."""
    for key, value in start.get("headers", []):
        if bytes(key).lower() == _SESSION_HEADER:
            return bytes(value).decode("latin-1")
    return None


class OpsMiddleware:
    """Health, readiness and metrics endpoints; client tokens; an access line a request."""

    def __init__(
        self,
        app: App,
        gateway: Operated,
        *,
        hosts: _Hosts,
        token: str | None = None,
        clients: ClientTokens | None = None,
    ) -> None:
        self.app = app
        self.gateway = gateway
        self.hosts = hosts
        self.clients = clients
        self._expected = f"Bearer {token}".encode() if token else None
        # session id -> (client name, when its binding was last written), as bound when
        # the session was opened.
        self._bound: OrderedDict[str, tuple[str, float]] = OrderedDict()
        if clients is not None:
            gateway.sessions.follow_writes(self._rebind)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Answer the operator's endpoints; pass the rest on, with its client known."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = [0]
        client: list[Client | None] = [None]

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self._serve(scope, receive, counted, client)
        finally:
            code = status[0]
            metrics = self.gateway.metrics
            metrics.inc("toolsurface_gateway_http_requests_total", (("code", str(code)),))
            if code == 503:
                metrics.inc("toolsurface_gateway_errors_total", (("kind", "store"),))
            elif code == 401:
                metrics.inc("toolsurface_gateway_errors_total", (("kind", "auth"),))
            who = client[0].name if client[0] is not None else None
            _access.info(
                "%s %s %d",
                scope.get("method", ""),
                scope.get("path", ""),
                code,
                extra={
                    "method": scope.get("method", ""),
                    "path": scope.get("path", ""),
                    "status": code,
                    "client": who,
                    "ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )

    async def _serve(
        self, scope: Scope, receive: Receive, send: Send, client: list[Client | None]
    ) -> None:
        if not self.hosts.admits(_header(scope, b"host")):
            shown = (_header(scope, b"host") or "")[:100]
            await _refuse(
                send,
                421,
                f"Misdirected Request: Host {shown!r} is not served here "
                "(a name of this gateway may be allowed with --allow-host NAME)",
            )
            return
        path, method = scope.get("path", ""), scope.get("method", "")
        if path in ("/healthz", "/readyz") and method in ("GET", "HEAD"):
            await (self._health(send) if path == "/healthz" else self._ready(send, scope))
            return
        if self.clients is not None:
            if self.clients.refresh():  # a client's policy may have changed: read anew
                self.gateway.sessions.forget_held()
                self._bound.clear()
            client[0] = self.clients.client(_header(scope, b"authorization"))
            if client[0] is None:
                await _refuse(
                    send, 401, "Unauthorized: a valid bearer token is required", _CHALLENGE
                )
                return
        elif path == "/metrics" and not self._token_ok(scope):
            await _refuse(send, 401, "Unauthorized: a valid bearer token is required", _CHALLENGE)
            return
        if path == "/metrics" and method in ("GET", "HEAD"):
            await self._metrics(send, client[0])
            return
        if client[0] is None:
            await self.app(scope, receive, self._counting(send, _header(scope, _SESSION_HEADER)))
            return
        await self._as_client(client[0], scope, receive, send)

    def _counting(self, send: Send, session_id: str | None) -> Send:
        """``send``, counting a session the response opens."""
        if session_id is not None:
            return send

        async def counted(message: Message) -> None:
            if message["type"] == "http.response.start" and _opened(message) is not None:
                self.gateway.metrics.inc("toolsurface_gateway_sessions_opened_total")
            await send(message)

        return counted

    def _token_ok(self, scope: Scope) -> bool:
        if self._expected is None:
            return True
        got = (_header(scope, b"authorization") or "").encode("latin-1")
        return hmac.compare_digest(got, self._expected)

    async def _health(self, send: Send) -> None:
        await _reply(send, 200, b'{"status": "ok"}', b"application/json")

    def _viewer(self, scope: Scope) -> Callable[[str], bool]:
        """Which upstreams a request's credential may have named to it (``/readyz``)."""
        if self.clients is not None:
            client = self.clients.client(_header(scope, b"authorization"))
            return self.gateway.told_of(client) if client is not None else lambda _upstream: False
        if self._token_ok(scope):
            return lambda _upstream: True
        return lambda _upstream: False

    async def _ready(self, send: Send, scope: Scope) -> None:
        """Ready: the store answers and an upstream is connected (states told to who may know).

        Readiness is of every upstream; which are named depends on the credential, so a
        probe without one learns ready or not, never the upstreams behind the gateway.
        """
        store = "ok"
        try:
            await anyio.to_thread.run_sync(self.gateway.store.load, READY_PROBE)
        except StoreError as exc:
            store = str(exc)
        except OSError as exc:
            store = f"the store cannot be read ({exc.strerror})"
        states = self.gateway.upstream_states()
        ready = store == "ok" and any(states.values())
        shown = self._viewer(scope)
        body = {
            "ready": ready,
            "store": store,
            "upstreams": {
                name: "up" if up else "down" for name, up in sorted(states.items()) if shown(name)
            },
        }
        await _reply(send, 200 if ready else 503, json.dumps(body).encode(), b"application/json")

    async def _metrics(self, send: Send, client: Client | None) -> None:
        gateway = self.gateway
        gauges = gauge_rows(len(gateway.sessions), gateway.upstream_states())
        shown = gateway.told_of(client) if client is not None else None
        text = gateway.metrics.render(gauges, visible=shown)
        await _reply(send, 200, text.encode(), b"text/plain; version=0.0.4; charset=utf-8")

    async def _bound_client(self, session_id: str) -> str | None:
        """The client a session was opened by (read from the store if not held here).

        With a store TTL the binding is written again once half of it has passed, so a
        session in use never outlives its binding (a lost binding is a 404: fail closed).
        """
        found = self._bound.get(session_id)
        store = self.gateway.store
        if found is None:
            name = await anyio.to_thread.run_sync(store.load, _BINDING + session_id)
            if name is None:
                return None
            found = (name, float("-inf"))  # when it was written is unknown: rewrite if TTL
        name, written = found
        ttl = getattr(store, "ttl", None)
        if ttl is not None and time.monotonic() - written > ttl / 2:
            await anyio.to_thread.run_sync(store.save, _BINDING + session_id, name)
            written = time.monotonic()
        self._remember(session_id, name, written)
        return name

    def _remember(self, session_id: str, name: str, written: float) -> None:
        self._bound[session_id] = (name, written)
        self._bound.move_to_end(session_id)
        while len(self._bound) > _BINDINGS_HELD:
            self._bound.popitem(last=False)

    async def _as_client(self, client: Client, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request of ``client``: only its own sessions, under its policy."""
        session_id = _header(scope, _SESSION_HEADER)
        try:
            if session_id is not None and await self._bound_client(session_id) != client.name:
                # Another client's session, or one never bound: not found, for this token.
                await _refuse(send, 404, "Session not found")
                return
        except StoreError as exc:
            _log.error("toolsurface gateway: %s", exc)
            await _refuse(send, 503, "Service Unavailable: the session store does not answer")
            return

        ending = session_id is not None and scope.get("method") == "DELETE"

        async def binding(message: Message) -> None:
            if message["type"] == "http.response.start" and ending and message["status"] == 200:
                # The session ended: its binding goes with it, before the client hears so.
                await self._unbind(str(session_id))
            if message["type"] == "http.response.start" and session_id is None:
                opened = _opened(message)
                if opened is not None:
                    # Bound before the client learns the id, so no request can come first.
                    store = self.gateway.store
                    await anyio.to_thread.run_sync(store.save, _BINDING + opened, client.name)
                    self._remember(opened, client.name, time.monotonic())
                    self.gateway.metrics.inc("toolsurface_gateway_sessions_opened_total")
            await send(message)

        token = CLIENT.set(client)
        try:
            await self.app(scope, receive, binding)
        finally:
            CLIENT.reset(token)

    async def _rebind(self, session_id: str) -> None:
        """Write a session's binding again, after its snapshot was written (``follow_writes``).

        A store over its cap drops the least recently written entries first: a binding
        older than its session's last snapshot would go before it, and the live session be
        refused (404) wherever the binding must be read from the store. Only a binding this
        process holds is written (any request of the session reads it first; one dropped
        from the ``_BINDINGS_HELD`` held is not). Stamped with the time before the write,
        which the TTL's refresh (``_bound_client``) reads. A store that fails here is
        logged: the snapshot was written, and the binding written before still stands.
        """
        found = self._bound.get(session_id)
        if found is None:
            return
        started = time.monotonic()
        try:
            await anyio.to_thread.run_sync(self.gateway.store.save, _BINDING + session_id, found[0])
        except (StoreError, OSError) as exc:
            _log.error("toolsurface gateway: %s", exc)
            return
        self._remember(session_id, found[0], started)

    async def _unbind(self, session_id: str) -> None:
        """Forget an ended session's client: its store entry would stay for good."""
        self._bound.pop(session_id, None)
        try:
            await anyio.to_thread.run_sync(self.gateway.store.delete, _BINDING + session_id)
        except (StoreError, OSError) as exc:
            _log.warning("toolsurface gateway: forgetting an ended session's client: %s", exc)
