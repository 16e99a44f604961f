"""Snapshots under attack (issue 21, items 4, 5 and 9): sealed, checked, never naming the blocked.

A snapshot sits in a host's storage between two requests; anyone who can write there can
edit it. With the host's key it is sealed and an edited one is refused; without one the
checks that need no key still hold: the session, the mark (recomputed, never taken on
trust), rules lists that agree, numbers that are numbers. And whatever the policy blocked
since a tool was loaded is never named by the surface, the snapshot or the catalogue.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.admission.admit import ToolCall
from toolsurface.surface.snapshot import SnapshotError, parse_snapshot

KEY = b"a host secret, 16 bytes or more"
RULES = "Name repositories as owner/name."


def _registry(engine: str) -> ToolRegistry:
    reg = ToolRegistry(engine=engine)  # type: ignore[arg-type]
    reg.register_many(
        [
            Tool(name="read_file", description="Read a file."),
            *[
                Tool(name=f"gh__{n}", description=f"GitHub: {n.replace('_', ' ')}.")
                for n in ("list_issues", "create_issue", "merge_pull_request")
            ],
            *[
                Tool(name=f"jira__{n}", description=f"Jira: {n.replace('_', ' ')}.")
                for n in ("create_ticket", "search_tickets")
            ],
            tool_search_tool(),
        ]
    )
    reg.declare_group("gh", prefix="gh__", dynamic=True, rules=RULES)
    reg.declare_group("jira", prefix="jira__", dynamic=True, rules="File tickets in PROJ.")
    return reg


def _used(reg: ToolRegistry, **kw: Any) -> ToolSurface:
    """A run that loaded a tool, a group and was given both groups' rules."""
    surface = ToolSurface(reg, session_id="s1", **kw)
    surface.plan()
    surface.tool_search({"select": ["gh__list_issues"]})
    surface.tool_search({"group": "jira"})
    surface.plan()
    surface.admit([ToolCall("jira__create_ticket", {}, id="1")])
    return surface


def _request(surface: ToolSurface) -> tuple[tuple[str, ...], str]:
    plan = surface.plan()
    return plan.names, plan.catalogue


# -- 5. sealed snapshots -----------------------------------------------------------------------


def test_a_keyed_surface_seals_its_snapshot_and_restores_it(engine_name: str) -> None:
    reg = _registry(engine_name)
    surface = _used(reg, mark_key=KEY)
    snap = surface.snapshot()
    assert snap.seal is not None and len(snap.seal) == 64
    again = ToolSurface(reg, session_id="s1", mark_key=KEY)
    assert again.restore(snap.to_json()) == []
    assert _request(again) == _request(surface)


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (lambda s: s.update(rules_given=[], catalogue_rules=[]), "seal"),
        (lambda s: s.update(mark="0" * 12), "seal"),
        (lambda s: s.update(seal=None), "seal"),
        (lambda s: s["loaded"][0].update(name="gh__merge_pull_request"), "seal"),
    ],
)
def test_an_edited_sealed_snapshot_is_refused_and_changes_nothing(
    engine_name: str, edit: Any, field: str
) -> None:
    reg = _registry(engine_name)
    surface = _used(reg, mark_key=KEY)
    data = json.loads(surface.snapshot().to_json())
    edit(data)
    target = ToolSurface(reg, session_id="s1", mark_key=KEY)
    before = _request(target)
    with pytest.raises(SnapshotError, match=f"field '{field}'"):
        target.restore(json.dumps(data))
    assert _request(target) == before


def test_a_snapshot_sealed_under_another_key_is_refused(engine_name: str) -> None:
    reg = _registry(engine_name)
    theirs = _used(reg, mark_key=b"somebody else's key!").snapshot().to_json()
    with pytest.raises(SnapshotError, match="sealed under another key"):
        ToolSurface(reg, session_id="s1", mark_key=KEY).restore(theirs)


def test_another_sessions_snapshot_is_refused(engine_name: str) -> None:
    reg = _registry(engine_name)
    snap = _used(reg, mark_key=KEY).snapshot().to_json()
    with pytest.raises(SnapshotError, match="field 'session_id': 's1' is another session's"):
        ToolSurface(reg, session_id="s2", mark_key=KEY).restore(snap)
    adopting = ToolSurface(reg, mark_key=KEY)  # no session given: it takes the snapshot's
    adopting.restore(snap)
    assert adopting.session_id == "s1"


def test_the_mark_is_recomputed_and_a_foreign_one_gives_the_rules_again(engine_name: str) -> None:
    reg = _registry(engine_name)
    surface = _used(reg)  # no key: a per-process mark
    data = json.loads(surface.snapshot().to_json())
    data["mark"] = "0123456789ab"  # not this run's: rules given under it are not genuine
    again = ToolSurface(reg)
    again.restore(json.dumps(data))
    assert again.mark == surface.mark != "0123456789ab"
    assert again.rules_given() != surface.rules_given()  # the ledger starts over
    catalogue = again.plan().catalogue
    assert f"[{surface.mark}]" in catalogue and "0123456789ab" not in catalogue


def test_rules_lists_that_disagree_are_refused_naming_the_field(engine_name: str) -> None:
    reg = _registry(engine_name)
    data = json.loads(_used(reg).snapshot().to_json())
    data["rules_given"], data["catalogue_rules"] = [], ["gh"]
    with pytest.raises(SnapshotError, match=r"field 'catalogue_rules\[0\]': .* not in rules_given"):
        parse_snapshot(data)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("clock", "000000000000"),
        ("clock", True),
        ("clock", 10**100),
        ("order", 1.0),
        ("mark", 123456789012),
    ],
)
def test_snapshot_numbers_are_numbers_and_bounded(field: str, value: Any) -> None:
    data = {
        "version": 3,
        "session_id": "s",
        "mark": "0123456789ab",
        "clock": 1,
        "order": 0,
        "loaded": [],
        "held_back": [],
        "rules_given": [],
        "catalogue_rules": None,
        field: value,
    }
    with pytest.raises(SnapshotError, match=f"field '{field}'"):
        parse_snapshot(data)


def test_a_version_2_snapshot_still_restores_without_a_key(engine_name: str) -> None:
    reg = _registry(engine_name)
    data = json.loads(_used(reg).snapshot().to_json())
    data["version"] = 2
    del data["seal"]
    again = ToolSurface(reg)
    assert again.restore(json.dumps(data)) == []
    with pytest.raises(SnapshotError, match="field 'seal': missing"):
        ToolSurface(reg, mark_key=KEY).restore(json.dumps(data))


# -- 4 and 9. nothing blocked is named, restored or carried ------------------------------------


def _blocks_jira(name: str) -> bool:
    return not name.startswith("jira__")


def test_a_group_blocked_mid_run_leaves_the_catalogue_lists_and_snapshot(engine_name: str) -> None:
    reg = _registry(engine_name)
    surface = _used(reg)
    assert "jira" in surface.loaded_tool_group_names()
    surface.set_policy(_blocks_jira)
    plan = surface.plan()
    assert "jira" not in plan.catalogue and "File tickets" not in plan.catalogue
    assert surface.loaded_tool_group_names() == []
    assert "jira__create_ticket" not in surface.called_discovered_tool_names()
    assert "jira" not in surface.rules_given()
    assert "jira" not in surface.snapshot().to_json()
    surface.set_policy(None)  # the policy relaxes: the loads were kept, not forgotten
    assert surface.loaded_tool_group_names() == ["jira"]


def test_an_honest_snapshot_restored_under_a_stricter_policy_names_nothing_blocked(
    engine_name: str,
) -> None:
    reg = _registry(engine_name)
    snap = _used(reg).snapshot().to_json()
    assert "jira" in snap
    strict = ToolSurface(reg, policy=_blocks_jira)
    strict.restore(snap)
    plan = strict.plan()
    assert "jira" not in plan.catalogue and "File tickets" not in plan.catalogue
    assert not any(n.startswith("jira__") for n in plan.names)
    assert "jira" not in strict.snapshot().to_json()


def test_a_snapshot_naming_rules_of_a_group_never_admitted_adds_nothing(engine_name: str) -> None:
    reg = _registry(engine_name)
    data = json.loads(_used(reg).snapshot().to_json())
    data["loaded"] = [r for r in data["loaded"] if r["kind"] != "group"]
    data["rules_given"] = sorted({*data["rules_given"], "jira"})
    data["catalogue_rules"] = sorted({*(data["catalogue_rules"] or []), "jira"})
    strict = ToolSurface(reg, policy=_blocks_jira)
    strict.restore(json.dumps(data))
    assert "jira" not in strict.plan().catalogue and "File tickets" not in strict.plan().catalogue


def _blocks_ticket_writes(name: str) -> bool:
    return name != "jira__create_ticket"


def test_a_member_blocked_mid_run_is_named_by_no_listing_or_state_key(engine_name: str) -> None:
    """The group stays (one member is still admitted); its blocked member is named nowhere."""
    reg = _registry(engine_name)
    surface = _used(reg)
    assert surface.loaded_entries()[-1].called_tools == ["jira__create_ticket"]
    surface.set_policy(_blocks_ticket_writes)
    surface.plan()
    entries = surface.loaded_entries()
    assert [e.name for e in entries] == ["gh__list_issues", "jira"]
    assert entries[-1].called_tools == []
    assert "jira__create_ticket" not in repr(surface.state_key())
    assert "jira__create_ticket" not in surface.snapshot().to_json()
    entries[-1].called_tools.append("edited by the host")  # a copy: the run is unchanged
    surface.set_policy(None)
    assert surface.loaded_entries()[-1].called_tools == ["jira__create_ticket"]


@pytest.mark.parametrize("delivery", ["native", "append"])
def test_unloading_what_the_policy_blocked_since_reports_nothing(
    engine_name: str, delivery: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Compaction and eviction drop blocked loads silently: no event or log line names them."""
    events: list[tuple[str, dict[str, Any]]] = []
    reg = _registry(engine_name)
    surface = _used(
        reg,
        provider="anthropic",
        delivery=delivery,
        on_event=lambda e: events.append((e.kind, e.data)),
    )
    surface.set_policy(_blocks_jira)
    surface.plan()
    events.clear()
    caplog.clear()
    with caplog.at_level("INFO", logger="toolsurface"):
        surface.end_turn()
        surface.compaction()
        if delivery == "append":  # over a cap of one: the least recently used go
            surface.limits = surface.limits.model_copy(update={"max_loaded_entries": 1})
            surface.tool_search({"select": ["gh__create_issue"]})
            surface.end_turn()
    unloaded = [d["entry"] for kind, d in events if kind == "tool_unloaded"]
    assert unloaded, "the admitted loads' unloads are still reported"
    assert not any("jira" in e for e in unloaded)
    assert "jira" not in caplog.text
    surface.set_policy(None)
    assert "jira" not in surface.loaded_tool_group_names()  # unloaded, not hidden


def test_seeds_the_policy_blocks_are_dropped_without_naming_them(
    engine_name: str, caplog: pytest.LogCaptureFixture
) -> None:
    reg = _registry(engine_name)
    surface = ToolSurface(reg, policy=_blocks_jira)
    surface.seed(discovered_tools=["jira__create_ticket", "gh__list_issues", "zz__typo"])
    surface.seed(loaded_tool_groups=["jira", "zz"])
    with caplog.at_level("WARNING", logger="toolsurface"):
        surface.plan()
    assert surface.discovered_tool_names() == ["gh__list_issues"]
    assert "2 seeded tools or groups are not admitted; dropped" in caplog.text
    assert "jira" not in caplog.text
    # A name the registry does not have names nothing the policy blocks: said as it is.
    assert "seeded tool 'zz__typo' is not registered" in caplog.text
    assert "seeded group 'zz' has no tool" in caplog.text
