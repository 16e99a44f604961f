"""Which tools read: the server's hint decides, else the first verb of the tool's name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import native_available
from toolsurface import Tool, ToolRegistry
from toolsurface.retrieval.analysis.reading import READ_VERBS, name_verb, reads_only
from toolsurface.retrieval.engine.backend import backend


def _tool(name: str, description: str = "A tool.", read_only: bool | None = None) -> Tool:
    return Tool(name=name, description=description, read_only=read_only)


@pytest.mark.parametrize(
    ("name", "verb"),
    [
        ("docker__list_containers", "list"),
        ("cloudflare__r2_list_objects", "list"),  # a product word before the verb
        ("jenkins__get_build_console_output", "get"),  # "build" is the object here
        ("github__getPullRequestFiles", "get"),
        ("notion__API-post-search", "post"),
        ("a__b__run_job", "run"),  # past the last "__"
        ("google-maps__maps_directions", None),
        ("", None),
    ],
)
def test_the_first_verb_of_the_name(name: str, verb: str | None) -> None:
    assert name_verb(name) == verb


def test_a_hint_decides_either_way_and_the_name_only_without_one() -> None:
    assert reads_only(_tool("x__list_things"))
    assert not reads_only(_tool("x__run_container"))
    assert not reads_only(_tool("x__maps_directions"))
    assert not reads_only(_tool("x__list_things", read_only=False))
    assert reads_only(_tool("x__delete_things", read_only=True))


def test_a_hostile_name_is_read_on_its_first_characters() -> None:
    assert name_verb("x__" + "a" * 10_000 + "_list") is None
    assert name_verb("list_" + "a" * 10_000) == "list"


@pytest.mark.parametrize("engine_name", ["native", "pure"])
def test_a_question_lifts_the_unhinted_tools_that_read(engine_name: str) -> None:
    # A server without hints (docker's gives none): its question used to find the tool
    # named for the verb it asks with.
    tools = [
        _tool("docker__list_containers", "List running containers: what is running in Docker now."),
        _tool("docker__run_container", "Run a new container from an image."),
    ]
    registry = ToolRegistry(tools, engine=engine_name)  # type: ignore[arg-type]
    asked = [h.name for h in registry.search("what's running in docker?")]
    assert asked[0] == "docker__list_containers"
    off = registry.settings.model_copy(update={"question_weight": 0.0})
    unboosted = registry.search("what's running in docker?", settings=off)
    assert unboosted[0].name == "docker__run_container"
    # A request to act is no question: the tool that runs stays first.
    told = [h.name for h in registry.search("run a container in docker")]
    assert told[0] == "docker__run_container"
    # The server's word wins over the name.
    hinted = [t.model_copy(update={"read_only": t.name.endswith("run_container")}) for t in tools]
    registry = ToolRegistry(hinted, engine=engine_name)  # type: ignore[arg-type]
    assert registry.search("what's running in docker?")[0].name == "docker__run_container"


NAME_TEXT = st.lists(
    st.sampled_from([*"abcdeilstgpuLISTGETPRUNx_-.0129é ", "__", "HTTP", "Get", "list"]),
    max_size=24,
).map("".join)
VERBS_IN_NAMES = ["getList", "LISTthings", "xRUNjob", "a__b__run_job", "é" * 300 + "__list_x"]


@pytest.mark.skipif(not native_available(), reason="the native core is not built")
@settings(max_examples=400, deadline=None)
@given(names=st.lists(st.one_of(NAME_TEXT, st.sampled_from(VERBS_IN_NAMES)), max_size=30))
def test_both_engines_find_the_same_reading_names(names: list[str]) -> None:
    # The registry asks the engine for every name's verb at once; the native pass must read
    # each name as the pure engine's regular expression does.
    reading = [i for i, n in enumerate(names) if name_verb(n) in READ_VERBS]
    assert backend("native").read_verb_names(names) == reading
    assert backend("pure").read_verb_names(names) == reading


@pytest.mark.skipif(not native_available(), reason="the native core is not built")
def test_a_name_python_must_read_is_left_to_python() -> None:
    from toolsurface import _native

    names = ["ok__list_x", "bad\ud800__get", "ok__run_x"]
    assert _native.read_verb_names(names) is None
    assert backend("native").read_verb_names(names) == [0, 1]
