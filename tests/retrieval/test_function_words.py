"""A request whose only match is a function word is answered as an empty request is."""

from __future__ import annotations

import pytest

from toolsurface import Tool, ToolRegistry
from toolsurface.retrieval.analysis.function_words import FUNCTION_WORDS

TOOLS = [
    Tool(name="docs__search_anything", description="Search anything and everything, whatever."),
    Tool(name="team__list_members", description="List the members of a team."),
    Tool(name="jobs__schedule", description="Запустить задачу когда угодно."),
]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]


def ranked(hits: list) -> list[tuple[str, float]]:  # type: ignore[type-arg]
    return [(h.name, h.score) for h in hits]


@pytest.mark.parametrize("query", ["whatever", "anything?", "whats everything", "когда?"])
def test_function_words_alone_answer_as_an_empty_request(
    registry: ToolRegistry, query: str
) -> None:
    empty = registry.search("", k=3)
    hits = registry.search(query, k=3)
    # The registry's answer to a request without terms: tools in registration order at 0.
    assert ranked(hits) == ranked(empty)
    assert [h.name for h in hits] == [t.name for t in TOOLS]
    assert all(h.score == 0.0 and not h.fallback for h in hits)


def test_a_function_word_beside_content_still_ranks(registry: ToolRegistry) -> None:
    assert registry.search("list members whatever", k=1)[0].name == "team__list_members"
    # A word of content that matches nothing ("membrs" would, as French "membres", docs/
    # analysis.md §4a): the fallback reads it, the function word not.
    hits = registry.search("whatever membrz", k=3)
    assert [h.name for h in hits] == ["team__list_members"]
    assert hits[0].fallback


def test_an_expansion_of_function_words_is_no_content(engine_name: str) -> None:
    reg = ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        lexicon=[("сколько", "members"), ("участники", "members")],
    )
    assert all(h.score == 0.0 for h in reg.search("сколько?", k=3))
    assert reg.search("сколько участников", k=1)[0].name == "team__list_members"


def test_the_list_is_folded_and_sorted() -> None:
    assert list(FUNCTION_WORDS) == sorted(set(FUNCTION_WORDS))
    assert all(w == w.lower() and "ё" not in w for w in FUNCTION_WORDS)
