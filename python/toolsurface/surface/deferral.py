"""The deferral decision: which groups a run holds back."""

from __future__ import annotations

from dataclasses import dataclass

__all__: list[str] = []


@dataclass
class _Decision:
    key: tuple[int, int, int, int]
    admitted: tuple[str, ...]
    held: frozenset[str]
    members: dict[str, tuple[str, ...]]
    discovery: bool
    reasons: tuple[str, ...]


def _held_members(d: _Decision) -> set[str]:
    """The tools of the groups the decision holds back."""
    return {n for g in d.held for n in d.members.get(g, ())}
