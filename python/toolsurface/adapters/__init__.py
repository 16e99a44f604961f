"""Adapters that bring tools from elsewhere (MCP servers) into a ToolRegistry.

Each adapter is its own module so importing the package needs no optional dependency.
"""
