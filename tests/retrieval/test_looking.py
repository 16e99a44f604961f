"""A request's verbs of looking: what ``without_looking`` blanks, and what it leaves."""

from __future__ import annotations

import pytest

from toolsurface.retrieval.looking import LOOKING_WORDS, without_looking


@pytest.mark.parametrize(
    ("query", "left"),
    [
        ("Find the best ramen in Tokyo", "  the best ramen in Tokyo"),
        ("FIND ramen, then SHOW it", "  ramen, then   it"),
        ("Найди кофейни рядом с Патриками", "  кофейни рядом с Патриками"),
        ("zeig mir Ramen in Tokio", "  mir Ramen in Tokio"),
        ("muéstrame los mejores ramen", "  los mejores ramen"),
        ("знайди кав'ярні поруч", "  кав'ярні поруч"),
    ],
)
def test_each_verb_of_looking_is_blanked_whole_in_any_case(query: str, left: str) -> None:
    assert without_looking(query) == left


@pytest.mark.parametrize(
    "query",
    [
        # Words that only begin or end like a verb of looking.
        "a finder for listening shows",
        "overview of the showcase",
        # The verbs of searching name what a search tool does: a match of them is content.
        "search the web for ramen",
        "look up the weather in Tokyo",
        "поищи рамен в Токио",
        "",
    ],
)
def test_a_request_without_one_is_left_alone(query: str) -> None:
    assert without_looking(query) is None


def test_no_verb_of_searching_is_listed() -> None:
    assert not {"search", "lookup", "look", "поищи", "busca", "cherche", "suche"} & set(
        LOOKING_WORDS
    )
