"""A valid current-version snapshot's data for the snapshot tests: two rows, a floor."""

from __future__ import annotations

from typing import Any


def snapshot_data(held: list[str], **over: Any) -> dict[str, Any]:
    """A snapshot holding back ``held``: a called tool row and a group row with a called
    member, rules given for the group; ``over`` replaces fields."""
    data: dict[str, Any] = {
        "catalogue_rules": None,
        "clock": 9,
        "held_back": held,
        "loaded": [
            {
                "called": True,
                "how": "select",
                "kind": "tool",
                "last_use": 3,
                "name": "a__x",
                "order": 1,
            },
            {
                "called": False,
                "called_tools": ["b__y"],
                "how": "group",
                "kind": "group",
                "last_use": 5,
                "name": "b",
                "order": 2,
            },
        ],
        "mark": "0123456789ab",
        "order": 2,
        "rules_given": ["b"],
        "session_id": "s",
        "version": 3,
    }
    data.update(over)
    return data
