"""The one error type of the LangChain adapter."""

from __future__ import annotations

from toolsurface.errors import ToolsurfaceError

__all__ = ["LangChainAdapterError"]


class LangChainAdapterError(ToolsurfaceError):
    """The adapter cannot do what it was asked; the message names the tool at fault."""
