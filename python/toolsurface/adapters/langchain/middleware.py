"""The agent middleware: toolsurface's surface inside ``langchain.agents.create_agent``.

:class:`ToolSurfaceMiddleware`, an ``AgentMiddleware`` (langchain >= 1.0): each model call
gets the surface's planned tools (ToolSearch included while anything is held back) and the
catalogue block in its system prompt; every tool call of a model message goes through call
admission, and refused calls are answered with the surface's text instead of running.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from toolsurface.adapters.langchain.convert import LangChainToolLike, convert_tools
from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.admission.admit import ToolCall, Verdict
from toolsurface.surface.surface import ToolSurface
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, tool_search_tool

__all__ = ["SurfaceSource", "ToolSurfaceMiddleware"]

_log = logging.getLogger("toolsurface.adapters.langchain")

#: One surface for every conversation, or a factory called once per LangGraph thread id.
SurfaceSource: TypeAlias = "ToolSurface | Callable[[str], ToolSurface]"
#: What a model-call handler may hand back (``AIMessage`` and the extended form included).
_ModelResult: TypeAlias = "ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]"


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
            if verdict is None or (verdict.asked_name or verdict.call.name) != wanted.name:
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

    def _exact(self, request: ToolCallRequest, verdict: Verdict) -> ToolCallRequest:
        """The request as admission corrected it: a name in another case runs the exact tool."""
        if not verdict.asked_name:
            return request
        exact = verdict.call.name
        call = request.tool_call.copy()
        call["name"] = exact
        return dataclasses.replace(request.override(tool_call=call), tool=self._by_name.get(exact))

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
        if verdict.call.name == self.discovery_tool:
            return self._search(run, call)
        return self._after_run(run, verdict, handler(self._exact(request, verdict)))

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
        if verdict.call.name == self.discovery_tool:
            return self._search(run, call)
        return self._after_run(run, verdict, await handler(self._exact(request, verdict)))

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
