"""A stdio MCP server whose tool listing holds one tool the SDK's model refuses.

Written on the wire (an SDK server validates what it lists): ``good_one`` and ``good_two``
are fine, and between them the tool the environment's ``BROKEN`` names: ``schema_str``
(``inputSchema`` a string), ``no_name``, ``array_schema`` (``inputSchema`` of type array)
or ``bad_props`` (a property that is no schema). Calls answer plain text.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

OBJECT: dict[str, Any] = {"type": "object", "properties": {"x": {"type": "string"}}}
BROKEN: dict[str, dict[str, Any]] = {
    "schema_str": {"name": "broken", "description": "Broken.", "inputSchema": "nope"},
    "no_name": {"description": "No name.", "inputSchema": OBJECT},
    "array_schema": {"name": "broken", "description": "Broken.", "inputSchema": {"type": "array"}},
    "bad_props": {
        "name": "broken",
        "description": "Broken.",
        "inputSchema": {"type": "object", "properties": {"a": 5}},
    },
}
TOOLS = [
    {"name": "good_one", "description": "Read the first good thing.", "inputSchema": OBJECT},
    BROKEN[os.environ.get("BROKEN", "schema_str")],
    {"name": "good_two", "description": "Read the second good thing.", "inputSchema": OBJECT},
]


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def main() -> None:
    for line in sys.stdin:
        message = json.loads(line)
        method, rid = message.get("method"), message.get("id")
        if method == "initialize":
            version = message["params"]["protocolVersion"]
            info = {"name": "broken-listing", "version": "1"}
            caps = {"tools": {}}
            _send(
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "result": {
                        "protocolVersion": version,
                        "capabilities": caps,
                        "serverInfo": info,
                    },
                }
            )
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": rid, "result": {"tools": TOOLS}})
        elif method == "tools/call":
            text = f"ran {message['params']['name']}"
            result = {"content": [{"type": "text", "text": text}]}
            _send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif rid is not None and method == "ping":
            _send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif rid is not None:
            _send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no"}})


if __name__ == "__main__":
    main()
