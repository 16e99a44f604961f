"""What a run has loaded and been given, as the host asks for it: only what it may call now.

:class:`RunListing` answers the host's questions about a run (what is loaded, what the
model called, whose rules it read, what is held back) from the run's state and the live
decision, which :class:`~toolsurface.surface.surface.ToolSurface` hands it for each
question. Every answer is filtered by that decision: a tool or group the policy blocked
since it was loaded is kept in the run (a policy that relaxes again brings it back) but
never listed.
"""

from __future__ import annotations

from toolsurface.admission.rules import RulesLedger
from toolsurface.surface.deferral import Decision
from toolsurface.surface.state import LoadedEntry, RunState, entry_admitted

__all__ = ["RunListing"]


class RunListing:
    """The host's view of a run under one decision; reads the run, never changes it."""

    __slots__ = ("_decision", "_rules", "_run")

    def __init__(self, run: RunState, rules: RulesLedger, decision: Decision) -> None:
        self._run = run
        self._rules = rules
        self._decision = decision

    def loaded_entries(self) -> list[LoadedEntry]:
        """What the run has loaded and may call now, in discovery order."""
        d = self._decision
        return self._run.admitted_entries(d.admitted_set, d.groups)

    def _names(self, kind: str) -> list[str]:
        """The names of the admitted entries of ``kind``, in discovery order (no copies)."""
        d = self._decision
        return [
            e.name
            for e in self._run.entries()
            if e.kind == kind and entry_admitted(e, d.admitted_set, d.groups)
        ]

    def discovered_tool_names(self) -> list[str]:
        """Single tools the run loaded, in discovery order."""
        return self._names("tool")

    def called_discovered_tool_names(self) -> list[str]:
        """Loaded tools the model actually called (or seeded ones), in discovery order.

        A tool called from a loaded group counts, after the group's earlier entries. What a
        host should carry into the session's next run, rather than every near-miss a search
        loaded.
        """
        admitted = self._decision.admitted_set
        return [n for n in self._run.called_tools() if n in admitted]

    def loaded_tool_group_names(self) -> list[str]:
        """Groups the run holds whole, in discovery order."""
        return self._names("group")

    def rules_given(self) -> list[str]:
        """Groups whose rules the model has been given in this run (and may still call)."""
        groups = self._decision.groups
        return sorted(g for g in self._rules.given if g in groups)

    def held_back_groups(self) -> list[str]:
        """The groups currently held back."""
        return sorted(self._decision.held)
