"""A stdio MCP server whose one tool does its work, then dies before it answers.

``python dying_server.py MARK`` serves ``charge_card``: it writes MARK (the work was done)
and exits at once, so the gateway sees the connection drop after the call was sent.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.mcpserver import MCPServer

if len(sys.argv) != 2:
    sys.exit("usage: dying_server.py MARK")
MARK = Path(sys.argv[1])

mcp = MCPServer("dying-till", instructions="A till that crashes after it charged.")


@mcp.tool()
def charge_card(amount: int) -> str:
    """Charge a customer's card an amount in cents."""
    MARK.write_text(str(amount), "utf-8")
    os._exit(1)


if __name__ == "__main__":
    mcp.run("stdio")
