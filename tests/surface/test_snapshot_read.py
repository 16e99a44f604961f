"""A restore reads a snapshot natively where it can: the same fields, or the model's error.

``surface/snapshot_read.py`` hands a snapshot's text to the native reader
(``read_snapshot``) and, when it leaves the text, to the pydantic model. Whatever the text,
the fields a restore gets must be the model's, and an error the model's own message.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from snapshot_data import snapshot_data

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface._engine import engine
from toolsurface.surface import snapshot_read
from toolsurface.surface.floors import forget_kept
from toolsurface.surface.snapshot import (
    SnapshotError,
    SurfaceSnapshot,
    parse_snapshot,
    seal_of,
    seal_over,
)
from toolsurface.surface.snapshot_read import SnapshotFields, fields_of, read_fields


@pytest.fixture(scope="module")
def native() -> ModuleType:
    try:
        import toolsurface._native as mod
    except ImportError as exc:  # pragma: no cover - a machine without the native build
        pytest.skip(f"the native core is not built here ({exc})")
    if not hasattr(mod, "read_snapshot"):  # pragma: no cover - a stale native build
        pytest.skip("the native core here predates read_snapshot")
    return mod


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    forget_kept()
    yield
    forget_kept()


def _model_only(_text: str) -> None:
    return None


def _outcome(text: str, reader: Callable[[str], Any]) -> tuple[str, object]:
    try:
        return "fields", read_fields(text, reader=reader)
    except SnapshotError as err:
        return "error", str(err)


def _data(**over: Any) -> dict[str, Any]:
    return snapshot_data(
        [f"server-{i:03d}" for i in range(40)], **{"catalogue_rules": ["b"], **over}
    )


def _text(**over: Any) -> str:
    return SurfaceSnapshot.model_validate(_data(**over)).to_json()


def test_a_surfaces_snapshot_is_read_natively_as_the_model_reads_it(native: ModuleType) -> None:
    registry = ToolRegistry(
        [tool_search_tool(), Tool(name="fs__read", description="Read a file.")]
        + [Tool(name=f"g{i}__list_items", description="List the items.") for i in range(60)]
    )
    for i in range(60):
        registry.declare_group(f"g{i}", prefix=f"g{i}__", load="lazy")
    surface = ToolSurface(registry, session_id="s", mark_key=b"k" * 32)
    surface.tool_search({"group": "g7"})
    surface.tool_search({"select": ["g9__list_items"]})
    text = surface.snapshot().to_json()
    got = native.read_snapshot(text)
    assert got is not None  # the fast path is taken for what a surface writes
    assert SnapshotFields(*got) == fields_of(parse_snapshot(text))
    again = ToolSurface(registry, session_id="s", mark_key=b"k" * 32)
    assert again.restore(text) == []
    assert again.loaded_tool_group_names() == ["g7"]
    assert again.plan().names == surface.plan().names


def test_the_native_engine_restores_through_the_native_reader() -> None:
    if engine() != "native":
        pytest.skip("the pure engine reads snapshots with the model only")
    assert snapshot_read._NATIVE_READ is not None


def test_the_seal_is_over_the_same_content_either_way(native: ModuleType) -> None:
    key = b"host key"
    sealed = SurfaceSnapshot.model_validate(_data()).sealed(key)
    fields = read_fields(sealed.to_json(), reader=native.read_snapshot)
    assert fields.seal == sealed.seal
    assert seal_over(fields.content(), key) == seal_of(sealed, key)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("version", 2),
        ("clock", 9.0),
        ("clock", "9"),
        ("clock", True),
        ("clock", 2**53 + 1),
        ("clock", -1),
        ("clock", 4),  # under a row's last use
        ("mark", "0123456789AB"),
        ("seal", "00"),
        ("seal", "0" * 64),  # well formed: read, then refused by the seal check
        ("held_back", ["a", "a"]),
        ("held_back", ["a", ""]),
        ("held_back", ["a", "é" * 129]),
        ("held_back", ["a", "\U0001f600" * 128]),  # 128 characters: within bounds
        ("rules_given", ["c"]),  # the catalogue's rules not among those given
        ("catalogue_rules", None),
        ("session_id", "x" * 257),
        (
            "loaded",
            [
                {
                    "called": 1,
                    "how": "select",
                    "kind": "tool",
                    "last_use": 1,
                    "name": "a",
                    "order": 1,
                }
            ],
        ),
        ("loaded", [[True, [], "select", "tool", 1, "a", 1]]),
        (
            "loaded",
            [
                {
                    "called": True,
                    "how": "select",
                    "kind": "tool",
                    "last_use": 1,
                    "name": "a",
                    "order": 1,
                    "extra": 0,
                }
            ],
        ),
        ("extra", 1),
    ],
)
def test_an_edited_field_reads_as_the_model_reads_it(
    native: ModuleType, field: str, value: object
) -> None:
    data = _data()
    data[field] = value
    text = json.dumps(data, ensure_ascii=False)
    assert _outcome(text, native.read_snapshot) == _outcome(text, _model_only)
    if field == "seal" and value == "0" * 64:
        surface = ToolSurface(ToolRegistry([tool_search_tool()]), mark_key=b"k" * 16)
        with pytest.raises(SnapshotError, match="seal': does not match"):
            surface.restore(text)


@pytest.mark.parametrize(
    "text",
    [
        _text().replace('"clock":9', '"clock":1,"clock":9'),  # the last of a key counts
        _text().replace('"a__x"', '"a\\u005f_x"'),  # an escape
        _text().replace('"a__x"', '"\\ud800"'),  # a lone surrogate
        _text().replace("{", "[", 1),
        _text() + " x",
        _text()[:-5],
        "",
        "[]",
        "null",
    ],
)
def test_odd_texts_read_as_the_model_reads_them(native: ModuleType, text: str) -> None:
    assert _outcome(text, native.read_snapshot) == _outcome(text, _model_only)


_VALUES = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        1,
        2,
        9,
        -1,
        1.5,
        2**53,
        2**53 + 1,
        "",
        "b",
        "a__x",
        "é" * 129,
        "0123456789ab",
        "f" * 64,
        [],
        ["b"],
        ["b", "b"],
        [1],
        {},
        {"a": 1},
        "select",
        "group",
    ]
)
_FIELDS = st.sampled_from(
    [
        "catalogue_rules",
        "clock",
        "held_back",
        "loaded",
        "mark",
        "order",
        "rules_given",
        "seal",
        "session_id",
        "version",
        "extra",
    ]
)
_ROW_FIELDS = st.sampled_from(
    ["called", "called_tools", "how", "kind", "last_use", "name", "order", "extra"]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    top=st.lists(st.tuples(_FIELDS, _VALUES), max_size=2),
    rows=st.lists(st.tuples(st.integers(0, 1), _ROW_FIELDS, _VALUES), max_size=2),
    drop=st.lists(_FIELDS, max_size=1),
)
def test_reading_natively_is_reading_with_the_model(
    native: ModuleType,
    top: list[tuple[str, object]],
    rows: list[tuple[int, str, object]],
    drop: list[str],
) -> None:
    data = _data()
    for i, field, value in rows:
        data["loaded"][i][field] = value
    for field, value in top:
        data[field] = value
    for field in drop:
        data.pop(field, None)
    text = json.dumps(data, ensure_ascii=False)
    fresh = _outcome(text, _model_only)
    forget_kept()
    assert _outcome(text, native.read_snapshot) == fresh
    # Once more with the floor's text kept (the held-back list then goes unread).
    read_fields(_text(), reader=native.read_snapshot)
    assert _outcome(text, native.read_snapshot) == fresh
