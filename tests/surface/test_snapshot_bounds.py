"""A snapshot past a bound costs the host little: refused for its length, naming the field.

A restore reads whatever a host's storage holds, so every list of every snapshot version is
bounded, and a list past its bound is refused for its length, before one of its items is
validated (the model's own bounds, pydantic's, are checked only after that many items).
A whole number of thousands of digits is a field out of bounds like any other: never
converted in full, never written out in a message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from snapshot_data import snapshot_data

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.surface.snapshot import (
    MAX_CALLED_TOOLS,
    MAX_ROWS,
    MAX_V1_ROWS,
    SnapshotError,
    parse_snapshot,
)


def _registry(engine: str) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(
        [
            Tool(name="fs__read", description="Read a file."),
            Tool(name="gh__list_issues", description="List the issues of a repository."),
            tool_search_tool(),
        ]
    )
    reg.declare_group("gh", prefix="gh__", load="lazy")
    return reg


def _used(reg: ToolRegistry) -> ToolSurface:
    surface = ToolSurface(reg, session_id="s")
    surface.plan()
    surface.tool_search({"group": "gh"})
    surface.plan()
    return surface


def _v1(**over: Any) -> dict[str, Any]:
    return {"version": 1, "session_id": "s", "mark": "0123456789ab", **over}


def _v3(**over: Any) -> dict[str, Any]:
    return snapshot_data(["h"], **over)


def _past_v3_loaded() -> dict[str, Any]:
    # Rows that are no rows at all: only the list's length can be named first.
    return _v3(loaded=[0] * (MAX_ROWS + 1))


def _past_called_tools() -> dict[str, Any]:
    data = _v3()
    data["loaded"][1]["called_tools"] = [0] * (MAX_CALLED_TOOLS + 1)
    return data


_PAST_BOUNDS: list[tuple[Callable[[], dict[str, Any]], str, int]] = [
    (
        lambda: _v1(discovered=[{"name": f"t{i}"} for i in range(MAX_V1_ROWS + 1)]),
        "discovered",
        MAX_V1_ROWS,
    ),
    (lambda: _v1(discovered=[{}] * (MAX_V1_ROWS + 1)), "discovered", MAX_V1_ROWS),
    (lambda: _v1(groups=[""] * (MAX_V1_ROWS + 1)), "groups", MAX_V1_ROWS),
    (lambda: _v1(held_back=[0] * (MAX_ROWS + 1)), "held_back", MAX_ROWS),
    (lambda: _v1(rules_given=[0] * (MAX_ROWS + 1)), "rules_given", MAX_ROWS),
    (lambda: {**_v3(held_back=[""] * (MAX_ROWS + 1)), "version": 2}, "held_back", MAX_ROWS),
    (_past_v3_loaded, "loaded", MAX_ROWS),
    (lambda: _v3(held_back=[""] * (MAX_ROWS + 1)), "held_back", MAX_ROWS),
    (lambda: _v3(rules_given=[0] * (MAX_ROWS + 1)), "rules_given", MAX_ROWS),
    (lambda: _v3(catalogue_rules=[0] * (MAX_ROWS + 1)), "catalogue_rules", MAX_ROWS),
    (_past_called_tools, "loaded[1].called_tools", MAX_CALLED_TOOLS),
]


@pytest.mark.parametrize(("make", "field", "most"), _PAST_BOUNDS)
@pytest.mark.parametrize("as_text", [True, False], ids=["text", "mapping"])
def test_a_list_past_its_bound_is_refused_for_its_length_naming_the_field(
    make: Callable[[], dict[str, Any]], field: str, most: int, as_text: bool
) -> None:
    data = make()
    with pytest.raises(SnapshotError) as err:
        parse_snapshot(json.dumps(data) if as_text else data)
    assert str(err.value) == (
        f"snapshot: field {field!r}: List should have at most {most} items, not {most + 1}"
    )


def test_a_version_1_snapshot_lists_at_most_max_v1_rows_discovered_and_groups_together() -> None:
    half = MAX_V1_ROWS // 2
    discovered = [{"name": f"t{i}", "last_use": 1} for i in range(half)]
    groups = [f"g{i}" for i in range(MAX_V1_ROWS - half)]
    lifted = parse_snapshot(json.dumps(_v1(discovered=discovered, groups=groups)))
    assert len(lifted.loaded) == MAX_V1_ROWS
    with pytest.raises(SnapshotError, match=f"field 'groups': .* not {MAX_V1_ROWS + 1}$"):
        parse_snapshot(json.dumps(_v1(discovered=discovered, groups=[*groups, "one more"])))


def test_a_snapshot_past_a_bound_leaves_the_surface_as_it_was(engine_name: str) -> None:
    reg = _registry(engine_name)
    surface = _used(reg)
    before = surface.snapshot().to_json()
    tampered = _v1(discovered=[{"name": "fs__read"}] * (MAX_V1_ROWS + 1))
    with pytest.raises(SnapshotError, match="field 'discovered': List should have at most"):
        surface.restore(json.dumps(tampered))
    past = json.loads(before)
    past["loaded"] = [0] * (MAX_ROWS + 1)
    with pytest.raises(SnapshotError, match="field 'loaded': List should have at most"):
        surface.restore(json.dumps(past))
    assert surface.snapshot().to_json() == before


_HUGE = "9" * 5000


def _text_with(field: str, digits: str) -> str:
    data = json.loads(_used(_registry("pure")).snapshot().to_json())
    data[field] = 0
    return json.dumps(data).replace(f'"{field}": 0', f'"{field}": {digits}')


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: _text_with("clock", _HUGE), "clock"),
        (lambda: _text_with("clock", "-" + _HUGE), "clock"),
        (lambda: _text_with("order", _HUGE), "order"),
        (lambda: _text_with("version", _HUGE), "version"),
        (lambda: _text_with("version", "-" + _HUGE), "version"),
        (
            lambda: json.dumps(_v1(discovered=[{"name": "fs__read", "last_use": 0}])).replace(
                '"last_use": 0', f'"last_use": {_HUGE}'
            ),
            "discovered[0].last_use",
        ),
        (lambda: {**_v3(), "version": 10**5000}, "version"),
        (lambda: {**_v3(), "version": -(10**5000)}, "version"),
        (lambda: {**_v3(), "version": "3" * 100_000}, "version"),
    ],
)
def test_a_huge_number_is_a_snapshot_error_naming_the_field_never_written_out(
    engine_name: str, make: Callable[[], str | dict[str, Any]], field: str
) -> None:
    data = make()
    with pytest.raises(SnapshotError, match=f"^snapshot: field {re.escape(repr(field))}: ") as err:
        parse_snapshot(data)
    assert len(str(err.value)) < 200
    with pytest.raises(SnapshotError, match=f"^snapshot: field {re.escape(repr(field))}: "):
        ToolSurface(_registry(engine_name), session_id="s").restore(data)


def test_an_unknown_version_is_shown_when_short() -> None:
    with pytest.raises(SnapshotError, match="unknown version 4 "):
        parse_snapshot({**_v3(), "version": 4})
    with pytest.raises(SnapshotError, match="unknown version <a number of over 20 digits> "):
        parse_snapshot(
            json.dumps({**_v3(), "version": 0}).replace('"version": 0', f'"version": {_HUGE}')
        )
