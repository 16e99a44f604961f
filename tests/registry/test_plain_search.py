"""The native engine's ``search``: a plain call answered without a Python frame.

A registry on the native engine answers ``registry.search(query, k)`` in the engine
(``_native.PlainSearch``), making ``ToolRegistry.search``'s hot-path checks on the
registry's state. What a host sees must not change: every call, in every state the
registry passes through, answers what the Python method answers, at once after a change.
"""

from __future__ import annotations

import copy
import functools
import gc
import inspect
import weakref
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from unittest import mock

import pytest

from tests.conftest import native_available
from toolsurface import FieldValues, RetrievalSettings, Tool, ToolRegistry

#: The method as defined, before any test patches it.
_SEARCH = ToolRegistry.search

pytestmark = [
    pytest.mark.engine_agnostic,
    pytest.mark.skipif(not native_available(), reason="the native core is not built here"),
]

TOOLS = [
    Tool(name="github__list_pull_requests", description="List pull requests in a repository."),
    Tool(name="github__create_issue", description="Create a new issue in a repository."),
    Tool(name="slack__send_message", description="Send a message to a Slack channel."),
    Tool(name="fs__read_file", description="Read a file from disk."),
    Tool(name="fs__write_file", description="Write text to a file on disk."),
    Tool(name="jira__search_issues", description="Search issues with a JQL query."),
]

QUERIES = [
    "list the open pull requests",
    "покажи открытые пулреквесты",
    "прочитай файл",
    "post a message to the team channel",
    "what issues are in jira?",
    "",
    "the",
    "zzqx florbnic",
    "read \ud800 file",  # a lone surrogate: the full path cleans it
    "read a file " * 400,  # past QUERY_MAX_CHARS: the full path cuts it
]


def native() -> ToolRegistry:
    return ToolRegistry(TOOLS, engine="native", semantic=False)


def same_as_the_method(registry: ToolRegistry, *args: object, **kwargs: object) -> None:
    """``registry.search`` answers as ``ToolRegistry.search``, hits or error."""

    def outcome(search: Callable[..., object]) -> object:
        try:
            return search(*args, **kwargs)
        except Exception as exc:
            return (type(exc), str(exc))

    assert outcome(registry.search) == outcome(partial(ToolRegistry.search, registry))


def test_the_native_registry_search_is_the_engines() -> None:
    registry = native()
    assert type(registry.search).__name__ == "builtin_function_or_method"
    assert [h.name for h in registry.search("прочитай файл", 1)] == ["fs__read_file"]
    pure = ToolRegistry(TOOLS, engine="pure", semantic=False)
    assert "search" not in vars(pure)


def test_every_plain_call_answers_as_the_method() -> None:
    registry = native()
    for query in QUERIES:
        for k in (0, 1, 3, 10, 2**70):
            same_as_the_method(registry, query, k)
            same_as_the_method(registry, query, k=k)
        same_as_the_method(registry, query)
        same_as_the_method(registry, query=query)


def test_calls_of_other_shapes_take_the_method_with_its_errors() -> None:
    registry = native()
    same_as_the_method(registry, "read a file", 2, explain=True)
    same_as_the_method(registry, "read a file", admitted={"fs__write_file"})
    same_as_the_method(registry, "read a file", settings=RetrievalSettings(k1=0.9))
    for bad in ((5,), ("read", -1), ("read", True), ("read", 1.5), ("read", None), ()):
        same_as_the_method(registry, *bad)
    same_as_the_method(registry, "read", 1, 2)
    same_as_the_method(registry, "read", k=1, bogus=2)
    same_as_the_method(registry, "read", 1, k=2)
    assert [h.name for h in registry.search("read a file", 1, explain=True)] == ["fs__read_file"]


class Fixed:
    """A host ranker that always puts one tool first."""

    def __init__(self, name: str) -> None:
        self.name = name

    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        return [self.name]


def first(registry: ToolRegistry, query: str) -> str | None:
    hits = registry.search(query, 3)
    assert hits == ToolRegistry.search(registry, query, 3)
    return hits[0].name if hits else None


def test_every_change_of_the_registry_is_seen_by_the_next_search(tmp_path: Path) -> None:
    registry = native()
    assert first(registry, "reserve a conference room") is None
    registry.register(Tool(name="cal__book_room", description="Reserve a conference room."))
    assert first(registry, "reserve a conference room") == "cal__book_room"
    registry.unregister("cal__book_room")
    assert first(registry, "reserve a conference room") is None

    assert first(registry, "who is babysitting prod") is None
    registry.learn("who is babysitting prod", "slack__send_message")
    assert first(registry, "who is babysitting prod") == "slack__send_message"
    registry.save_learned(tmp_path / "learned.json")
    registry.forget()
    assert first(registry, "who is babysitting prod") is None
    registry.load_learned(tmp_path / "learned.json")
    assert first(registry, "who is babysitting prod") == "slack__send_message"

    before = registry.search("issues", 3)
    registry.declare_group("jira", prefix="jira__", aliases=["jira"])
    assert first(registry, "issues in jira") == "jira__search_issues"
    registry.settings = RetrievalSettings(
        weights=FieldValues(name=9.0, search_hint=1.0, summary=0.1, body=0.1, params=0.1)
    )
    assert registry.search("issues", 3) != before
    assert first(registry, "issues") is not None

    def names(query: str) -> list[str]:
        hits = registry.search(query, 3)
        assert hits == ToolRegistry.search(registry, query, 3)
        return [h.name for h in hits]

    assert "fs__write_file" not in names("send a message")
    registry.retrievers.append(Fixed("fs__write_file"))
    assert "fs__write_file" in names("send a message")
    registry.retrievers.clear()
    assert "fs__write_file" not in names("send a message")
    registry.retrievers = [Fixed("fs__write_file")]
    assert "fs__write_file" in names("send a message")


def test_a_bound_search_keeps_its_registry_which_is_collected_once_dropped() -> None:
    search = native().search
    assert [h.name for h in search("read a file", 1)] == ["fs__read_file"]
    assert search("the", 1)[0].score == 0.0  # the method's fill-in, through the registry
    registry = native()
    registry.search("read a file")
    gone = weakref.ref(registry)
    del registry, search
    gc.collect()
    assert gone() is None


def test_a_subclass_search_is_its_own() -> None:
    class Counting(ToolRegistry):
        calls = 0

        def search(self, query: str, k: int = 10, **options: object) -> list:  # type: ignore[override]
            Counting.calls += 1
            return super().search(query, k, **options)  # type: ignore[arg-type]

    registry = Counting(TOOLS, engine="native", semantic=False)
    assert [h.name for h in registry.search("read a file", 1)] == ["fs__read_file"]
    assert Counting.calls == 1


def test_a_patch_of_the_class_search_is_what_every_registry_calls() -> None:
    calls: list[str] = []

    @functools.wraps(ToolRegistry.search)
    def traced(self: ToolRegistry, query: str, *args: object, **kwargs: object) -> object:
        calls.append(query)
        return _SEARCH(self, query, *args, **kwargs)  # type: ignore[arg-type]

    before = native()
    with mock.patch.object(ToolRegistry, "search", traced):
        during = native()  # made under the patch: the patch is its search
        assert [h.name for h in during.search("read a file", 1)] == ["fs__read_file"]
        assert [h.name for h in before.search("read a file", 1)] == ["fs__read_file"]
    assert calls == ["read a file", "read a file"]
    assert before.search("read a file", 1) == _SEARCH(before, "read a file", 1)
    with mock.patch.object(ToolRegistry, "search", autospec=True) as spied:
        native().search("read a file")
        assert spied.call_count == 1


def test_a_registry_given_another_class_searches_with_its_search() -> None:
    class Fixed(ToolRegistry):
        def search(self, query: str, k: int = 10, **options: object) -> list:  # type: ignore[override]
            return ["fixed"]

    registry = native()
    registry.search("read a file")
    registry.__class__ = Fixed
    assert registry.search("read a file") == ["fixed"]


def test_a_copy_searches_its_own_state() -> None:
    registry = native()
    copied = copy.copy(registry)
    copied.settings = RetrievalSettings(k1=0.5)
    for query in ("read a file", "send a message"):
        assert copied.search(query, 3) == _SEARCH(copied, query, 3)
        assert registry.search(query, 3) == _SEARCH(registry, query, 3)
    assert copied.search("read a file", 3) != registry.search("read a file", 3)


def test_a_subclass_with_state_of_its_own_keeps_the_method() -> None:
    class Tuned(ToolRegistry):
        boost = False

        @property
        def settings(self) -> RetrievalSettings:  # type: ignore[override]
            return RetrievalSettings(k1=0.5) if self.boost else self.__dict__["settings"]

        @settings.setter
        def settings(self, value: RetrievalSettings) -> None:
            self.__dict__["settings"] = value

    registry = Tuned(TOOLS, engine="native", semantic=False)
    assert "search" not in vars(registry)
    plain = registry.search("read a file", 3)
    registry.boost = True
    assert registry.search("read a file", 3) != plain


def test_the_signature_is_the_methods() -> None:
    shown = inspect.signature(native().search).parameters
    method = inspect.signature(ToolRegistry.search).parameters
    assert list(shown) == [name for name in method if name != "self"]
    assert {n: p.default for n, p in shown.items()} == {
        n: p.default for n, p in method.items() if n != "self"
    }
    assert "ToolRegistry.search" in (native().search.__doc__ or "")
