"""Mentions and questions (docs/analysis.md sections 8, 10): the boosts, both engines alike."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import vector_settings
from toolsurface import RetrievalSettings, Tool, ToolRegistry
from toolsurface.adapters.mcp import server_aliases
from toolsurface.evaluation import declare_server_groups

VECTORS = json.loads(
    (Path(__file__).resolve().parents[1] / "data" / "mention_vectors.json").read_text("utf-8")
)
ENGINES = ["native", "pure"]


def _registry(engine: str) -> tuple[ToolRegistry, RetrievalSettings]:
    settings = vector_settings(VECTORS["settings"])
    lexicon = [tuple(e) for e in VECTORS["lexicon"]]
    registry = ToolRegistry(VECTORS["tools"], engine=engine, lexicon=lexicon, word_forms=False)
    for name, prefix, aliases in VECTORS["groups"]:
        registry.declare_group(name, prefix=prefix, aliases=aliases)
    return registry, settings


@pytest.mark.parametrize("engine", ENGINES)
def test_mention_vectors(engine: str) -> None:
    registry, base = _registry(engine)
    admitted = set(VECTORS["admitted"])
    for case in VECTORS["cases"]:
        weights = {k: case[k] for k in ("mention_weight", "question_weight")}
        chosen = base.model_copy(update=weights)
        allowed = admitted if case["admitted"] else None
        hits = registry.search(case["query"], 10, settings=chosen, admitted=allowed)
        where = (case["query"], weights, case["admitted"])
        assert registry.mentioned_groups(case["query"], chosen) == case["mentioned"], where
        assert [h.name for h in hits] == case["names"], where
        for h, want in zip(hits, case["scores"]):
            assert math.isclose(h.score, want, rel_tol=1e-9), where
        # The batch form gives the same hits.
        many = registry.search_many([case["query"]], 10, settings=chosen, admitted=allowed)
        assert [h.name for h in many[0]] == case["names"], where


@pytest.mark.parametrize("engine", ENGINES)
def test_boost_moves_only_mentioned_admitted_tools(engine: str) -> None:
    tools = [
        Tool(name="atlassian__confluence_search", description="Search Confluence pages."),
        Tool(
            name="aws-eks__search_troubleshoot_guide",
            description="Search the EKS troubleshooting runbook: release runbook steps.",
        ),
    ]
    registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    query = "look up the release runbook in confluence"
    before = [h.name for h in registry.search(query)]
    assert before[0] == "aws-eks__search_troubleshoot_guide"
    registry.declare_group("atlassian", prefix="atlassian__", aliases=["confluence"])
    heavy = registry.settings.model_copy(update={"mention_weight": 2.0})
    assert next(h.name for h in registry.search(query, settings=heavy)) == (
        "atlassian__confluence_search"
    )
    # Not admitted: never boosted, never returned.
    only = {"aws-eks__search_troubleshoot_guide"}
    hits = registry.search(query, settings=heavy, admitted=only)
    assert [h.name for h in hits] == ["aws-eks__search_troubleshoot_guide"]
    # The explanation's contributions add up to the boosted score.
    hit = registry.search(query, settings=heavy, explain=True)[0]
    assert hit.explanation is not None
    total = sum(sum(c.fields.values()) for c in hit.explanation)
    assert math.isclose(total, hit.score, rel_tol=1e-9)
    off = registry.settings.model_copy(update={"mention_weight": 0.0})
    assert [h.name for h in registry.search(query, settings=off)] == before


def test_alias_validation() -> None:
    registry = ToolRegistry([Tool(name="a__b", description="B.")])
    with pytest.raises(ValueError, match="alias 'the' has no index terms"):
        registry.declare_group("a", prefix="a__", aliases=["the"])
    with pytest.raises(ValueError, match="at most 16 aliases"):
        registry.declare_group("a", prefix="a__", aliases=[f"x{i}" for i in range(17)])
    with pytest.raises(ValueError, match="1 to 64 characters"):
        registry.declare_group("a", prefix="a__", aliases=["x" * 65])
    g = registry.declare_group("a", prefix="a__", aliases=["  Big   Service ", "Big Service"])
    assert g.aliases == ("Big Service",)


def test_server_aliases_and_server_groups() -> None:
    info = SimpleNamespace(name="github-mcp-server", title="GitHub")
    assert server_aliases("github", info) == ["github-mcp-server", "GitHub"]
    assert server_aliases("google-workspace") == ["google workspace"]
    registry = ToolRegistry(
        [
            Tool(name="google-workspace__list_events", description="List events."),
            Tool(name="plain", description="No server."),
        ]
    )
    assert declare_server_groups(registry) == ["google-workspace"]
    assert registry.mentioned_groups("my google workspace events") == ["google-workspace"]
    assert registry.mentioned_groups("my google events") == []


def test_mentioned_groups_come_in_the_order_the_query_names_them() -> None:
    # The order is the query's (first alias term first), not a set's: the same under any
    # hash seed, so it is run under several, each in a fresh interpreter.
    import os
    import subprocess
    import sys

    code = (
        "from toolsurface import Tool, ToolRegistry\n"
        "r = ToolRegistry([Tool(name='slack__post', description='Post.'),"
        " Tool(name='jira__search', description='Search.')])\n"
        "r.declare_group('slack', prefix='slack__')\n"
        "r.declare_group('jira', prefix='jira__')\n"
        "print(r.mentioned_groups('post the jira link on slack'),"
        " r.mentioned_groups('on slack, post the jira link'))\n"
    )
    seen = set()
    for seed in ("0", "1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        seen.add(out.stdout.strip())
    assert seen == {"['jira', 'slack'] ['slack', 'jira']"}


def test_both_engines_find_the_same_mentions_on_the_real_catalogue(
    mcp_tools: list[Tool], dev_queries: list[dict[str, object]]
) -> None:
    pytest.importorskip("toolsurface._native")
    found = {}
    for engine in ENGINES:
        registry = ToolRegistry(mcp_tools, engine=engine)
        declare_server_groups(registry)
        found[engine] = [registry.mentioned_groups(str(q["query"])) for q in dev_queries]
    assert found["native"] == found["pure"]
    # Most development requests name their service, some two.
    assert sum(bool(m) for m in found["native"]) > len(dev_queries) / 2
    assert any(len(m) > 1 for m in found["native"])
