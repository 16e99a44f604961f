"""Near names: what a model that invented a tool name is pointed to, and at what cost."""

from __future__ import annotations

import random

import pytest

from toolsurface.admission import near_names
from toolsurface.admission.near_names import MAX_ASKED_CHARS, NearNames, nearest_names, words

NAMES = [
    "github__list_issues",
    "github__create_issue",
    "github__get_issue",
    "gitlab__list_issues",
    "slack__post_message",
    "slack__list_channels",
    "Mcp_Github_list_issues",
]


def test_words_split_at_connectors_and_camel_case() -> None:
    assert words("Mcp_Github-listIssues.v2") == ["mcp", "github", "list", "issues", "v2"]


def test_a_case_change_comes_first_then_one_word_away_then_similar() -> None:
    near = NearNames(NAMES)
    assert near.nearest("GITHUB__LIST_ISSUES", n=1) == ["github__list_issues"]
    assert near.nearest("github__list_isues") == [
        "github__list_issues",
        "gitlab__list_issues",
        "Mcp_Github_list_issues",
    ]
    assert near.nearest("github__listissues", n=1) == ["github__list_issues"]
    assert near.nearest("slack__post_msg", n=1) == ["slack__post_message"]
    # No word in common and little alike: nothing is suggested.
    assert near.nearest("weather_forecast") == []


def test_a_name_is_never_its_own_suggestion_and_n_is_honoured() -> None:
    near = NearNames(NAMES)
    assert "github__get_issue" not in near.nearest("github__get_issue", n=10)
    assert near.nearest("github__list_issues", n=0) == []
    assert len(near.nearest("github__list", n=2)) == 2
    assert NearNames([]).nearest("anything") == []


def test_a_name_with_no_separator_is_still_found_in_a_small_catalogue() -> None:
    assert nearest_names("githubcreateissue", NAMES, 1) == ["github__create_issue"]


def test_the_answer_ignores_what_lies_past_the_cap() -> None:
    near = NearNames(NAMES)
    long = "github__list_isues" + "x" * (MAX_ASKED_CHARS - len("github__list_isues"))
    assert near.nearest(long + "junk" * 10_000) == near.nearest(long)


def test_a_real_name_with_a_typo_is_pointed_back_to_it(mcp_tools: list) -> None:
    # Invented names made from real ones the way models slip (a letter wrong or missing, the
    # case changed): the real name is among the three suggestions, first for a case change.
    names = sorted(t.name for t in mcp_tools)
    near = NearNames(names)
    rnd = random.Random(7)
    missed = []
    for name in rnd.sample(names, 300):
        at = rnd.randrange(len(name))
        wrong = "q" if name[at] != "q" else "z"
        for asked in (name[:at] + wrong + name[at + 1 :], name[:at] + name[at + 1 :]):
            if asked not in names and name not in near.nearest(asked, n=3):
                missed.append((asked, name))
        assert near.nearest(name.upper(), n=1) == [name]
    assert missed == []


def test_the_work_per_name_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    # A catalogue where one word is on every name: an asked name made of it reads at most the
    # postings budget, and scores at most MAX_CANDIDATES names.
    names = [f"common_word_{i}" for i in range(20_000)]
    near = NearNames(names)
    scored: list[int] = []
    real_extract = near_names.process.extract

    def counting_extract(query: str, choices: list[str], **kw: object) -> object:
        scored.append(len(choices))
        return real_extract(query, choices, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(near_names.process, "extract", counting_extract)
    found = near.nearest("common_word_x")
    assert found and all(n.startswith("common_word_") for n in found)
    assert scored == [near_names.MAX_CANDIDATES]


def test_a_repeated_name_is_answered_from_memory() -> None:
    near = NearNames(NAMES)
    first = near.nearest("github__list_isues")
    assert near.nearest("github__list_isues") == first
    assert ("github__list_isues", 3) in near._memo
    first.append("mutated")
    assert "mutated" not in near.nearest("github__list_isues")


def test_the_kept_index_follows_a_changed_list() -> None:
    from toolsurface.admission.text import nearest_names as kept_nearest

    names = ["alpha__read_file", "beta__send_mail"]
    assert kept_nearest("alpha__read_fil", names) == ["alpha__read_file"]
    names[0] = "gamma__read_file"  # the caller's list changes after the call
    assert kept_nearest("gamma__read_fil", names) == ["gamma__read_file"]


def test_a_refusal_shows_the_invisible_characters_that_made_the_name_unknown() -> None:
    """A NUL or a zero-width space is written out, not dropped: 'a__b' beside "Closest: a__b"
    would tell the model nothing; and nothing unsafe reaches the text."""
    from toolsurface import Tool, ToolCall, ToolRegistry, ToolSurface, tool_search_tool

    reg = ToolRegistry(
        [tool_search_tool(), *(Tool(name=n, description="A tool.") for n in NAMES[:5])]
    )
    reg.declare_group("slack", prefix="slack__", load="lazy")
    surface = ToolSurface(reg)
    surface.plan()
    [verdict] = surface.admit([ToolCall("github__list_issues\x00", {})])
    assert verdict.message.startswith(
        "Unknown tool 'github__list_issues\\x00': no such tool is available to you."
    )
    assert "Closest: github__list_issues" in verdict.message
    answer = surface.tool_search({"group": "slack\u200b"}).text
    assert answer.startswith("Unknown group 'slack\\u200b'.")
    shown = surface.tool_search({"select": ["x\u202e" * 500]}).text
    assert "\u202e" not in shown and "\\u202e" in shown
    assert len(shown) < 400  # cut: a long name costs a bounded line
