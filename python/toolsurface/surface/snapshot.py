"""Versioned snapshots of a run's surface: what the next request depends on, as JSON.

``ToolSurface.snapshot()`` returns a :class:`SurfaceSnapshot`; ``ToolSurface.restore()``
validates one completely before it changes anything, so a broken snapshot leaves the
surface as it was. Older versions are lifted by an upcaster chain, one step a version.

Version history:

- 1: ``discovered`` (names with their last use), ``groups`` (groups held whole),
  ``held_back``, ``rules_given``, ``mark``, ``session_id``. No called marks.
- 2: ``loaded`` rows (kind, name, how, order, last use, called, and for a group the
  members called, ``called_tools``, which may be absent), the clock and order counters,
  ``catalogue_rules``.
- 3 (current): ``seal``, an HMAC-SHA256 of everything else under the host's key (``None``
  without one); numbers and marks strictly typed (a string or ``true`` is no number) and
  bounded; ``catalogue_rules`` within ``rules_given``.

Every list of every version is bounded (``MAX_ROWS``, ``MAX_CALLED_TOOLS``,
``MAX_V1_ROWS``), its length checked on the parsed JSON before one of its items is
validated, and a whole number past every bound is never converted in full (``parse_text``):
a text costs time and memory in proportion to its length.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import operator
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic_core import PydanticCustomError

from toolsurface.errors import ToolsurfaceError
from toolsurface.surface.floors import floor_set, read_keeping_floors

__all__ = [
    "MAX_COUNTER",
    "SNAPSHOT_VERSION",
    "LoadedRow",
    "SnapshotError",
    "SurfaceSnapshot",
    "check_seal",
    "check_seal_over",
    "parse_snapshot",
    "parse_text",
    "seal_of",
    "seal_over",
]

SNAPSHOT_VERSION = 3
#: A clock, an order or a last use above this is refused (no run gets near it: 2**53 is
#: also where a JSON number stops being exact in most readers).
MAX_COUNTER = 2**53
#: A counter: a JSON whole number, never a string or a boolean, 0 to MAX_COUNTER.
Counter = Annotated[int, Field(strict=True, ge=0, le=MAX_COUNTER)]
#: A group row lists at most this many called members.
MAX_CALLED_TOOLS = 4_096
#: A snapshot lists at most this many loaded rows, held-back groups or rules groups.
MAX_ROWS = 100_000
#: A version-1 snapshot lists at most this many discovered tools and groups together (each
#: becomes a loaded row). A version-1 row takes a fifth of the text of a loaded row and more
#: work to lift: MAX_ROWS of them, 2 MB of text, took seconds to restore; this many, 0.1 s.
MAX_V1_ROWS = 10_000
#: A group name in a snapshot's lists.
GroupName = Annotated[str, Field(min_length=1, max_length=128)]


class SnapshotError(ToolsurfaceError, ValueError):
    """A snapshot that cannot be restored; the message names the field at fault."""


class LoadedRow(BaseModel):
    """A loaded tool or group, as the snapshot keeps it."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # Fields in key order: the JSON the serializer writes is then key-sorted as it is.
    called: bool
    #: A group row's members the model called, in the order of their first call.
    called_tools: list[Annotated[str, Field(min_length=1, max_length=128)]] = Field(
        default_factory=list, max_length=MAX_CALLED_TOOLS
    )
    how: Literal["search", "select", "group", "seed", "blind"]
    kind: Literal["tool", "group"]
    last_use: Counter
    name: str = Field(min_length=1, max_length=128)
    order: Counter


class SurfaceSnapshot(BaseModel):
    """Everything the next request depends on but what the host supplies again.

    The host brings the registry, the policy and the limits back itself.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    # Fields in key order: the JSON the serializer writes is then key-sorted as it is.
    catalogue_rules: list[GroupName] | None = Field(max_length=MAX_ROWS)
    clock: Counter
    held_back: list[GroupName] = Field(max_length=MAX_ROWS)
    loaded: list[LoadedRow] = Field(max_length=MAX_ROWS)
    mark: str = Field(pattern=r"^[0-9a-f]{12}$")
    order: Counter
    rules_given: list[GroupName] = Field(max_length=MAX_ROWS)
    #: HMAC-SHA256 of the rest under the host's key (see :func:`seal_of`); None without one.
    seal: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    session_id: str = Field(max_length=256)
    version: Literal[3] = 3

    @model_validator(mode="after")
    def _rows_agree(self) -> SurfaceSnapshot:
        """Rows unique and under the counters, so the next load lands after every row."""
        problem = _rows_problem(self)
        if problem:
            raise PydanticCustomError("snapshot_rows", "{problem}", {"problem": problem})
        return self

    def to_json(self) -> str:
        """The snapshot as compact, key-sorted JSON (non-ASCII characters as they are).

        Written by the serializer in one native pass: its fields, and its rows', are
        declared in key order. ``json.dumps`` took most of a snapshot's time (each of a few
        hundred held-back group names escaped one by one).
        """
        return self.model_dump_json()

    def sealed(self, key: bytes) -> SurfaceSnapshot:
        """A copy of the snapshot carrying its seal under ``key``."""
        return self.model_copy(update={"seal": seal_of(self, key)})


def seal_of(snapshot: SurfaceSnapshot, key: bytes) -> str:
    """The HMAC-SHA256 under ``key`` of the snapshot's content (everything but the seal).

    The content is its compact key-sorted JSON, so the seal does not depend on how the
    snapshot was stored, only on what it says.
    """
    return seal_over(snapshot.model_dump(mode="json", exclude={"seal"}), key)


def seal_over(content: Mapping[str, Any], key: bytes) -> str:
    """The HMAC-SHA256 under ``key`` of a snapshot's ``content``: its fields but the seal.

    ``content`` is what ``model_dump(mode="json")`` gives, rows as mappings: read as compact
    key-sorted JSON, so the order of its keys does not count.
    """
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    message = b"toolsurface snapshot\x00" + text.encode("utf-8")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def check_seal(snapshot: SurfaceSnapshot, key: bytes | None) -> None:
    """Refuse a snapshot whose seal is missing or wrong under ``key`` (none: nothing to do)."""
    check_seal_over(snapshot.seal, lambda: snapshot.model_dump(mode="json", exclude={"seal"}), key)


def check_seal_over(
    seal: str | None, content: Callable[[], Mapping[str, Any]], key: bytes | None
) -> None:
    """Refuse a ``seal`` missing or wrong under ``key`` over a snapshot's ``content()``."""
    if key is None:
        return
    if seal is None:
        raise SnapshotError(
            "snapshot: field 'seal': missing; this surface has a mark_key, so it restores "
            "only snapshots sealed under that key"
        )
    if not hmac.compare_digest(seal, seal_over(content(), key)):
        raise SnapshotError(
            "snapshot: field 'seal': does not match the content (the snapshot was edited, or "
            "sealed under another key)"
        )


def _rows_problem(snap: SurfaceSnapshot) -> str:
    """What makes the snapshot's rows and lists disagree, or ''."""
    rows, count = snap.loaded, len(snap.loaded)
    # Whole-list checks in C first (a stateless host restores on every request); only a
    # snapshot that fails one is walked row by row, to name the first row at fault.
    if rows and not (
        len(set(zip(map(_KIND, rows), map(_NAME, rows)))) == count
        and len(set(map(_ORDER, rows))) == count
        and max(map(_ORDER, rows)) <= snap.order
        and max(map(_LAST_USE, rows)) <= snap.clock
        and all(
            r.kind == "group" and len(set(r.called_tools)) == len(r.called_tools)
            for r in rows
            if r.called_tools
        )
    ):
        return _row_problem(snap)
    given = set(snap.rules_given)
    # One name cannot repeat (and a kept floor's stand-in is not kept as a floor).
    if len(snap.held_back) > 1 and len(floor_set(snap.held_back)) != len(snap.held_back):
        return "field 'held_back': a group is listed twice"
    if len(given) != len(snap.rules_given):
        return "field 'rules_given': a group is listed twice"
    for i, group in enumerate(snap.catalogue_rules or ()):
        if group not in given:
            # Rules the catalogue carries count as given: a list that says otherwise was
            # edited (and would let a ruled group's blind call run unruled).
            return f"field 'catalogue_rules[{i}]': {group!r} is not in rules_given"
    return ""


_KIND, _NAME, _ORDER, _LAST_USE = map(operator.attrgetter, ("kind", "name", "order", "last_use"))


def _row_problem(snap: SurfaceSnapshot) -> str:
    """The first loaded row at fault, and what is wrong with it."""
    names: dict[tuple[str, str], int] = {}
    orders: dict[int, int] = {}
    top_order, clock = snap.order, snap.clock
    for i, row in enumerate(snap.loaded):
        kind, name, order, called = row.kind, row.name, row.order, row.called_tools
        first = names.setdefault((kind, name), i)
        problem = ""
        if first != i:
            problem = f".name': {kind} {name!r} is already loaded[{first}]"
        elif orders.setdefault(order, i) != i:
            problem = f".order': order {order} is already loaded[{orders[order]}]'s"
        elif order > top_order:
            problem = f".order': {order} is above the order counter {top_order}"
        elif row.last_use > clock:
            problem = f".last_use': {row.last_use} is above the clock {clock}"
        elif called and kind != "group":
            problem = ".called_tools': only a group row lists called members"
        elif called and len(set(called)) != len(called):
            problem = ".called_tools': a name is listed twice"
        if problem:
            return f"field 'loaded[{i}]{problem}"
    return "field 'loaded': the rows disagree with each other or with the counters"


class _DiscoveredV1(BaseModel):
    """A version-1 row: a discovered tool and its last use."""

    model_config = ConfigDict(extra="ignore", strict=True)

    name: str = Field(min_length=1, max_length=128)
    last_use: Counter = 0


class SurfaceSnapshotV1(BaseModel):
    """The version-1 layout, validated before it is lifted (so errors name v1's fields).

    It carries the limits of version 2's rows (names 1 to 128 characters, none twice), so
    every error a lifted snapshot could raise is raised here, against v1's own fields.
    """

    model_config = ConfigDict(extra="ignore")

    version: Literal[1]
    session_id: str = Field(default="", max_length=256)
    mark: str
    discovered: list[_DiscoveredV1] = Field(default_factory=list, max_length=MAX_V1_ROWS)
    groups: list[str] = Field(default_factory=list, max_length=MAX_V1_ROWS)
    held_back: list[str] = Field(default_factory=list, max_length=MAX_ROWS)
    rules_given: list[str] = Field(default_factory=list, max_length=MAX_ROWS)

    @model_validator(mode="after")
    def _unique(self) -> SurfaceSnapshotV1:
        """No name twice in ``discovered`` or in ``groups``; group names within limits."""
        problem = ""
        seen: dict[str, int] = {}
        for i, row in enumerate(self.discovered):
            if row.name in seen:
                first = seen[row.name]
                problem = (
                    f"field 'discovered[{i}].name': {row.name!r} is already discovered[{first}]"
                )
                break
            seen[row.name] = i
        groups: dict[str, int] = {}
        for i, group in enumerate(self.groups):
            if problem:
                break
            if not 1 <= len(group) <= 128:
                problem = (
                    f"field 'groups[{i}]': a group name has 1 to 128 characters, got {len(group)}"
                )
            elif group in groups:
                problem = f"field 'groups[{i}]': {group!r} is already groups[{groups[group]}]"
            groups[group] = i
        if problem:
            raise PydanticCustomError("snapshot_rows", "{problem}", {"problem": problem})
        return self


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 kept no called marks: a row from then is taken as called."""
    try:
        v1 = SurfaceSnapshotV1.model_validate(data)
    except ValidationError as exc:
        raise SnapshotError(_first_error(exc)) from None
    loaded: list[dict[str, Any]] = []
    for row in v1.discovered:
        loaded.append(
            {
                "kind": "tool",
                "name": row.name,
                "how": "select",
                "order": len(loaded) + 1,
                "last_use": row.last_use,
                "called": True,
            }
        )
    for group in v1.groups:
        loaded.append(
            {
                "kind": "group",
                "name": group,
                "how": "group",
                "order": len(loaded) + 1,
                "last_use": 0,
                "called": False,
            }
        )
    return {
        "version": 2,
        "session_id": v1.session_id,
        "mark": v1.mark,
        "clock": max([r.last_use for r in v1.discovered] + [0]),
        "order": len(loaded),
        "loaded": loaded,
        "held_back": v1.held_back,
        "rules_given": v1.rules_given,
        "catalogue_rules": None,
    }


def _first_error(exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first["type"] == "snapshot_rows":
        return f"snapshot: {first['msg']}"
    loc = "".join(f"[{_shown(p)}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
    loc = loc.lstrip(".") or "<snapshot>"
    return f"snapshot: field {loc!r}: {first['msg']}"


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 had no seal: it lifts unsealed (a surface with a key refuses it)."""
    return {**data, "version": 3, "seal": None}


#: version -> the step that lifts it one version.
UPCASTERS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _v1_to_v2,
    2: _v2_to_v3,
}


#: A text up to this many characters, ending as the serializer ends one, is first read in
#: one pass by pydantic's JSON parser: the fastest read of a valid current snapshot, and one
#: it refuses then costs a few milliseconds more at most. Anything else is parsed once
#: (parse_text): pydantic checks a list's bound only after validating that many items.
_ONE_PASS_CHARS = 1 << 16
_WRITTEN_END = f'"version":{SNAPSHOT_VERSION}}}'


def _current_from_json(text: str | bytes) -> SurfaceSnapshot | None:
    """The snapshot ``text`` holds when it is valid JSON of the current version, else None.

    Parsed and validated in one pass (pydantic's JSON parser), when the text is short and
    written as the serializer writes one; anything else, an older version, a missing one,
    an error or a long text, goes the long way (:func:`parse_text`), whose errors name the
    field. A held-back list that is a floor read before is not read again (``floors.py``).
    """
    if len(text) > _ONE_PASS_CHARS:
        return None
    if isinstance(text, str):
        if not text.endswith(_WRITTEN_END):
            return None
        return read_keeping_floors(text, _model_of, _held_back, _with_held_back)
    if not text.endswith(_WRITTEN_END.encode()):
        return None
    return _model_of(text)


def _model_of(text: str | bytes) -> SurfaceSnapshot | None:
    """``text``'s snapshot when it reads as the current version as it stands, else None."""
    try:
        snap = SurfaceSnapshot.model_validate_json(text)
    except ValidationError:
        return None
    return snap if "version" in snap.model_fields_set else None


def _held_back(snap: SurfaceSnapshot) -> list[str]:
    return snap.held_back


def _with_held_back(snap: SurfaceSnapshot, names: list[str]) -> SurfaceSnapshot:
    return snap.model_copy(update={"held_back": names})


def parse_snapshot(data: SurfaceSnapshot | Mapping[str, Any] | str | bytes) -> SurfaceSnapshot:
    """Validate a snapshot (a model, a mapping, or JSON text), lifting older versions."""
    if isinstance(data, SurfaceSnapshot):
        return data
    if isinstance(data, str | bytes):
        fast = _current_from_json(data)
        return fast if fast is not None else parse_text(data)
    return _from_mapping(data)


def parse_text(text: str | bytes) -> SurfaceSnapshot:
    """Validate the snapshot JSON ``text`` holds, of any version, parsing the text once.

    Every list's length is checked on the parsed JSON before one of its items is validated,
    and a whole number too long for any field is read as one past every bound, never
    converted in full: a text costs time and memory in proportion to its length, and one
    with a list past its bound is refused in milliseconds once parsed. A held-back list
    that is a kept floor's text is not parsed: the rest is, with a stand-in there.
    """
    if not isinstance(text, str):
        return _from_mapping(_json(text))
    failed: list[SnapshotError] = []

    def read(given: str) -> SurfaceSnapshot | None:
        try:
            return _from_mapping(_json(given))
        except SnapshotError as exc:
            if given is text:  # the text itself, not the one with a stand-in (floors.py)
                failed.append(exc)
            return None

    got = read_keeping_floors(text, read, _held_back, _with_held_back)
    if got is None:
        raise failed[0]
    return got


#: A JSON whole number of more than this many digits is past every bound of a snapshot
#: (MAX_COUNTER has 16): it is read as -_PAST or _PAST, never converted in full (Python
#: refuses 4,300 digits, and time to convert grows with the square of the length).
_DIGITS = 20
_PAST: int = 10**_DIGITS


def _whole_number(text: str) -> int:
    """A JSON whole number's value; ``_PAST`` (or ``-_PAST``) past ``_DIGITS`` digits."""
    if len(text) <= _DIGITS:
        return int(text)
    return -_PAST if text.startswith("-") else _PAST


def _json(text: str | bytes) -> Any:
    """``text`` parsed as JSON, once; :class:`SnapshotError` if it is not JSON."""
    try:
        return json.loads(text, parse_int=_whole_number)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SnapshotError(f"snapshot: not JSON ({exc})") from None
    except RecursionError:
        raise SnapshotError("snapshot: not a snapshot (JSON nested too deeply)") from None


def _shown(value: object) -> str:
    """``value`` in a message: short; a whole number past ``_DIGITS`` digits described."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if -_PAST < value < _PAST else f"<a number of over {_DIGITS} digits>"
    if isinstance(value, str):
        return repr(value) if len(value) <= 40 else f"{value[:40]!r}... ({len(value)} characters)"
    if value is None or isinstance(value, bool | float):
        return repr(value)
    return f"a {type(value).__name__}"


#: The lists of a version-2 or version-3 snapshot, and the most items each lists.
_BOUNDS = (
    ("catalogue_rules", MAX_ROWS),
    ("held_back", MAX_ROWS),
    ("loaded", MAX_ROWS),
    ("rules_given", MAX_ROWS),
)
#: The lists of a version-1 snapshot, and the most items each lists.
_V1_BOUNDS = (
    ("discovered", MAX_V1_ROWS),
    ("groups", MAX_V1_ROWS),
    ("held_back", MAX_ROWS),
    ("rules_given", MAX_ROWS),
)


def _lengths_problem(data: Mapping[str, Any], version: int) -> str:
    """A list of ``data`` past its bound, named, or ''; checked before any item is read.

    The model's bounds are pydantic's, which it checks only after validating that many
    items: a list past one cost the validation of every item up to it.
    """
    for name, most in _V1_BOUNDS if version == 1 else _BOUNDS:
        items = data.get(name)
        if isinstance(items, list) and len(items) > most:
            return f"field {name!r}: List should have at most {most} items, not {len(items)}"
    if version == 1:
        lists = (data.get("discovered"), data.get("groups"))
        rows = sum(len(items) for items in lists if isinstance(items, list))
        if rows > MAX_V1_ROWS:
            return (
                f"field 'groups': discovered tools and groups, each a loaded row once lifted, "
                f"are at most {MAX_V1_ROWS} together, not {rows}"
            )
        return ""
    loaded = data.get("loaded")
    for i, row in enumerate(loaded if isinstance(loaded, list) else ()):
        called = row.get("called_tools") if isinstance(row, dict) else None
        if isinstance(called, list) and len(called) > MAX_CALLED_TOOLS:
            return (
                f"field 'loaded[{i}].called_tools': List should have at most "
                f"{MAX_CALLED_TOOLS} items, not {len(called)}"
            )
    return ""


def _from_mapping(data: object) -> SurfaceSnapshot:
    """Validate a snapshot given as a mapping (parsed JSON), lifting older versions."""
    if not isinstance(data, Mapping):
        raise SnapshotError(f"snapshot: expected a JSON object, got {type(data).__name__}")
    current = dict(data)
    version = current.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise SnapshotError(
            f"snapshot: field 'version': expected a whole number, got {_shown(version)}"
        )
    if version > SNAPSHOT_VERSION or version < 1:
        raise SnapshotError(
            f"snapshot: field 'version': unknown version {_shown(version)} "
            f"(this library reads 1 to {SNAPSHOT_VERSION})"
        )
    problem = _lengths_problem(current, version)
    if problem:
        raise SnapshotError(f"snapshot: {problem}")
    try:
        while version < SNAPSHOT_VERSION:
            current = UPCASTERS[version](current)
            version = current["version"]
        return SurfaceSnapshot.model_validate(current)
    except ValidationError as exc:
        raise SnapshotError(_first_error(exc)) from None
    except RecursionError:
        raise SnapshotError("snapshot: not a snapshot (a value nested too deeply)") from None
