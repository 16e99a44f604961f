"""A plain ``tools/call`` over stdio answered without the SDK's server: a pass-through.

The SDK's server parses each request into its models, runs it through its dispatcher and
middleware, validates the handler's result for the negotiated version and serialises it
again; for a forwarded call that is most of what the gateway adds. Once a session is
initialised on a handshake version it serves (:data:`VERSIONS`), a request line that is
exactly ``tools/call`` with a ``name`` and ``arguments`` is taken here before the SDK sees
it: the gateway's own call runs (the same admission, session and forwarding as through the
SDK) and its result is written as the response line, shaped for the version by the SDK's
own ``serialize_server_result``. Anything else (another method, a ``_meta``, a malformed
line, another version) goes to the SDK as before. A ``notifications/cancelled`` for a call
taken here cancels it, and it is not answered, as the SDK does. A request whose id MCP
does not allow is answered here with -32600 (:mod:`toolsurface.gateway.request_ids`),
from the first line on: the SDK would take it for a notification and answer nothing.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc
from mcp_types import methods
from pydantic import ValidationError

from toolsurface.gateway.request_ids import INVALID_REQUEST, bad_request_id, may_have_bad_id

__all__ = ["VERSIONS", "FastCalls", "Notify"]

_log = logging.getLogger("toolsurface.gateway")

#: The handshake versions whose calls are taken here (the two with structured content).
VERSIONS = frozenset({"2025-06-18", "2025-11-25"})
#: Awaited to tell the client its tool list changed, before the call's response.
Notify = Callable[[], Awaitable[None]]
#: A call's result as JSON (a forwarded one's as its upstream sent it).
Call = Callable[[str, Mapping[str, Any], Notify], Awaitable[dict[str, Any]]]
Write = Callable[[str], Awaitable[None]]

_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_LIST_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n'
#: A request's id when it comes before any nested value of the line (``{"jsonrpc": "2.0",
#: "id": 7, ...``): a whole number or a plain string (then a comma or the end of the
#: object, so ``1.5`` is not read as 1), read without parsing the rest.
_TOP_ID = re.compile(
    rb'\s*\{\s*(?:"(?:jsonrpc|method)"\s*:\s*"[^"\\]*"\s*,\s*)*'
    rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,64}")(?=\s*[,}])'
)


def _plain_call(message: Any) -> tuple[int | str, str, dict[str, Any]] | None:
    """The id, name and arguments of a plain ``tools/call`` request, or ``None``."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return None
    if message.get("method") != "tools/call" or set(message) != {
        "jsonrpc",
        "id",
        "method",
        "params",
    }:
        return None
    rid, params = message["id"], message["params"]
    if isinstance(rid, bool) or not isinstance(rid, int | str) or not isinstance(params, dict):
        return None
    name, arguments = params.get("name"), params.get("arguments", {})
    if not set(params) <= {"name", "arguments"} or not isinstance(name, str):
        return None
    if arguments is None:
        arguments = {}
    return (rid, name, arguments) if isinstance(arguments, dict) else None


class FastCalls:
    """The pass-through of one stdio connection: ``take`` is offered every request line."""

    def __init__(self, call: Call) -> None:
        self.call = call
        #: Set once the SDK served a request of an initialised session on one of VERSIONS.
        self.enabled = False
        self.version = ""
        self._write: Write | None = None
        self._tasks: anyio.abc.TaskGroup | None = None
        self._running: dict[int | str, anyio.CancelScope] = {}

    def enable(self, version: str) -> None:
        """The session is initialised on ``version``: take plain calls from now if it fits."""
        self.enabled = version in VERSIONS
        self.version = version

    def attach(self, tasks: anyio.abc.TaskGroup | None, write: Write | None) -> None:
        """Where calls taken here run and where their responses go (``None``: detached)."""
        self._tasks, self._write = tasks, write
        if tasks is None:
            self.enabled = False

    def take(self, line: bytes) -> bool:
        """Whether ``line`` was taken here (then the SDK never sees it)."""
        if self._refused(line):
            return True
        if not self.enabled or self._tasks is None or b'"tools/call"' not in line:
            return self._cancel(line)
        try:
            message = json.loads(line)
        except ValueError:
            return False  # not JSON: the SDK answers it
        except RecursionError:
            # Nested past what the parser recurses into, which the SDK's reader drops
            # unanswered: answer it here when its id comes before anything nested.
            return self._too_deep(line)
        plain = _plain_call(message)
        if plain is None or plain[0] in self._running:
            return False
        scope = anyio.CancelScope()
        self._running[plain[0]] = scope
        self._tasks.start_soon(self._answer, scope, *plain)
        return True

    def _refused(self, line: bytes) -> bool:
        """Answer a request whose id MCP does not allow, and take it; else leave the line.

        A line is parsed for this only when it may hold such an id (``may_have_bad_id``).
        """
        if self._tasks is None or not may_have_bad_id(line):
            return False
        try:
            refused = bad_request_id(json.loads(line))
        except (ValueError, RecursionError):
            return False  # the SDK answers a line that does not parse
        if refused is None:
            return False
        error = {"code": INVALID_REQUEST, "message": refused}
        self._tasks.start_soon(self._send, _line({"jsonrpc": "2.0", "id": None, "error": error}))
        return True

    def _too_deep(self, line: bytes) -> bool:
        """Refuse a call nested too deeply to read, by the id its line opens with, if any."""
        found = _TOP_ID.match(line)
        if found is None or self._tasks is None:
            return False
        rid: int | str = json.loads(found.group(1))
        error = {"code": -32700, "message": "Parse error: the request is nested too deeply"}
        self._tasks.start_soon(self._send, _line({"jsonrpc": "2.0", "id": rid, "error": error}))
        return True

    def _cancel(self, line: bytes) -> bool:
        """A client's cancellation of a call taken here: cancel it, and take the line."""
        if not self._running or b'"notifications/cancelled"' not in line:
            return False
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return False
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return False
        params = message.get("params")
        rid = params.get("requestId") if isinstance(params, dict) else None
        if isinstance(rid, bool) or not isinstance(rid, int | str) or rid not in self._running:
            return False
        self._running[rid].cancel()
        return True

    async def _answer(
        self, scope: anyio.CancelScope, rid: int | str, name: str, arguments: dict[str, Any]
    ) -> None:
        try:
            with scope:
                await self._send(self._response(rid, name, await self._run(name, arguments)))
        finally:
            self._running.pop(rid, None)

    async def _run(self, name: str, arguments: dict[str, Any]) -> dict[str, Any] | str:
        """The call's result, or the message of its failure (the SDK's words for it)."""
        try:
            return await self.call(name, arguments, lambda: self._send(_LIST_CHANGED))
        except Exception as exc:  # as the SDK answers a handler's failure
            _log.exception("toolsurface gateway: tools/call %r failed", name)
            return str(exc)

    def _response(self, rid: int | str, name: str, result: dict[str, Any] | str) -> str:
        if isinstance(result, str):
            return _line({"jsonrpc": "2.0", "id": rid, "error": {"code": 0, "message": result}})
        try:
            # Validated for the client's version and shaped for it, as the SDK's server does.
            body = methods.serialize_server_result("tools/call", self.version, result)
        except ValidationError:  # as the SDK answers a result it cannot send
            _log.exception("toolsurface gateway: tools/call %r: invalid result", name)
            error = {"code": -32603, "message": "Handler returned an invalid result"}
            return _line({"jsonrpc": "2.0", "id": rid, "error": error})
        return _line({"jsonrpc": "2.0", "id": rid, "result": body})

    async def _send(self, line: str) -> None:
        """Write a line; a client gone (its pipe closed) ends the connection, not the call."""
        write = self._write
        if write is None:
            return
        try:
            await write(line)
        except OSError as exc:
            _log.debug("toolsurface gateway: stdout closed: %r", exc)


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
