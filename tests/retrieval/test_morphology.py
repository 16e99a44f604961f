"""Russian word forms derived with pymorphy3: what a lexicon source reaches, on both engines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from toolsurface import Tool, ToolRegistry
from toolsurface.catalogue import demo_catalogue
from toolsurface.retrieval.analysis.morphology import derived_forms
from toolsurface.retrieval.engine.backend import backend

ROOT = Path(__file__).resolve().parents[2]


def reached(entries: list[tuple[str, str]], word: str) -> bool:
    """Whether ``word``'s index terms are a key of ``entries`` once forms are derived."""
    tokens = backend().tokens
    keys = {tuple(tokens(s)) for s, _ in entries + derived_forms(entries, tokens)}
    return tuple(tokens(word)) in keys


def test_a_verb_reaches_its_imperative_first_person_and_other_aspect() -> None:
    entries = [("архивировать", "archive")]
    for form in ("архивируй", "архивирую", "архивируйте", "заархивируй", "заархивирую"):
        assert reached(entries, form), form
    assert not reached([], "архивируй")


def test_a_known_perfective_reaches_its_imperfective_by_the_prefix() -> None:
    # "почистить" is the dictionary's perfective of "чистить": both aspects are reached.
    entries = [("почистить", "clean")]
    assert reached(entries, "почисти") and reached(entries, "чисти")
    assert not reached([], "чисти")


def test_a_loanword_noun_reaches_its_case_forms() -> None:
    entries = [("графана", "grafana")]
    assert reached(entries, "графане") and reached(entries, "графану")


def test_a_guessed_verb_paradigm_is_used_only_when_sure() -> None:
    tokens = backend().tokens
    # pymorphy3 is sure of "задеплоить" (a regular -ить verb it does not know)...
    assert [f for f, _ in derived_forms([("задеплоить", "deploy")], tokens)] == ["задеплою"]
    # ...and not of "смержить", for which it would invent "смерживу".
    assert derived_forms([("смержить", "merge")], tokens) == []


def test_no_form_takes_another_sources_terms_and_order_decides() -> None:
    tokens = backend().tokens
    first = derived_forms([("тикет", "ticket"), ("тикета", "other")], tokens)
    assert all(t == "ticket" for _, t in first)
    assert ("тикета", "ticket") not in first  # a source's own key is never a derived form


def test_the_bundled_lexicons_generated_section_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "gen_lexicon_forms", ROOT / "scripts" / "gen_lexicon_forms.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    text = script.LEXICON.read_text(encoding="utf-8")
    assert script.render(text) == text, "rerun scripts/gen_lexicon_forms.py"


def test_fillers_are_stopwords() -> None:
    tokens = backend().tokens
    assert tokens("слушай, короче, покажи типа пулреквесты плз, кстати") == tokens(
        "покажи пулреквесты"
    )


def test_a_call_reaches_calendar_events() -> None:
    registry = ToolRegistry(demo_catalogue())
    assert registry.search("созвон в зуме", k=1)[0].name == "gcal__create_event"
    only_calls = ToolRegistry(
        [
            Tool(name="calls__start", description="Start a call with a contact."),
            Tool(name="calendar__create_event", description="Create a calendar event."),
        ]
    )
    found = {h.name for h in only_calls.search("созвон", k=2)}
    assert found == {"calls__start", "calendar__create_event"}


def test_a_hosts_own_lexicon_gets_the_forms_and_can_opt_out() -> None:
    tools = [
        Tool(name="archive_repo", description="Archive a repository."),
        Tool(name="delete_repo", description="Delete a repository."),
    ]
    lexicon = [("архивировать", "archive")]
    registry = ToolRegistry(tools, lexicon=lexicon)
    for query in ("архивируй", "архивирую", "заархивируй", "архивируйте репозиторий"):
        assert [h.name for h in registry.search(query, k=1)] == ["archive_repo"], query
    plain = ToolRegistry(tools, lexicon=lexicon, word_forms=False)
    assert plain.search("архивирую", k=1) == []
    assert plain.search("архивировать", k=1)[0].name == "archive_repo"
