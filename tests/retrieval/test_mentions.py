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


def _server_registry(engine: str, servers: int) -> ToolRegistry:
    """``servers`` synthetic servers that share the word "github", a tool each."""
    tools = [
        Tool(name=f"github-{w}__list_issues", description=f"List the issues of {w}.")
        for w in _words(servers)
    ]
    registry = ToolRegistry(tools, engine=engine)  # type: ignore[arg-type]
    declare_server_groups(registry)
    return registry


def _words(n: int) -> list[str]:
    """``n`` distinct words of letters only (the analyser keeps each whole)."""
    letters = "bcdfghjklmnpqrstvwxz"
    return [f"q{letters[i // 400]}{letters[i // 20 % 20]}{letters[i % 20]}" for i in range(n)]


@pytest.mark.parametrize("engine", ENGINES)
def test_many_servers_sharing_a_word_are_each_mentioned_by_their_own_name(engine: str) -> None:
    registry = _server_registry(engine, 2000)
    words = _words(2000)
    for w in (words[0], words[777], words[-1]):
        assert registry.mentioned_groups(f"list issues in github {w}") == [f"github-{w}"]
        hits = registry.search(f"list issues in github {w}", 1)
        assert hits[0].name == f"github-{w}__list_issues"
    assert len(registry.groups()) == 2000


def test_both_engines_keep_the_same_aliases_and_find_a_repeat_by_its_whole_key() -> None:
    from toolsurface._native import Aliases
    from toolsurface.retrieval.engine.alias_match import PureAliases

    words = _words(300)
    entries: list[tuple[int, list[str]]] = [(g, ["github", w]) for g, w in enumerate(words)]
    # A repeat (same group, first term and set), the same set under another group, and
    # under another first term: only the first is left out.
    entries += [(5, ["github", words[5], "github"]), (6, ["github", words[5]])]
    entries += [(5, [words[5], "github"])]
    assert len(Aliases(entries)) == len(PureAliases(entries)) == 302


def test_both_engines_analyse_alias_texts_alike_and_refuse_unpaired_lists() -> None:
    """The table is made from raw texts in one call: the same aliases, the same mentions."""
    from toolsurface._native import Aliases
    from toolsurface.retrieval.engine.backend import backend

    native, pure = backend("native"), backend("pure")
    texts = ["GitHub", "git hub", "Google Drive", "google-drive", "?!", "Slack", "слак"]
    groups = [0, 0, 1, 1, 2, 3, 3]
    made = native.aliases(groups, texts)
    # "?!" has no index term; "GitHub" (git, hub, github) holds every term of "git hub",
    # and "google-drive" of "Google Drive", under the same first term: they decide nothing.
    assert len(made) == len(pure.aliases(groups, texts)) == 4
    assert native.aliases([0], ["?!"]) is None and pure.aliases([0], ["?!"]) is None
    with pytest.raises(ValueError, match="2 group numbers for 1 texts"):
        Aliases.analysed(native.analyzer, [0, 1], ["GitHub"])


class _Counted(str):
    """A term that counts how often it is hashed or compared."""

    used = 0

    def __hash__(self) -> int:
        _Counted.used += 1
        return str.__hash__(self)

    def __eq__(self, other: object) -> bool:
        _Counted.used += 1
        return str.__eq__(self, other)


def test_pure_alias_table_is_built_in_work_linear_in_its_aliases() -> None:
    """Building the table hashes and compares each term a bounded number of times, not once
    per earlier alias sharing its first word (the scan that made a group per server
    quadratic): twice the aliases, at most about twice the work."""
    from toolsurface.retrieval.engine.alias_match import PureAliases

    def work(n: int) -> int:
        entries = [(0, [_Counted("github"), _Counted(w)]) for w in _words(n)]
        _Counted.used = 0
        PureAliases(entries)
        return _Counted.used

    assert 0 < work(2000) <= 2 * work(1000) + 10
