"""A run's state as a snapshot, and back: what ``ToolSurface.snapshot``/``restore`` move.

:func:`snapshot_of` writes the run's loads, its held-back floor and its rules ledger into a
:class:`~toolsurface.surface.snapshot.SurfaceSnapshot`; :func:`resumed` reads a validated one back
into new state objects over the live registry, dropping what no longer exists.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from toolsurface.admission.rules import RulesLedger
from toolsurface.admission.text import safe_text
from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision
from toolsurface.surface.floors import floor_set
from toolsurface.surface.snapshot import LoadedRow, SnapshotError, SurfaceSnapshot
from toolsurface.surface.snapshot_read import SnapshotFields, check_fields_seal
from toolsurface.surface.state import LoadedEntry, LoadHow, RunState

__all__ = ["Resumed", "apply_seeds", "check_restorable", "resumed", "snapshot_of"]

_log = logging.getLogger("toolsurface.surface")


def snapshot_of(
    run: RunState,
    rules: RulesLedger,
    *,
    held_back: Sequence[str],
    session_id: str,
    mark: str,
    tool_ok: Callable[[str], bool],
    group_ok: Callable[[str], bool],
    key: bytes | None,
) -> SurfaceSnapshot:
    """The snapshot of a run's state: loads in discovery order, floor and rules sorted.

    Only what the run may call now is written (``tool_ok``, ``group_ok``: a group with an
    admitted member): a tool or group the policy blocked since it was loaded is not named.
    ``held_back`` is the floor already so filtered, sorted. With the host's ``key`` the
    snapshot is sealed.
    """
    snap = SurfaceSnapshot(
        session_id=session_id,
        mark=mark,
        clock=run.clock,
        order=run.order,
        loaded=[
            LoadedRow(
                kind=e.kind,
                name=e.name,
                how=e.how,
                order=e.order,
                last_use=e.last_use,
                called=e.called,
                called_tools=[n for n in e.called_tools if tool_ok(n)],
            )
            for e in run.entries()
            if (tool_ok if e.kind == "tool" else group_ok)(e.name)
        ],
        held_back=list(held_back),
        rules_given=sorted(g for g in rules.given if group_ok(g)),
        catalogue_rules=(
            None if rules.catalogue is None else [g for g in rules.catalogue if group_ok(g)]
        ),
    )
    return snap if key is None else snap.sealed(key)


@dataclass(frozen=True)
class Resumed:
    """A snapshot's state over the live registry, and the loaded names it had to drop."""

    run: RunState
    rules: RulesLedger
    held_floor: frozenset[str]
    dropped: list[str]


def apply_seeds(
    tools: Sequence[str],
    groups: Sequence[str],
    d: Decision,
    view: RegistryView,
    load: Callable[[Literal["tool", "group"], str, LoadHow], bool],
    run: RunState,
) -> None:
    """Load what a session's previous run used: tools as called, groups whole.

    Only what decision ``d`` admits. A seeded name that is no tool or group of the registry
    is dropped with a warning naming it (it names nothing the policy could block); one the
    policy blocks (a tool the run may not call, a group with no tool it may call) is
    dropped with a warning that counts such seeds and names none.
    """
    admitted = d.admitted_set
    blocked = 0
    for name in tools:
        if name in admitted:
            load("tool", name, "seed")
            run.loaded[f"tool:{name}"].called = True
        elif name in view:
            blocked += 1
        else:
            _log.warning("toolsurface: seeded tool %r is not registered; dropped", name)
    for group in groups:
        members = view.group_members(group)
        if any(n in admitted for n in members):
            load("group", group, "seed")
        elif members:
            blocked += 1
        else:
            _log.warning("toolsurface: seeded group %r has no tool; dropped", group)
    if blocked:
        _log.warning("toolsurface: %d seeded tools or groups are not admitted; dropped", blocked)


def check_restorable(snap: SnapshotFields, key: bytes | None, session_id: str | None) -> None:
    """Refuse a snapshot not sealed under ``key``, or another session's than ``session_id``.

    ``session_id`` is the surface's own when the host gave one (``None``: any is taken).
    """
    check_fields_seal(snap, key)
    if session_id is not None and snap.session_id != session_id:
        raise SnapshotError(
            f"snapshot: field 'session_id': {safe_text(snap.session_id, 64)!r} is another "
            f"session's (this surface is session {safe_text(session_id, 64)!r})"
        )


def resumed(snap: SnapshotFields, registry: RegistryView, *, same_mark: bool) -> Resumed:
    """The state ``snap`` describes; a loaded tool or group that is gone is dropped (logged).

    ``same_mark`` says the run's mark, recomputed, is the snapshot's: otherwise the rules
    given under the old mark no longer pass as genuine, so the ledger starts over and the
    rules are given again under the new one.
    """
    loaded: dict[str, LoadedEntry] = {}
    dropped: list[str] = []
    has_tool, members = registry.has_tool, registry.group_members
    for called, called_tools, how, kind, last_use, name, order in snap.loaded:
        # A group exists while a tool of the view is in it (time in the session, not the
        # catalogue: its members come from the view's map).
        if not (has_tool(name) if kind == "tool" else members(name)):
            dropped.append(name)
            _log.warning("toolsurface: snapshot names %r, which no longer exists; dropped", name)
            continue
        key = f"{kind}:{name}"
        kept = [n for n in called_tools if has_tool(n)] if called_tools else []
        loaded[key] = LoadedEntry(key, kind, name, how, order, last_use, called, kept)
    rules = RulesLedger(
        given=set(snap.rules_given),
        catalogue=None if snap.catalogue_rules is None else tuple(snap.catalogue_rules),
        basis=None,
        reset=snap.catalogue_rules is None,
    )
    if not same_mark:
        _log.warning("toolsurface: the snapshot's mark is not this run's; rules given again")
        rules = RulesLedger()
    run = RunState(loaded, snap.clock, snap.order)
    return Resumed(run, rules, floor_set(snap.held_back), dropped)
