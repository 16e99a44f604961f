"""DocumentRetriever: protocore's ``rank(query, documents, limit)`` over a host's documents.

Run on the live engine (CI runs the suite on each). The real-catalogue checks skip when
the shared data is absent; the in-line ones always run.
"""

from __future__ import annotations

import doctest
import logging
import threading
import types
from collections import namedtuple
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

import toolsurface.adapters.documents as documents_module
from toolsurface import RetrievalSettings, Tool, ToolRegistry
from toolsurface.adapters.documents import DocumentRetriever
from toolsurface.models import FieldValues
from toolsurface.retrieval.fields import params_text


@dataclass(frozen=True)
class Doc:
    name: str
    description: str = ""
    search_hint: str = ""
    parameters: str = ""


DOCS = [
    Doc("fs__read_file", "Read a file from disk.", "open cat", "path\nThe file to read"),
    Doc("fs__write_file", "Write text to a file, replacing it.", "", "path\ncontent\nThe text"),
    Doc("fs__list_dir", "List the entries of a directory.", "ls", "path\nThe directory"),
    Doc("web__search", "Search the web for pages.", "google lookup", "query\nWhat to look for"),
    Doc("web__fetch", "Fetch a URL and return its text.", "", "url\nThe page's address"),
    Doc("git__commit", "Record staged changes in the repository.", "", "message\nWhy"),
    Doc("git__log", "Show the commit history of a branch.", "history", "branch\nThe branch"),
]
QUERIES = [
    "read the file at this path",
    "write some text into a file",
    "list the directory",
    "google something",
    "fetch this url",
    "show the commit history",
    "прочитай файл",
    "найди в интернете",
    "nothing matches zzzqqq",
    "file",
]


def schema_of(parameters: str) -> dict[str, Any]:
    """The real-schema equivalent of DOCS' parameters: "name\\ndescription" per property."""
    lines = parameters.split("\n")
    props: dict[str, Any] = {}
    key = None
    for line in lines:
        if key is None or (line.islower() and " " not in line):
            key = line
            props[key] = {}
        else:
            props[key]["description"] = line
    return {"type": "object", "properties": props}


def equivalent_registry(docs: list[Doc], **options: Any) -> ToolRegistry:
    tools = [
        Tool(
            name=d.name,
            description=d.description,
            search_hint=d.search_hint,
            input_schema=schema_of(d.parameters),
        )
        for d in docs
    ]
    return ToolRegistry(tools, **options)


def names(hits: list[Any]) -> list[str]:
    return [h.name for h in hits]


def test_docstring_example_runs() -> None:
    result = doctest.testmod(documents_module)
    assert result.attempted >= 4
    assert result.failed == 0


def test_schema_of_matches_the_parameters_text() -> None:
    # The equivalence below rests on this helper writing each DOCS text back as a schema.
    assert schema_of("path\nThe file to read") == {
        "type": "object",
        "properties": {"path": {"description": "The file to read"}},
    }
    assert list(schema_of("path\ncontent\nThe text")["properties"]) == ["path", "content"]


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_ranking_equals_registry_search_over_equivalent_tools(limit: int) -> None:
    retriever = DocumentRetriever()
    registry = equivalent_registry(DOCS)
    for query in QUERIES:
        assert retriever.rank(query, DOCS, limit) == names(registry.search(query, limit)), query
    # The queries do reach the documents (not a comparison of empty lists).
    assert retriever.rank("read the file at this path", DOCS, 1) == ["fs__read_file"]
    assert retriever.rank("прочитай файл", DOCS, 1) == ["fs__read_file"]


def test_parameters_text_is_indexed_as_the_params_field() -> None:
    # "zebra" only in the parameters: found, and scored as the equivalent tool whose one
    # parameter is described by it (the params field's text is just the host's text).
    docs = [Doc("a_tool", "Does a thing."), Doc("b_tool", "Does another.", "", "zebra")]
    tools = [
        Tool(name="a_tool", description="Does a thing."),
        Tool(name="b_tool", description="Does another.", input_schema=schema_of("zebra")),
    ]
    assert DocumentRetriever().rank("zebra", docs, 5) == ["b_tool"]
    hit = ToolRegistry(tools).search("zebra", 5, explain=True)[0]
    assert hit.explanation is not None
    assert {f for c in hit.explanation for f, v in c.fields.items() if v} == {"params"}


def test_options_reach_the_registry() -> None:
    assert DocumentRetriever(engine="pure").engine == "pure"
    # No lexicon: a Russian request no longer reaches English descriptions.
    assert DocumentRetriever(lexicon=None).rank("прочитай файл", DOCS, 3) == []
    own = DocumentRetriever(lexicon=[("прочитай", "read")]).rank("прочитай", DOCS, 3)
    assert own == ["fs__read_file"]
    # Settings: the hint's weight alone, so only hint words score.
    hint_only = RetrievalSettings(
        weights=FieldValues(name=0.0, search_hint=1.0, summary=0.0, body=0.0, params=0.0)
    )
    retriever = DocumentRetriever(settings=hint_only)
    registry = equivalent_registry(DOCS, settings=hint_only)
    for query in QUERIES:
        assert retriever.rank(query, DOCS, 5) == names(registry.search(query, 5)), query
    assert retriever.rank("history of the file", DOCS, 5) == ["git__log"]


def test_limit() -> None:
    retriever = DocumentRetriever()
    assert retriever.rank("file", DOCS, 0) == []
    assert retriever.rank("file", DOCS, -3) == []
    matching = retriever.rank("path", DOCS, 1_000_000)  # in the three fs tools' parameters
    assert set(matching) == {"fs__read_file", "fs__write_file", "fs__list_dir"}
    assert retriever.rank("path", DOCS, len(DOCS) + 1) == matching
    assert retriever.rank("path", DOCS, 2) == matching[:2]
    with pytest.raises(TypeError, match="limit"):
        retriever.rank("file", DOCS, True)
    with pytest.raises(TypeError, match="limit"):
        retriever.rank("file", DOCS, 2.0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="query"):
        retriever.rank(b"file", DOCS, 2)  # type: ignore[arg-type]


def test_empty_catalogue() -> None:
    retriever = DocumentRetriever()
    assert retriever.rank("file", [], 5) == []
    assert retriever.rank("file", DOCS, 5)[0] == "fs__read_file"
    assert retriever.rank("file", (), 5) == []


# -- names ---------------------------------------------------------------------------------

ODD_NAMES = [
    "ns:weird/name",
    "ns/weird:name",  # the same alias as the first once sanitised
    "ns_weird_name",  # a valid name that alias would be
    "with spaces in it",
    "поиск файлов",
    "отчёт",
    "word " * 60,  # 300 characters
    "",
    ":",
    "émigré",
    "a\ud800b",  # a lone surrogate
    "ok.name-1",
]


#: A word of its own for each odd name, to find it by.
OWN_WORDS = "quokka axolotl narwhal pangolin okapi tapir wombat gecko lemur ibis yak mole".split()


def odd_docs(order: list[str] = ODD_NAMES) -> list[Doc]:
    return [Doc(n, f"Marker {OWN_WORDS[ODD_NAMES.index(n)]}.") for n in order]


def test_odd_names_round_trip() -> None:
    retriever = DocumentRetriever()
    docs = odd_docs()
    for word, name in zip(OWN_WORDS, ODD_NAMES):
        assert retriever.rank(word, docs, 5) == [name]
    everything = retriever.rank("marker", docs, 100)
    assert sorted(everything) == sorted(ODD_NAMES)


def test_odd_names_are_found_by_their_words() -> None:
    retriever = DocumentRetriever()
    docs = odd_docs()
    top = retriever.rank("weird name", docs, 3)
    assert set(top) == {"ns:weird/name", "ns/weird:name", "ns_weird_name"}
    assert retriever.rank("spaces", docs, 5) == ["with spaces in it"]
    assert retriever.rank("поиск", docs, 5) == ["поиск файлов"]  # Cyrillic: through the hint
    assert retriever.rank("отчет", docs, 5) == ["отчёт"]
    assert retriever.rank("emigre", docs, 5) == ["émigré"]
    assert retriever.rank("word", docs, 5) == ["word " * 60]


def test_alias_keeps_the_names_terms() -> None:
    # The alias of a name that needs one searches for the same terms as the name, plus
    # the joined form an identifier always has (checked through the public query_terms).
    registry = ToolRegistry(lexicon=None)
    retriever = DocumentRetriever(lexicon=None)
    docs = [Doc("ns:weird/name"), Doc("get:user/by id"), Doc("valid_name")]
    retriever.rank("x", docs, 1)
    aliases = retriever.internal_names()
    assert aliases == {"ns:weird/name": "ns_weird_name", "get:user/by id": "get_user_by_id"}
    for name, alias in aliases.items():
        original = {t for t, _ in registry.query_terms(name)}
        assert original < {t for t, _ in registry.query_terms(alias)}, name
    assert {t for t, _ in registry.query_terms("ns_weird_name")} == {
        "ns",
        "weird",
        "name",
        "nsweirdnam",
    }


def test_aliases_do_not_depend_on_order() -> None:
    forward = DocumentRetriever()
    backward = DocumentRetriever()
    docs = odd_docs()
    reverse = odd_docs(list(reversed(ODD_NAMES)))
    for query in ["weird name", "marker", "word", "pangolin"]:
        assert forward.rank(query, docs, 20) == backward.rank(query, reverse, 20), query


# -- duplicates: allowed, each document ranked as the host gave it ----------------------------


def test_duplicate_names_are_ranked_each_on_its_own_fields() -> None:
    # Two servers' bare "create_issue", one GitHub, one Jira: protocore's host passes both.
    docs = [
        Doc("create_issue", "Create an issue in a GitHub repository.", "", "title\nbody"),
        Doc("list_files", "List the files of a directory."),
        Doc("create_issue", "Create a ticket in Jira.", "jira"),
    ]
    retriever = DocumentRetriever()
    assert retriever.rank("jira", docs, 5) == ["create_issue"]  # the second document alone
    assert retriever.rank("github repository", docs, 5) == ["create_issue"]  # the first alone
    # Both match: the name comes back once per matching document, best first, and the
    # first document (its title parameter) wins "issue title".
    assert retriever.rank("create an issue with a title", docs, 5) == [
        "create_issue",
        "create_issue",
    ]
    assert retriever.rank("create an issue with a title", docs, 1) == ["create_issue"]
    assert retriever.builds == 1


def test_duplicates_score_as_documents_of_their_own() -> None:
    # Each document counts in the document frequency, as the equivalent registry of distinct
    # names scores it: a name repeated ranks as the same documents under other names.
    twin = [Doc("a_tool", "Read a file."), Doc("b_tool", "Write a file."), Doc("a_tool", "Read.")]
    named = [Doc("a_tool", "Read a file."), Doc("b_tool", "Write a file."), Doc("c_tool", "Read.")]
    retriever = DocumentRetriever()
    for query in ["read", "file", "write a file", "read the file", "reed"]:
        expected = DocumentRetriever().rank(query, named, 5)
        got = retriever.rank(query, twin, 5)
        assert got == [n.replace("c_tool", "a_tool") for n in expected], query


def test_identical_duplicates_score_alike() -> None:
    docs = [
        Doc("dup", "Send an email."),
        Doc("other", "Post a letter."),
        Doc("dup", "Send an email."),
    ]
    assert DocumentRetriever().rank("email", docs, 5) == ["dup", "dup"]
    # The later documents' internal names (trailing underscores) add no index term, so the
    # two are scored exactly alike: a query's place for one is its place for the other.
    registry = ToolRegistry()
    assert registry.terms("dup_") == registry.terms("dup__") == registry.terms("dup")
    with_other = [Doc("dup", "Send an email."), Doc("mail", "Send a mail."), docs[0]]
    assert DocumentRetriever().rank("send an email", with_other, 5) == ["dup", "dup", "mail"]


def test_duplicates_of_odd_and_taken_names() -> None:
    # "x_" is a name of its own: the second "x" is told apart without taking it, and a
    # repeated name that needs an alias ("ns:x") is repeated under that alias.
    docs = [
        Doc("x", "Marker quokka."),
        Doc("x_", "Marker okapi."),
        Doc("x", "Marker tapir."),
        Doc("ns:x", "Marker ibis."),
        Doc("ns:x", "Marker gecko."),
    ]
    retriever = DocumentRetriever()
    for word, name in [("quokka", "x"), ("okapi", "x_"), ("tapir", "x"), ("ibis", "ns:x")]:
        assert retriever.rank(word, docs, 5) == [name], word
    assert retriever.rank("gecko", docs, 5) == ["ns:x"]
    assert sorted(retriever.rank("marker", docs, 10)) == ["ns:x", "ns:x", "x", "x", "x_"]
    assert retriever.internal_names() == {"ns:x": "ns_x"}  # the first document's


def test_duplicates_of_a_name_with_no_room_left() -> None:
    # A 128-character name has no room for an underscore: its second document ends in a
    # hash, and the name's words go to the hint so it is still found by them.
    long_name = "w" * 120 + "_quokkas"
    docs = [Doc(long_name, "First."), Doc(long_name, "Second.")]
    retriever = DocumentRetriever()
    assert retriever.rank("quokkas", docs, 5) == [long_name, long_name]
    assert retriever.rank("second", docs, 5) == [long_name]


def test_many_repeats_and_alias_independence_of_order() -> None:
    docs = [Doc("same", f"Marker {w}.") for w in OWN_WORDS]
    retriever = DocumentRetriever()
    assert retriever.rank("marker", docs, 100) == ["same"] * len(OWN_WORDS)
    for word in OWN_WORDS:
        assert retriever.rank(word, docs, 5) == ["same"], word


# -- protocore's contract, case by case -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SeedDocument:
    """A document as protocore's host makes one: a frozen dataclass with slots, no __dict__."""

    name: str
    description: str
    search_hint: str = ""
    parameters: str = ""


SEED = [SeedDocument(d.name, d.description, d.search_hint, d.parameters) for d in DOCS]


def test_seed_documents_rank_as_any_document() -> None:
    retriever = DocumentRetriever()
    expected = [DocumentRetriever().rank(q, DOCS, 5) for q in QUERIES]
    assert [retriever.rank(q, SEED, 5) for q in QUERIES] == expected
    assert not hasattr(SEED[0], "__dict__")


def test_seed_host_call_pattern() -> None:
    # protocore's registry asks for the whole ranking of the admitted documents, in name
    # order, in a new list on every call: rank(query, documents, len(documents)).
    retriever = DocumentRetriever()
    ordered = sorted(SEED, key=lambda d: d.name)
    first = retriever.rank("file", [d for d in ordered], len(ordered))
    again = retriever.rank("file", [d for d in ordered], len(ordered))
    assert first == again and first[0] == "fs__read_file"
    assert retriever.builds == 1  # a new list of the same documents is no new catalogue
    admitted = [d for d in ordered if d.name.startswith("fs__")]
    assert set(retriever.rank("file", admitted, len(admitted))) <= {d.name for d in admitted}


def test_returns_only_names_of_the_given_documents_best_first() -> None:
    retriever = DocumentRetriever()
    given = {d.name for d in SEED}
    for query in QUERIES:
        for limit in (1, 3, 7, 8, 100):
            got = retriever.rank(query, SEED, limit)
            assert len(got) <= limit and set(got) <= given, (query, limit)
            assert got == retriever.rank(query, SEED, 100)[:limit], (query, limit)


@pytest.mark.parametrize("query", ["", " ", "\t\n", "the and of", "?!"])
def test_a_query_with_nothing_to_match_gives_no_names(query: str) -> None:
    assert DocumentRetriever().rank(query, SEED, 5) == []


def test_limit_cases() -> None:
    retriever = DocumentRetriever()
    assert retriever.rank("file", SEED, 0) == []
    assert retriever.rank("file", SEED, -1) == []
    everything = retriever.rank("path", SEED, len(SEED))
    assert retriever.rank("path", SEED, len(SEED) + 50) == everything
    assert len(everything) == 3  # fewer than limit: only the documents that match


def test_no_documents_gives_no_names() -> None:
    retriever = DocumentRetriever()
    assert retriever.rank("file", [], 5) == []
    assert retriever.rank("", [], 0) == []


def test_a_document_without_hint_or_parameters() -> None:
    # protocore's defaults: search_hint and parameters are empty text.
    docs = [SeedDocument("only_name", "Find the weather.")]
    assert DocumentRetriever().rank("weather", docs, 3) == ["only_name"]


# -- documents of every kind -----------------------------------------------------------------

Row = namedtuple("Row", ["name", "description", "search_hint", "parameters"])
Short = namedtuple("Short", ["name", "description"])  # no hint, no parameters


def test_document_kinds_rank_alike() -> None:
    expected = [DocumentRetriever().rank(q, DOCS, 5) for q in QUERIES]
    kinds: list[list[Any]] = [
        [Row(d.name, d.description, d.search_hint, d.parameters) for d in DOCS],
        [dict(d.__dict__) for d in DOCS],
        [types.MappingProxyType(dict(d.__dict__)) for d in DOCS],
        [types.SimpleNamespace(**d.__dict__) for d in DOCS],
        [DOCS[0].__dict__, *DOCS[1:]],  # a mixed list
    ]
    for docs in kinds:
        retriever = DocumentRetriever()
        assert [retriever.rank(q, docs, 5) for q in QUERIES] == expected, type(docs[0])


def test_missing_and_none_fields_are_empty_text() -> None:
    expected = DocumentRetriever().rank("file", [Doc("a", "A file."), Doc("b", "Bee.")], 5)
    retriever = DocumentRetriever()
    assert retriever.rank("file", [Short("a", "A file."), Short("b", "Bee.")], 5) == expected
    nones = [{"name": "a", "description": "A file.", "search_hint": None}, {"name": "b"}]
    assert retriever.rank("file", nones, 5) == ["a"]


@pytest.mark.parametrize(
    ("docs", "error", "message"),
    [
        ([Doc("a"), {"name": "b", "description": 3}], TypeError, r"document 1 \('b'\): field 'de"),
        ([{"name": "a", "parameters": ["x"]}], TypeError, r"document 0 \('a'\): field 'param"),
        ([Doc("a"), {"description": "no name"}], TypeError, r"document 1 \(a dict\): field 'name'"),
        ([Doc("a"), Doc(7)], TypeError, r"document 1: field 'name' must be a string"),
        ([object()], TypeError, r"document 0 \(a object\): field 'name' is missing"),
    ],
)
def test_bad_documents_are_named(docs: list[Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message):
        DocumentRetriever().rank("q", docs, 3)


def test_not_a_sequence_is_refused() -> None:
    retriever = DocumentRetriever()
    for bad in ["a string", iter(DOCS), {d.name: d for d in DOCS}]:
        with pytest.raises(TypeError, match="documents must be a sequence"):
            retriever.rank("q", bad, 3)  # type: ignore[arg-type]


def test_oversized_and_unclean_text_is_indexed_not_refused(caplog: Any) -> None:
    docs = [
        Doc("long_hint", "Tool.", "hintword " * 600),  # 5,400 characters; Tool caps at 4,096
        Doc("surrogate", "Read a \ud800 file."),
    ]
    retriever = DocumentRetriever()
    with caplog.at_level(logging.WARNING, logger="toolsurface"):
        assert retriever.rank("hintword", docs, 5) == ["long_hint"]
    assert "document 0 ('long_hint'): search_hint of 5400 characters" in caplog.text
    assert retriever.rank("file", docs, 5) == ["surrogate"]


# -- keeping the index -----------------------------------------------------------------------


class Counted:
    """A document that counts reads of its fields (the per-document work of a check)."""

    reads = 0

    def __init__(self, doc: Doc) -> None:
        self._doc = doc

    def __getattr__(self, field: str) -> Any:
        Counted.reads += 1
        return getattr(self._doc, field)


def test_same_sequence_costs_no_rebuild_and_no_reads() -> None:
    docs = [Counted(d) for d in DOCS]
    retriever = DocumentRetriever()
    first = retriever.rank("file", docs, 5)
    assert retriever.builds == 1
    Counted.reads = 0
    for _ in range(3):
        assert retriever.rank("file", docs, 5) == first
    assert retriever.builds == 1
    assert Counted.reads == 0


def test_equal_copy_costs_no_rebuild(monkeypatch: pytest.MonkeyPatch) -> None:
    retriever = DocumentRetriever()
    first = retriever.rank("file", DOCS, 5)
    made: list[int] = []
    real = documents_module.ToolRegistry
    monkeypatch.setattr(
        documents_module, "ToolRegistry", lambda *a, **k: made.append(1) or real(*a, **k)
    )
    copies = [list(DOCS), tuple(DOCS), [Doc(**d.__dict__) for d in DOCS], [vars(d) for d in DOCS]]
    for docs in copies:
        assert retriever.rank("file", docs, 5) == first
    assert retriever.builds == 1
    assert made == []


def test_changed_document_rebuilds_with_new_results() -> None:
    retriever = DocumentRetriever()
    assert retriever.rank("weather", DOCS, 5) == []
    changed = [*DOCS[:3], Doc("web__search", "Weather forecast for a city."), *DOCS[4:]]
    assert retriever.rank("weather", changed, 5) == ["web__search"]
    assert retriever.builds == 2
    grown = [*changed, Doc("new__tool", "Weather radar.")]
    assert set(retriever.rank("weather", grown, 5)) == {"web__search", "new__tool"}
    assert retriever.builds == 3
    assert retriever.rank("radar", grown[:-1], 5) == []  # removed again
    assert retriever.builds == 4
    renamed = [*DOCS[:-1], Doc("git:log", DOCS[-1].description)]
    assert retriever.rank("commit history", renamed, 1) == ["git:log"]
    assert retriever.builds == 5


def test_in_place_change_at_the_same_length_needs_invalidate() -> None:
    # The documented contract: the same list at the same length is not re-read.
    docs = list(DOCS)
    retriever = DocumentRetriever()
    assert retriever.rank("weather", docs, 5) == []
    docs[3] = Doc("web__search", "Weather forecast for a city.")
    assert retriever.rank("weather", docs, 5) == []  # not noticed: same object, same length
    retriever.invalidate()
    assert retriever.rank("weather", docs, 5) == ["web__search"]
    assert retriever.builds == 2
    docs.append(Doc("new__tool", "Weather radar."))  # a new length is noticed by itself
    assert set(retriever.rank("weather", docs, 5)) == {"web__search", "new__tool"}
    retriever.invalidate()  # nothing changed since: compared, not rebuilt
    retriever.rank("weather", docs, 5)
    assert retriever.builds == 3


def test_concurrent_rank_sees_whole_catalogues() -> None:
    other = [Doc(d.name.replace("fs__", "disk__"), d.description, d.search_hint) for d in DOCS]
    catalogues = [DOCS, other]
    reference = DocumentRetriever()
    expected = [{q: reference.rank(q, c, 5) for q in QUERIES} for c in catalogues]
    retriever = DocumentRetriever()
    failures: list[str] = []
    start = threading.Barrier(4)

    def work(worker: int) -> None:
        start.wait()
        try:
            for round_ in range(40):
                which = (worker + round_) % 2
                # New lists each time: every call goes through the check, half through rebuilds.
                docs = list(catalogues[which])
                for q in QUERIES[:4]:
                    got = retriever.rank(q, docs, 5)
                    if got != expected[which][q]:
                        failures.append(f"worker {worker} round {round_} {q!r}: {got}")
        except Exception as exc:  # a worker that fails must fail the test, not warn
            failures.append(f"worker {worker}: {exc!r}")

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert retriever.builds >= 2


# -- the real catalogue ----------------------------------------------------------------------


def _without_enums(value: Any, names: bool = False) -> Any:
    # Enum values are indexed with the body; a host's parameters text has none. The keys of
    # a `properties` or definitions map are names, not keywords, and are kept.
    if isinstance(value, Mapping):
        return {
            k: _without_enums(v, not names and k in ("properties", "$defs", "definitions"))
            for k, v in value.items()
            if names or k != "enum"
        }
    if isinstance(value, list):
        return [_without_enums(v) for v in value]
    return value


@pytest.fixture(scope="module")
def real_pair(mcp_tools: list[Tool]) -> tuple[list[Row], ToolRegistry]:
    docs = []
    tools = []
    for t in mcp_tools:
        # The host's flattening: the library's own parameter walk (docs/analysis.md §1).
        docs.append(Row(t.name, t.description, t.search_hint, params_text(t.input_schema)))
        # A document carries no read-only hint (docs/analysis.md §10), so neither does its twin.
        twin = {"input_schema": _without_enums(t.input_schema), "read_only": None}
        tools.append(t.model_copy(update=twin))
    return docs, ToolRegistry(tools)


def test_real_catalogue_ranks_as_registry_search(
    real_pair: tuple[list[Row], ToolRegistry], dev_queries: list[dict[str, Any]]
) -> None:
    docs, registry = real_pair
    retriever = DocumentRetriever()
    found = 0
    for row in dev_queries:
        got = retriever.rank(row["query"], docs, 10)
        assert got == names(registry.search(row["query"], 10)), row["id"]
        found += bool(set(got[:3]) & set(row["expected"]))
    assert retriever.builds == 1
    assert found / len(dev_queries) > 0.7  # the real queries reach their tools


def test_real_catalogue_with_odd_names(
    real_pair: tuple[list[Row], ToolRegistry], dev_queries: list[dict[str, Any]]
) -> None:
    # The same documents under names no provider takes ("server:tool"): the alias of
    # "github:actions_get" is "github_actions_get", whose terms are those of
    # "github__actions_get", so the rankings are the plain catalogue's, in host names.
    docs, registry = real_pair
    odd = [r._replace(name=r.name.replace("__", ":", 1)) for r in docs]
    retriever = DocumentRetriever()
    for row in dev_queries[:100]:
        expected = [h.name.replace("__", ":", 1) for h in registry.search(row["query"], 5)]
        assert retriever.rank(row["query"], odd, 5) == expected, row["id"]
    assert len(retriever.internal_names()) == len(odd)


def test_real_catalogue_under_bare_names(
    real_pair: tuple[list[Row], ToolRegistry], dev_queries: list[dict[str, Any]]
) -> None:
    # protocore's host passing bare names ("create_issue" of several servers): 1,592
    # distinct among 1,635 documents. Every document is ranked, none refused.
    docs, _ = real_pair
    bare = [r._replace(name=r.name.split("__", 1)[-1]) for r in docs]
    counts: dict[str, int] = {}
    for r in bare:
        counts[r.name] = counts.get(r.name, 0) + 1
    repeated = sorted(n for n, c in counts.items() if c > 1)
    assert len(counts) < len(bare) and repeated
    retriever = DocumentRetriever()
    for row in dev_queries[:100]:
        got = retriever.rank(row["query"], bare, 10)
        assert len(got) <= 10 and set(got) <= counts.keys(), row["id"]
    # A repeated name asked for by itself comes back once for each of its documents.
    for name in repeated:
        got = retriever.rank(name, bare, len(bare))
        assert got.count(name) == counts[name], name
    assert retriever.builds == 1
