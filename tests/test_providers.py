"""Provider formats and limits: rendered shapes, refused names, the count limit by name."""

from __future__ import annotations

import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
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
    gemini_schema = {
        "type": "OBJECT",
        "properties": {"q": {"type": "STRING"}},
        "required": ["q"],
    }
    assert render_tools(TOOLS, "gemini") == {
        "functionDeclarations": [
            {"name": "search_docs", "description": "Search docs.", "parameters": gemini_schema}
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
    surface.plan()
    refused = [e for e in events if e.kind == "tool_names_refused"]
    assert refused and "dotted.name" in refused[-1].data["names"]
