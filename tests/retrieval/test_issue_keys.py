"""Issue keys: a request that writes ``ENG-1423`` is about an issue (docs/analysis.md §4)."""

from __future__ import annotations

import pytest

from toolsurface import RetrievalSettings, Tool, ToolRegistry
from toolsurface.retrieval.analysis.analyzer import shape_of

TOOLS = [
    Tool(name="tracker__update_issue", description="Update an issue: its state, title or labels."),
    Tool(name="fs__move_file", description="Move a file to another folder."),
    Tool(name="docs__move_page", description="Move a page under another parent page."),
]


def _terms(registry: ToolRegistry, query: str) -> dict[str, float]:
    return dict(registry.query_terms(query))


def test_an_issue_key_puts_the_issue_tool_first(engine_name: str) -> None:
    registry = ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]
    assert registry.search("move ENG-1423 to Done", k=1)[0].name == "tracker__update_issue"
    # Without the lexicon there is no expansion, and the verb's tools win.
    plain = ToolRegistry(TOOLS, engine=engine_name, lexicon=None)  # type: ignore[arg-type]
    assert plain.search("move ENG-1423 to Done", k=1)[0].name != "tracker__update_issue"


def test_the_key_expands_at_the_expansion_weight_half_in_the_payload(engine_name: str) -> None:
    settings = RetrievalSettings(expansion_weight=0.8)
    registry = ToolRegistry(TOOLS, engine=engine_name, settings=settings)  # type: ignore[arg-type]
    assert _terms(registry, "move ENG-1423")["issu"] == pytest.approx(0.8)
    assert _terms(registry, 'close it: "dup of OPS-7"')["issu"] == pytest.approx(0.4)
    # Two keys add the term once; the strongest weight stays.
    assert _terms(registry, 'link PROJ-7 to "OPS-8"')["issu"] == pytest.approx(0.8)
    for not_a_key in ("move eng-1423", "move Eng-1", "use A-1", "ENG-14a", "ENG-1-2", "ENG_12"):
        assert "issu" not in _terms(registry, not_a_key), not_a_key
    off = ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        settings=RetrievalSettings(expansion_weight=0.0),
    )
    assert "issu" not in _terms(off, "move ENG-1423")


def test_a_hosts_lexicon_says_what_a_key_expands_to(engine_name: str) -> None:
    lexicon = [("<issue-key>", "ticket card"), ("issue key", "jira")]
    registry = ToolRegistry(TOOLS, engine=engine_name, lexicon=lexicon, word_forms=False)  # type: ignore[arg-type]
    terms = _terms(registry, "close ENG-9")
    assert "ticket" in terms and "card" in terms and "issu" not in terms
    # The shape matches no words: "issue key" written out is an ordinary source.
    assert "jira" in _terms(registry, "which issue key")
    assert "ticket" not in _terms(registry, "which issue key")
    none = ToolRegistry(TOOLS, engine=engine_name, lexicon=[("pr", "pull request")])  # type: ignore[arg-type]
    assert "issu" not in _terms(none, "close ENG-9")


def test_an_unknown_shape_is_refused_naming_the_entry(engine_name: str) -> None:
    with pytest.raises(ValueError, match=r"lexicon entry 1 \('<issue-id>'\): unknown shape"):
        ToolRegistry(
            TOOLS,
            engine=engine_name,  # type: ignore[arg-type]
            lexicon=[("pr", "pull request"), ("<issue-id>", "issue")],
            word_forms=False,
        )
    # Only `<` lower-case letters and hyphens `>` is a shape's form.
    assert shape_of("<issue-key>") == "<issue-key>"
    assert shape_of("<Issue-Key>") is None and shape_of("<v2>") is None
