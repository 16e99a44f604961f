"""Prompt-cache benchmark: a simulated 40-turn run over the real catalogue.

    python benches/prompt_cache.py [--catalogue FILE] [--json]

Every MCP server of the catalogue is a dynamic group, the host has a group of its own tools,
and ToolSearch is registered. A scripted model searches (English and Russian), selects exact
names, loads a whole group, uses what it loaded, and the host compacts twice. Each request is
serialised the way a provider reads it (tool definitions, then the system prompt); for each
request we report the share of its bytes that repeat the previous request's prefix (what a
prefix cache can reuse) and the tokens of tool definitions it carries, for three hosts:

- ``surface``: toolsurface with a 128-tool provider limit;
- ``everything``: every tool on every request (a provider with a 128-tool limit refuses it);
- ``clip12``: a per-message clip that re-ranks the list to the top 12 for each user message.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from pathlib import Path
from typing import Any

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import load_catalogue
from toolsurface.surface import estimate_tokens

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "data"
SYSTEM = "You are an operations assistant for an engineering team."

HOST_TOOLS = [
    ("host_read_file", "Read a file from the workspace."),
    ("host_write_file", "Write a file in the workspace."),
    ("host_shell", "Run a shell command in the workspace."),
    ("host_web_fetch", "Fetch a web page and return its text."),
    ("host_todo", "Keep the run's to-do list."),
    ("host_ask_user", "Ask the user a question and wait for the answer."),
]

# (user message, what the model does after reading it)
SCRIPT: list[tuple[str, dict[str, Any]]] = [
    ("list open pull requests in acme/api", {"search": "list open pull requests"}),
    (
        "merge the first one",
        {"use": "github__merge_pull_request", "select": ["github__merge_pull_request"]},
    ),
    ("покажи открытые пулреквесты", {"use": "github__list_pull_requests"}),
    ("what alerts are firing in grafana?", {"search": "firing alerts grafana"}),
    ("silence the disk alert for an hour", {"search": "silence alert"}),
    ("кто сейчас дежурит в pagerduty?", {"search": "кто дежурит pagerduty"}),
    ("create a jira ticket for the outage", {"search": "create jira issue"}),
    (
        "add a comment with the timeline",
        {"use": "atlassian__jira_add_comment", "select": ["atlassian__jira_add_comment"]},
    ),
    ("post a summary to #incidents in slack", {"search": "send slack message channel"}),
    ("thanks", {}),
    ("read the runbook file", {"use": "host_read_file"}),
    ("restart the payments deployment", {"search": "restart kubernetes deployment"}),
    ("покажи логи пода payments", {"search": "логи пода"}),
    ("scale it to 3 replicas", {"search": "scale deployment replicas"}),
    ("", {"compact": True}),
    ("what did we do so far?", {}),
    ("load the whole sentry server", {"group": "sentry"}),
    ("find new errors since the release", {"use": "sentry__search_issues"}),
    ("назначь созвон с командой на завтра", {"search": "назначь созвон календарь"}),
    ("send the invite by email", {"search": "send email"}),
    ("list my unread emails", {"search": "list unread email"}),
    ("archive the newsletter", {"use": "google-workspace__modify_gmail_message_labels"}),
    ("check the CI pipeline for the api repo", {"search": "list pipelines gitlab"}),
    ("retry the failed job", {"search": "retry failed pipeline job"}),
    ("what's the status of the deploy?", {}),
    ("run a SQL query counting users", {"search": "execute sql query postgres"}),
    ("explain that query", {"search": "explain query plan"}),
    ("open the dashboard in the browser", {"search": "open url browser navigate"}),
    ("take a screenshot", {"search": "browser screenshot"}),
    ("", {"compact": True}),
    ("summarise the incident", {}),
    ("создай задачу в линеаре на фикс", {"search": "создай задачу линеар"}),
    ("assign it to me", {"search": "assign issue linear"}),
    ("put the postmortem in notion", {"search": "create notion page"}),
    ("link the pull request", {"use": "github__list_pull_requests"}),
    ("resolve the pagerduty incident", {"search": "resolve incident pagerduty"}),
    ("post the all-clear in slack", {"use": "slack__conversations_add_message"}),
    ("write the notes to a file", {"use": "host_write_file"}),
    ("anything else open?", {}),
    ("bye", {}),
]


def serialise(tools: list[dict[str, Any]], system: str) -> bytes:
    """The part of a request the library writes: the system text, then the tool definitions.

    The system text (with the catalogue block) is the part designed to stay byte-stable, so
    it comes first, as in a Chat Completions request whose system message precedes the tools
    it is rendered with.
    """
    payload = json.dumps(tools, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return (system + "\n" + payload).encode("utf-8")


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings."""
    n = min(len(a), len(b))
    lo = 0
    while lo < n and a[lo] == b[lo]:
        lo += 1
    return lo


def build(tools: list[Tool]) -> ToolRegistry:
    """The registry: the catalogue, a dynamic group per server, the host's group, ToolSearch."""
    reg = ToolRegistry(tools)
    for server in sorted({t.name.split("__")[0] for t in tools}):
        reg.declare_group(server, prefix=f"{server}__", dynamic=True)
    reg.register_many([Tool(name=n, description=d, group="host") for n, d in HOST_TOOLS])
    reg.declare_group("host")
    reg.register(tool_search_tool())
    return reg


def run(tools: list[Tool]) -> dict[str, dict[str, float]]:
    """Play the script for the three hosts and measure every request."""
    reg = build(tools)
    surface = ToolSurface(reg, limits=SurfaceLimits(max_advertised_tools=128))
    clip = ToolSurface(reg, deferral_mode="off", limits=SurfaceLimits(retrieval_top_k=12))
    everything = [t for t in reg.tools()]
    series: dict[str, list[tuple[bytes, int, int]]] = {
        "surface": [],
        "everything": [],
        "clip12": [],
    }
    for message, action in SCRIPT:
        if action.get("compact"):
            surface.compaction()
            continue
        plan = surface.plan()
        series["surface"].append(
            (
                serialise(plan.definitions(), plan.system_text(SYSTEM)),
                sum(estimate_tokens(t) for t in plan.tools),
                len(plan.tools),
            )
        )
        all_defs = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in everything
        ]
        series["everything"].append(
            (
                serialise(all_defs, SYSTEM),
                sum(estimate_tokens(t) for t in everything),
                len(everything),
            )
        )
        clipped = clip.plan(user_message=message or "continue")
        series["clip12"].append(
            (
                serialise(clipped.definitions(), SYSTEM),
                sum(estimate_tokens(t) for t in clipped.tools),
                len(clipped.tools),
            )
        )
        if "search" in action:
            surface.tool_search({"query": action["search"]})
        if "select" in action:
            surface.tool_search({"select": action["select"]})
        if "group" in action:
            surface.tool_search({"group": action["group"]})
        if "use" in action:
            surface.note_tool_used(action["use"])
        surface.end_turn()
    out: dict[str, dict[str, float]] = {}
    for host, rows in series.items():
        reuse = [common_prefix(a[0], b[0]) / len(b[0]) for a, b in itertools.pairwise(rows)]
        out[host] = {
            "requests": len(rows),
            "prefix_reuse_mean": round(statistics.fmean(reuse), 4),
            "prefix_reuse_min": round(min(reuse), 4),
            "tool_tokens_mean": round(statistics.fmean(r[1] for r in rows)),
            "tools_max": max(r[2] for r in rows),
        }
    out["surface"]["tokens_vs_everything"] = round(
        out["surface"]["tool_tokens_mean"] / out["everything"]["tool_tokens_mean"], 4
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    result = run(tools)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        "| host | requests | prefix reuse (mean) | prefix reuse (min) "
        "| tool tokens / request | most tools |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for host, r in result.items():
        print(
            f"| {host} | {r['requests']} | {r['prefix_reuse_mean']:.1%} "
            f"| {r['prefix_reuse_min']:.1%} | {r['tool_tokens_mean']:,} | {r['tools_max']} |"
        )
    print(f"\nsurface tool tokens / everything's: {result['surface']['tokens_vs_everything']:.1%}")


if __name__ == "__main__":
    main()
