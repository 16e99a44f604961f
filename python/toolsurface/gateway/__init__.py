"""An MCP gateway: deferral, ToolSearch and admission for any MCP client, with no code.

``toolsurface gateway --config FILE`` fronts the MCP servers of a client's ``mcpServers``
file: each upstream is a dynamic group of one registry, and the gateway serves the surface
of that registry over MCP (see docs/gateway.md).
"""
