"""Who a forwarded call serves, so an upstream's requests during it reach that client.

An upstream asks its client things while it runs a call: a completion of the client's
model (``sampling/createMessage``), the user's input (``elicitation/create``), the client's
roots (``roots/list``); it logs (``notifications/message``) and reports progress. The
gateway is that client, for every session at once: each forwarded call is registered on
its upstream as in flight with its :class:`Caller` (the client session and request it
serves, taken from :data:`CALLER`, set by the server around the call), and what the
upstream sends is passed on to a caller of its upstream:

- progress by its token: each call that asked for progress gets a token of the gateway's
  own upstream, mapped back to the client's token and request, so it is never ambiguous;
- a request or a log message to the caller in flight; while calls of several sessions
  run on the upstream at once it cannot be told whose it is (MCP carries no relation over
  stdio), so a request is answered with an error saying so, and a log message is dropped,
  rather than one session's being shown to another; with no call in flight, to the
  default caller (the stdio client), if any.

Cancellation needs nothing here: a client that cancels its call cancels the forwarded
call (the lane tells the upstream), and an upstream that cancels its request cancels the
callback forwarding it (the SDK tells the client).
"""

from __future__ import annotations

import contextvars
import itertools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp import MCPError, types
from mcp.shared.message import ServerMessageMetadata
from mcp_types import INVALID_REQUEST
from pydantic import ValidationError

__all__ = ["CALLER", "Caller", "InFlight"]

_log = logging.getLogger("toolsurface.gateway")

#: Sends a client a request (method, params) another way than its session; its result.
Asker = Callable[[str, dict[str, Any] | None], Awaitable[dict[str, Any]]]
#: The prefix of the progress tokens the gateway gives its upstreams.
TOKEN_PREFIX = "toolsurface-progress-"


@dataclass(frozen=True)
class Caller:
    """A client request a forwarded call serves: the session to ask, the request to relate to."""

    #: The SDK's server session of the client (request-scoped over HTTP).
    session: Any
    #: The gateway session's id (the one whose calls may share an upstream with others').
    gateway_session: str
    #: The client's request; requests and notifications ride on its stream over HTTP.
    request_id: types.RequestId | None = None
    #: The client's progress token for the call, if it asked for progress.
    progress_token: types.ProgressToken | None = None
    #: How a request reaches a client the session cannot ask itself (HTTP: its GET stream).
    asker: Asker | None = None

    def _metadata(self) -> ServerMessageMetadata | None:
        if self.request_id is None:
            return None
        return ServerMessageMetadata(related_request_id=self.request_id)

    async def ask(self, request: Any, result: type[Any]) -> Any:
        """Send the client a request; its result, or its error as ``ErrorData``."""
        try:
            if self.asker is None:
                return await self.session.send_request(request, result, metadata=self._metadata())
            data = request.model_dump(by_alias=True, mode="json", exclude_none=True)
            raw = await self.asker(data["method"], data.get("params"))
            return result.model_validate(raw, by_name=False)
        except MCPError as exc:
            return exc.error
        except ValidationError as exc:
            return types.ErrorData(
                code=INVALID_REQUEST,
                message=f"the client's answer was not valid ({exc.error_count()} problems)",
            )

    async def notify(self, notification: Any) -> None:
        """Send the client a notification, on its request's stream where it has one."""
        await self.session.send_notification(notification, related_request_id=self.request_id)

    async def progress(self, params: types.ProgressNotificationParams) -> None:
        """Pass on an upstream's progress under the client's own token."""
        if self.progress_token is None:
            return
        moved = params.model_copy(update={"progress_token": self.progress_token})
        await self.notify(types.ProgressNotification(params=moved))


#: The caller of the request being served; set by the server around a forwarded call.
CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar(
    "toolsurface_gateway_caller", default=None
)


class InFlight:
    """The calls running on one upstream and their callers, and the progress tokens given."""

    def __init__(self, default: Callable[[], Caller | None] | None = None) -> None:
        self._default = default
        self._calls: dict[int, Caller] = {}
        self._tokens: dict[str, Caller] = {}
        self._ids = itertools.count(1)

    def enter(self, caller: Caller | None) -> tuple[int, str | None]:
        """Register a call (its caller from :data:`CALLER` if None); its key and progress token."""
        caller = caller or CALLER.get() or (self._default() if self._default else None)
        key = next(self._ids)
        if caller is None:
            return key, None
        self._calls[key] = caller
        if caller.progress_token is None:
            return key, None
        token = f"{TOKEN_PREFIX}{key}"
        self._tokens[token] = caller
        return key, token

    def leave(self, key: int, token: str | None) -> None:
        """The call ended: its caller is no longer in flight."""
        self._calls.pop(key, None)
        if token is not None:
            self._tokens.pop(token, None)

    def by_token(self, token: object) -> Caller | None:
        """The caller a progress token of the gateway's was given for."""
        return self._tokens.get(token) if isinstance(token, str) else None

    def route(self) -> Caller | None:
        """The caller an upstream's request is for, or None if no one (or several) could be."""
        callers = list(self._calls.values())
        if not callers:
            return self._default() if self._default is not None else None
        if len({c.gateway_session for c in callers}) > 1:
            return None
        return callers[-1]  # the latest call of the one session: its stream is open longest

    def refusal(self, upstream: str, what: str) -> types.ErrorData:
        """The error an upstream's request gets when no caller can be told."""
        if self._calls:
            reason = (
                "calls of several client sessions are running on it, and the request does "
                "not say which one it is for"
            )
        else:
            reason = "no client call is running on it"
        _log.warning(
            "toolsurface gateway: upstream %r asked %s: refused, %s", upstream, what, reason
        )
        return types.ErrorData(
            code=INVALID_REQUEST,
            message=f"The gateway cannot pass on {what} from {upstream!r}: {reason}.",
        )
