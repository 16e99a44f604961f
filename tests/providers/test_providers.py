"""Provider formats and limits: rendered shapes, refused names, the count limit by name."""

from __future__ import annotations

import json

import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall
from toolsurface.providers import PROVIDERS, ProviderNameError, name_problems, render_tools
from toolsurface.surface import Event

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
TOOLS = [Tool(name="search_docs", description="Search docs.", input_schema=SCHEMA)]


def test_shapes() -> None:
    assert render_tools(TOOLS, "anthropic") == [
        {"name": "search_docs", "description": "Search docs.", "input_schema": SCHEMA}
    ]
    assert render_tools(TOOLS, "openai") == [
        {
            "type": "function",
            "function": {
                "name": "search_docs",
                "description": "Search docs.",
                "parameters": SCHEMA,
            },
        }
    ]
    assert render_tools(TOOLS, "openai-responses")[0]["name"] == "search_docs"
    assert render_tools(TOOLS, "openai-responses")[0]["strict"] is False
    # Gemini reads JSON Schema as it is through parametersJsonSchema.
    assert render_tools(TOOLS, "gemini") == {
        "functionDeclarations": [
            {"name": "search_docs", "description": "Search docs.", "parametersJsonSchema": SCHEMA}
        ]
    }


@pytest.mark.parametrize(
    ("name", "refused_by"),
    [
        ("docs.search", {"openai", "openai-responses", "anthropic"}),
        ("x" * 65, {"openai", "openai-responses", "gemini"}),
        ("x" * 129, {"openai", "openai-responses", "anthropic", "gemini"}),
        ("9lives", {"gemini"}),
        ("ok_name-2", set()),
    ],
)
def test_name_rules(name: str, refused_by: set[str]) -> None:
    refused = {p for p in PROVIDERS if name_problems([name], p)}
    assert refused == refused_by


def test_refused_names_raise_before_sending() -> None:
    bad = [Tool(name="docs.search"), *TOOLS]
    with pytest.raises(ProviderNameError, match=r"'docs\.search'") as err:
        render_tools(bad, "openai")
    assert "docs.search" in err.value.problems
    with pytest.raises(ValueError, match="unknown provider 'mistral'"):
        render_tools(TOOLS, "mistral")


def test_surface_takes_the_limit_by_provider_name(engine_name: str) -> None:
    reg = ToolRegistry([Tool(name=f"srv__t{i:03d}") for i in range(300)], engine=engine_name)  # type: ignore[arg-type]
    reg.declare_group("srv", prefix="srv__")
    reg.register_many([Tool(name=f"own{i}", group=f"g{i % 5}") for i in range(20)])
    reg.register(tool_search_tool())
    events: list[Event] = []
    surface = ToolSurface(reg, provider="openai", on_event=events.append)
    assert surface.limits.max_advertised_tools == 128
    plan = surface.plan()
    assert len(plan.tools) <= 128 and "srv" in plan.held_back
    assert len(plan.render("openai")) == len(plan.tools)
    reg.register(Tool(name="dotted.name"))
    plan = surface.plan()
    aliased = [e for e in events if e.kind == "tool_names_aliased"]
    assert aliased and aliased[-1].data["aliases"]["dotted.name"].startswith("dotted_name_")
    assert "dotted.name" not in json.dumps(plan.render())


def test_a_name_the_provider_refuses_is_sent_as_an_alias_and_mapped_back(
    engine_name: str,
) -> None:
    long = "srv__" + "very_long_" * 8 + "name"  # 89 characters: over OpenAI's 64
    tools = [Tool(name="docs.search", description="Search the docs."), Tool(name=long)]
    reg = ToolRegistry([*tools, Tool(name="ok")], engine=engine_name)  # type: ignore[arg-type]
    surface = ToolSurface(reg, provider="openai")
    plan = surface.plan()
    sent = [t["function"]["name"] for t in plan.render()]
    assert "docs.search" not in sent and long not in sent and "ok" in sent
    assert all(PROVIDERS["openai"].name_pattern.fullmatch(n) for n in sent)
    again = ToolSurface(reg, provider="openai").plan().render()
    assert sent == [t["function"]["name"] for t in again]  # stable: the same in every run
    alias = next(n for n in sent if n.startswith("docs_search_"))
    (v,) = surface.admit([ToolCall(alias, {"q": "x"}, id="1")])
    assert v.runs and v.call.name == "docs.search" and v.asked_name == alias
    picked = surface.tool_search({"select": [alias]})
    assert picked.already_listed == ("docs.search",)  # the host sees the name, never the alias
    assert f"- {alias}() — Search the docs." in picked.text  # the model reads the alias
    anthropic = ToolSurface(reg, provider="anthropic").plan().render()
    assert "docs_search_" in json.dumps(anthropic) and long in json.dumps(anthropic)
