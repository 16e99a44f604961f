"""LangChain adapter: toolsurface's tool surface inside a LangChain agent or langgraph-bigtool.

The pieces, each over the public toolsurface API (``pip install 'toolsurface[langchain]'``):

- :func:`to_toolsurface` / :func:`convert_tools` turn LangChain tools (``BaseTool``,
  ``StructuredTool``, ``@tool`` functions, plain callables) into toolsurface
  :class:`~toolsurface.Tool` definitions, keeping the map back to the LangChain tool;
  :func:`from_toolsurface` goes the other way (a catalogue entry as a ``StructuredTool``).
- :class:`ToolSurfaceMiddleware`, an ``AgentMiddleware`` for ``langchain.agents.create_agent``
  (langchain >= 1.2.9), in one line over the agent's own tools
  (``create_agent(model, tools, middleware=[ToolSurfaceMiddleware()])``, the registry built
  by :class:`AgentTools`) or over a host's registry and surface: each model call gets the
  surface's planned tools (ToolSearch included while anything is held back) and the
  catalogue block in its system prompt; every tool call of a model message goes through
  call admission, and refused calls are answered with the surface's text instead of running.
- :func:`create_bigtool_agent` (with :class:`BigtoolMiddleware`), langgraph-bigtool's agent
  on ``create_agent``, and :class:`BigtoolRetriever`, its ``retrieve_tools`` backed by
  :meth:`~toolsurface.ToolRegistry.search` (also a ``retrieve_tools_function`` for
  ``langgraph_bigtool.create_agent``).

Whole agents, with a scripted stand-in for the chat model, are in docs/tools.md ("LangChain").
"""

from __future__ import annotations

from toolsurface.adapters.langchain.agent_tools import AgentTools, GroupRule, prefix_group
from toolsurface.adapters.langchain.bigtool import BigtoolRetriever, IdPolicy
from toolsurface.adapters.langchain.bigtool_agent import (
    BigtoolMiddleware,
    BigtoolState,
    create_bigtool_agent,
)
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
    "AgentTools",
    "BigtoolMiddleware",
    "BigtoolRetriever",
    "BigtoolState",
    "ConvertedTools",
    "GroupRule",
    "IdPolicy",
    "LangChainAdapterError",
    "LangChainToolLike",
    "SurfaceSource",
    "ToolSurfaceMiddleware",
    "as_base_tool",
    "convert_tools",
    "create_bigtool_agent",
    "from_toolsurface",
    "prefix_group",
    "register_langchain_tools",
    "to_toolsurface",
]
