"""Which tools only read: the server's hint, else the first verb of the tool's name.

The question boost (``questions.py``, ``docs/analysis.md`` §10) weights up the tools that
only read. MCP servers say so with ``readOnlyHint`` (``Tool.read_only``), but many say
nothing of any tool (docker, cloudflare, jenkins, the AWS servers), and a question there
finds the tools that change things as readily as those that look ("what's running in
docker?" against ``docker__run_container``). A tool without a hint is therefore read by
its name: the first of its words (after the group prefix, at connectors and case changes)
that is a verb of either list decides, a reading verb making it read-only
(``list_containers``, ``r2_list_objects``, ``get_build_log``: the object "build" comes after
the verb). A tool whose name has no such verb, or a hint of either value, is left as it is.
docs/quality.md measures how often the names agree with the hints of the servers that give
them.

>>> from toolsurface import Tool
>>> reads_only(Tool(name="docker__list_containers", description="List containers."))
True
>>> reads_only(Tool(name="docker__run_container", description="Run a container."))
False
>>> reads_only(Tool(name="x__list_things", description="Lists.", read_only=False))
False
"""

from __future__ import annotations

import re

from toolsurface.models import Tool

__all__ = ["READ_VERBS", "WRITE_VERBS", "name_verb", "reads_only"]

#: Verbs that open the name of a tool that only looks.
READ_VERBS = frozenset(
    "get list search find read describe fetch show view query retrieve lookup inspect count".split()
)
#: Verbs that open the name of a tool that changes something.
WRITE_VERBS = frozenset(
    (
        "create delete update remove set add put post patch run start stop send edit write "
        "move rename merge approve close open push pull build deploy execute cancel trigger "
        "apply manage upload import block mute pin unpin mark restart rerun fork assign "
        "invite kill"
    ).split()
)
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: Names are read on their first characters only (a hostile name costs no more).
_MAX_NAME = 256


def name_verb(name: str) -> str | None:
    """The first word of ``name``, past its group prefix, that either verb list holds.

    >>> name_verb("notion__API-post-search"), name_verb("github__getPullRequestFiles")
    ('post', 'get')
    """
    _, _, own = name[:_MAX_NAME].rpartition("__")
    for match in _WORDS.finditer(own):
        word = match.group().lower()
        if word in READ_VERBS or word in WRITE_VERBS:
            return word
    return None


def reads_only(tool: Tool) -> bool:
    """Whether ``tool`` only reads: its hint when it has one, else its name's verb."""
    if tool.read_only is not None:
        return tool.read_only
    return name_verb(tool.name) in READ_VERBS
