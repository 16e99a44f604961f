"""The catalogue block: one system-prompt block naming what is held back.

Its bytes depend only on the held-back groups, their admitted members and whether a
discovery tool is live, so it stays byte-identical from request to request while nothing
changed, and a provider's prompt cache keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from toolsurface.admission.rules import mark_notice, render_rules
from toolsurface.admission.text import safe_text
from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision

__all__ = ["NAMES_LISTED_UP_TO", "HeldGroup", "catalogue_block", "render_catalogue"]

#: A prefix group with more members than this is named by its prefix and a count.
NAMES_LISTED_UP_TO = 12


@dataclass(frozen=True)
class HeldGroup:
    """A held-back group as the catalogue shows it."""

    name: str
    members: tuple[str, ...]
    prefix: str | None
    dynamic: bool
    description: str | None = None


def _line(group: HeldGroup, shown: Callable[[str], str]) -> str:
    n = len(group.members)
    prefix = group.prefix
    about = f" ({safe_text(group.description, 200)})" if group.description else ""
    named_as_is = all(shown(m) == m for m in group.members[:1])  # no alias breaks the prefix
    if (
        prefix
        and named_as_is
        and n > NAMES_LISTED_UP_TO
        and all(m.startswith(prefix) for m in group.members)
    ):
        return f"- {group.name}{about}: {n} tools, every name starts with {prefix!r}"
    return f"- {group.name}{about}: {', '.join(map(shown, group.members))}"


def render_catalogue(
    held: Sequence[HeldGroup],
    *,
    discovery_tool: str | None,
    rules: Sequence[tuple[str, str]] = (),
    mark_note: str = "",
    shown: Callable[[str], str] = str,
) -> str:
    """The block's text: host groups first, then connected servers, each in name order.

    ``rules`` are the rendered rules sections of the groups on the surface; ``mark_note``
    names the run's mark. With nothing held back and no rules the block is empty.
    """
    if not held and not rules and not mark_note:
        return ""
    if not held:
        parts = ["<tool_catalogue>", mark_note] if mark_note else ["<tool_catalogue>"]
        for _, section in rules:
            parts += ["", section]
        parts.append("</tool_catalogue>")
        return "\n".join(parts)
    host = sorted((g for g in held if not g.dynamic), key=lambda g: g.name)
    servers = sorted((g for g in held if g.dynamic), key=lambda g: g.name)
    lines = [
        "<tool_catalogue>",
        "More tools exist than your tool list shows. The groups below are held back to keep "
        "the list short.",
        "A dedicated tool beats a workaround with a general one: before improvising with a "
        "shell, a browser or another general tool, load the tool made for the job.",
    ]
    if discovery_tool:
        lines.append(
            f"To load tools, call {discovery_tool} with query (what the job needs), select "
            "(exact tool names) or group (a group below, loaded whole). Loaded tools are "
            "callable from your next step."
        )
    else:
        lines.append(
            "To use one of these tools, call it by its exact name: it runs, and it is in your "
            "tool list from the next step on."
        )
    if host:
        lines.append("")
        lines.append("Groups:")
        lines.extend(_line(g, shown) for g in host)
    if servers:
        lines.append("")
        lines.append("Connected servers:")
        lines.extend(_line(g, shown) for g in servers)
    if mark_note:
        lines.append("")
        lines.append(mark_note)
    for _, section in rules:
        lines.append("")
        lines.append(section)
    lines.append("</tool_catalogue>")
    return "\n".join(lines)


def catalogue_block(
    d: Decision,
    *,
    registry: RegistryView,
    discovery_tool: str | None,
    with_rules: Sequence[str],
    rules_of: Callable[[str], str | None],
    mark: str,
    groups: Collection[str],
    shown: Callable[[str], str] = str,
) -> str:
    """The block for decision ``d``: its held groups, the rules of ``with_rules``, the mark.

    The mark is named whenever one of ``groups`` (those with an admitted tool) has rules.
    """
    reg = registry
    held_view = [
        HeldGroup(
            g, d.members[g], reg.group(g).prefix, reg.group(g).dynamic, reg.group(g).description
        )
        for g in sorted(d.held)
    ]
    any_rules = any(rules_of(g) for g in groups)
    return render_catalogue(
        held_view,
        discovery_tool=discovery_tool if d.discovery else None,
        rules=[(g, render_rules(g, rules_of(g) or "", mark)) for g in with_rules if rules_of(g)],
        mark_note=mark_notice(mark) if any_rules else "",
        shown=shown,
    )
