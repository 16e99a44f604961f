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

import logging
import threading
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools import tool as as_langchain_tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command
from pydantic import ValidationError

from toolsurface import (
    TOOL_SEARCH_NAME,
    Tool,
    ToolDefinitionError,
    ToolRegistry,
    ToolSurface,
    ToolsurfaceError,
    tool_search_tool,
)
from toolsurface.dispatch import ToolCall, Verdict

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

_log = logging.getLogger("toolsurface.adapters.langchain")

#: What the converter takes: a LangChain tool, or a function ``@tool`` would take.
LangChainToolLike: TypeAlias = "BaseTool | Callable[..., Any]"
#: One surface for every conversation, or a factory called once per LangGraph thread id.
SurfaceSource: TypeAlias = "ToolSurface | Callable[[str], ToolSurface]"
#: What a model-call handler may hand back (``AIMessage`` and the extended form included).
_ModelResult: TypeAlias = "ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]"
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class LangChainAdapterError(ToolsurfaceError):
    """The adapter cannot do what it was asked; the message names the tool at fault."""


# -- conversion -------------------------------------------------------------------------------


def as_base_tool(tool: LangChainToolLike, *, where: str = "") -> BaseTool:
    """``tool`` as a LangChain ``BaseTool``: returned as is, or a callable wrapped by ``@tool``.

    A callable needs a docstring (LangChain's rule for a description); anything else is a
    ``TypeError`` naming what was given and where.
    """
    if isinstance(tool, BaseTool):
        return tool
    at = f" ({where})" if where else ""
    if not callable(tool):
        raise TypeError(f"expected a LangChain tool or a function{at}, got {type(tool).__name__}")
    label = getattr(tool, "__name__", type(tool).__name__)
    try:
        wrapped = as_langchain_tool(tool)
    except ValueError as exc:  # LangChain refuses a function without a docstring
        raise LangChainAdapterError(f"function {label!r}{at}: {exc}") from exc
    if not isinstance(wrapped, BaseTool):  # pragma: no cover - @tool on a callable is a tool
        raise TypeError(f"@tool did not make a tool of {label!r}{at}")
    return wrapped


def _parameters(tool: BaseTool) -> dict[str, Any]:
    """The JSON Schema of the arguments the model sends: what LangChain binds to a model.

    ``convert_to_openai_tool`` reads ``tool_call_schema``, which leaves out injected
    arguments (``InjectedToolCallId``, ``ToolRuntime``, state and store): the model never
    sends those, so they must not be indexed or advertised.
    """
    try:
        function = convert_to_openai_tool(tool)["function"]
    except Exception as exc:  # LangChain raises several types for schemas it cannot read
        raise LangChainAdapterError(
            f"LangChain tool {tool.name!r}: its argument schema cannot be read as JSON "
            f"Schema ({type(exc).__name__}: {exc})"
        ) from exc
    parameters = function.get("parameters")
    return dict(parameters) if isinstance(parameters, Mapping) else dict(_EMPTY_SCHEMA)


def to_toolsurface(
    tool: LangChainToolLike, *, group: str | None = None, search_hint: str = ""
) -> Tool:
    """A toolsurface :class:`~toolsurface.Tool` for a LangChain tool: name, description, schema.

    The schema is the one the model is sent (injected arguments left out). A name outside
    MCP's rule (1 to 128 of letters, digits, ``_``, ``-``, ``.``), or any other field
    toolsurface refuses, raises :class:`~toolsurface.ToolDefinitionError` naming the tool.

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def get_weather(city: str, days: int = 1) -> str:
    ...     '''Get the weather forecast for a city.'''
    ...     return "sunny"
    >>> converted = to_toolsurface(get_weather, group="weather")
    >>> converted.name, converted.group, converted.input_schema["required"]
    ('get_weather', 'weather', ['city'])
    >>> sorted(converted.input_schema["properties"])
    ['city', 'days']
    """
    base = as_base_tool(tool)
    name = base.name
    description = base.description if isinstance(base.description, str) else ""
    try:
        return Tool(
            name=name,
            description=description,
            input_schema=_parameters(base),
            group=group,
            search_hint=search_hint,
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "tool"
        raise ToolDefinitionError(
            f"LangChain tool {name!r}: {where}: {first.get('msg', exc)}", tool=name, field=where
        ) from None


@dataclass(frozen=True)
class ConvertedTools:
    """LangChain tools converted for toolsurface, and the map back to each LangChain tool."""

    tools: tuple[Tool, ...]
    by_name: Mapping[str, BaseTool]

    def __getitem__(self, name: str) -> BaseTool:
        """The LangChain tool behind a toolsurface name; an unknown name raises ``KeyError``."""
        try:
            return self.by_name[name]
        except KeyError:
            raise KeyError(f"no LangChain tool named {name!r} was converted") from None

    def __len__(self) -> int:
        """How many tools were converted."""
        return len(self.tools)


def convert_tools(
    tools: Iterable[LangChainToolLike],
    *,
    group: str | Callable[[BaseTool], str | None] | None = None,
) -> ConvertedTools:
    """Convert many LangChain tools; ``group`` is one group for all, or a function of the tool.

    Two tools of one name are refused (``LangChainAdapterError`` naming both items): the
    model calls tools by name, so one of them could never run.

    >>> from langchain_core.tools import tool
    >>> @tool
    ... def read_file(path: str) -> str:
    ...     '''Read a text file of the workspace.'''
    ...     return ""
    >>> converted = convert_tools([read_file], group="files")
    >>> converted["read_file"] is read_file, converted.tools[0].group
    (True, 'files')
    """
    out: list[Tool] = []
    by_name: dict[str, BaseTool] = {}
    place: dict[str, int] = {}
    for i, item in enumerate(tools):
        base = as_base_tool(item, where=f"item {i}")
        if base.name in place:
            raise LangChainAdapterError(
                f"two LangChain tools are named {base.name!r} (items {place[base.name]} and "
                f"{i}): the model calls tools by name, so one of them could never run"
            )
        chosen = group(base) if callable(group) else group
        out.append(to_toolsurface(base, group=chosen))
        by_name[base.name] = base
        place[base.name] = i
    return ConvertedTools(tuple(out), by_name)


def register_langchain_tools(
    registry: ToolRegistry,
    tools: Iterable[LangChainToolLike],
    *,
    group: str | Callable[[BaseTool], str | None] | None = None,
    replace: bool = False,
) -> ConvertedTools:
    """Convert LangChain tools and register them in ``registry`` (all or none, as a batch)."""
    converted = convert_tools(tools, group=group)
    registry.register_many(converted.tools, replace=replace, where="LangChain tools")
    return converted


def from_toolsurface(
    tool: Tool,
    func: Callable[..., Any] | None = None,
    *,
    coroutine: Callable[..., Awaitable[Any]] | None = None,
) -> StructuredTool:
    """A LangChain ``StructuredTool`` with a toolsurface tool's name, description and schema.

    For a host whose tools come from a catalogue (an MCP ``tools/list``, a saved file): the
    JSON Schema is bound to the model as it is, and ``func`` (or ``coroutine``) receives the
    model's arguments as keyword arguments.

    >>> from toolsurface import Tool
    >>> t = Tool(name="ping", description="Ping a host.", input_schema={
    ...     "type": "object", "properties": {"host": {"type": "string"}}, "required": ["host"]})
    >>> ping = from_toolsurface(t, lambda host: f"{host} is up")
    >>> ping.invoke({"host": "db1"})
    'db1 is up'
    """
    if func is None and coroutine is None:
        raise TypeError(f"from_toolsurface({tool.name!r}): give func, coroutine or both")
    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=tool.input_schema,  # a JSON Schema dict: LangChain sends it as is
        func=func,
        coroutine=coroutine,
    )


# -- the agent middleware ---------------------------------------------------------------------


@dataclass
class _Run:
    """One conversation's surface, its lock, and the verdicts of its last model message."""

    surface: ToolSurface
    # The tool node runs a message's calls concurrently (one task each, sync ones on
    # threads); ToolSurface is a state machine with no lock of its own.
    lock: threading.RLock = field(default_factory=threading.RLock)
    verdicts: dict[str, Verdict] = field(default_factory=dict)


def _thread_id(config: Mapping[str, Any] | None = None) -> str:
    """The LangGraph thread id of the running graph ("" outside one, or with none set)."""
    if config is None:
        try:
            config = get_config()
        except RuntimeError:  # not inside a runnable context
            return ""
    configurable = config.get("configurable") or {}
    value = configurable.get("thread_id")
    return "" if value is None else str(value)


class ToolSurfaceMiddleware(AgentMiddleware[AgentState[Any], Any, Any]):
    """Give a ``create_agent`` agent toolsurface's surface: planned tools, catalogue, admission.

    ``tools`` are the LangChain implementations of every tool the surface's registry may
    advertise (register them with :func:`register_langchain_tools`). The middleware hands
    them all, and a ``ToolSearch`` tool, to the agent (``middleware.tools``), so the tool
    node can run a tool loaded late in the run; pass them here, not to ``create_agent``.
    ``surface`` is one :class:`~toolsurface.ToolSurface` (one conversation) or a factory
    called with each LangGraph thread id the first time it is seen, so that each thread has
    a run of its own (a factory is where a host restores a stored snapshot).

    The hooks it uses:

    - ``wrap_model_call`` / ``awrap_model_call``: plans the request; the model gets the
      plan's tools in the plan's order (a provider's built-in tools, given as dicts, stay
      first) and ``plan.system_text(base)`` as its system prompt. Then every tool call of
      the model's message goes through ``surface.admit`` at once (the call cap and the group
      rules are per message).
    - ``wrap_tool_call`` / ``awrap_tool_call``: a refused call is answered with the
      surface's text as an error ``ToolMessage`` and never runs; ``ToolSearch`` is answered
      by ``surface.tool_search`` (its loads reach the next model call); any other allowed
      call runs the real tool. A blind call that fails on its arguments gets the tool's line.
    - ``after_agent``: the end of a user turn, ``surface.end_turn()``.
    """

    def __init__(
        self,
        tools: Iterable[LangChainToolLike],
        surface: SurfaceSource,
        *,
        discovery_tool: str = TOOL_SEARCH_NAME,
    ) -> None:
        converted = convert_tools(tools)
        if discovery_tool in converted.by_name:
            raise LangChainAdapterError(
                f"a LangChain tool is named {discovery_tool!r}: the middleware provides that "
                "tool itself (it answers from the surface); leave it out of tools"
            )
        self._by_name: dict[str, BaseTool] = dict(converted.by_name)
        self._source = surface
        self._runs: dict[str, _Run] = {}
        self._runs_lock = threading.Lock()
        self._dropped: set[str] = set()
        self.discovery_tool = discovery_tool
        definition = tool_search_tool(discovery_tool)
        self.tool_search = StructuredTool(
            name=definition.name,
            description=definition.description,
            args_schema=definition.input_schema,
            func=self._tool_search_outside,
        )
        self.tools: Sequence[BaseTool] = [*self._by_name.values(), self.tool_search]
        if isinstance(surface, ToolSurface):
            self._check(surface, "")

    def _check(self, surface: ToolSurface, thread_id: str) -> None:
        """Refuse a surface that could advertise or admit a tool the middleware cannot run.

        Checked when the surface is first seen, so a missing implementation is a clear
        error before the agent starts rather than a failure halfway through a run.
        """
        missing = [
            n
            for n in surface.registry.names()
            if n != self.discovery_tool and n not in self._by_name and surface.admits(n)
        ]
        if missing:
            shown = ", ".join(repr(n) for n in missing[:3])
            more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
            at = f" (thread {thread_id!r})" if thread_id else ""
            raise LangChainAdapterError(
                f"the surface{at} admits {len(missing)} tools with no LangChain tool given to "
                f"ToolSurfaceMiddleware: {shown}{more}; pass every tool the run may call"
            )

    # -- runs -----------------------------------------------------------------------------

    def surface_for(self, thread_id: str = "") -> ToolSurface:
        """The surface of a LangGraph thread ("" for calls made with no thread id)."""
        return self._run(thread_id).surface

    def forget(self, thread_id: str) -> bool:
        """Drop a thread's surface (a factory makes a fresh one if it comes back)."""
        with self._runs_lock:
            return self._runs.pop(thread_id, None) is not None

    def _run(self, thread_id: str | None = None) -> _Run:
        key = _thread_id() if thread_id is None else thread_id
        with self._runs_lock:
            run = self._runs.get(key)
            if run is None:
                source = self._source
                surface = source if isinstance(source, ToolSurface) else source(key)
                if not isinstance(surface, ToolSurface):
                    raise TypeError(
                        f"the surface factory returned {type(surface).__name__} for thread "
                        f"{key!r}, not a ToolSurface"
                    )
                if surface is not source:
                    self._check(surface, key)
                run = self._runs[key] = _Run(surface)
            return run

    # -- the model call -------------------------------------------------------------------

    def _langchain_tool(self, name: str) -> BaseTool:
        if name == self.discovery_tool:
            return self.tool_search
        tool = self._by_name.get(name)
        if tool is None:
            raise LangChainAdapterError(
                f"the surface advertises {name!r}, but no LangChain tool of that name was "
                "given to ToolSurfaceMiddleware: pass every tool of the registry in tools"
            )
        return tool

    def _system_message(self, current: SystemMessage | None, catalogue: str) -> SystemMessage:
        """The request's system message with the catalogue block after it.

        A string system prompt goes through ``plan.system_text`` semantics (a blank line,
        then the block); content blocks (cache markers, say) are kept and the block is
        added as one more text block, so the base keeps its bytes either way.
        """
        if current is None:
            return SystemMessage(content=catalogue)
        content = current.content
        if isinstance(content, str):
            text = f"{content}\n\n{catalogue}" if content else catalogue
            return current.model_copy(update={"content": text})
        blocks = [*content, {"type": "text", "text": catalogue}]
        return current.model_copy(update={"content": blocks})

    def _prepare(self, run: _Run, request: ModelRequest[Any]) -> ModelRequest[Any]:
        """The request with the plan's tools and the catalogue in the system prompt."""
        with run.lock:
            plan = run.surface.plan()
            run.verdicts.clear()  # the previous message's calls have all been answered
        planned = [self._langchain_tool(n) for n in plan.names]
        builtins = [t for t in request.tools if isinstance(t, dict)]
        for t in request.tools:
            if isinstance(t, BaseTool) and t.name not in self._by_name and t.name not in plan.names:
                self._warn_dropped(t.name)
        tools: list[BaseTool | dict[str, Any]] = [*builtins, *planned]
        if not plan.catalogue:
            return request.override(tools=tools)
        system = self._system_message(request.system_message, plan.catalogue)
        return request.override(tools=tools, system_message=system)

    def _warn_dropped(self, name: str) -> None:
        if name not in self._dropped:
            self._dropped.add(name)
            _log.warning(
                "toolsurface: LangChain tool %r was given to create_agent but not to "
                "ToolSurfaceMiddleware: the surface does not know it, so it is not sent",
                name,
            )

    def _admit(self, run: _Run, request: ModelRequest[Any], result: _ModelResult) -> None:
        """Admit every tool call of the model's message at once, keeping a verdict per id."""
        if isinstance(result, ExtendedModelResponse):
            result = result.model_response
        messages = result.result if isinstance(result, ModelResponse) else [result]
        ai = [m for m in messages if isinstance(m, AIMessage) and m.tool_calls]
        if not ai:
            return
        # Structured-output tools are answered by the agent itself, never by the tool node.
        structured = {s.name for s in getattr(request.response_format, "schema_specs", ())}
        calls = [
            ToolCall(c["name"], c["args"], c.get("id") or "")
            for c in ai[-1].tool_calls
            if c["name"] not in structured
        ]
        with run.lock:
            verdicts = run.surface.admit(calls)
            run.verdicts = {v.call.id: v for v in verdicts if v.call.id}

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send the plan's tools and catalogue; admit the calls of the model's answer."""
        run = self._run()
        prepared = self._prepare(run, request)
        response = handler(prepared)
        self._admit(run, prepared, response)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """The async form of :meth:`wrap_model_call` (the lock is never held across await)."""
        run = self._run()
        prepared = self._prepare(run, request)
        response = await handler(prepared)
        self._admit(run, prepared, response)
        return response

    # -- the tool calls -------------------------------------------------------------------

    def _verdict(self, run: _Run, call: Mapping[str, Any]) -> Verdict:
        """The verdict of a call of the last message; one not seen there is admitted alone."""
        name = call.get("name")
        name = name if isinstance(name, str) else ""  # admission refuses it as unknown
        wanted = ToolCall(name, call.get("args"), call.get("id") or "")
        with run.lock:
            verdict = run.verdicts.pop(wanted.id, None) if wanted.id else None
            # A call another middleware added or renamed after the model answered (a human
            # review, say), or one resumed in a process that never saw the message, is
            # admitted alone.
            if verdict is None or verdict.call.name != wanted.name:
                verdict = run.surface.admit([wanted])[0]
        return verdict

    def _refusal(self, call: Mapping[str, Any], verdict: Verdict) -> ToolMessage:
        return ToolMessage(
            content=verdict.message,
            name=str(call.get("name") or ""),
            tool_call_id=call.get("id") or "",
            status="error",
            response_metadata={"toolsurface": {"not_run": verdict.not_run}},
        )

    def _search(self, run: _Run, call: Mapping[str, Any]) -> ToolMessage:
        with run.lock:
            result = run.surface.tool_search(call.get("args"))
        return ToolMessage(
            content=result.text,
            name=self.discovery_tool,
            tool_call_id=call.get("id") or "",
            status="error" if result.refused else "success",
            response_metadata={"toolsurface": result.metadata},
        )

    def _tool_search_outside(self, **arguments: Any) -> str:
        """ToolSearch run outside the middleware's tool hook (invoked directly, say)."""
        run = self._run()
        with run.lock:
            return run.surface.tool_search(arguments).text

    def _after_run(
        self, run: _Run, verdict: Verdict, result: ToolMessage | Command[Any]
    ) -> ToolMessage | Command[Any]:
        """A blind call's argument failure ends with the tool's line, so the retry is no guess.

        The tool node turns a failure to validate the arguments into an error ToolMessage
        (any other exception propagates), so an error message here is an argument failure.
        """
        if verdict.blind and isinstance(result, ToolMessage) and result.status == "error":
            with run.lock:
                text = run.surface.failure_text(verdict, result.text, argument_error=True)
            return result.model_copy(update={"content": text})
        return result

    def _tool_run(self, request: ToolCallRequest) -> _Run:
        runtime = getattr(request, "runtime", None)
        config = getattr(runtime, "config", None)
        return self._run(_thread_id(config) if isinstance(config, Mapping) else None)

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer a refused call with the surface's text; run ToolSearch and allowed calls."""
        run = self._tool_run(request)
        call = request.tool_call
        verdict = self._verdict(run, call)
        if not verdict.runs:
            return self._refusal(call, verdict)
        if call["name"] == self.discovery_tool:
            return self._search(run, call)
        return self._after_run(run, verdict, handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of :meth:`wrap_tool_call`."""
        run = self._tool_run(request)
        call = request.tool_call
        verdict = self._verdict(run, call)
        if not verdict.runs:
            return self._refusal(call, verdict)
        if call["name"] == self.discovery_tool:
            return self._search(run, call)
        return self._after_run(run, verdict, await handler(request))

    # -- turn boundaries ------------------------------------------------------------------

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The user's turn is over: a safe point for the surface to unload over its caps."""
        run = self._run()
        with run.lock:
            run.surface.end_turn()
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """The async form of :meth:`after_agent`."""
        return self.after_agent(state, runtime)


# -- langgraph-bigtool ------------------------------------------------------------------------

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

    Then ``langgraph_bigtool.create_agent(llm, tool_registry,
    retrieve_tools_function=retriever.function,
    retrieve_tools_coroutine=retriever.coroutine)``.
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
        tools: list[Tool] = []
        for tool_id, item in tool_registry.items():
            base = as_base_tool(item, where=f"tool id {tool_id!r}")
            if base.name in self._id_of:
                raise LangChainAdapterError(
                    f"tool ids {self._id_of[base.name]!r} and {tool_id!r} both hold a tool "
                    f"named {base.name!r}: bigtool binds tools by name, so give each its own"
                )
            self._id_of[base.name] = tool_id
            tools.append(to_toolsurface(base))
        self.registry.register_many(tools, where="bigtool tool_registry")
        self.function = self._make_function()
        self.coroutine = self._make_coroutine()

    def _admits(self, tool_id: str) -> bool:
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
            admitted = [n for n, i in self._id_of.items() if self._admits(i)]
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
