"""The agent middleware: toolsurface's surface inside ``langchain.agents.create_agent``.

:class:`ToolSurfaceMiddleware`, an ``AgentMiddleware`` (langchain >= 1.2.9), in one line over
the agent's own tools (``create_agent(model, tools, middleware=[ToolSurfaceMiddleware()])``)
or over a host's registry and surface: each model call gets the surface's planned tools
(ToolSearch included while anything is held back) and the catalogue block in its system
prompt; every tool call of a model message goes through call admission, and refused calls
are answered with the surface's text instead of running.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.types import Command

from toolsurface.adapters.langchain.agent_tools import (
    AgentTools,
    GroupRule,
    default_limits,
    tools_key,
)
from toolsurface.adapters.langchain.convert import LangChainToolLike, convert_tools
from toolsurface.adapters.langchain.errors import LangChainAdapterError
from toolsurface.admission.admit import ToolCall, Verdict
from toolsurface.surface.limits import SurfaceLimits
from toolsurface.surface.policy import Policy, admits
from toolsurface.surface.surface import ToolSurface
from toolsurface.tools.toolsearch import TOOL_SEARCH_NAME, tool_search_tool

__all__ = ["SurfaceSource", "ToolSurfaceMiddleware"]

_log = logging.getLogger("toolsurface.adapters.langchain")

#: One surface for every conversation, or a factory called once per LangGraph thread id.
SurfaceSource: TypeAlias = "ToolSurface | Callable[[str], ToolSurface]"
#: What a model-call handler may hand back (``AIMessage`` and the extended form included).
_ModelResult: TypeAlias = "ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]"
#: How many tool lists the one-line form keeps built: a middleware shared by a few agents
#: (or a selector before it that alternates lists) does not rebuild on every call.
_TOOL_SETS_KEPT = 4
#: The answer to a call when the one-line form has seen no model call, so no tool list.
_NO_RUN_YET = (
    "Not run: the tool list of this conversation is not known yet; ask for the tool again "
    "in your next step."
)


@dataclass
class _Run:
    """One conversation's surface, its lock, and the verdicts of its last model message."""

    surface: ToolSurface
    #: The LangChain tool of each registry name the run may call.
    by_name: Mapping[str, BaseTool]
    #: The agent's tools the run was built over (the one-line form), else ``None``.
    tool_set: AgentTools | None = None
    # The tool node runs a message's calls concurrently (one task each, sync ones on
    # threads); ToolSurface is a state machine with no lock of its own.
    lock: threading.RLock = field(default_factory=threading.RLock)
    #: By call id, in the message's order: a model may give two calls one id, or none.
    verdicts: dict[str, list[Verdict]] = field(default_factory=dict)


def _last_user_text(messages: Sequence[Any]) -> str | None:
    """The text of the conversation's last user message (what the per-message clip ranks by)."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return message.text
    return None


def _take(verdicts: list[Verdict] | None, call: ToolCall) -> Verdict | None:
    """The verdict of ``call`` among those of its id, taken out: its name, then its arguments.

    The first of the id's verdicts for that name and those arguments, else the first for
    that name: two calls sharing an id each take one verdict, so none is run twice or past
    the message's cap.
    """
    if not verdicts:
        return None
    named = [i for i, v in enumerate(verdicts) if (v.asked_name or v.call.name) == call.name]
    for i in named:
        if verdicts[i].call.arguments == call.arguments:
            return verdicts.pop(i)
    return verdicts.pop(named[0]) if named else None


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

    In one line, over the agent's own tools::

        agent = create_agent(model, tools, middleware=[ToolSurfaceMiddleware()])

    On its first model call the middleware builds a registry of the tools ``create_agent``
    was given (:class:`~toolsurface.adapters.langchain.agent_tools.AgentTools`): a tool
    named ``server__tool`` joins the group ``server`` (``group=`` gives another rule: one
    name, or a function of the LangChain tool), groups are held back past the budget and
    found with ``ToolSearch``. The budget is ``limits``, by default a quarter of the model's
    window (its LangChain profile's ``max_input_tokens``, else 128,000) and at most 128
    tools. Each LangGraph thread gets a surface of its own (``policy`` applies to each).
    A changed tool list (another middleware's choice, say) builds a new registry, and the
    threads planned over the old one start afresh.

    The explicit form: ``tools`` are the LangChain implementations of every tool the
    surface's registry may advertise (register them with :func:`register_langchain_tools`).
    The middleware hands them all, and a ``ToolSearch`` tool, to the agent
    (``middleware.tools``), so the tool node can run a tool loaded late in the run; pass them
    here, not to ``create_agent``. ``surface`` is one :class:`~toolsurface.ToolSurface` (one
    conversation) or a factory called with each LangGraph thread id the first time it is
    seen, so that each thread has a run of its own (a factory is where a host restores a
    stored snapshot).

    The hooks it uses:

    - ``wrap_model_call`` / ``awrap_model_call``: plans the request (the last user message
      feeds the opt-in per-message clip, ``SurfaceLimits(retrieval_top_k=...)``); the model
      gets the plan's tools in the plan's order (a provider's built-in tools, given as
      dicts, stay first) and ``plan.system_text(base)`` as its system prompt. Then every
      tool call of the model's message goes through ``surface.admit`` at once (the call cap
      and the group rules are per message).
    - ``wrap_tool_call`` / ``awrap_tool_call``: a refused call is answered with the
      surface's text as an error ``ToolMessage`` and never runs; ``ToolSearch`` is answered
      by ``surface.tool_search`` (its loads reach the next model call); any other allowed
      call runs the real tool. A blind call that fails on its arguments gets the tool's line.
    - ``after_agent``: the end of a user turn, ``surface.end_turn()``.
    """

    def __init__(
        self,
        tools: Iterable[LangChainToolLike] | None = None,
        surface: SurfaceSource | None = None,
        *,
        group: GroupRule = None,
        limits: SurfaceLimits | None = None,
        policy: Policy = None,
        discovery_tool: str = TOOL_SEARCH_NAME,
    ) -> None:
        if (tools is None) != (surface is None):
            raise TypeError(
                "give ToolSurfaceMiddleware both tools and surface, or neither (then it "
                "works over the tools create_agent was given)"
            )
        self._one_line = tools is None
        if not self._one_line and (group is not None or limits is not None or policy is not None):
            raise TypeError(
                "group, limits and policy are for the one-line form, ToolSurfaceMiddleware(); "
                "with an explicit surface, set them on its registry and ToolSurface"
            )
        converted = convert_tools(tools or ())
        if discovery_tool in converted.by_name:
            raise LangChainAdapterError(
                f"a LangChain tool is named {discovery_tool!r}: the middleware provides that "
                "tool itself (it answers from the surface); leave it out of tools"
            )
        self._by_name: dict[str, BaseTool] = dict(converted.by_name)
        self._source = surface
        self._group = group
        self._limits = limits
        self._policy = policy
        self._tool_sets: OrderedDict[tuple[int, ...], AgentTools] = OrderedDict()
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
        """The surface of a LangGraph thread ("" for calls made with no thread id).

        In the one-line form a thread has a surface once its first model call was made;
        before that it is a ``LangChainAdapterError``.
        """
        run = self._run(thread_id)
        if run is None:
            raise LangChainAdapterError(
                f"thread {thread_id!r} has no surface yet: in the one-line form a thread's "
                "surface is made at its first model call, over the tools of that call"
            )
        return run.surface

    def forget(self, thread_id: str) -> bool:
        """Drop a thread's surface (a fresh one is made if it comes back)."""
        with self._runs_lock:
            return self._runs.pop(thread_id, None) is not None

    def _run(self, thread_id: str | None = None) -> _Run | None:
        """The thread's run; made from the surface source in the explicit form.

        In the one-line form only a model call makes a run (:meth:`_run_over`), so this is
        ``None`` for a thread that has not called the model yet.
        """
        key = _thread_id() if thread_id is None else thread_id
        with self._runs_lock:
            run = self._runs.get(key)
            if run is None and not self._one_line:
                source = self._source
                assert source is not None  # the explicit form has a surface source
                surface = source if isinstance(source, ToolSurface) else source(key)
                if not isinstance(surface, ToolSurface):
                    raise TypeError(
                        f"the surface factory returned {type(surface).__name__} for thread "
                        f"{key!r}, not a ToolSurface"
                    )
                if surface is not source:
                    self._check(surface, key)
                run = self._runs[key] = _Run(surface, self._by_name)
            return run

    def _tool_set(self, tools: Sequence[BaseTool]) -> AgentTools:
        """The registry of this tool list: kept from an earlier call, or built now."""
        key = tools_key(tools)
        with self._runs_lock:
            built = self._tool_sets.get(key)
            if built is not None:
                self._tool_sets.move_to_end(key)
                return built
        # Built outside the lock: converting and indexing 1,635 tools takes a while, and
        # two threads building the same list at once only waste work.
        built = AgentTools.build(tools, group=self._group, discovery_tool=self.discovery_tool)
        with self._runs_lock:
            self._tool_sets[key] = built
            while len(self._tool_sets) > _TOOL_SETS_KEPT:
                self._tool_sets.popitem(last=False)
        return built

    def _run_over(self, request: ModelRequest[Any]) -> _Run:
        """The run of the calling thread for this request's tools (the one-line form)."""
        own = [t for t in request.tools if isinstance(t, BaseTool) and t is not self.tool_search]
        tool_set = self._tool_set(own)
        key = _thread_id()
        with self._runs_lock:
            run = self._runs.get(key)
            if run is not None and run.tool_set is tool_set:
                return run
        limits = self._limits if self._limits is not None else default_limits(request.model)
        surface = ToolSurface(
            tool_set.registry,
            policy=self._policy,
            limits=limits,
            discovery_tool=self.discovery_tool,
            session_id=key or None,
        )
        run = _Run(surface, tool_set.by_name, tool_set)
        with self._runs_lock:
            self._runs[key] = run
        return run

    # -- the model call -------------------------------------------------------------------

    def _langchain_tool(self, run: _Run, name: str) -> BaseTool:
        if name == self.discovery_tool:
            return self.tool_search
        tool = run.by_name.get(name)
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
            plan = run.surface.plan(user_message=_last_user_text(request.messages))
            run.verdicts.clear()  # the previous message's calls have all been answered
        planned = [self._langchain_tool(run, n) for n in plan.names]
        builtins = [t for t in request.tools if isinstance(t, dict)]
        unmanaged: list[BaseTool] = []
        if run.tool_set is not None:
            unmanaged = list(self._unmanaged(run).values())
        else:
            for t in request.tools:
                name = t.name if isinstance(t, BaseTool) else None
                if name is not None and name not in run.by_name and name not in plan.names:
                    self._warn_dropped(name)
        tools: list[BaseTool | dict[str, Any]] = [*builtins, *planned, *unmanaged]
        if not plan.catalogue:
            return request.override(tools=tools)
        system = self._system_message(request.system_message, plan.catalogue)
        return request.override(tools=tools, system_message=system)

    def _unmanaged(self, run: _Run) -> Mapping[str, BaseTool]:
        """The tools toolsurface could not convert that the policy admits, by name.

        Sent on every request and run as without the middleware; one the policy blocks is
        never sent, and a call of it is refused as a name the surface does not know.
        """
        if run.tool_set is None:
            return {}
        passthrough = run.tool_set.passthrough
        return {n: t for n, t in passthrough.items() if admits(self._policy, None, n)}

    def _warn_dropped(self, name: str) -> None:
        if name not in self._dropped:
            self._dropped.add(name)
            _log.warning(
                "toolsurface: LangChain tool %r was given to create_agent but not to "
                "ToolSurfaceMiddleware: the surface does not know it, so it is not sent",
                name,
            )

    def _model_run(self, request: ModelRequest[Any]) -> _Run:
        """The run a model call plans with: the thread's, over the request's tools if one-line."""
        if self._one_line:
            return self._run_over(request)
        run = self._run()
        assert run is not None  # the explicit form makes a run for any thread
        return run

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
        # Unmanaged tools the policy admits run as they would without the middleware; one it
        # blocks is admitted as any name the surface does not know: refused as unknown.
        unmanaged = self._unmanaged(run)
        calls = [
            ToolCall(c["name"], c["args"], c.get("id") or "")
            for c in ai[-1].tool_calls
            if c["name"] not in structured and c["name"] not in unmanaged
        ]
        with run.lock:
            verdicts = run.surface.admit(calls)
            # Every verdict is kept, under its id: calls that share an id (or have none)
            # were counted against the message's cap together, and each takes its own.
            by_id: dict[str, list[Verdict]] = {}
            for v in verdicts:
                by_id.setdefault(v.call.id, []).append(v)
            run.verdicts = by_id

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """Send the plan's tools and catalogue; admit the calls of the model's answer."""
        run = self._model_run(request)
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
        run = self._model_run(request)
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
            verdict = _take(run.verdicts.get(wanted.id), wanted)
            # A call another middleware added or renamed after the model answered (a human
            # review, say), or one resumed in a process that never saw the message, is
            # admitted alone.
            if verdict is None:
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
        if run is None:
            return _NO_RUN_YET
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

    def _exact(self, run: _Run, request: ToolCallRequest, verdict: Verdict) -> ToolCallRequest:
        """The request as admission corrected it: a name in another case runs the exact tool."""
        if not verdict.asked_name:
            return request
        exact = verdict.call.name
        call = request.tool_call.copy()
        call["name"] = exact
        return dataclasses.replace(request.override(tool_call=call), tool=run.by_name.get(exact))

    def _tool_run(self, request: ToolCallRequest) -> _Run | None:
        runtime = getattr(request, "runtime", None)
        config = getattr(runtime, "config", None)
        thread_id = _thread_id(config) if isinstance(config, Mapping) else _thread_id()
        run = self._run(thread_id)
        if run is not None or not self._tool_sets:
            return run
        # One-line form, a thread whose model call this process never saw (resumed after an
        # interrupt, say): admitted over the latest tool list rather than run unchecked.
        tool_set = next(reversed(self._tool_sets.values()))
        limits = self._limits if self._limits is not None else default_limits(None)
        surface = ToolSurface(
            tool_set.registry,
            policy=self._policy,
            limits=limits,
            discovery_tool=self.discovery_tool,
            session_id=thread_id or None,
        )
        with self._runs_lock:
            return self._runs.setdefault(thread_id, _Run(surface, tool_set.by_name, tool_set))

    def _gate(self, request: ToolCallRequest) -> ToolMessage | tuple[_Run, Verdict] | None:
        """What becomes of a tool call: an answer now, or the run and verdict to run it.

        ``None`` is a tool toolsurface does not manage: it runs as it would without us.
        """
        run = self._tool_run(request)
        call = request.tool_call
        if run is None:  # one-line form, no tool list seen yet: nothing to admit against
            return ToolMessage(
                content=_NO_RUN_YET,
                name=str(call.get("name") or ""),
                tool_call_id=call.get("id") or "",
                status="error",
                response_metadata={"toolsurface": {"not_run": "no_surface"}},
            )
        if call.get("name") in self._unmanaged(run):
            return None
        verdict = self._verdict(run, call)
        if not verdict.runs:
            return self._refusal(call, verdict)
        if verdict.call.name == self.discovery_tool:
            return self._search(run, call)
        return run, verdict

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Answer a refused call with the surface's text; run ToolSearch and allowed calls."""
        gate = self._gate(request)
        if gate is None:
            return handler(request)
        if isinstance(gate, ToolMessage):
            return gate
        run, verdict = gate
        return self._after_run(run, verdict, handler(self._exact(run, request, verdict)))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """The async form of :meth:`wrap_tool_call`."""
        gate = self._gate(request)
        if gate is None:
            return await handler(request)
        if isinstance(gate, ToolMessage):
            return gate
        run, verdict = gate
        return self._after_run(run, verdict, await handler(self._exact(run, request, verdict)))

    # -- turn boundaries ------------------------------------------------------------------

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """The user's turn is over: a safe point for the surface to unload over its caps."""
        run = self._run()
        if run is None:  # one-line form, the model was never called this turn
            return None
        with run.lock:
            run.surface.end_turn()
        return None

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """The async form of :meth:`after_agent`."""
        return self.after_agent(state, runtime)
