"""The native core's field texts (``_native.tool_fields_packed``) against the Python reference.

The native registry registers a tool through one Rust pass over its description and schema;
that pass either returns exactly what ``registry.tool_fields`` returns or declines (``None``)
and leaves the tool to Python. These tests hold it to that on real catalogues and on random
descriptions and schemas built to hit every rule and every way to decline, and check that it
does not decline the ordinary tools it exists for.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import UserDict
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import NO_SHARED, ROOT, SHARED, native_available
from toolsurface.catalogue import load_catalogue
from toolsurface.models import Tool
from toolsurface.registry import ToolRegistry, tool_fields
from toolsurface.retrieval.fields import FIELD_MAX_CHARS
from toolsurface.retrieval.packed_fields import pack_fields, unpack_fields

if not native_available():
    pytest.skip("the native core is not built: nothing to compare", allow_module_level=True)

from toolsurface import _native

BFCL_FUNCTIONS = SHARED / "catalogue" / "bfcl_functions.json"
DEMO = "python/toolsurface/data/demo_catalogue.json"


def native(tool: Tool) -> tuple[str, str, str, str, str] | None:
    packed = _native.tool_fields_packed(
        tool.name, tool.search_hint, tool.description, tool.input_schema, FIELD_MAX_CHARS
    )
    return None if packed is None else unpack_fields(tool.name, packed)


def check_catalogue(tools: list[Tool]) -> None:
    declined = []
    for tool in tools:
        got = native(tool)
        if got is None:
            declined.append(tool.name)
        else:
            assert got == tool_fields(tool), tool.name
    # The fast path is for catalogues like these: it must take every tool of them.
    assert declined == []


def test_bundled_demo_catalogue() -> None:
    check_catalogue(load_catalogue(ROOT / DEMO)[1])


def test_real_mcp_catalogue(mcp_tools: list[Tool]) -> None:
    assert len(mcp_tools) > 1000
    check_catalogue(mcp_tools)


def test_real_bfcl_functions() -> None:
    if not BFCL_FUNCTIONS.exists():
        pytest.skip(NO_SHARED)
    check_catalogue(load_catalogue(BFCL_FUNCTIONS)[1])


# -- random descriptions: every character class the cut asks about ------------------------

# fmt: off
_PIECES = [
    " ", "  ", "\n", "\n\n", "\n  ", "\t", "\u00a0", "\u3000", "\u2028", "\x1c", "\x85",
    ".", ". ", "! ", "? ", ".\n", "(", ")", "[", "]", "{", "}",
    "e.g", "i.e", "etc", "vs", "Inc", "т.е", "т.д", "и.т.д", "напр", "др",
    "List", "files", "the", "Repo", "API", "42", "x", "- ", "* ", "• ", "# ", "> ", "| ", "`",
    "Найти", "файлы", "Ещё", "ё", "Ё", "é", "Éclair", "ß", "×", "÷",
    "Σ", "σ", "ǅ", "Ⅻ", "²", "٣", "«", "»", "—", "…", "\u0301", "\u200b", "😀", "中文",
]
# fmt: on
descriptions = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join) | st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]), max_size=80
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(description=descriptions)
def test_random_descriptions_match_or_decline(description: str) -> None:
    tool = Tool(name="t", description=description)
    got = native(tool)
    if got is not None:
        assert got == tool_fields(tool)


@settings(max_examples=300, deadline=None)
@given(
    description=st.lists(
        st.sampled_from([p for p in _PIECES if p.isascii() or p in ("Найти", "файлы", "Ещё")]),
        max_size=30,
    ).map("".join)
)
def test_known_characters_never_decline(description: str) -> None:
    # ASCII and Cyrillic are what the fast path knows: it must never send them to Python.
    tool = Tool(name="t", description=description)
    got = native(tool)
    assert got is not None
    assert got == tool_fields(tool)


# -- random schemas: nesting, odd types, and what must be left to Python ------------------


class StrSub(str):
    """A ``str`` subclass: Python's walk takes it, the Rust one must decline it."""


_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
    st.sampled_from(["", "x", "Список файлов", "a\nb", "#/$defs/a", "#/definitions/q", "#/$defs/"]),
    st.lists(st.sampled_from(["", "A", "b", "Comedy"]), max_size=3),
)


def _schemas(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    plain = ["properties", "items", "description", "enum", "type", "x"]
    keys = st.sampled_from([*plain, "$ref", "anyOf", "oneOf", "allOf", "$defs", "definitions"])
    return st.one_of(
        st.dictionaries(keys, children, max_size=4),
        st.dictionaries(st.sampled_from(["a", "q", ""]), children, max_size=3),
        st.sampled_from(["#/$defs/a", "#/$defs/q", "#/definitions/a", "#/$defs/"]).map(
            lambda ref: {"$ref": ref}
        ),
        st.lists(children, max_size=3).map(lambda members: {"anyOf": members}),
        st.dictionaries(st.sampled_from(["path", "", "q", "Имя"]), children, max_size=4).map(
            lambda d: {"properties": d}
        ),
        st.lists(children, max_size=2),
    )


schema_values = st.recursive(_leaf, _schemas, max_leaves=25)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    schema=st.one_of(
        schema_values,
        st.dictionaries(st.sampled_from(["", "q", "properties"]), schema_values, max_size=4),
    ),
    # Definitions the random `$ref`s ("#/$defs/a", "#/definitions/q") may resolve to.
    tables=st.dictionaries(
        st.sampled_from(["$defs", "definitions"]),
        st.dictionaries(st.sampled_from(["a", "q", ""]), schema_values, max_size=3),
        max_size=2,
    ),
)
def test_random_schemas_match_or_decline(schema: Any, tables: dict[str, Any]) -> None:
    tool = Tool.model_construct(
        name="t",
        description="Do it. More.",
        search_hint="",
        input_schema={"properties": schema, **tables},
    )
    got = native(tool)
    want = tool_fields(tool)
    if got is not None:
        assert got == want
    # Plain JSON values are what the fast path is for: it takes every such schema.
    assert got is not None


_names = st.sampled_from(["p", "q", "Имя", ""])
_ref_nodes = st.sampled_from(["#/$defs/a", "#/$defs/q", "#/definitions/a", "#/$defs/x"]).map(
    lambda ref: {"$ref": ref, "description": "via " + ref}
)
_linked = st.recursive(
    st.one_of(_ref_nodes, st.fixed_dictionaries({"enum": st.lists(_names, max_size=2)})),
    lambda inner: st.one_of(
        st.dictionaries(_names, inner, max_size=3).map(lambda d: {"properties": d}),
        st.lists(inner, max_size=3).map(lambda m: {"anyOf": m}),
        st.lists(inner, max_size=2).map(lambda m: {"allOf": m, "oneOf": m[:1]}),
        inner.map(lambda x: {"items": x}),
    ),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    props=st.dictionaries(_names, _linked, max_size=4),
    defs=st.dictionaries(st.sampled_from(["a", "q"]), _linked, max_size=2),
    old=st.dictionaries(st.sampled_from(["a"]), _linked, max_size=1),
    root=st.dictionaries(st.sampled_from(["$ref", "anyOf", "items", "enum"]), _linked, max_size=2),
)
def test_linked_schemas_match(props: Any, defs: Any, old: Any, root: Any) -> None:
    # The root may link too: a `$ref`, variants, `items` beside its properties.
    schema = {**root, "properties": props, "$defs": defs, "definitions": old}
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=schema)
    assert native(tool) == tool_fields(tool)


def test_a_definition_every_parameter_shares_is_read_once() -> None:
    shared = {"properties": {f"field{i}": {"description": f"about {i}"} for i in range(50)}}
    schema = {
        "$defs": {"Shared": shared},
        "properties": {f"p{i}": {"$ref": "#/$defs/Shared"} for i in range(2000)},
    }
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=schema)
    params = tool_fields(tool)[4]
    assert native(tool) == tool_fields(tool)
    assert params.count("about 7") == 1
    # Every parameter's name, and the shared definition's 50 fields with their texts once.
    assert len(params.split("\n")) == 2000 + 2 * 50


def test_shared_schema_objects_are_walked_once() -> None:
    # A host-built schema may share one object along many paths: 50 ** 6 paths here. The
    # walk reads each object once, so it ends at once, on both engines alike.
    node: dict[str, Any] = {"properties": {"leaf": {"description": "the leaf"}}}
    for _ in range(6):
        node = {"anyOf": [node] * 50}
    tool = Tool.model_construct(
        name="t", description="d", search_hint="", input_schema={"properties": {"p": node}}
    )
    assert tool_fields(tool)[4] == "p\nleaf\nthe leaf"
    assert native(tool) == tool_fields(tool)


def test_a_definition_met_too_deep_is_read_where_met_again() -> None:
    deep: dict[str, Any] = {"$ref": "#/$defs/X"}
    for _ in range(8):
        deep = {"items": deep}
    schema = {
        "$defs": {"X": {"enum": ["red", "blue"], "properties": {"x_field": {}}}},
        "properties": {"a": deep, "b": {"$ref": "#/$defs/X"}},
    }
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=schema)
    fields = tool_fields(tool)
    assert fields[4].split("\n") == ["a", "b", "x_field"]
    # An Enum class's values live in its definition.
    assert fields[3].split("\n") == ["red", "blue"]
    assert native(tool) == fields


@pytest.mark.parametrize(
    ("schema", "why"),
    [
        ({"properties": {"a": {"description": StrSub("odd")}}}, "str subclass description"),
        ({"properties": {StrSub("a"): {}}}, "str subclass name"),
        ({"properties": {1: {}}}, "non-str property name"),
        ({"properties": UserDict({"a": {"description": "d"}})}, "Mapping that is no dict"),
        ({"properties": {"a": UserDict({"description": "d"})}}, "Mapping parameter"),
        ({"items": UserDict({"properties": {"a": {}}})}, "Mapping items"),
        ({"anyOf": [UserDict({"properties": {"a": {}}})]}, "Mapping variant"),
        ({"$defs": UserDict({"a": {}}), "$ref": "#/$defs/a"}, "Mapping definitions"),
        ({"$defs": {"a": UserDict({})}, "$ref": "#/$defs/a"}, "Mapping definition"),
        ({"$defs": {"a\udfff": {}}, "$ref": "#/$defs/a\udfff"}, "lone surrogate in a $ref"),
        ({"properties": {"a": {"description": "lone \ud800 surrogate"}}}, "lone surrogate"),
        ({"properties": {"a": {"enum": ["ok", "\udfff"]}}}, "lone surrogate in an enum"),
    ],
)
def test_declines_what_python_must_decide(schema: dict[str, Any], why: str) -> None:
    tool = Tool.model_construct(
        name="t", description="Delete files.", search_hint="", input_schema=schema
    )
    assert native(tool) is None, why
    # The registry still indexes it, through Python.
    registry = ToolRegistry([tool], engine="native")
    assert registry.search("delete")[0].name == "t"


@pytest.mark.parametrize(
    ("description", "taken"),
    [
        ("Use ǅe.g. this. Rest.", False),  # Python reads ǅ as a letter: "ǆe.g" is no abbreviation
        ("Docs etc. Σ more", False),  # whether Σ is upper case decides
        ("Get a file\nΣ rest", False),
        ("Get a file\n² rest", False),  # Python: '²'.isdigit()
        ("Files etc. Ещё.", True),
        ("Файлы т.д. ещё. Конец.", True),
        ("A\x1c\nb. C.", True),  # U+001C is white space to Python, not to Rust's trim
        ("Ünïcode café. Ëñd ß.", True),
    ],
)
def test_characters_that_decide_the_cut(description: str, taken: bool) -> None:
    tool = Tool(name="t", description=description)
    got = native(tool)
    if taken:
        assert got == tool_fields(tool)
    else:
        assert got is None


def test_empty_parameter_names_join_as_python_joins() -> None:
    schema = {"properties": {"": {}, "a": {"description": "x", "enum": ["", "E"]}}}
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=schema)
    assert native(tool) == tool_fields(tool)
    assert tool_fields(tool)[4] == "\na\nx"


def test_enum_subclasses_are_skipped_as_python_skips_them() -> None:
    schema = {"properties": {"a": {"enum": [StrSub("hidden"), "shown", "", 3]}}}
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=schema)
    assert native(tool) == tool_fields(tool)
    assert tool_fields(tool)[3] == "shown"


def test_depth_limit_and_empty_names_match() -> None:
    inner: dict[str, Any] = {"description": "deepest"}
    for level in range(12):
        inner = {"properties": {f"p{level}": inner}, "items": {"properties": {"": {}}}}
    tool = Tool.model_construct(name="t", description="d", search_hint="", input_schema=inner)
    assert native(tool) == tool_fields(tool)
    assert "deepest" not in tool_fields(tool)[4]


def test_long_field_declines_and_registry_still_cuts_and_warns(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tool = Tool(name="big", description="word " * (FIELD_MAX_CHARS // 5 + 10))
    assert native(tool) is None
    with caplog.at_level(logging.WARNING, logger="toolsurface"):
        registry = ToolRegistry([tool], engine="native")
        assert registry.search("word")[0].name == "big"  # the build cuts and reports it
        assert "'big'" in caplog.text and "summary" in caplog.text
        caplog.clear()
        registry.register(Tool(name="other", description="Other."))
        assert registry.search("word")[0].name == "big"
        assert caplog.text == ""  # a rebuild does not report it again
        registry.register(tool, replace=True)
        registry.search("word")
        assert caplog.text == ""  # the very tool again: already reported
        registry.register(tool.model_copy(), replace=True)
        registry.search("word")
        assert caplog.text.count("'big'") == 1  # a new definition: reported again
        caplog.clear()
        registry.unregister("big")
        registry.register(tool)
        registry.search("word")
        assert caplog.text.count("'big'") == 1  # removed, then registered: reported again


def test_exactly_the_limit_is_taken() -> None:
    # Counted in characters, as Python counts: 32,768 two-byte letters are not over it.
    tool = Tool(name="t", description="я" * FIELD_MAX_CHARS)
    got = native(tool)
    assert got is not None and got == tool_fields(tool)


def test_registry_fields_equal_on_both_engines(mcp_tools: list[Tool]) -> None:
    sample = mcp_tools[:300]
    native_texts = ToolRegistry(sample, engine="native")._field_texts(sample)
    pure_texts = ToolRegistry(sample, engine="pure")._field_texts(sample)
    # The native registry indexes them packed, byte for byte as Python packs the reference's.
    assert all(isinstance(f, bytes) for f in native_texts)
    assert native_texts == [pack_fields(f) for f in pure_texts]  # type: ignore[arg-type]
    assert [unpack_fields(t.name, f) for t, f in zip(sample, native_texts)] == pure_texts


# -- the native copy of schema data ---------------------------------------------------------


def _containers(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [id(value)] + [i for v in value.values() for i in _containers(v)]
    if isinstance(value, list):
        return [id(value)] + [i for v in value for i in _containers(v)]
    return []


def test_copy_json_of_the_bundled_catalogue_is_an_equal_private_copy() -> None:
    for tool in load_catalogue(ROOT / DEMO)[1]:
        schema = tool.input_schema
        copied = _native.copy_json(schema)
        assert copied == schema, tool.name
        # Every dict and list is new: changing the host's data cannot reach the copy.
        assert not set(_containers(copied)) & set(_containers(schema)), tool.name


# What standard JSON carries: finite floats, integers within 64 bits, text without lone
# surrogates (copy_json declines the rest, see the test below).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**64) + 1, max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=["Cs"]), max_size=5),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values.filter(lambda v: isinstance(v, dict | list)))
def test_copy_json_equals_the_pickle_copy(value: Any) -> None:
    import pickle

    copied = _native.copy_json(value)
    assert copied is not None
    # -0.0 equals 0.0: compare the reprs, which show the same structure, types and signs.
    assert repr(copied) == repr(pickle.loads(pickle.dumps(value)))
    assert not set(_containers(copied)) & set(_containers(value))


def _cycle() -> dict[str, Any]:
    d: dict[str, Any] = {"a": 1}
    d["self"] = d
    return d


def _blowup(levels: int) -> dict[str, Any]:
    d: dict[str, Any] = {"leaf": 1}
    for _ in range(levels):
        d = {"l": d, "r": d}  # shared twice a level: 2**levels values if copied naively
    return d


def test_copy_json_keeps_shared_parts_and_cycles_shared() -> None:
    addr = {"type": "object", "properties": {"street": {"type": "string"}}}
    copied = _native.copy_json({"properties": {"from": addr, "to": addr}})
    assert copied["properties"]["from"] is copied["properties"]["to"]
    assert copied["properties"]["from"] is not addr
    deep = _native.copy_json(_blowup(60))  # 61 dicts, not 2**60
    assert deep["l"] is deep["r"] and deep["l"]["l"] is deep["r"]["r"]
    # A cycle cannot be written as JSON: declined, and Python names it (test_tool_door.py).
    assert _native.copy_json(_cycle()) is None
    assert _native.copy_json({"list": [_cycle()]}) is None


@pytest.mark.parametrize(
    "value",
    [
        {"x": float("nan")},
        [float("inf")],
        {"x": "lone \ud800"},
        {"k\udfff": 1},
        {"x": 2**64},
        [-(2**64)],
    ],
    ids=["nan", "inf", "surrogate value", "surrogate key", "int 2**64", "int -2**64"],
)
def test_copy_json_declines_what_json_cannot_send(value: Any) -> None:
    assert _native.copy_json(value) is None
    assert _native.copy_json({"ok": [2**64 - 1, -(2**64) + 1, 1.5, "é"]}) is not None


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ({"a": (1, 2)}, "a tuple"),
        ({"a": StrSub("x")}, "a str subclass"),
        ({1: "x"}, "a key that is no str"),
        ({"a": UserDict()}, "a mapping that is no dict"),
    ],
)
def test_copy_json_declines_what_python_copies(value: Any, why: str) -> None:
    from toolsurface.models import copy_data

    assert _native.copy_json(value) is None, why
    # copy_data then takes Python's path, which keeps the value's types.
    copied = copy_data(value)
    assert copied == value and copied is not value
    assert [type(v) for v in copied.values()] == [type(v) for v in value.values()]


def test_copy_json_leaves_deep_nesting_to_python() -> None:
    deep: Any = "leaf"
    for _ in range(300):
        deep = {"x": deep}
    assert _native.copy_json(deep) is None
    shallow: Any = "leaf"
    for _ in range(150):
        shallow = {"x": shallow}
    assert _native.copy_json(shallow) == shallow


def test_the_native_registry_indexes_through_the_rust_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from toolsurface.retrieval.engine.backend import backend

    calls: list[str] = []

    def spy(name: str, *args: Any) -> Any:
        calls.append(name)
        return _native.tool_fields_packed(name, *args)

    engine = backend("native")
    monkeypatch.setattr(
        "toolsurface.registry.registry.backend",
        lambda _name=None: dataclasses.replace(engine, fields_walk=spy),
    )
    registry = ToolRegistry(load_catalogue(ROOT / DEMO)[1][:20], engine="native")
    assert calls == []  # registering keeps no texts: the build makes them
    assert registry.search("pull request")  # and the index it feeds works
    assert len(calls) == 20


class _Key:
    """A dict key that is no ``str``: equal to the text it names, counting its comparisons."""

    def __init__(self, text: str) -> None:
        self.text, self.compared = text, 0

    def __hash__(self) -> int:
        return hash(self.text)

    def __eq__(self, other: object) -> bool:
        self.compared += 1
        return other == self.text


@pytest.mark.parametrize(
    "schema",
    [
        # Keys the walk never asks about, but that are no plain str, anywhere in the schema.
        {"properties": {"a": {"description": "Path.", "x-order": 1}}, 7: "seven"},
        {"properties": {"a": {"description": "Path.", StrSub("x-note"): "n"}}},
        {"properties": {"a": {"description": "Path."}}, "$defs": {1: {}}, "$ref": "#/$defs/b"},
        # Keys the walk asks about, as a str subclass or an object equal to the text.
        {"properties": {"a": {StrSub("description"): "Found by equality."}}},
        {"properties": {"a": {_Key("enum"): ["one", "two"], "description": "d"}}},
        {_Key("properties"): {"b": {"description": "Nested."}}},
    ],
)
def test_a_schema_with_other_keys_walks_as_python_walks(schema: dict[Any, Any]) -> None:
    # The native walk reads a dict in one pass when every key is a plain str; a dict with
    # any other key sends the whole tool to the walk by lookup, which asks as Python asks.
    tool = Tool.model_construct(
        name="t", description="Read a file.", search_hint="", input_schema=schema
    )
    assert native(tool) == tool_fields(tool)
