"""The ids MCP allows a request: a string or an integer, never null.

The SDK validates a message that has a method and an id MCP does not allow as a
notification, on either transport: it answers nothing (over HTTP a 202), and the client
waits for its answer forever. The gateway refuses such a request itself, with JSON-RPC's
``-32600`` and id null, before the SDK reads it. A message is parsed for this only when
:func:`may_have_bad_id` finds the bytes of such an id in it, so a well-formed one costs a
scan, not a second parse. A notification carrying an id is left to the SDK, which takes it
as the notification it is.
"""

from __future__ import annotations

import math
import re
from typing import Any

__all__ = ["INVALID_REQUEST", "bad_request_id", "may_have_bad_id"]

#: JSON-RPC's code for a message that is not a valid request.
INVALID_REQUEST = -32600

_JSON_TYPES = {dict: "an object", list: "an array", float: "a number with a fraction"}
#: What an ``"id"`` key's value opens with when MCP does not allow it: an object, an array,
#: null, a boolean, a number with a fraction or an exponent, or what Python's and the SDK's
#: parsers also read as a number (``NaN``, ``Infinity``, ``-Infinity``). Such a value is a
#: literal, never escaped.
_BAD_VALUE = rb"\s*:\s*(?:[\[{ntfNI]|-?(?:\d+[.eE]|I))"
#: The key spelled plainly: a literal prefix, so a body is scanned fast.
_BAD_ID = re.compile(rb'"id"' + _BAD_VALUE)
#: The key with either letter spelled as a JSON escape (``"\u0069d"`` is ``"id"`` to every
#: parser; the escapes of ``i`` and ``d`` have no hex letters, so there is no other
#: spelling). Without a literal prefix this pattern tries every quote mark, so it runs only
#: on a body holding such an escape.
_BAD_ESCAPED_ID = re.compile(rb'"(?:i|\\u0069)(?:d|\\u0064)"' + _BAD_VALUE)


def may_have_bad_id(body: bytes) -> bool:
    """Whether ``body`` may hold a request whose id MCP refuses (then parse it and see).

    Never false for a body with such an id, its key spelled plainly or with escapes; true
    also for a good request with such a value under an ``"id"`` in its params, which the
    parse then passes.
    """
    if _BAD_ID.search(body) is not None:
        return True
    return b"\\u00" in body and _BAD_ESCAPED_ID.search(body) is not None


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
        if str(item["method"]).startswith("notifications/"):
            continue  # a notification with a stray id: the SDK serves it as one
        value = item["id"]
        if isinstance(value, bool) or not isinstance(value, str | int):
            kind = "null" if value is None else "a boolean" if isinstance(value, bool) else None
            if isinstance(value, float) and not math.isfinite(value):
                kind = "a number that is not finite"
            kind = kind or _JSON_TYPES.get(type(value), type(value).__name__)
            return f"Invalid Request: a request's id must be a string or an integer, not {kind}"
    return None
