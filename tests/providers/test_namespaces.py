"""Large servers as Responses namespaces of related tools, under OpenAI's ten (issue 41)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from typing import Any

import pydantic
import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.providers.namespaces import MAX_FUNCTIONS, resource_of, split_namespace

responses_types = pytest.importorskip("openai.types.responses", reason="the openai SDK")
NAMESPACE = r"^[a-zA-Z0-9_-]{1,64}$"


def _servers(tools: list[Tool]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = defaultdict(list)
    for t in tools:
        out[t.name.split("__")[0]].append(t.name)
    return out


def test_a_resource_is_the_noun_after_the_verbs() -> None:
    assert resource_of("gh__create_issue") == "issue"
    assert resource_of("gh__list_issues") == "issue"
    assert resource_of("gh__getIssueComments") == "issue"
    assert resource_of("k8s__list_all_pods") == "pod"
    assert resource_of("fs__list_directories") == "directory"
    assert resource_of("gh__get_me") == "me"
    assert resource_of("x__search") == "search"  # verbs only: the last one


def test_a_small_group_is_one_namespace_as_before() -> None:
    members = [f"gh__tool_{i}" for i in range(MAX_FUNCTIONS)]
    assert split_namespace("gh", "GitHub.", members) == [("gh", "GitHub.", tuple(members))]


def test_related_tools_share_a_namespace() -> None:
    verbs = ["create", "list", "get", "update", "delete"]
    members = [f"gh__{v}_{noun}" for noun in ("issue", "pull_request", "release") for v in verbs]
    spaces = split_namespace("gh", "GitHub.", members)
    where = {m: name for name, _, ms in spaces for m in ms}
    for noun in ("issue", "pull_request", "release"):
        assert len({where[f"gh__{v}_{noun}"] for v in verbs}) == 1, noun
    assert all(len(ms) <= MAX_FUNCTIONS for _, _, ms in spaces)
    about = {name: text for name, text, _ in spaces}
    assert about[where["gh__create_issue"]].startswith("GitHub: ")
    assert "issue" in about[where["gh__create_issue"]]  # the description names what is inside


def test_every_real_server_splits_under_ten_each_tool_once(mcp_tools: list[Tool]) -> None:
    servers = _servers(mcp_tools)
    assert sum(len(m) > MAX_FUNCTIONS for m in servers.values()) >= 20  # the case in point
    names: set[str] = set()
    for server, members in servers.items():
        spaces = split_namespace(server, f"Tools of the {server} group.", members)
        placed = [m for _, _, ms in spaces for m in ms]
        assert sorted(placed) == sorted(members), server
        for name, about, ms in spaces:
            assert 1 <= len(ms) <= MAX_FUNCTIONS, name
            assert name not in names and re.match(NAMESPACE, name), name
            assert about.startswith(f"Tools of the {server} group")
            names.add(name)


def test_the_split_is_the_same_in_another_process(mcp_tools: list[Tool]) -> None:
    servers = _servers(mcp_tools)
    here = {s: split_namespace(s, "x", m) for s, m in servers.items()}
    code = (
        "import json, sys\n"
        "from toolsurface.providers.namespaces import split_namespace\n"
        "servers = json.load(sys.stdin)\n"
        "print(json.dumps({s: split_namespace(s, 'x', m) for s, m in servers.items()}))\n"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        input=json.dumps(servers),
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    assert json.loads(done.stdout) == json.loads(json.dumps(here))


def _big_registry(engine: str) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    nouns = ("issue", "label", "milestone")
    verbs = ("create", "list", "get", "update", "delete")
    schema: dict[str, Any] = {"type": "object", "properties": {"repo": {"type": "string"}}}
    reg.register_many(
        [
            Tool(name=f"gh__{v}_{n}", description=f"{v.title()} a GitHub {n}.", input_schema=schema)
            for n in nouns
            for v in verbs
        ]
        + [Tool(name="read_file", description="Read a file."), tool_search_tool()]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True, description="GitHub")
    return reg


def test_responses_array_splits_a_large_group_and_loads_come_back_in_their_part(
    engine_name: str,
) -> None:
    surface = ToolSurface(
        _big_registry(engine_name), provider="openai-responses", delivery="native"
    )
    tools = surface.plan().render()
    pydantic.TypeAdapter(list[responses_types.ToolParam]).validate_python(tools)
    spaces = {t["name"]: t for t in tools if t["type"] == "namespace"}
    assert len(spaces) >= 2
    assert all(1 <= len(s["tools"]) <= MAX_FUNCTIONS for s in spaces.values())
    assert sum(len(s["tools"]) for s in spaces.values()) == 15
    home = next(
        s for s in spaces.values() if "gh__update_milestone" in [f["name"] for f in s["tools"]]
    )
    assert {f["name"] for f in home["tools"]} >= {f"gh__{v}_milestone" for v in ("create", "list")}
    call = {
        "type": "tool_search_call",
        "call_id": "c1",
        "arguments": {"select": ["gh__update_milestone"]},
    }
    item = surface.tool_search(call).native
    pydantic.TypeAdapter(responses_types.ResponseInputItemParam).validate_python(item)
    (space,) = item["tools"]
    assert (space["name"], space["description"]) == (home["name"], home["description"])
    assert [f["name"] for f in space["tools"]] == ["gh__update_milestone"]
    assert surface.plan().render() == tools  # the array stands


def test_a_host_chooses_the_size_or_one_namespace_a_group(engine_name: str) -> None:
    reg = _big_registry(engine_name)
    whole = ToolSurface(reg, provider="openai-responses", delivery="native", namespace_size=None)
    tools = whole.plan().render()
    (space,) = [t for t in tools if t["type"] == "namespace"]
    assert (space["name"], len(space["tools"])) == ("gh", 15)
    small = ToolSurface(reg, provider="openai-responses", delivery="native", namespace_size=5)
    sizes = [len(t["tools"]) for t in small.plan().render() if t["type"] == "namespace"]
    assert sizes == [5, 5, 5]  # issue, label, milestone: five verbs each
    with pytest.raises(ValueError, match="namespace_size must be at least 1"):
        ToolSurface(reg, provider="openai-responses", delivery="native", namespace_size=0)
