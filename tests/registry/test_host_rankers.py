"""Host rankers in both shapes: toolsurface's ``rank(query, names, k)`` and protocore's
``rank(query, documents, limit)``, fused into a search; a failing one is counted and reported.
"""

from __future__ import annotations

import logging
import types
import warnings
from collections.abc import Sequence
from typing import Any

import pytest

import toolsurface
import toolsurface.registry
import toolsurface.registry.registry
from toolsurface import (
    DocumentRanker,
    HostRanker,
    RankerFailure,
    Tool,
    ToolDocument,
    ToolRegistry,
)
from toolsurface.adapters.documents import DocumentRetriever
from toolsurface.retrieval.fusion import takes_documents

TOOLS = [
    Tool(
        name="github__list_pull_requests",
        description="List pull requests in a repository. Filter by state.",
        input_schema={
            "type": "object",
            "properties": {"repo": {"type": "string", "description": "Repository"}},
        },
    ),
    Tool(name="github__create_issue", description="Create a new issue in a repository."),
    Tool(name="slack__send_message", description="Send a message to a Slack channel."),
    Tool(
        name="calendar__create_event",
        description="Create a calendar event or meeting.",
        search_hint="schedule a call",
    ),
    Tool(name="fs__read_file", description="Read the contents of a file from disk."),
]


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(TOOLS, engine=engine_name)  # type: ignore[arg-type]


class SeedRanker:
    """A ranker written for protocore: it reads documents, and prefers calendar tools."""

    def __init__(self) -> None:
        self.seen: list[Sequence[Any]] = []

    def rank(self, query: str, documents: Sequence[Any], limit: int) -> Sequence[str]:
        self.seen.append(documents)
        hits = [d.name for d in documents if "calendar" in d.description.lower()]
        return hits[:limit]


class NamesRanker:
    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        return [n for n in names if n.startswith("calendar")][:k]


class Broken:
    def rank(self, query: str, names: Sequence[str], k: int) -> Sequence[str]:
        raise RuntimeError("embedding service down")


class BrokenSeed:
    def rank(self, query: str, documents: Sequence[Any], limit: int) -> Sequence[str]:
        raise ConnectionError("vector store unreachable")


# -- the two shapes ---------------------------------------------------------------------------


def test_shape_is_read_from_the_parameter_names() -> None:
    assert takes_documents(SeedRanker())
    assert takes_documents(DocumentRetriever())
    assert not takes_documents(NamesRanker())

    class Docs:
        def rank(self, q: str, docs: Sequence[Any], n: int) -> Sequence[str]:
            return []

    class Limit:
        def rank(self, text: str, items: Sequence[Any], limit: int) -> Sequence[str]:
            return []

    class Star:
        def rank(self, *args: Any) -> Sequence[str]:
            return []

    assert takes_documents(Docs()) and takes_documents(Limit())
    assert not takes_documents(Star())  # nothing to read: toolsurface's own shape
    own = types.SimpleNamespace(rank=lambda query, documents, limit: [])
    assert takes_documents(own)
    assert not takes_documents(types.SimpleNamespace(rank=lambda query, names, k: []))
    assert isinstance(SeedRanker(), DocumentRanker) and isinstance(NamesRanker(), HostRanker)


def test_a_protocore_ranker_is_given_documents(registry: ToolRegistry) -> None:
    seed = SeedRanker()
    lexical = [h.name for h in registry.search("schedule a meeting", k=3)]
    hits = registry.search("set up something", k=3, retrievers=[seed])
    assert hits[0].name == "calendar__create_event"  # only the ranker found it
    docs = seed.seen[-1]
    assert all(isinstance(d, ToolDocument) for d in docs)
    assert [d.name for d in docs] == registry.names()  # every admitted tool, in name order
    by_name = {d.name: d for d in docs}
    assert by_name["calendar__create_event"].search_hint == "schedule a call"
    assert by_name["github__list_pull_requests"].parameters == "repo\nRepository"
    assert by_name["fs__read_file"].description == "Read the contents of a file from disk."
    assert lexical[0] == "calendar__create_event"


def test_documents_are_kept_per_generation_and_admitted_only(registry: ToolRegistry) -> None:
    seed = SeedRanker()
    registry.search("meeting", retrievers=[seed])
    registry.search("call", retrievers=[seed])
    assert seed.seen[0] is seed.seen[1]  # the same list while the catalogue stands
    admitted = {"calendar__create_event", "fs__read_file"}
    registry.search("meeting", admitted=admitted, retrievers=[seed])
    assert {d.name for d in seed.seen[-1]} == admitted
    registry.register(Tool(name="calendar__delete_event", description="Delete a calendar event."))
    hits = registry.search("remove", retrievers=[seed])
    assert "calendar__delete_event" in [d.name for d in seed.seen[-1]]
    assert hits[0].name in {"calendar__create_event", "calendar__delete_event"}


def test_both_shapes_fuse_alike(registry: ToolRegistry) -> None:
    names = registry.search("set up something", k=3, retrievers=[NamesRanker()])
    documents = registry.search("set up something", k=3, retrievers=[SeedRanker()])
    assert names == documents


def test_document_retriever_plugs_into_the_registry_unchanged(engine_name: str) -> None:
    # protocore's drop-in, given as a registry's ranker: it is handed the same list while
    # the catalogue stands, so it builds its index once.
    retriever = DocumentRetriever(engine=engine_name)  # type: ignore[arg-type]
    registry = ToolRegistry(TOOLS, engine=engine_name, retrievers=[retriever])  # type: ignore[arg-type]
    for query in ["send a message", "read a file", "open pull requests", "встреча"]:
        assert registry.search(query, k=3)
    assert registry.search("send a message", k=1)[0].name == "slack__send_message"
    assert retriever.builds == 1
    assert registry.ranker_errors == 0


# -- a ranker that fails ----------------------------------------------------------------------


def test_a_failing_ranker_is_counted_reported_and_logged(
    registry: ToolRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    failures: list[RankerFailure] = []
    registry.on_ranker_error = failures.append
    lexical = registry.search("send message", k=3)
    with caplog.at_level(logging.ERROR, logger="toolsurface"):
        hits = registry.search("send message", k=3, retrievers=[Broken(), BrokenSeed()])
    assert hits == lexical  # the search still answers
    assert registry.ranker_errors == 2
    assert registry.ranker_error_counts() == {
        f"{__name__}.Broken": 1,
        f"{__name__}.BrokenSeed": 1,
    }
    assert [(f.takes, type(f.error)) for f in failures] == [
        ("names", RuntimeError),
        ("documents", ConnectionError),
    ]
    assert failures[0].query == "send message" and isinstance(failures[0].ranker, Broken)
    assert failures[1].label == f"{__name__}.BrokenSeed"
    assert "embedding service down" in caplog.text and "vector store unreachable" in caplog.text
    registry.search("send message", k=3, retrievers=[Broken()])
    assert registry.ranker_errors == 3


def test_an_answer_that_is_no_list_of_names_is_a_failure(registry: ToolRegistry) -> None:
    class Stringly:
        def rank(self, query: str, names: Sequence[str], k: int) -> Any:
            return "slack__send_message"

    class Nothing:
        def rank(self, query: str, names: Sequence[str], k: int) -> Any:
            return None

    failures: list[RankerFailure] = []
    registry.on_ranker_error = failures.append
    lexical = registry.search("send message", k=3)
    assert registry.search("send message", k=3, retrievers=[Stringly(), Nothing()]) == lexical
    assert [type(f.error) for f in failures] == [TypeError, TypeError]
    assert "not a list of names" in str(failures[0].error)
    assert registry.ranker_errors == 2


def test_a_declining_ranker_is_no_failure(registry: ToolRegistry) -> None:
    class Declining:
        def rank(self, query: str, documents: Sequence[Any], limit: int) -> Sequence[str]:
            return []

    assert registry.search("send", retrievers=[Declining()]) == registry.search("send")
    assert registry.ranker_errors == 0


def test_a_failing_callback_is_logged_not_raised(
    engine_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    def callback(failure: RankerFailure) -> None:
        raise ValueError("the host's handler broke")

    registry = ToolRegistry(
        TOOLS,
        engine=engine_name,  # type: ignore[arg-type]
        retrievers=[Broken()],
        on_ranker_error=callback,
    )
    with caplog.at_level(logging.ERROR, logger="toolsurface"):
        assert registry.search("send message", k=1)[0].name == "slack__send_message"
    assert "on_ranker_error callback failed" in caplog.text
    assert registry.ranker_errors == 1


# -- the old name -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "module", [toolsurface, toolsurface.registry, toolsurface.registry.registry]
)
def test_itoolretriever_is_a_deprecated_alias_of_hostranker(module: types.ModuleType) -> None:
    with pytest.warns(DeprecationWarning, match="use HostRanker"):
        old = module.IToolRetriever
    assert old is HostRanker
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        assert isinstance(NamesRanker(), module.IToolRetriever)
    assert "IToolRetriever" not in module.__all__
    with pytest.raises(AttributeError):
        _ = module.NoSuchName
