"""A stdio MCP server whose one tool answers as much text as it is asked for.

``python big_server.py`` serves ``dump(size)``: a text of ``size`` characters, so a test or
a bench can have an upstream answer one line of many megabytes.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

mcp = MCPServer("big-dump", instructions="Dumps as much text as asked for.")


@mcp.tool()
def dump(size: int) -> str:
    """Answer a text of ``size`` characters (digits, then a closing mark)."""
    body = "0123456789" * (size // 10 + 1)
    return body[: max(size - 3, 0)] + "END"


if __name__ == "__main__":
    mcp.run("stdio")
