"""A stdio MCP server that answers its calls wrongly, written on the wire (no SDK server).

An SDK server validates what it sends, so the ways an upstream can go wrong are written
here by hand, one tool each: ``shapeless`` answers a result that is no tool result
(``content`` a string), ``off_schema`` declares an output schema and answers structured
content that breaks it, ``refuses`` answers a JSON-RPC error, and ``fine`` answers well.
It speaks just enough MCP for a client to initialise, list and call.
"""

from __future__ import annotations

import json
import sys
from typing import Any

OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
TOOLS = [
    {"name": "shapeless", "description": "Answers the wrong shape.", "inputSchema": OBJECT},
    {
        "name": "off_schema",
        "description": "Answers structured content that breaks its output schema.",
        "inputSchema": OBJECT,
        "outputSchema": {
            "type": "object",
            "properties": {"count": {"type": "integer"}},
            "required": ["count"],
        },
    },
    {"name": "refuses", "description": "Answers a JSON-RPC error.", "inputSchema": OBJECT},
    {"name": "fine", "description": "Answers a plain text result.", "inputSchema": OBJECT},
]  # fmt: skip


def _call(name: str) -> tuple[str, Any]:
    if name == "shapeless":
        return "result", {"content": "not a list of blocks"}
    if name == "off_schema":
        text = [{"type": "text", "text": "{}"}]
        return "result", {"content": text, "structuredContent": {"count": "many"}}
    if name == "refuses":
        return "error", {"code": -32000, "message": "the desk is closed today"}
    return "result", {"content": [{"type": "text", "text": "all good"}]}


def _answer(message: dict[str, Any]) -> dict[str, Any] | None:
    method, rid = message.get("method"), message.get("id")
    if rid is None:  # a notification
        return None
    params = message.get("params") or {}
    key, value = "result", {}
    if method == "initialize":
        value = {
            "protocolVersion": params.get("protocolVersion", "2025-06-18"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "wrong", "version": "1"},
        }
    elif method == "tools/list":
        value = {"tools": TOOLS}
    elif method == "tools/call":
        key, value = _call(str(params.get("name")))
    elif method != "ping":
        key, value = "error", {"code": -32601, "message": f"no method {method}"}
    return {"jsonrpc": "2.0", "id": rid, key: value}


def main() -> None:
    """Answer one JSON-RPC message a line until stdin ends."""
    for line in sys.stdin:
        if not line.strip():
            continue
        reply = _answer(json.loads(line))
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
