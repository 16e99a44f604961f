"""A snapshot read for a restore: its fields as plain values, read natively where it can be.

A stateless host restores its session's snapshot on every request, and a restore needs the
snapshot's fields, not its model: reading the JSON through :class:`SurfaceSnapshot` (a
model a loaded row, then the rows' checks in Python) was half of a restore and plan. With
the native core, a current-version text is read and checked in one native pass
(``read_snapshot``, ``crates/toolsurface-py/src/snapshot.rs``), which accepts only what the
model accepts, with the same values; anything else (an older version, an error to name) is
read by the model, as without the native core. A held-back list that is a kept floor's
text is not read again either way (``floors.py``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from toolsurface._engine import native_module
from toolsurface.surface.floors import read_keeping_floors
from toolsurface.surface.snapshot import (
    SNAPSHOT_VERSION,
    SurfaceSnapshot,
    check_seal_over,
    parse_snapshot,
    parse_text,
)

__all__ = ["RowFields", "SnapshotFields", "check_fields_seal", "fields_of", "read_fields"]

#: A loaded row's fields in the model's key order: called, called_tools, how, kind,
#: last_use, name, order.
RowFields = tuple[
    bool,
    list[str],
    Literal["search", "select", "group", "seed", "blind"],
    Literal["tool", "group"],
    int,
    str,
    int,
]

_ROW_KEYS = ("called", "called_tools", "how", "kind", "last_use", "name", "order")


@dataclass(frozen=True, slots=True)
class SnapshotFields:
    """A valid current-version snapshot's fields, as :class:`SurfaceSnapshot` holds them."""

    catalogue_rules: list[str] | None
    clock: int
    held_back: list[str]
    loaded: list[RowFields]
    mark: str
    order: int
    rules_given: list[str]
    seal: str | None
    session_id: str

    def content(self) -> dict[str, Any]:
        """What the seal is over: the model's JSON dump but the seal (``seal_over``)."""
        return {
            "catalogue_rules": self.catalogue_rules,
            "clock": self.clock,
            "held_back": self.held_back,
            "loaded": [dict(zip(_ROW_KEYS, row, strict=True)) for row in self.loaded],
            "mark": self.mark,
            "order": self.order,
            "rules_given": self.rules_given,
            "session_id": self.session_id,
            "version": SNAPSHOT_VERSION,
        }


def fields_of(snap: SurfaceSnapshot) -> SnapshotFields:
    """A validated model's fields."""
    return SnapshotFields(
        catalogue_rules=snap.catalogue_rules,
        clock=snap.clock,
        held_back=snap.held_back,
        loaded=[
            (r.called, r.called_tools, r.how, r.kind, r.last_use, r.name, r.order)
            for r in snap.loaded
        ],
        mark=snap.mark,
        order=snap.order,
        rules_given=snap.rules_given,
        seal=snap.seal,
        session_id=snap.session_id,
    )


_Reader = Callable[[str], "tuple[Any, ...] | None"]
_NATIVE_READ: _Reader | None = getattr(native_module(), "read_snapshot", None)


def read_fields(
    data: SurfaceSnapshot | Mapping[str, Any] | str | bytes, *, reader: _Reader | None = None
) -> SnapshotFields:
    """A snapshot's fields, validated as :func:`parse_snapshot` validates it.

    Text is read by ``reader`` (the native core's by default) when it can; a snapshot it
    leaves, or any other input, is parsed by the model, whose errors name the field (text
    it leaves by :func:`parse_text`, which parses it once).
    """
    read = reader or _NATIVE_READ
    if read is not None and isinstance(data, str):
        fast = _read_text(data, read)
        if fast is not None:
            return fast
        # Left by the reader: the long way at once, which accepts whatever pydantic's
        # one-pass read would, with the same values; so the text is parsed once more only.
        return fields_of(parse_text(data))
    return fields_of(parse_snapshot(data))


def _read_text(text: str, read: _Reader) -> SnapshotFields | None:
    """``text``'s fields read by ``read``, a kept floor's text taken as read; None if left."""

    def fields(t: str) -> SnapshotFields | None:
        got = read(t)
        return None if got is None else SnapshotFields(*got)

    return read_keeping_floors(text, fields, _held_back, _with_held_back)


def _held_back(fields: SnapshotFields) -> list[str]:
    return fields.held_back


def _with_held_back(fields: SnapshotFields, names: list[str]) -> SnapshotFields:
    return dataclasses.replace(fields, held_back=names)


def check_fields_seal(fields: SnapshotFields, key: bytes | None) -> None:
    """Refuse a snapshot whose seal is missing or wrong under ``key`` (as ``check_seal``)."""
    check_seal_over(fields.seal, fields.content, key)
