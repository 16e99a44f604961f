"""The gateway over streamable HTTP: the SDK's transport, stateless, with our own sessions.

The SDK's session manager keeps sessions in one process's memory, so it runs here in its
stateless mode and the gateway issues the ``Mcp-Session-Id`` itself: an ``initialize``
without one opens a session (stored at once, so every process over the store knows it) and
the id rides on the response; every later request must echo a session the store knows, or
it is answered 404 (the client then opens a new one), whichever process it reaches. A
``DELETE`` ends the session (a DELETE of an unknown one is a 404, as a request of it). A
request whose id MCP does not allow (an object, a fraction, null, a boolean) is refused
with JSON-RPC's -32600 before the SDK, which would take it for a notification. A ``GET``
of a known session opens its event stream (:mod:`toolsurface.gateway.streams`), on which
the gateway pushes what no request asked for; a ``list_changed`` caused by a call still
rides on that call's own response. With a bearer token every request must carry it.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio

from toolsurface.gateway.clients import CLIENT
from toolsurface.gateway.request_ids import INVALID_REQUEST, bad_request_id, may_have_bad_id
from toolsurface.gateway.sessions import CURRENT, Sessions, UnknownSessionError
from toolsurface.gateway.store import StoreError
from toolsurface.gateway.streams import EventStreams

__all__ = [
    "GatewayHttpError",
    "HostCheck",
    "SessionsMiddleware",
    "parse_listen",
    "serve_http",
]

_log = logging.getLogger("toolsurface.gateway")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The largest request body the gateway reads (the SDK's own limit).
MAX_BODY = 4 * 1024 * 1024
#: The longest session id looked up (the gateway's own are 43 characters).
MAX_SESSION_ID = 256
_SESSION_HEADER = b"mcp-session-id"


class GatewayHttpError(ValueError):
    """An ``--http`` address, or a token setting, the gateway refuses; the message says why."""


def parse_listen(spec: str) -> tuple[str, int]:
    """``HOST:PORT``, ``:PORT`` or ``PORT`` (host 127.0.0.1); ``[::1]:PORT`` for IPv6."""
    host, sep, port = spec.rpartition(":")
    if not sep:
        host, port = "", spec
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise GatewayHttpError(f"--http {spec}: the port must be a number") from None
    if not 0 <= number <= 65535:
        raise GatewayHttpError(f"--http {spec}: the port must be 0 to 65535")
    return host, number


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback address (``localhost`` counts)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def _split_host(value: str) -> tuple[str, str | None]:
    """A ``Host`` value's name (lower case, IPv6 without brackets) and port, if any."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value[1:].partition("]")
        return name, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        name, _, port = value.partition(":")
        return name, port
    return value, None


class HostCheck:
    """Which ``Host`` headers a gateway answers: the DNS rebinding door, for every address.

    Accepted: the bound host; when bound to a loopback address also ``localhost``,
    ``127.0.0.1`` and ``::1``; and each name the user allows (``--allow-host NAME``). A name
    is matched with any port or none, as the SDK's own check does (a proxy in front may
    listen on another port; rebinding is about the name, which the attacker picks), except
    an allowed ``NAME:PORT``, which must match exactly. A wildcard bind (``0.0.0.0``,
    ``::``) accepts only the loopback names and the allowed ones.
    """

    def __init__(self, host: str, allowed: tuple[str, ...] = ()) -> None:
        bound = host.strip("[]").lower()
        self.names = {bound}
        if is_loopback(bound) or bound in ("0.0.0.0", "::"):
            self.names.update(_LOOPBACK_NAMES)
        self.names.discard("0.0.0.0")
        self.names.discard("::")
        self.any_port: set[str] = set()
        self.exact: set[tuple[str, str]] = set()
        for item in allowed:
            name, item_port = _split_host(item)
            if item_port is None:
                self.any_port.add(name)
            else:
                self.exact.add((name, item_port))

    def admits(self, value: str | None) -> bool:
        """Whether a request with this ``Host`` header is served."""
        if not value:
            return False
        name, port = _split_host(value)
        if name in self.any_port or (port is not None and (name, port) in self.exact):
            return True
        return name in self.names


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return bytes(value).decode("latin-1")
    return None


async def _answer(send: Send, status: int, message: str, headers: list[Any] | None = None) -> None:
    """A JSON-RPC error body (no id) with an HTTP status, as the SDK answers its own refusals."""
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    ).encode("utf-8")
    head = [(b"content-type", b"application/json"), *(headers or [])]
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body, or ``None`` past :data:`MAX_BODY` or when the client left."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk = bytes(message.get("body", b""))
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _parsed(body: bytes) -> Any:
    """The body's JSON, or ``None`` when it is none (the SDK answers that with -32700)."""
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None


def _is_initialize(message: Any) -> bool:
    """Whether a parsed body (:func:`_parsed`) is an ``initialize`` request."""
    return isinstance(message, dict) and message.get("method") == "initialize"


class SessionsMiddleware:
    """ASGI in front of the SDK's stateless app: the bearer token, then our session ids."""

    def __init__(
        self,
        app: App,
        sessions: Sessions,
        *,
        token: str | None = None,
        hosts: HostCheck | None = None,
        streams: EventStreams | None = None,
    ) -> None:
        self.app = app
        self.sessions = sessions
        self.hosts = hosts
        self.streams = streams
        self._expected = f"Bearer {token}".encode() if token else None

    def _authorised(self, scope: Scope) -> bool:
        if self._expected is None:
            return True
        got = (_header(scope, b"authorization") or "").encode("latin-1")
        return hmac.compare_digest(got, self._expected)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse a foreign ``Host`` or a missing token, end or open a session, or serve one.

        Every refusal comes before any session is opened or read: a refused request leaves
        nothing in the store.
        """
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if self.hosts is not None:
            host = _header(scope, b"host")
            if not self.hosts.admits(host):
                shown = (host or "")[:100]
                await _answer(
                    send,
                    421,
                    f"Misdirected Request: Host {shown!r} is not served here "
                    "(a name of this gateway may be allowed with --allow-host NAME)",
                )
                return
        if not self._authorised(scope):
            challenge = [(b"www-authenticate", b'Bearer realm="toolsurface-gateway"')]
            await _answer(send, 401, "Unauthorized: a valid bearer token is required", challenge)
            return
        session_id = _header(scope, _SESSION_HEADER)
        method = scope.get("method", "")
        try:
            if method == "DELETE":
                await self._end(session_id, send)
            elif method == "GET" and self.streams is not None:
                await self._stream(session_id, scope, receive, send)
            elif method != "POST":
                allow = [(b"allow", b"GET, POST, DELETE" if self.streams else b"POST, DELETE")]
                await _answer(send, 405, "Method Not Allowed", allow)
            elif session_id is None:
                await self._open(scope, receive, send)
            else:
                await self._continue(session_id, scope, receive, send)
        except StoreError as exc:
            _log.error("toolsurface gateway: %s", exc)
            await _answer(send, 503, "Service Unavailable: the session store does not answer")

    async def _end(self, session_id: str | None, send: Send) -> None:
        """A DELETE: a session the store knows ends (200), any other is answered as its request.

        Without an id or with a malformed one 400, an unknown one 404, and nothing more ends
        than this process's stream of that id.
        """
        if self.streams is not None and session_id is not None:
            # Its stream here ends either way: a session the store forgot (expired,
            # evicted) is over, and nothing else closes a stream of one.
            self.streams.close(session_id)
        if not await self._known(session_id, send):
            return
        assert session_id is not None
        await self.sessions.end(session_id)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _open(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An ``initialize`` without a session id opens one; anything else is refused."""
        body = await _read_body(receive)
        if body is None:
            await _answer(send, 413, "Payload Too Large")
            return
        message = _parsed(body)
        refused = bad_request_id(message)
        if refused is not None:
            await _answer(send, 400, refused)
            return
        if not _is_initialize(message):
            await _answer(send, 400, "Bad Request: Missing session ID")
            return
        session_id = await self.sessions.issue()
        token = CURRENT.set((session_id, True))
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        async def with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [h for h in message.get("headers", []) if h[0].lower() != _SESSION_HEADER]
                message = {**message, "headers": [*headers, (_SESSION_HEADER, session_id.encode())]}
            await send(message)

        try:
            await self.app(scope, replay, with_id)
        finally:
            CURRENT.reset(token)

    async def _known(self, session_id: str | None, send: Send) -> bool:
        """Whether the session id is well formed and known to the store; else answered."""
        if session_id is None:
            await _answer(send, 400, "Bad Request: Missing session ID")
            return False
        if (
            len(session_id) > MAX_SESSION_ID
            or not session_id.isascii()
            or not session_id.isprintable()
            or " " in session_id
        ):
            await _answer(send, 400, "Bad Request: invalid session ID")
            return False
        try:
            await self.sessions.check(session_id)
        except UnknownSessionError:
            await _answer(send, 404, "Session not found")
            return False
        return True

    async def _stream(
        self, session_id: str | None, scope: Scope, receive: Receive, send: Send
    ) -> None:
        """A GET: the session's event stream (streams.py), for a known session."""
        assert self.streams is not None
        if "text/event-stream" not in (_header(scope, b"accept") or ""):
            await _answer(send, 406, "Not Acceptable: the GET stream is text/event-stream")
            return
        if not await self._known(session_id, send):
            return
        assert session_id is not None
        await self.streams.serve(
            session_id, receive, send, [(_SESSION_HEADER, session_id.encode())], CLIENT.get()
        )

    async def _continue(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        """A request of a session: known to the store (read now), or 404."""
        if not await self._known(session_id, send):
            return
        body = await _read_body(receive)
        if body is None:
            await _answer(send, 413, "Payload Too Large")
            return
        refused = bad_request_id(_parsed(body)) if may_have_bad_id(body) else None
        if refused is not None:
            await _answer(send, 400, refused)
            return
        # The client may be answering a request sent on its GET stream (streams.py).
        streams = self.streams
        if (
            streams is not None
            and streams.awaiting(session_id)
            and streams.answer(session_id, body)
        ):
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        receive = _replay(body, receive)
        token = CURRENT.set((session_id, True))
        try:
            await self.app(scope, receive, send)
        finally:
            CURRENT.reset(token)


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` with a body already read given back first."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def listening_socket(host: str, port: int) -> socket.socket:
    """A bound, listening TCP socket (port 0 picks a free one); an error names the address."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise GatewayHttpError(f"--http {host}:{port}: cannot listen ({exc.strerror})") from None
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


async def serve_http(
    app: App,
    sock: socket.socket,
    *,
    path: str = "/mcp",
    on_exit: Callable[[], None] | None = None,
) -> None:
    """Serve ``app`` on ``sock`` with uvicorn; one stderr line says where once it listens.

    ``on_exit`` is called once uvicorn is told to stop (SIGTERM, SIGINT): it ends what would
    hold a connection open forever (the GET streams), which uvicorn waits for.
    """
    import uvicorn

    config = uvicorn.Config(app, log_level="warning", lifespan="on", access_log=False)
    server = uvicorn.Server(config)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host

    async def announce() -> None:
        while not server.started:
            if server.should_exit:
                return
            await anyio.sleep(0.01)
        print(f"toolsurface gateway: listening on http://{shown}:{port}{path}", file=sys.stderr)
        sys.stderr.flush()

    async def exiting() -> None:
        while not server.should_exit:
            await anyio.sleep(0.1)
        if on_exit is not None:
            on_exit()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce)
        tg.start_soon(exiting)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()
