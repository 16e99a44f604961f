"""langgraph-bigtool: tool retrieval for ``langgraph_bigtool.create_agent``.

:class:`BigtoolRetriever`, a ``retrieve_tools_function`` (and coroutine) backed by
:meth:`~toolsurface.ToolRegistry.search`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TypeAlias

from langchain_core.tools import BaseTool

from toolsurface.adapters.langchain.convert import LangChainToolLike, as_base_tool, to_toolsurface
from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.models import Tool
from toolsurface.registry import ToolRegistry

__all__ = ["BigtoolRetriever", "IdPolicy"]

_log = logging.getLogger("toolsurface.adapters.langchain")

#: Which bigtool tool ids may be retrieved: ids, a predicate over ids, or ``None`` for all.
IdPolicy: TypeAlias = "Collection[str] | Callable[[str], bool] | None"


class BigtoolRetriever:
    """``retrieve_tools_function`` and ``retrieve_tools_coroutine`` for langgraph-bigtool.

    Built from bigtool's own ``tool_registry`` (tool id -> LangChain tool or function): each
    tool is converted (:func:`to_toolsurface`) into a :class:`~toolsurface.ToolRegistry` of
    its own, searched by BM25F in English and Russian; a query returns up to ``limit`` tool
    ids, best first. ``admitted`` limits what may be returned (tool ids, or a predicate over
    them; a predicate that raises admits nothing). Two ids whose tools share a name are
    refused: bigtool binds tools to the model by name.

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def list_pull_requests(repo: str) -> str:
    ...     '''List the open pull requests of a GitHub repository.'''
    ...     return ""
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Get the weather forecast for a city.'''
    ...     return ""
    >>> retriever = BigtoolRetriever({"pr": list_pull_requests, "wx": get_weather})
    >>> retriever.function("покажи открытые пулреквесты")
    ['pr']
    >>> import asyncio
    >>> asyncio.run(retriever.coroutine("weather in Oslo"))
    ['wx']

    Then :func:`~toolsurface.adapters.langchain.create_bigtool_agent` (bigtool's graph
    on LangChain's agent, whose tool node works with langgraph-prebuilt 1.x), or
    ``langgraph_bigtool.create_agent(llm, tool_registry,
    retrieve_tools_function=retriever.function,
    retrieve_tools_coroutine=retriever.coroutine)`` where its tool node still works.
    """

    def __init__(
        self,
        tool_registry: Mapping[str, LangChainToolLike],
        *,
        limit: int = 2,
        admitted: IdPolicy = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ValueError(f"limit must be a positive int, got {limit!r}")
        if isinstance(admitted, (str, bytes)):
            raise TypeError("admitted must be a collection of tool ids or a predicate, not str")
        self.limit = limit
        self.admitted = admitted
        self.registry = registry if registry is not None else ToolRegistry()
        self._id_of: dict[str, str] = {}
        #: Each tool id's LangChain tool (a function is wrapped as ``@tool`` would).
        self.tools: dict[str, BaseTool] = {}
        tools: list[Tool] = []
        for tool_id, item in tool_registry.items():
            base = as_base_tool(item, where=f"tool id {tool_id!r}")
            if base.name in self._id_of:
                raise LangChainAdapterError(
                    f"tool ids {self._id_of[base.name]!r} and {tool_id!r} both hold a tool "
                    f"named {base.name!r}: bigtool binds tools by name, so give each its own"
                )
            self._id_of[base.name] = tool_id
            self.tools[tool_id] = base
            tools.append(to_toolsurface(base))
        self.registry.register_many(tools, where="bigtool tool_registry")
        self.function = self._make_function()
        self.coroutine = self._make_coroutine()

    def admits(self, tool_id: str) -> bool:
        """Whether ``admitted`` lets ``tool_id`` be retrieved (and, in an agent, run)."""
        if tool_id not in self.tools:
            return False
        policy = self.admitted
        if policy is None:
            return True
        try:
            return bool(policy(tool_id)) if callable(policy) else tool_id in policy
        except Exception:
            # Fail closed, as a ToolSurface policy does: a broken policy admits nothing.
            _log.exception("toolsurface: the bigtool policy failed on %r; not admitted", tool_id)
            return False

    def retrieve(self, query: str) -> list[str]:
        """Up to ``limit`` admitted tool ids for ``query``, best first."""
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        admitted = None
        if self.admitted is not None:
            admitted = [n for n, i in self._id_of.items() if self.admits(i)]
        hits = self.registry.search(query, k=self.limit, admitted=admitted)
        return [self._id_of[h.name] for h in hits if h.name in self._id_of]

    def _make_function(self) -> Callable[[str], list[str]]:
        retrieve = self.retrieve

        # bigtool makes its retrieval tool with StructuredTool.from_function: the tool's
        # name, description and argument schema come from this function's name, docstring
        # and signature, so all three are what the model should see.
        def retrieve_tools(query: str) -> list[str]:
            """Find tools for a job: say what the tool should do, in English or Russian."""
            return retrieve(query)

        return retrieve_tools

    def _make_coroutine(self) -> Callable[[str], Awaitable[list[str]]]:
        retrieve = self.retrieve

        async def retrieve_tools(query: str) -> list[str]:
            """Find tools for a job: say what the tool should do, in English or Russian."""
            # A search takes microseconds: running it inline beats a thread hand-off.
            return retrieve(query)

        return retrieve_tools
