"""What a run has loaded and been given, as the host asks for it: only what it may call now.

:class:`RunListing` is the part of :class:`~toolsurface.surface.surface.ToolSurface` that
answers the host's questions about the run (what is loaded, what the model called, whose
rules it read, what is held back). Every answer is filtered by the live decision: a tool or
group the policy blocked since it was loaded is kept in the run (a policy that relaxes
again brings it back) but never listed.
"""

from __future__ import annotations

from collections.abc import Callable

from toolsurface.admission.rules import RulesLedger
from toolsurface.registry import ToolRegistry
from toolsurface.registry.view import RegistryView, one_view
from toolsurface.surface.deferral import Decision
from toolsurface.surface.state import LoadedEntry, RunState

__all__ = ["RunListing"]


class RunListing:
    """The host's view of a run; the surface holds the state it reads."""

    registry: ToolRegistry
    _pinned: RegistryView | None
    _run: RunState
    _rules: RulesLedger

    # The surface's own (annotated only, so that nothing here stands in for them).
    _decide: Callable[[], Decision]
    _begin_operation: Callable[[], None]

    @one_view
    def loaded_entries(self) -> list[LoadedEntry]:
        """What the run has loaded and may call now, in discovery order."""
        d = self._decide()
        return self._run.admitted_entries(d.admitted_set, d.groups)

    @one_view
    def discovered_tool_names(self) -> list[str]:
        """Single tools the run loaded, in discovery order."""
        return [e.name for e in self.loaded_entries() if e.kind == "tool"]

    @one_view
    def called_discovered_tool_names(self) -> list[str]:
        """Loaded tools the model actually called (or seeded ones), in discovery order.

        A tool called from a loaded group counts, after the group's earlier entries. What a
        host should carry into the session's next run, rather than every near-miss a search
        loaded.
        """
        admitted = self._decide().admitted_set
        return [n for n in self._run.called_tools() if n in admitted]

    @one_view
    def loaded_tool_group_names(self) -> list[str]:
        """Groups the run holds whole, in discovery order."""
        return [e.name for e in self.loaded_entries() if e.kind == "group"]

    @one_view
    def rules_given(self) -> list[str]:
        """Groups whose rules the model has been given in this run (and may still call)."""
        groups = self._decide().groups
        return sorted(g for g in self._rules.given if g in groups)

    @one_view
    def held_back_groups(self) -> list[str]:
        """The groups currently held back."""
        return sorted(self._decide().held)
