"""LangChain adapter: toolsurface's tool surface inside a LangChain agent or langgraph-bigtool.

Three pieces, each over the public toolsurface API (``pip install 'toolsurface[langchain]'``):

- :func:`to_toolsurface` / :func:`convert_tools` turn LangChain tools (``BaseTool``,
  ``StructuredTool``, ``@tool`` functions, plain callables) into toolsurface
  :class:`~toolsurface.Tool` definitions, keeping the map back to the LangChain tool;
  :func:`from_toolsurface` goes the other way (a catalogue entry as a ``StructuredTool``).
- :class:`ToolSurfaceMiddleware`, an ``AgentMiddleware`` for ``langchain.agents.create_agent``
  (langchain >= 1.0): each model call gets the surface's planned tools (ToolSearch included
  while anything is held back) and the catalogue block in its system prompt; every tool call
  of a model message goes through call admission, and refused calls are answered with the
  surface's text instead of running.
- :class:`BigtoolRetriever`, a ``retrieve_tools_function`` (and coroutine) for
  ``langgraph_bigtool.create_agent`` backed by :meth:`~toolsurface.ToolRegistry.search`.

A whole agent, with a scripted stand-in for the chat model, is in docs/tools.md ("LangChain").
"""

from __future__ import annotations

from toolsurface.adapters.langchain.bigtool import BigtoolRetriever, IdPolicy
from toolsurface.adapters.langchain.convert import (
    ConvertedTools,
    LangChainToolLike,
    as_base_tool,
    convert_tools,
    from_toolsurface,
    register_langchain_tools,
    to_toolsurface,
)
from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.adapters.langchain.middleware import SurfaceSource, ToolSurfaceMiddleware

__all__ = [
    "BigtoolRetriever",
    "ConvertedTools",
    "IdPolicy",
    "LangChainAdapterError",
    "LangChainToolLike",
    "SurfaceSource",
    "ToolSurfaceMiddleware",
    "as_base_tool",
    "convert_tools",
    "from_toolsurface",
    "register_langchain_tools",
    "to_toolsurface",
]
