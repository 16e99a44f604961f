"""What the lexicon injects for words the index knows weighs only the tools those words reach."""

from __future__ import annotations

import pytest

from toolsurface import Tool, ToolRegistry

TOOLS = [
    Tool(name="web__search", description="Search the web."),
    Tool(name="files__find_files", description="Find files by name."),
    Tool(name="places__nearby", description="Restaurants and shops nearby; look up a place."),
    Tool(name="places__search_places", description="Search places such as restaurants."),
    Tool(name="flags__enable_flag", description="Enable a feature flag."),
]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        lexicon=[("look", "search find"), ("activate", "enable"), ("включить", "enable")],
    )


def names(reg: ToolRegistry, query: str) -> list[str]:
    return [h.name for h in reg.search(query, k=5)]


def test_an_intent_phrase_does_not_lift_tools_by_their_name(registry: ToolRegistry) -> None:
    # "look" is a word of the index (the places tool says "look up"): the search and find
    # it injects only weigh the tools the request's words reach.
    got = names(registry, "looking for a restaurant nearby")
    assert "web__search" not in got and "files__find_files" not in got
    assert got[0] == "places__nearby"
    # Among those reached, the injected "search" still weighs.
    assert set(got) == {"places__nearby", "places__search_places"}


def test_a_word_the_index_does_not_know_is_read_through_the_lexicon(
    registry: ToolRegistry,
) -> None:
    # "activate" and "включить" reach no tool themselves: their expansion stands in for them.
    assert names(registry, "activate the feature")[0] == "flags__enable_flag"
    assert names(registry, "включить")[:1] == ["flags__enable_flag"]


def test_without_the_lexicon_the_request_words_rank_alike(engine_name: str) -> None:
    plain = ToolRegistry(TOOLS, engine=engine_name, lexicon=None)  # type: ignore[arg-type]
    with_lex = ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        lexicon=[("look", "search find")],
    )
    # The weak terms reorder nothing outside what the request's own words reach.
    assert set(names(with_lex, "looking for restaurants")) <= set(
        names(plain, "looking for restaurants")
    )


def test_a_word_only_learned_requests_hold_is_still_read_through_the_lexicon(
    registry: ToolRegistry,
) -> None:
    # A host's users taught a Russian request to another tool: "включить" is now a word of
    # the learned field, but no tool's own text reaches it, so its translation stays strong.
    registry.learn("включить поиск по сети", "web__search")
    assert names(registry, "включить")[:1] == ["flags__enable_flag"]
    assert "flags__enable_flag" in names(registry, "включить сеть")
