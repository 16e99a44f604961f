"""A stdio MCP server whose tools answer, or ask the client, as much text as they are told.

``python big_server.py`` serves ``dump(size)``: a text of ``size`` characters, so a test or
a bench can have an upstream answer one line of many megabytes; and ``ask(size)``, which
asks the client's model (sampling) a question of ``size`` characters and says what came of
it.
"""

from __future__ import annotations

from mcp import MCPError, types
from mcp.server.mcpserver import Context, MCPServer

mcp = MCPServer("big-dump", instructions="Dumps as much text as asked for.")


@mcp.tool()
def dump(size: int) -> str:
    """Answer a text of ``size`` characters (digits, then a closing mark)."""
    body = "0123456789" * (size // 10 + 1)
    return body[: max(size - 3, 0)] + "END"


@mcp.tool()
async def ask(size: int, ctx: Context) -> str:
    """Ask the client's model a question of ``size`` characters; its answer or the error."""
    text = ("0123456789" * (size // 10 + 1))[:size]
    question = types.SamplingMessage(role="user", content=types.TextContent(type="text", text=text))
    try:
        answer = await ctx.session.create_message([question], max_tokens=10)
    except MCPError as exc:
        return f"refused: {exc}"
    content = answer.content
    return f"answered: {content.text if isinstance(content, types.TextContent) else content}"


if __name__ == "__main__":
    mcp.run("stdio")
