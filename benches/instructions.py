"""A fixed search workload whose instruction count compares two builds on a busy machine.

    valgrind --tool=callgrind --callgrind-out-file=OUT python benches/instructions.py MODE GROUPS

MODE is ``setup`` (load the real catalogue, build the index, one search) or ``search``
(the same, then every development request through ``search(q, k=5)`` and once more through
``search_many``); GROUPS is ``plain`` or ``groups`` (one group per server, as MCP sync
declares them). The search cost of a build is ``search`` minus ``setup``: callgrind counts
instructions, not seconds, so two builds compare exactly whatever else the machine runs.
Needs ../shared/data.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from toolsurface import ToolRegistry
from toolsurface.catalogue import load_catalogue
from toolsurface.evaluation import declare_server_groups

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"


def main() -> None:
    """Run the workload the command line names."""
    mode, groups = sys.argv[1], sys.argv[2]
    tools = load_catalogue(SHARED / "catalogue" / "mcp_tools.json")[1]
    registry = ToolRegistry(tools)
    if groups == "groups":
        declare_server_groups(registry)
    with (SHARED / "queries" / "dev.jsonl").open(encoding="utf-8") as fh:
        queries = [json.loads(line)["query"] for line in fh if line.strip()]
    registry.search(queries[0])
    if mode == "search":
        for q in queries:
            registry.search(q, k=5)
        registry.search_many(queries, k=5)


if __name__ == "__main__":
    main()
