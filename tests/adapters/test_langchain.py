"""The LangChain adapter: a create_agent agent over the surface, the converter, bigtool.

Every agent here is real (langchain's create_agent, langgraph's tool node) and driven by a
scripted fake chat model that records what each model call received: no network.
"""

from __future__ import annotations

import asyncio
import doctest
import importlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

import pytest

pytest.importorskip("langchain.agents", reason="needs the langchain extra: pip install langchain")

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, InjectedToolCallId, StructuredTool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

import toolsurface.adapters.langchain as adapter
from toolsurface import (
    TOOL_SEARCH_NAME,
    SurfaceLimits,
    Tool,
    ToolDefinitionError,
    ToolRegistry,
    ToolSurface,
    tool_search_tool,
)
from toolsurface.adapters.langchain import (
    BigtoolRetriever,
    LangChainAdapterError,
    ToolSurfaceMiddleware,
    convert_tools,
    create_bigtool_agent,
    from_toolsurface,
    register_langchain_tools,
    to_toolsurface,
)
from toolsurface.catalogue import demo_catalogue

ROOT = Path(__file__).resolve().parents[2]
SYSTEM = "You are an engineering assistant."
QUERY = "покажи открытые пулреквесты"
LIST_PRS = "github__list_pull_requests"


class ScriptedModel(GenericFakeChatModel):
    """A fake chat model that binds tools and records what each call was sent."""

    seen: list[dict[str, Any]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        system = messages[0].text if messages and messages[0].type == "system" else None
        names = [t["function"]["name"] for t in kwargs.get("tools") or ()]
        self.seen.append({"tools": names, "system": system, "messages": list(messages)})
        return super()._generate(messages, *args, **kwargs)


def calls(*pairs: tuple[str, dict[str, Any]], step: int = 0) -> AIMessage:
    """An AI message asking for tool calls, with ids unique to the step."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": n, "args": a, "id": f"call_{step}_{i}", "type": "tool_call"}
            for i, (n, a) in enumerate(pairs)
        ],
    )


def model(*script: AIMessage | str) -> ScriptedModel:
    return ScriptedModel(messages=iter(script))


class Host:
    """A registry over a catalogue, a recording stub LangChain tool per entry, the surface."""

    def __init__(self, catalogue: list[Tool], **surface: Any) -> None:
        self.registry = ToolRegistry()
        self.registry.register_many(catalogue)
        for prefix in sorted({t.name.split("__")[0] for t in catalogue if "__" in t.name}):
            self.registry.declare_group(prefix, prefix=f"{prefix}__", dynamic=True)
        self.registry.register(tool_search_tool())
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.tools = [from_toolsurface(t, self._stub(t.name)) for t in catalogue]
        self.surface = ToolSurface(self.registry, provider="openai", **surface)

    def _stub(self, name: str) -> Callable[..., str]:
        def run(**arguments: Any) -> str:
            self.ran.append((name, arguments))
            return f"{name} ran"

        return run

    def agent(self, fake: ScriptedModel, **kwargs: Any) -> Any:
        middleware = ToolSurfaceMiddleware(self.tools, self.surface)
        return create_agent(fake, middleware=[middleware], system_prompt=SYSTEM, **kwargs)


@pytest.fixture
def demo() -> Host:
    return Host(demo_catalogue())


def tool_messages(result: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in result["messages"] if isinstance(m, ToolMessage)]


def search_then_call(host: Host, run: Callable[[Any], dict[str, Any]]) -> None:
    fake = model(
        calls((TOOL_SEARCH_NAME, {"query": QUERY}), step=1),
        calls((LIST_PRS, {"owner": "acme", "repo": "api"}), step=2),
        "Открыты два пулреквеста.",
    )
    result = run(host.agent(fake))
    first, second, third = fake.seen
    # Before the search the PR tool is held back: the model sees ToolSearch, not it.
    assert TOOL_SEARCH_NAME in first["tools"]
    assert LIST_PRS not in first["tools"]
    assert "github" in first["system"]  # the catalogue names the held-back group
    search = tool_messages(result)[0]
    assert search.name == TOOL_SEARCH_NAME
    assert search.text.startswith("Loaded, callable from your next step:")
    assert f"- {LIST_PRS}(" in search.text
    # The load reaches the next model call, appended after the unchanged list.
    assert LIST_PRS in second["tools"]
    assert second["tools"][: len(first["tools"])] == first["tools"]
    assert second["system"] == first["system"]  # the catalogue block is byte-stable
    assert host.ran == [(LIST_PRS, {"owner": "acme", "repo": "api"})]
    assert tool_messages(result)[1].text == f"{LIST_PRS} ran"
    assert third["tools"] == second["tools"]
    assert result["messages"][-1].text == "Открыты два пулреквеста."


def test_demo_agent_searches_in_russian_then_calls_the_loaded_tool(demo: Host) -> None:
    search_then_call(demo, lambda agent: agent.invoke({"messages": [("user", QUERY)]}))


def test_demo_agent_async(demo: Host) -> None:
    search_then_call(
        demo, lambda agent: asyncio.run(agent.ainvoke({"messages": [("user", QUERY)]}))
    )


@pytest.mark.slow
def test_real_catalogue_agent(mcp_tools: list[Tool]) -> None:
    host = Host(mcp_tools)
    search_then_call(host, lambda agent: agent.invoke({"messages": [("user", QUERY)]}))
    assert len(host.registry) == 1636  # 1,635 real tools and ToolSearch
    plan = host.surface.plan()
    assert len(plan.names) < 128  # under OpenAI's tool limit, unlike all 1,635


def test_system_prompt_carries_the_catalogue_block(demo: Host) -> None:
    fake = model("Hello.")
    demo.agent(fake).invoke({"messages": [("user", "hi")]})
    plan = demo.surface.plan()
    assert plan.catalogue
    assert fake.seen[0]["system"] == plan.system_text(SYSTEM)
    assert fake.seen[0]["tools"] == list(plan.names)


def test_a_system_message_of_content_blocks_keeps_them(demo: Host) -> None:
    from langchain_core.messages import SystemMessage

    base = SystemMessage(content=[{"type": "text", "text": SYSTEM, "cache_control": {"x": 1}}])
    fake = model("Hello.")
    middleware = ToolSurfaceMiddleware(demo.tools, demo.surface)
    create_agent(fake, middleware=[middleware], system_prompt=base).invoke(
        {"messages": [("user", "hi")]}
    )
    sent = fake.seen[0]["messages"][0]
    assert sent.content[0] == base.content[0]
    assert sent.content[1] == {"type": "text", "text": demo.surface.plan().catalogue}


def test_a_factory_must_make_a_surface(demo: Host) -> None:
    middleware = ToolSurfaceMiddleware(demo.tools, lambda thread_id: None)
    with pytest.raises(TypeError, match="returned NoneType for thread 'x', not a ToolSurface"):
        middleware.surface_for("x")


def test_unknown_tool_is_refused_with_the_surfaces_text_and_nothing_runs(demo: Host) -> None:
    fake = model(calls(("github__list_pull_request", {"owner": "acme"}), step=1), "Sorry.")
    result = demo.agent(fake).invoke({"messages": [("user", QUERY)]})
    (refusal,) = tool_messages(result)
    assert refusal.status == "error"
    assert refusal.text.startswith(
        "Unknown tool 'github__list_pull_request': no such tool is available to you."
    )
    assert LIST_PRS in refusal.text  # the nearest admitted name
    assert refusal.response_metadata["toolsurface"] == {"not_run": "unknown"}
    assert demo.ran == []


def test_calls_past_the_cap_do_not_run() -> None:
    host = Host(demo_catalogue(), limits=SurfaceLimits(max_tool_calls_per_turn=2))
    args = {"owner": "acme", "repo": "api"}
    fake = model(calls(*[(LIST_PRS, args)] * 3, step=1), "Done.")
    result = host.agent(fake).invoke({"messages": [("user", QUERY)]})
    texts = [m.text for m in tool_messages(result)]
    assert len(host.ran) == 2
    assert texts[2].startswith("Not run: this message asked for 3 tool calls")


@pytest.mark.parametrize("ids", [["same"] * 5, [""] * 5, ["a", "b"] * 2 + ["a"]])
def test_calls_sharing_an_id_or_without_one_still_meet_the_cap(ids: list[str]) -> None:
    # A model may repeat a call id or leave it empty: each call still takes its own verdict
    # of the whole message's admission, so the cap holds and nothing runs twice.
    host = Host(demo_catalogue(), limits=SurfaceLimits(max_tool_calls_per_turn=2))
    message = AIMessage(
        content="",
        tool_calls=[
            {"name": LIST_PRS, "args": {"owner": "acme", "repo": f"r{i}"}, "id": i_d}
            for i, i_d in enumerate(ids)
        ],
    )
    result = host.agent(model(message, "Done.")).invoke({"messages": [("user", QUERY)]})
    refused = [m for m in tool_messages(result) if m.status == "error"]
    assert len(host.ran) == 2 and len(refused) == 3
    assert all(m.text.startswith("Not run: this message asked for 5 tool calls") for m in refused)


def test_blind_call_runs_and_is_loaded_for_the_next_call(demo: Host) -> None:
    fake = model(calls((LIST_PRS, {"owner": "acme", "repo": "api"}), step=1), "Done.")
    demo.agent(fake).invoke({"messages": [("user", QUERY)]})
    assert demo.ran == [(LIST_PRS, {"owner": "acme", "repo": "api"})]
    assert LIST_PRS not in fake.seen[0]["tools"]
    assert fake.seen[1]["tools"][-1] == LIST_PRS


def test_a_call_in_the_wrong_case_runs_the_exact_tool(demo: Host) -> None:
    fake = model(calls((LIST_PRS.upper(), {"owner": "acme", "repo": "api"}), step=1), "Done.")
    result = demo.agent(fake).invoke({"messages": [("user", QUERY)]})
    assert demo.ran == [(LIST_PRS, {"owner": "acme", "repo": "api"})]
    assert tool_messages(result)[0].text == f"{LIST_PRS} ran"
    assert fake.seen[1]["tools"][-1] == LIST_PRS  # loaded under its exact name


def test_blind_call_failing_on_its_arguments_gets_the_tools_line(demo: Host) -> None:
    ran: list[str] = []

    @tool
    def restart_service(service: str, force: bool = False) -> str:
        """Restart a service of the cluster. Its open connections are dropped."""
        ran.append(service)
        return "restarted"

    demo.registry.register(to_toolsurface(restart_service, group="ops"))
    demo.registry.declare_group("ops", load="lazy")  # held back while ToolSearch exists
    middleware = ToolSurfaceMiddleware([*demo.tools, restart_service], demo.surface)
    fake = model(calls(("restart_service", {"force": True}), step=1), "Sorry.")
    result = create_agent(fake, middleware=[middleware]).invoke({"messages": [("user", "x")]})
    (failure,) = tool_messages(result)
    assert failure.status == "error"
    assert failure.text.endswith(
        "It takes: restart_service(service*, force) — Restart a service of the cluster."
    )
    assert ran == []


def test_group_rules_come_before_a_blind_call_runs(demo: Host) -> None:
    demo.registry.undeclare_group("github")
    demo.registry.declare_group(
        "github", prefix="github__", dynamic=True, rules="Never merge without review."
    )
    args = {"owner": "acme", "repo": "api"}
    fake = model(
        calls((LIST_PRS, args), (LIST_PRS, args), step=1),
        calls((LIST_PRS, args), step=2),
        "Done.",
    )
    result = demo.agent(fake).invoke({"messages": [("user", QUERY)]})
    first, second, third = tool_messages(result)
    assert first.text.startswith(f"Not run yet: {LIST_PRS} belongs to the group github")
    assert "Never merge without review." in first.text
    assert first.response_metadata["toolsurface"] == {"not_run": "rules"}
    assert second.text.startswith("Not run: this call was written before the rules")
    assert third.text == f"{LIST_PRS} ran"  # after reading them, the call runs
    assert demo.ran == [(LIST_PRS, args)]
    assert LIST_PRS in fake.seen[1]["tools"]  # the whole group was loaded


def test_the_end_of_a_turn_lets_the_surface_unload_over_its_cap() -> None:
    host = Host(demo_catalogue(), limits=SurfaceLimits(max_loaded_entries=2))
    fake = model(calls((TOOL_SEARCH_NAME, {"query": QUERY}), step=1), "Found three.")
    host.agent(fake).invoke({"messages": [("user", QUERY)]})
    assert sum(s == LIST_PRS for s in fake.seen[1]["tools"]) == 1
    assert len([n for n in fake.seen[1]["tools"] if n.startswith("github__")]) == 3
    # after_agent ended the turn: a safe point, so the loads went down to half the cap.
    assert len(host.surface.loaded_entries()) == 1


def test_threads_get_surfaces_of_their_own(demo: Host) -> None:
    made: list[str] = []

    def factory(thread_id: str) -> ToolSurface:
        made.append(thread_id)
        return ToolSurface(demo.registry, provider="openai", session_id=thread_id)

    middleware = ToolSurfaceMiddleware(demo.tools, factory)
    fake = model(calls((TOOL_SEARCH_NAME, {"query": QUERY}), step=1), "a", "b")
    agent = create_agent(fake, middleware=[middleware], checkpointer=InMemorySaver())
    agent.invoke({"messages": [("user", QUERY)]}, {"configurable": {"thread_id": "t1"}})
    agent.invoke({"messages": [("user", "hi")]}, {"configurable": {"thread_id": "t2"}})
    assert made == ["t1", "t2"]
    assert LIST_PRS in middleware.surface_for("t1").last_plan_names()
    assert LIST_PRS not in fake.seen[2]["tools"]  # thread t2 loaded nothing
    assert middleware.forget("t2")


def test_middleware_refuses_a_surface_tool_it_cannot_run(demo: Host) -> None:
    with pytest.raises(LangChainAdapterError, match=r"admits 231 tools with no LangChain tool"):
        ToolSurfaceMiddleware(demo.tools[:5], demo.surface)
    # A tool registered after the agent was built fails the plan, naming it.
    middleware = ToolSurfaceMiddleware(demo.tools, demo.surface)
    demo.registry.register(Tool(name="late_tool", description="Registered late."))
    agent = create_agent(model("hi"), middleware=[middleware])
    with pytest.raises(LangChainAdapterError, match="advertises 'late_tool', but no LangChain"):
        agent.invoke({"messages": [("user", "hi")]})


def test_middleware_owns_tool_search(demo: Host) -> None:
    own = from_toolsurface(tool_search_tool(), lambda **kw: "")
    with pytest.raises(LangChainAdapterError, match="provides that tool itself"):
        ToolSurfaceMiddleware([own], demo.surface)


# -- the converter ------------------------------------------------------------------------------


def test_converter_keeps_the_model_facing_schema_and_a_name_map() -> None:
    @tool
    def create_issue(
        title: str, body: str = "", *, tool_call_id: Annotated[str, InjectedToolCallId]
    ) -> str:
        """Create a GitHub issue. The body is Markdown."""
        return tool_call_id

    def plain(city: str) -> str:
        """Get the weather for a city."""
        return city

    converted = convert_tools([create_issue, plain], group=lambda t: t.name.split("_")[0])
    issue, weather = converted.tools
    assert issue.name == "create_issue"
    assert issue.description == "Create a GitHub issue. The body is Markdown."
    assert sorted(issue.input_schema["properties"]) == ["body", "title"]  # injected id left out
    assert issue.input_schema["required"] == ["title"]
    assert issue.group == "create"
    assert weather.name == "plain" and weather.input_schema["required"] == ["city"]
    assert converted["create_issue"] is create_issue
    assert isinstance(converted["plain"], BaseTool)
    with pytest.raises(KeyError, match="no LangChain tool named 'nope'"):
        converted["nope"]


def test_converter_names_the_tool_at_fault() -> None:
    bad = StructuredTool.from_function(lambda: "", name="list open PRs", description="x")
    with pytest.raises(ToolDefinitionError, match="LangChain tool 'list open PRs': name"):
        to_toolsurface(bad)

    def undocumented(x: int) -> int:
        return x

    with pytest.raises(LangChainAdapterError, match=r"'undocumented' \(item 1\)"):
        convert_tools([bad.model_copy(update={"name": "ok"}), undocumented])
    with pytest.raises(TypeError, match=r"item 0\), got int"):
        convert_tools([3])  # type: ignore[list-item]
    twice = from_toolsurface(Tool(name="a"), lambda: "")
    with pytest.raises(LangChainAdapterError, match="two LangChain tools are named 'a'"):
        convert_tools([twice, twice])


def test_register_langchain_tools_makes_them_searchable() -> None:
    registry = ToolRegistry()
    stubs = [from_toolsurface(t, lambda **kw: "") for t in demo_catalogue()]
    converted = register_langchain_tools(registry, stubs)
    assert len(registry) == len(converted) == len(stubs)
    assert registry.search(QUERY, k=1)[0].name == LIST_PRS


# -- langgraph-bigtool --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def bigtool_registry() -> dict[str, BaseTool]:
    return {f"id-{i}": from_toolsurface(t, lambda **kw: "") for i, t in enumerate(demo_catalogue())}


def test_bigtool_retriever_ranks_the_right_tool_first(bigtool_registry: dict[str, Any]) -> None:
    retriever = BigtoolRetriever(bigtool_registry)
    (pr_id,) = [i for i, t in bigtool_registry.items() if t.name == LIST_PRS]
    found = retriever.function(QUERY)
    assert len(found) == 2
    assert found[0] == pr_id
    assert asyncio.run(retriever.coroutine(QUERY)) == found
    assert retriever.function.__name__ == "retrieve_tools"


def test_bigtool_retriever_honours_the_admitted_ids(bigtool_registry: dict[str, Any]) -> None:
    (pr_id,) = [i for i, t in bigtool_registry.items() if t.name == LIST_PRS]
    no_pr = BigtoolRetriever(bigtool_registry, admitted=lambda i: i != pr_id, limit=5)
    assert pr_id not in no_pr.function(QUERY)
    only = BigtoolRetriever(bigtool_registry, admitted={pr_id})
    assert only.function(QUERY) == [pr_id]

    def broken(tool_id: str) -> bool:
        raise RuntimeError("policy store down")

    assert BigtoolRetriever(bigtool_registry, admitted=broken).function(QUERY) == []
    with pytest.raises(ValueError, match="limit must be a positive int"):
        BigtoolRetriever(bigtool_registry, limit=0)
    same = {"a": bigtool_registry["id-0"], "b": bigtool_registry["id-0"]}
    with pytest.raises(LangChainAdapterError, match="tool ids 'a' and 'b' both hold"):
        BigtoolRetriever(same)


def test_bigtool_agent_binds_what_the_retriever_found(bigtool_registry: dict[str, Any]) -> None:
    # langgraph-bigtool's own graph: the retriever plugs in, and the model gets the tools it
    # found. (A call of one then stops in bigtool's graph: see the test below.)
    bigtool = pytest.importorskip("langgraph_bigtool", reason="langgraph-bigtool not installed")
    create_bigtool_agent = bigtool.create_agent

    retriever = BigtoolRetriever(bigtool_registry)
    fake = model(calls(("retrieve_tools", {"query": QUERY}), step=1), "Found it.")
    builder = create_bigtool_agent(
        fake,
        bigtool_registry,
        retrieve_tools_function=retriever.function,
        retrieve_tools_coroutine=retriever.coroutine,
    )
    result = builder.compile().invoke({"messages": [("user", QUERY)]})
    assert fake.seen[0]["tools"] == ["retrieve_tools"]
    assert fake.seen[1]["tools"][:2] == ["retrieve_tools", LIST_PRS]
    assert result["selected_tool_ids"] == retriever.function(QUERY)
    assert LIST_PRS in tool_messages(result)[0].text


# -- the middleware in one line ---------------------------------------------------------------


class AgentTools:
    """A recording LangChain tool per catalogue entry, as a host hands them to create_agent."""

    def __init__(self, catalogue: list[Tool]) -> None:
        self.ran: list[tuple[str, dict[str, Any]]] = []
        self.tools = [from_toolsurface(t, self._stub(t.name)) for t in catalogue]

    def _stub(self, name: str) -> Callable[..., str]:
        def run(**arguments: Any) -> str:
            self.ran.append((name, arguments))
            return f"{name} ran"

        return run


def one_line_run(
    catalogue: list[Tool], run: Callable[[Any], dict[str, Any]] | None = None
) -> tuple[AgentTools, ScriptedModel, dict[str, Any]]:
    """The README's one line over ``catalogue``: a search, a call of what it loaded, an answer."""
    host = AgentTools(catalogue)
    fake = model(
        calls((TOOL_SEARCH_NAME, {"query": QUERY}), step=1),
        calls((LIST_PRS, {"owner": "acme", "repo": "api"}), step=2),
        "Открыты два пулреквеста.",
    )
    # The one line: the agent's own tools, and the middleware with no tool list.
    agent = create_agent(
        fake, host.tools, middleware=[ToolSurfaceMiddleware()], system_prompt=SYSTEM
    )
    messages = {"messages": [("user", QUERY)]}
    result = run(agent) if run is not None else agent.invoke(messages)
    return host, fake, result


def assert_reduced_then_called(
    host: AgentTools, fake: ScriptedModel, result: dict[str, Any]
) -> None:
    first, second, _ = fake.seen
    given = [t.name for t in host.tools]
    # The model gets far fewer tools than the agent was given, ToolSearch among them, and
    # the catalogue block naming the held-back servers.
    assert TOOL_SEARCH_NAME in first["tools"]
    assert len(first["tools"]) <= 128 < len(given)
    assert set(first["tools"]) - {TOOL_SEARCH_NAME} < set(given)
    assert LIST_PRS not in first["tools"]
    assert "github:" in first["system"] and first["system"].startswith(SYSTEM)
    # The search loads the tool; the next call carries it; calling it runs the function.
    assert LIST_PRS in second["tools"]
    assert second["tools"][: len(first["tools"])] == first["tools"]
    assert host.ran == [(LIST_PRS, {"owner": "acme", "repo": "api"})]
    assert tool_messages(result)[1].text == f"{LIST_PRS} ran"
    assert result["messages"][-1].text == "Открыты два пулреквеста."


def test_one_line_over_the_demo_catalogue_reduces_and_calls() -> None:
    host, fake, result = one_line_run(demo_catalogue())
    assert len(host.tools) == 236
    assert_reduced_then_called(host, fake, result)


def test_one_line_async() -> None:
    messages = {"messages": [("user", QUERY)]}
    run = lambda agent: asyncio.run(agent.ainvoke(messages))  # noqa: E731
    assert_reduced_then_called(*one_line_run(demo_catalogue(), run))


@pytest.mark.slow
def test_one_line_over_the_real_catalogue(mcp_tools: list[Tool]) -> None:
    host, fake, result = one_line_run(mcp_tools)
    assert len(host.tools) == 1635
    assert_reduced_then_called(host, fake, result)
    # What the model is first sent, in LangChain's own OpenAI form: under a tenth.
    by_name = {t.name: t for t in host.tools}

    def size(names: list[str]) -> int:
        return sum(len(str(convert_to_openai_tool(by_name[n]))) for n in names if n in by_name)

    assert size(fake.seen[0]["tools"]) * 10 < size(list(by_name))


def test_one_line_sends_a_small_tool_list_unchanged() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Get the weather forecast for a city."""
        return f"sunny in {city}"

    @tool
    def read_file(path: str) -> str:
        """Read a text file of the workspace."""
        return ""

    fake = model(calls(("get_weather", {"city": "Oslo"}), step=1), "Sunny.")
    agent = create_agent(
        fake, [get_weather, read_file], middleware=[ToolSurfaceMiddleware()], system_prompt=SYSTEM
    )
    result = agent.invoke({"messages": [("user", "weather in Oslo?")]})
    # Below the budget nothing is held back: the tools as given, no ToolSearch, no block.
    assert fake.seen[0]["tools"] == ["get_weather", "read_file"]
    assert fake.seen[0]["system"] == SYSTEM
    assert tool_messages(result)[0].text == "sunny in Oslo"


def test_one_line_rebuilds_for_a_changed_tool_list() -> None:
    middleware = ToolSurfaceMiddleware()
    big = AgentTools(demo_catalogue())
    fake = model("a", "b", "c")
    create_agent(fake, big.tools, middleware=[middleware]).invoke({"messages": [("user", "x")]})
    registry = middleware.surface_for("").registry
    assert len(registry) == 237  # the agent's 236 tools and ToolSearch
    # The same list again: the registry built on the first call is kept.
    create_agent(fake, big.tools, middleware=[middleware]).invoke({"messages": [("user", "y")]})
    assert middleware.surface_for("").registry is registry
    # Another agent, other tools: a registry of those, and the model gets just them.
    small = big.tools[:3]
    create_agent(fake, small, middleware=[middleware]).invoke({"messages": [("user", "z")]})
    assert middleware.surface_for("").registry is not registry
    assert fake.seen[2]["tools"] == [t.name for t in small]


def test_one_line_group_rule_limits_and_policy() -> None:
    host = AgentTools(demo_catalogue())
    # Bare names: a group rule of the host's; a small window holds every group back.
    middleware = ToolSurfaceMiddleware(
        group=lambda t: t.name.split("__")[0],
        limits=SurfaceLimits(window_tokens=8_000),
        policy=lambda name: not name.startswith("aws__"),
    )
    fake = model(
        calls(("aws__ec2_describe_instances", {}), step=1),
        calls((TOOL_SEARCH_NAME, {"query": "list ec2 instances"}), step=2),
        "No.",
    )
    result = create_agent(fake, host.tools, middleware=[middleware]).invoke(
        {"messages": [("user", "list my ec2 instances")]}
    )
    first = fake.seen[0]["tools"]
    assert first[-1] == TOOL_SEARCH_NAME and len(first) < 20  # all but a group held back
    assert "- github: " in fake.seen[0]["system"]  # the group the host's rule made
    # The policy's refusal: the aws tool never runs, and no request or answer names it.
    refused, search = tool_messages(result)
    assert refused.status == "error" and host.ran == []
    assert "aws" not in fake.seen[0]["system"]
    assert "aws__" not in search.text
    assert not any(n.startswith("aws__") for s in fake.seen for n in s["tools"])


def test_one_line_passes_through_a_tool_it_cannot_take(caplog: pytest.LogCaptureFixture) -> None:
    ran: list[str] = []

    def shout(text: str) -> str:
        ran.append(text)
        return text.upper()

    # A name MCP's rule refuses (a space): toolsurface cannot index it, the others are fine.
    odd = StructuredTool.from_function(shout, name="shout it", description="Shout the text.")
    host = AgentTools(demo_catalogue())
    fake = model(calls(("shout it", {"text": "hi"}), step=1), "Done.")
    with caplog.at_level("WARNING", logger="toolsurface.adapters.langchain"):
        result = create_agent(fake, [*host.tools, odd], middleware=[ToolSurfaceMiddleware()])
        result = result.invoke({"messages": [("user", "shout hi")]})
    assert "LangChain tool 'shout it': name" in caplog.text
    assert fake.seen[0]["tools"][-1] == "shout it"  # sent as it is, after the plan
    assert TOOL_SEARCH_NAME in fake.seen[0]["tools"]  # the others are still managed
    assert ran == ["hi"] and tool_messages(result)[0].text == "HI"


def test_one_line_never_sends_or_runs_a_tool_it_cannot_take_that_the_policy_blocks() -> None:
    ran: list[str] = []

    def shout(text: str) -> str:
        ran.append(text)
        return text.upper()

    # Two tools toolsurface cannot index (a space in the name); the policy blocks one. The
    # blocked one is neither sent nor run: its call reads as an unknown tool's.
    odd = StructuredTool.from_function(shout, name="shout it", description="Shout the text.")
    wipe = StructuredTool.from_function(shout, name="wipe all", description="Wipe every disk.")
    host = AgentTools(demo_catalogue())
    fake = model(calls(("wipe all", {"text": "now"}), ("shout it", {"text": "hi"}), step=1), "ok")
    middleware = ToolSurfaceMiddleware(policy=lambda name: name != "wipe all")
    agent = create_agent(fake, [*host.tools, odd, wipe], middleware=[middleware])
    result = agent.invoke({"messages": [("user", "wipe it all, then shout hi")]})
    assert all("wipe all" not in seen["tools"] for seen in fake.seen)
    assert fake.seen[0]["tools"][-1] == "shout it"
    refused, shouted = tool_messages(result)
    assert refused.status == "error" and refused.text.startswith("Unknown tool 'wipe all'")
    assert ran == ["hi"] and shouted.text == "HI"


def test_one_line_window_comes_from_the_model_profile() -> None:
    from toolsurface.adapters.langchain.agent_tools import DEFAULT_WINDOW_TOKENS, default_limits

    profiled = ScriptedModel(messages=iter(()), profile={"max_input_tokens": 32_000})
    assert default_limits(profiled).window_tokens == 32_000
    assert default_limits(profiled).max_advertised_tools == 128
    assert default_limits(model()).window_tokens == DEFAULT_WINDOW_TOKENS


def test_one_line_resumed_in_a_fresh_middleware_admits_before_running() -> None:
    host = AgentTools(demo_catalogue())
    saver = InMemorySaver()
    args = {"owner": "acme", "repo": "api"}

    def paused(thread: str) -> dict[str, Any]:
        # A run stopped before its tool node (a human review, say), stored by the saver.
        config: dict[str, Any] = {"configurable": {"thread_id": thread}}
        fake = model(calls((LIST_PRS, args), step=1))
        agent = create_agent(
            fake,
            host.tools,
            middleware=[ToolSurfaceMiddleware()],
            checkpointer=saver,
            interrupt_before=["tools"],
        )
        agent.invoke({"messages": [("user", QUERY)]}, config)
        return config

    first, second = paused("t1"), paused("t2")
    # Resumed by another process's middleware, which has seen no tool list: nothing runs.
    fresh = ToolSurfaceMiddleware()
    agent = create_agent(
        model("Sorry.", "Done."), host.tools, middleware=[fresh], checkpointer=saver
    )
    result = agent.invoke(None, first)
    (refused,) = tool_messages(result)
    assert refused.status == "error" and refused.text.startswith("Not run: the tool list")
    assert host.ran == []
    # Once it has a tool list (the model call above), a resumed call is admitted and runs.
    result = agent.invoke(None, second)
    assert tool_messages(result)[0].text == f"{LIST_PRS} ran"
    assert host.ran == [(LIST_PRS, args)]


def test_one_line_and_explicit_forms_are_not_mixed(demo: Host) -> None:
    with pytest.raises(TypeError, match="both tools and surface, or neither"):
        ToolSurfaceMiddleware(demo.tools)
    with pytest.raises(TypeError, match="are for the one-line form"):
        ToolSurfaceMiddleware(demo.tools, demo.surface, limits=SurfaceLimits())
    with pytest.raises(LangChainAdapterError, match="thread 't' has no surface yet"):
        ToolSurfaceMiddleware().surface_for("t")
    own = from_toolsurface(tool_search_tool(), lambda **kw: "")
    agent = create_agent(model("hi"), [own], middleware=[ToolSurfaceMiddleware()])
    with pytest.raises(LangChainAdapterError, match="the middleware provides that tool"):
        agent.invoke({"messages": [("user", "hi")]})


# -- bigtool on LangChain's agent ---------------------------------------------------------------


def bigtool_run(
    catalogue: list[Tool], run: Callable[[Any], dict[str, Any]] | None = None, **options: Any
) -> tuple[AgentTools, ScriptedModel, dict[str, Any], dict[str, BaseTool]]:
    host = AgentTools(catalogue)
    registry = {f"id-{i}": t for i, t in enumerate(host.tools)}
    fake = model(
        calls(("retrieve_tools", {"query": QUERY}), step=1),
        calls((LIST_PRS, {"owner": "acme", "repo": "api"}), step=2),
        "Открыты два пулреквеста.",
    )
    agent = create_bigtool_agent(fake, registry, system_prompt=SYSTEM, **options)
    messages = {"messages": [("user", QUERY)]}
    result = run(agent) if run is not None else agent.invoke(messages)
    return host, fake, result, registry


def assert_bigtool_ran(
    host: AgentTools, fake: ScriptedModel, result: dict[str, Any], registry: dict[str, BaseTool]
) -> None:
    (pr_id,) = [i for i, t in registry.items() if t.name == LIST_PRS]
    assert fake.seen[0]["tools"] == ["retrieve_tools"]
    assert fake.seen[1]["tools"][:2] == ["retrieve_tools", LIST_PRS]
    assert result["selected_tool_ids"][0] == pr_id
    found, ran = tool_messages(result)
    assert found.text.startswith(f"Available tools: ['{LIST_PRS}'")
    assert host.ran == [(LIST_PRS, {"owner": "acme", "repo": "api"})]  # the function ran
    assert ran.text == f"{LIST_PRS} ran"
    assert result["messages"][-1].text == "Открыты два пулреквеста."


def test_bigtool_agent_calls_what_it_retrieved() -> None:
    assert_bigtool_ran(*bigtool_run(demo_catalogue()))


def test_bigtool_agent_async() -> None:
    messages = {"messages": [("user", QUERY)]}
    assert_bigtool_ran(
        *bigtool_run(demo_catalogue(), lambda agent: asyncio.run(agent.ainvoke(messages)))
    )


@pytest.mark.slow
def test_bigtool_agent_over_the_real_catalogue(mcp_tools: list[Tool]) -> None:
    host, fake, result, registry = bigtool_run(mcp_tools)
    assert len(registry) == 1635
    assert_bigtool_ran(host, fake, result, registry)


def test_bigtool_agent_runs_only_retrieved_and_admitted_tools() -> None:
    host = AgentTools(demo_catalogue())
    registry = {t.name: t for t in host.tools}
    no_github = [n for n in registry if not n.startswith("github__")]
    args = {"owner": "acme", "repo": "api"}
    fake = model(
        calls((LIST_PRS, args), step=1),  # never retrieved
        calls(("retrieve_tools", {"query": QUERY}), step=2),
        calls((LIST_PRS, args), step=3),  # still not: the policy does not admit it
        "Sorry.",
    )
    agent = create_bigtool_agent(fake, registry, admitted=no_github, limit=3)
    result = agent.invoke({"messages": [("user", QUERY)]})
    blind, found, again = tool_messages(result)
    assert blind.status == "error" and blind.text.startswith(f"Not run: '{LIST_PRS}' is not")
    assert "github__" not in found.text
    assert not any(i.startswith("github__") for i in result["selected_tool_ids"])
    assert again.status == "error"
    assert host.ran == []


def test_bigtool_agent_quotes_a_hostile_name_cut_and_escaped() -> None:
    host = AgentTools(demo_catalogue())
    registry = {t.name: t for t in host.tools}
    fake = model(calls(("x" * 1_000_000, {}), ("a\u202eb\x1b[31m", {}), step=1), "Sorry.")
    result = create_bigtool_agent(fake, registry, limit=3).invoke({"messages": [("user", "hi")]})
    huge, hidden = tool_messages(result)
    assert huge.status == "error" and len(huge.text) < 300 and "…" in huge.text
    assert hidden.text.startswith("Not run: 'a\\u202eb\\x1b[31m' is not among")
    assert host.ran == []


def test_langgraph_bigtool_own_graph_still_fails_on_a_retrieved_call(
    bigtool_registry: dict[str, Any],
) -> None:
    # Why create_bigtool_agent exists: with the langgraph-prebuilt this extra installs,
    # langgraph-bigtool's own graph fails on the first call of a tool it retrieved. When this
    # test fails, bigtool works again: say so in docs/tools.md.
    bigtool = pytest.importorskip("langgraph_bigtool", reason="langgraph-bigtool not installed")
    retriever = BigtoolRetriever(bigtool_registry)
    fake = model(
        calls(("retrieve_tools", {"query": QUERY}), step=1),
        calls((LIST_PRS, {"owner": "acme", "repo": "api"}), step=2),
        "Done.",
    )
    graph = bigtool.create_agent(fake, bigtool_registry, retrieve_tools_function=retriever.function)
    with pytest.raises(AttributeError, match="inject_tool_args"):
        graph.compile().invoke({"messages": [("user", QUERY)]})


# -- the examples ------------------------------------------------------------------------------


def test_docstring_examples_run() -> None:
    for name in ("convert", "middleware", "bigtool", "bigtool_agent", "agent_tools"):
        module = importlib.import_module(f"{adapter.__name__}.{name}")
        failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
        assert failed == 0, name
        if name != "middleware":
            assert attempted > 0, name


def docs_examples() -> list[tuple[str, str]]:
    """Each Python example of the LangChain section and the output the docs say it prints."""
    text = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    section = text.split("\n## LangChain", 1)[1].split("\n## ", 1)[0]
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    printed = re.findall(r"```text\n(.*?)```", section, re.S)
    return list(zip(code, printed, strict=True))


@pytest.mark.parametrize("index", range(3), ids=["one-line", "explicit", "bigtool"])
def test_docs_examples_run_and_print_what_the_docs_say(
    index: int, capsys: pytest.CaptureFixture[str]
) -> None:
    code, printed = docs_examples()[index]
    exec(compile(code, "docs/tools.md", "exec"), {"__name__": "docs_example"})
    assert capsys.readouterr().out == printed
