"""langgraph-bigtool's agent on LangChain's ``create_agent``: retrieve tools, then call them.

langgraph-bigtool 0.0.3 (its latest release) routes every call of a retrieved tool through
``ToolNode.inject_tool_args``, which langgraph-prebuilt removed in 1.0.2; every langchain
release with the middleware API this adapter needs requires a later langgraph-prebuilt, so
no version range makes bigtool's own graph work beside :class:`ToolSurfaceMiddleware`.
:func:`create_bigtool_agent` gives the same agent on LangChain's own graph and tool node:
the model starts with a ``retrieve_tools`` tool (toolsurface's :class:`BigtoolRetriever`),
each retrieval adds the tools found to ``selected_tool_ids`` in the graph state, and the
model is bound to those from its next step.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Annotated, Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command
from typing_extensions import NotRequired

from toolsurface.adapters.langchain.bigtool import BigtoolRetriever, IdPolicy
from toolsurface.adapters.langchain.convert import LangChainToolLike
from toolsurface.admission.text import quoted_name

__all__ = ["BigtoolMiddleware", "BigtoolState", "create_bigtool_agent"]


def _add_new(left: list[str] | None, right: list[str] | None) -> list[str]:
    """Extend ``left`` with the ids of ``right`` it does not hold yet (bigtool's reducer)."""
    out = list(left or ())
    out += [i for i in dict.fromkeys(right or ()) if i not in out]
    return out


class BigtoolState(AgentState[Any]):
    """The agent's state with bigtool's ``selected_tool_ids``: every id retrieved so far."""

    selected_tool_ids: NotRequired[Annotated[list[str], _add_new]]


class BigtoolMiddleware(AgentMiddleware[BigtoolState, Any, Any]):
    """Bind the model to ``retrieve_tools`` and the tools it retrieved; run only those.

    ``retrieve_tools`` is answered here, as bigtool answers it (``Available tools: [...]``),
    and its ids join ``selected_tool_ids``. A call of any other tool runs through LangChain's
    tool node only if the tool was retrieved and is still admitted; otherwise it is answered
    with an error and never runs, so an unadmitted tool is never run nor named.
    """

    state_schema = BigtoolState

    def __init__(self, retriever: BigtoolRetriever) -> None:
        self.retriever = retriever
        self.retrieve_tool = StructuredTool.from_function(
            func=retriever.function, coroutine=retriever.coroutine
        )
        self.tools: Sequence[BaseTool] = [self.retrieve_tool]

    def selected(self, state: Mapping[str, Any]) -> list[BaseTool]:
        """The tools retrieved so far that are still admitted, in the order they were found."""
        ids = state.get("selected_tool_ids") or ()
        return [self.retriever.tools[i] for i in ids if self.retriever.admits(i)]

    def _request(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        builtins = [t for t in request.tools if isinstance(t, dict)]
        selected = self.selected(request.state)
        return request.override(tools=[*builtins, self.retrieve_tool, *selected])

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send ``retrieve_tools`` and the tools retrieved so far, nothing else."""
        return handler(self._request(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """The async form of :meth:`wrap_model_call`."""
        return await handler(self._request(request))

    def _answer(self, request: ToolCallRequest) -> ToolMessage | Command[Any] | None:
        """The answer to a retrieval or a refused call; ``None`` when the call may run."""
        call = request.tool_call
        name, call_id = call.get("name"), call.get("id") or ""
        if name == self.retrieve_tool.name:
            query = (call.get("args") or {}).get("query")
            if not isinstance(query, str):
                return ToolMessage(
                    "retrieve_tools needs a 'query' string: what the tool should do.",
                    name=name,
                    tool_call_id=call_id,
                    status="error",
                )
            ids = self.retriever.retrieve(query)
            names = [self.retriever.tools[i].name for i in ids]
            found = ToolMessage(f"Available tools: {names}", name=name, tool_call_id=call_id)
            return Command(update={"messages": [found], "selected_tool_ids": ids})
        if any(t.name == name for t in self.selected(request.state)):
            return None
        # What the model wrote is quoted cut and with its invisible characters escaped, as
        # admission quotes an unknown name; a name that is no string is not turned into one.
        shown = quoted_name(name, 128) if isinstance(name, str) else "a name that is no string"
        return ToolMessage(
            f"Not run: {shown} is not among the tools you retrieved. Call "
            f"{self.retrieve_tool.name} with what the job needs first.",
            name=name if isinstance(name, str) else "",
            tool_call_id=call_id,
            status="error",
        )

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer ``retrieve_tools``; run a retrieved tool; refuse any other."""
        answer = self._answer(request)
        return handler(request) if answer is None else answer

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of :meth:`wrap_tool_call`."""
        answer = self._answer(request)
        return await handler(request) if answer is None else answer


def create_bigtool_agent(
    model: str | BaseChatModel,
    tool_registry: Mapping[str, LangChainToolLike],
    *,
    limit: int = 2,
    admitted: IdPolicy = None,
    retriever: BigtoolRetriever | None = None,
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    **agent_options: Any,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A bigtool agent over ``tool_registry`` (tool id -> tool) that runs what it retrieves.

    ``langgraph_bigtool.create_agent(llm, tool_registry, retrieve_tools_function=...)``
    with toolsurface's retrieval, as a compiled LangChain agent: ``limit`` ids per query,
    ``admitted`` the ids that may be retrieved and run (or pass a :class:`BigtoolRetriever`
    built over the same registry). ``middleware`` runs after the bigtool step;
    ``agent_options`` go to ``create_agent`` (``system_prompt``, ``checkpointer``, ...).
    The result's ``selected_tool_ids`` lists what was retrieved, as bigtool's does.

    >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    >>> from langchain_core.messages import AIMessage
    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str) -> str:
    ...     '''Get the weather forecast for a city.'''
    ...     return f"Sunny in {city}."
    >>> class Scripted(GenericFakeChatModel):  # a stand-in for a chat model
    ...     def bind_tools(self, tools, **kwargs):
    ...         return self
    >>> def call(name, args):
    ...     return AIMessage("", tool_calls=[{"name": name, "args": args, "id": name}])
    >>> model = Scripted(messages=iter([
    ...     call("retrieve_tools", {"query": "weather forecast"}),
    ...     call("get_weather", {"city": "Oslo"}),
    ...     "It is sunny in Oslo.",
    ... ]))
    >>> agent = create_bigtool_agent(model, {"wx": get_weather})
    >>> result = agent.invoke({"messages": [("user", "Weather in Oslo?")]})
    >>> result["selected_tool_ids"]
    ['wx']
    >>> [m.text for m in result["messages"] if m.type == "tool"]
    ["Available tools: ['get_weather']", 'Sunny in Oslo.']
    """
    if retriever is None:
        retriever = BigtoolRetriever(tool_registry, limit=limit, admitted=admitted)
    elif set(retriever.tools) != set(tool_registry):
        raise ValueError("the retriever was built over other tool ids than tool_registry")
    step = BigtoolMiddleware(retriever)
    tools = list(retriever.tools.values())
    return create_agent(model, tools, middleware=[step, *middleware], **agent_options)
