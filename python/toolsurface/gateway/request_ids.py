"""The ids MCP allows a request: a string or an integer, never null.

The SDK validates a message that has a method and an id MCP does not allow as a
notification, on either transport: it answers nothing (over HTTP a 202), and the client
waits for its answer forever. The gateway refuses such a request itself, with JSON-RPC's
``-32600`` and id null, before the SDK reads it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["INVALID_REQUEST", "bad_request_id"]

#: JSON-RPC's code for a message that is not a valid request.
INVALID_REQUEST = -32600

_JSON_TYPES = {dict: "an object", list: "an array", float: "a number with a fraction"}


def bad_request_id(message: Any) -> str | None:
    """Why a request in ``message`` (one, or a batch) has an id MCP refuses, else ``None``.

    >>> bad_request_id({"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"})
    "Invalid Request: a request's id must be a string or an integer, not a number with a fraction"
    >>> bad_request_id({"jsonrpc": "2.0", "id": "7", "method": "tools/list"}) is None
    True
    """
    for item in message if isinstance(message, list) else (message,):
        if not isinstance(item, dict) or "method" not in item or "id" not in item:
            continue
        value = item["id"]
        if isinstance(value, bool) or not isinstance(value, str | int):
            kind = "null" if value is None else "a boolean" if isinstance(value, bool) else None
            kind = kind or _JSON_TYPES.get(type(value), type(value).__name__)
            return f"Invalid Request: a request's id must be a string or an integer, not {kind}"
    return None
