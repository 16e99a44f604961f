"""A render shares its unchanged part between runs; a host's edit reaches its own request only."""

from __future__ import annotations

import copy
import json
import pickle

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool


def _registry() -> ToolRegistry:
    tools = [tool_search_tool()]
    tools += [
        Tool(
            name=f"fs__tool_{i}",
            description=f"Tool {i}.",
            input_schema={"type": "object", "properties": {"x": {"type": "string"}}},
        )
        for i in range(5)
    ]
    tools += [Tool(name="gh__list_issues", description="List the issues.")]
    registry = ToolRegistry(tools)
    registry.declare_group("gh", prefix="gh__", load="lazy")
    return registry


def test_an_edit_of_a_render_reaches_no_other_request() -> None:
    registry = _registry()
    one = ToolSurface(registry, provider="anthropic")
    other = ToolSurface(registry, provider="anthropic")
    before = json.dumps(other.plan().render("anthropic"))
    for surface in (one, other):  # a loaded tool: the appended part is shared too
        surface.tool_search({"select": ["gh__list_issues"]})
    before = json.dumps(other.plan().render("anthropic"))
    rendered = one.plan().render("anthropic")
    assert rendered[-1]["name"] == "gh__list_issues"
    rendered[0]["input_schema"]["additionalProperties"] = False  # strict mode, by index
    for tool in rendered:  # and by iteration
        tool["description"] = "edited"
    rendered[-1]["name"] = "renamed"
    assert all(t["description"] == "edited" for t in rendered)
    assert json.dumps(rendered).count("edited") == len(rendered)  # the edits are sent
    assert json.dumps(one.plan().render("anthropic")) == before
    assert json.dumps(other.plan().render("anthropic")) == before
    assert registry.get("fs__tool_0").input_schema.get("additionalProperties") is None


def test_a_render_reads_as_a_plain_list_everywhere() -> None:
    surface = ToolSurface(_registry(), provider="anthropic")
    plan = surface.plan()
    expected = json.loads(json.dumps(plan.render("anthropic")))
    for read in (
        list,
        lambda r: r[:],
        lambda r: [*r],
        copy.deepcopy,
        lambda r: pickle.loads(pickle.dumps(r)),
        lambda r: r + [],  # noqa: RUF005 (concatenation is what is tested)
        lambda r: [] + r,  # noqa: RUF005
        lambda r: list(reversed(r))[::-1],
    ):
        got = read(plan.render("anthropic"))
        assert type(got) is list
        assert got == expected
    shared = plan.render("anthropic")
    taken = list(shared)
    taken[1]["name"] = "mine"
    assert plan.render("anthropic")[1]["name"] == expected[1]["name"]
    popped = plan.render("anthropic")
    first = popped.pop(0)
    first["name"] = "changed"
    assert popped == expected[1:]
    assert plan.render("anthropic") == expected
