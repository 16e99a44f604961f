"""A lexicon entry fires on its own words' inflections, not on words that only stem alike."""

from __future__ import annotations

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface.retrieval.analysis.lexkey import english_base, lexicon_key

TOOLS = [
    Tool(name="flags__enable_flag", description="Enable a feature flag for a project."),
    Tool(name="audit__list_events", description="List the audit log of a workspace."),
    Tool(name="team__list_members", description="List the members of a team."),
]


def names(reg: ToolRegistry, query: str) -> list[str]:
    return [h.name for h in reg.search(query, k=3)]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        lexicon=[("activate", "enable"), ("неактивный", "members"), ("активность", "audit")],
    )


@pytest.mark.parametrize("query", ["activate", "activates", "activated", "activating"])
def test_an_entry_fires_on_its_inflections(registry: ToolRegistry, query: str) -> None:
    assert names(registry, query) == ["flags__enable_flag"]


@pytest.mark.parametrize("query", ["activities", "actively", "activation", "active"])
def test_an_entry_does_not_fire_on_words_that_stem_alike(
    registry: ToolRegistry, query: str
) -> None:
    # Snowball stems every one of these to "activ", as it does "activate".
    assert "flags__enable_flag" not in names(registry, query)


def test_russian_entries_fire_on_their_cases_not_on_a_derived_noun(
    registry: ToolRegistry,
) -> None:
    assert names(registry, "неактивные") == ["team__list_members"]
    assert names(registry, "неактивных") == ["team__list_members"]
    assert names(registry, "активности") == ["audit__list_events"]
    # "неактивность" stems as "неактивный" does; its entry is "активность"'s only by sense.
    assert "team__list_members" not in names(registry, "неактивность")


def test_the_bundled_lexicon_reads_activities_as_activities(engine_name: str) -> None:
    reg = ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]
    # "activate" -> "enable" is a bundled entry: it fires on "activated" only.
    assert names(reg, "activated")[:1] == ["flags__enable_flag"]
    assert "flags__enable_flag" not in names(reg, "recent activities")


def test_keys_are_stems_told_apart() -> None:
    for words in (
        ("activate", "activates", "activated", "activating"),
        ("copy", "copies", "copied", "copying"),
        ("stop", "stopped", "stopping"),
        ("agree", "agreed"),
        ("browse", "browsing", "browses"),
        ("speed", "speeds"),
        ("branch", "branches"),
        ("status", "statuses"),
    ):
        assert len({english_base(w) for w in words}) == 1, words
    assert english_base("activities") != english_base("activate")
    assert lexicon_key("actively", "activ") != lexicon_key("activate", "activ")
    assert lexicon_key("активных", "активн") == "активн"
    assert lexicon_key("активности", "активн") == "активн:ост"
    assert lexicon_key("日本", "日本") == "日本"


@pytest.mark.engine_agnostic  # it compares both engines itself
def test_a_host_entry_of_many_targets_keeps_each_once_and_a_repeated_word_expands_alike() -> None:
    # A host's lexicon may give one entry thousands of targets: each is kept once, in order,
    # and a word the request repeats expands as it does once (terms keep their best
    # weight), on both engines alike.
    targets = [f"widget{n:05d}" for n in range(20_000)]
    lexicon = [("read", " ".join(targets[:12_000])), ("read", " ".join(targets[6_000:]))]
    tools = [
        Tool(name=f"t{n}", description=f"Open widget{n:05d} today.") for n in range(0, 20_000, 997)
    ]
    made = {e: ToolRegistry(tools, lexicon=lexicon, engine=e) for e in ("native", "pure")}
    once = {e: r.query_terms("read") for e, r in made.items()}
    assert once["native"] == once["pure"]
    expanded = [t for t, _ in once["native"]]
    assert len(expanded) == len(set(expanded)) and len(expanded) > 20  # the tools' widgets
    for engine, registry in made.items():
        assert registry.query_terms("read " * 800) == once[engine]
        assert registry.query_terms(
            "read please, read the " + "read " * 50
        ) == registry.query_terms("read please the")
