"""A stdio MCP server whose one tool answers as many content blocks as it is asked for.

What an upstream that floods the gateway looks like: ``flood(blocks=N)`` answers N text
blocks (mcp 2.x MCPServer).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.types import TextContent

mcp = MCPServer("flood", instructions="Answers as many text blocks as asked.")


@mcp.tool()
def flood(blocks: int) -> list[TextContent]:
    """Answer ``blocks`` numbered lines of text, each a content block of its own."""
    return [TextContent(type="text", text=f"line {i}") for i in range(blocks)]


if __name__ == "__main__":
    mcp.run("stdio")
