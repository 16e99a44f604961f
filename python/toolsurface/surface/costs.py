"""What the surface's parts cost in tokens: definitions and rules sections, estimated once.

The deferral decision, the loads and the evictions all measure the surface against the
token budget; :class:`TokenCosts` is where they get the figures, each estimated once per
registered tool object (a re-registered tool is estimated again) and once per rules text.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

from toolsurface.admission.rules import render_rules
from toolsurface.models import Tool
from toolsurface.surface.limits import estimate_text_tokens

__all__ = ["TokenCosts"]


class TokenCosts:
    """Token estimates of tool definitions (by the host's estimator) and rules sections."""

    def __init__(self, tool: Callable[[str], Tool], estimator: Callable[[Tool], int]) -> None:
        self._tool = tool
        self.estimator = estimator
        self._tools: dict[str, tuple[Tool, int]] = {}
        self._rules: dict[tuple[str, str, str], int] = {}

    def of_tool(self, name: str) -> int:
        """A registered tool's definition, estimated once per tool object."""
        tool = self._tool(name)
        cached = self._tools.get(name)
        if cached is not None and cached[0] is tool:
            return cached[1]
        tokens = int(self.estimator(tool))
        self._tools[name] = (tool, tokens)
        return tokens

    def of_rules(self, group: str, rules: str | None, mark: str) -> int:
        """A group's rules section as the catalogue writes it (0 for a group without rules)."""
        if not rules:
            return 0
        key = (group, rules, mark)
        found = self._rules.get(key)
        if found is None:
            found = self._rules[key] = estimate_text_tokens(render_rules(group, rules, mark))
        return found

    def of_load(
        self,
        names: Sequence[str],
        *,
        listed: Collection[str],
        rules_tokens: Iterable[int],
        budget: float,
    ) -> tuple[int, float]:
        """What loading ``names`` adds to a request holding ``listed``, and the room left.

        The room is ``budget`` less the listed definitions and the catalogue's rules
        sections (``rules_tokens``), as the deferral decision measures the surface.
        """
        cost = sum(self.of_tool(n) for n in dict.fromkeys(names) if n not in listed)
        used = sum(self.of_tool(n) for n in listed) + sum(rules_tokens)
        return cost, budget - used
