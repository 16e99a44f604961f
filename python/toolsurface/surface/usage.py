"""Learning from usage: a ToolSearch query, then a call that runs of a tool it returned.

With ``ToolSurface(learn_from_usage=True)`` the surface keeps each search it answered open
for the model's next :data:`LEARN_WINDOW` messages of tool calls (the next calls of
``admit``). A call in one of them that runs, not blind, of a tool that search returned
teaches the registry that (query, tool) pair, once; the call is credited to the latest open
search that returned the tool, and the tool is then closed in every open search, so one
call teaches one pair. The surface teaches as its session (``session_id``): a session
counts once per pair, and a pair ranks only once several sessions taught it
(``LearnedHints``). Nothing here touches the registry: :meth:`UsageWindow.ran` returns
the pairs and the surface teaches them (see docs/tools.md, "Learned hints").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from toolsurface.admission.admit import Verdict

__all__ = ["LEARN_WINDOW", "MAX_OPEN_SEARCHES", "UsageWindow"]

#: How many of the model's messages after a search (calls of ``admit``) may teach from it:
#: the message that reads the answer, and two more for a call made after a first step.
LEARN_WINDOW = 3
#: Searches open at once; a newer one closes the oldest (a model that searches this often
#: without calling is not telling which request led to which tool).
MAX_OPEN_SEARCHES = 8


@dataclass
class _OpenSearch:
    """A search that may still teach: its query, the tools it returned not yet credited."""

    query: str
    tools: list[str]
    messages_left: int = LEARN_WINDOW


@dataclass
class UsageWindow:
    """The searches a run may still learn from, in the order they were answered.

    Surfaces that learn: in three sessions the model searched, then called the search's
    second hit, so the registry now finds that tool first for the same request. A session
    counts once, and a request ranks once three sessions taught it (``LearnedHints``).

    >>> from toolsurface import Tool, ToolRegistry, ToolSurface, tool_search_tool
    >>> from toolsurface.admission.admit import ToolCall
    >>> registry = ToolRegistry([tool_search_tool(),
    ...     Tool(name="slack__send_message", description="Send a message to a Slack channel."),
    ...     Tool(name="email__send_message", description="Send a message by email to a person.")])
    >>> _ = registry.declare_group("slack", prefix="slack__", load="lazy")
    >>> _ = registry.declare_group("email", prefix="email__", load="lazy")
    >>> request = "send a message to the team"
    >>> for session in ("one", "two", "three"):
    ...     surface = ToolSurface(registry, session_id=session, learn_from_usage=True)
    ...     _ = surface.plan()
    ...     found = surface.tool_search({"query": request}).loaded
    ...     _ = surface.plan()
    ...     ran = [v.runs for v in surface.admit([ToolCall("slack__send_message", {})])]
    >>> found, ran
    (('email__send_message', 'slack__send_message'), [True])
    >>> [(r.query, r.count, r.sessions) for r in registry.learned()["slack__send_message"]]
    [('send a message to the team', 3, 3)]
    >>> found = registry.search(request, admitted={"slack__send_message", "email__send_message"})
    >>> [h.name for h in found]
    ['slack__send_message', 'email__send_message']
    """

    open: list[_OpenSearch] = field(default_factory=list)

    def searched(self, query: str, returned: Sequence[str]) -> None:
        """A search answered ``query`` with ``returned`` (admitted tools, best first)."""
        if not returned:
            return
        self.open.append(_OpenSearch(query, list(dict.fromkeys(returned))))
        del self.open[:-MAX_OPEN_SEARCHES]

    def ran(
        self, verdicts: Iterable[Verdict], admits: Callable[[str], bool]
    ) -> list[tuple[str, str]]:
        """The (query, tool) pairs one message's verdicts teach; then the window moves on.

        Only a call that runs and is not blind counts, and only of a tool ``admits`` (the
        live policy and allowlist) lets the run call; a refused, unknown, ambiguous or blind
        call teaches nothing.
        """
        pairs: list[tuple[str, str]] = []
        for verdict in verdicts:
            name = verdict.call.name
            if not verdict.runs or verdict.blind or not isinstance(name, str):
                continue
            found = [s for s in self.open if name in s.tools]
            if not found or not admits(name):
                continue
            pairs.append((found[-1].query, name))
            for search in found:  # credited once: an older search's result is not retaught
                search.tools.remove(name)
        for search in self.open:
            search.messages_left -= 1
        self.open = [s for s in self.open if s.messages_left > 0 and s.tools]
        return pairs
