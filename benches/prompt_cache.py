"""Prompt-cache benchmark: a simulated 40-turn run over the real catalogue.

    python benches/prompt_cache.py [--catalogue FILE] [--json]
        [--delivery native --provider anthropic|openai-responses] [--turns N] [--size N]

Every MCP server of the catalogue is a dynamic group, the host has a group of its own tools,
and ToolSearch is registered. A scripted model searches (English and Russian), selects exact
names, loads a whole group, uses what it loaded, and the host compacts twice.

The run is played the way an agent loop plays it, one provider request per model step: a
user message is one request; a tool call (ToolSearch or another tool) adds its result and
another request; the step after the result answers or calls the tool it found. Each request
is serialised in the order a provider's prompt cache reads it (Anthropic's documented order:
tool definitions, then the system prompt with the catalogue block, then the messages). The
messages are the real ToolSearch answers the surface gave and short fixed stand-ins for
other tools' results and the model's replies; a compaction replaces the history with a
summary. For each request we report the share of its bytes that repeat the previous
request's prefix (what a prefix cache can reuse); its *ceiling*, the share of its bytes
that the previous request carried anywhere (new tool definitions and new messages are new
bytes whatever their place, so no ordering beats it); and the tokens of tool definitions it
carries, for three hosts on the same conversation:

- ``surface``: toolsurface with a 128-tool provider limit;
- ``everything``: every tool on every request (a provider with a 128-tool limit refuses it);
- ``clip12``: a per-message clip that re-ranks the list to the top 12 for each user message.

``--part library`` measures only what the library writes (tool definitions and system
prompt), without the messages: the stricter figure, since the messages a request adds are
counted as new bytes in the default ``--part request`` too, but a load there also re-reads
the history after the tool list.

``--order system-first`` puts the system prompt before the tool definitions, as providers
that render tools into the system or developer message do: a load then re-reads what
follows the list (the conversation) but no longer the catalogue block.

``--delivery native --provider anthropic|openai-responses`` plays the ``surface`` host with
the provider's own deferral (``toolsurface.surface.delivery``): the tools array is the
provider's form of the plan (Anthropic: every held-back tool deferred in it; Responses:
each held-back group a namespace of deferred functions, and the client ``tool_search``
tool; ``--responses-array`` measures the other forms), and a ToolSearch answer enters the
conversation as the provider takes it (a ``tool_result`` with ``tool_reference`` blocks; a
``tool_search_call`` item and its ``tool_search_output``). The tool tokens reported are
then what the model reads of the tools: the listed and the loaded definitions (referenced
or carried by a search output), and the namespaces' names and descriptions, not the
deferred definitions it never sees; the request bytes count everything sent.

Under native delivery a second row, ``prompt``, measures what the model's prompt holds
rather than what is sent: the deferred definitions left out (the providers keep them out
of the prompt), each ``tool_reference`` expanded into its definition where it stands
(Anthropic expands references inline), a Responses namespace as its name and description
(its functions wait for a search output, which the messages carry). For every row:

- ``kept``: the share of the previous request that this one repeats from its start (100%
  when nothing before the new bytes changed; a compaction or a trimmed history lowers it);
- ``cached``: the share of the request a provider's cache serves with the host's
  breakpoints in place: Anthropic reads the longest prefix ending at one of the previous
  request's breakpoints (after the tools, ``plan.render(cache=True)``; after the system
  text, ``plan.system_blocks(cache=True)``; after the last message, the host's own);
  OpenAI caches by itself from 1,024 tokens in steps of 128 (taken as 4,096 bytes and
  steps of 512 bytes);
- the bytes of the loaded definitions the history holds, at most: with native delivery the
  host sends ``plan.trim_history(messages)`` (``--no-trim`` sends the history whole).

``--turns N`` cycles the script to N turns (``--no-compact`` leaves the compactions out, so
only unloads bound the loads); ``--size N`` grows the catalogue to N tools with
``benches/speed.py``'s generator, each synthetic tool on its template's server;
``--surface-only`` measures only the surface host (the others cost time at 10,000 tools).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsurface import SurfaceLimits, Tool, ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.catalogue import load_catalogue
from toolsurface.providers import render_tools
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


STAND_IN_RESULT = (
    '{"ok": true, "items": [{"id": 4812, "title": "payments: p95 latency over 2s", '
    '"state": "open", "updated": "2026-11-30T05:12:00Z"}, {"id": 4809, "title": '
    '"checkout retries exhausted", "state": "open", "updated": "2026-11-30T04:58:00Z"}]}'
)
STAND_IN_REPLY = "Done. Here is what I found, with the details above; tell me what to do next."
SUMMARY = (
    "Summary of the conversation so far: an incident in the payments service; pull requests "
    "listed and one merged; alerts checked and silenced; the on-call engineer found; a ticket "
    "opened with the timeline; a summary posted to the incidents channel."
)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def units(
    tools: list[dict[str, Any]], system: str, messages: list[dict[str, Any]], part: str
) -> tuple[list[str], str, list[str]]:
    """What a request carries, piece by piece: each definition, the system prompt, each message."""
    said = [_json(m) for m in messages] if part == "request" else []
    return [_json(t) for t in tools], system, said


def serialise(
    pieces: tuple[list[str], str, list[str]], part: str, order: str = "tools-first"
) -> bytes:
    """One request in prompt-cache order: tools then system (Anthropic's) or system first.

    Built from the pieces: a list's compact JSON is its items' joined by commas.
    """
    defs_units, system, message_units = pieces
    defs = "[" + ",".join(defs_units) + "]"
    text = defs + "\n" + system if order == "tools-first" else system + "\n" + defs
    if part == "request":
        text += "\n[" + ",".join(message_units) + "]"
    return text.encode("utf-8")


def new_bytes(
    now: tuple[list[str], str, list[str]], before: tuple[list[str], str, list[str]]
) -> int:
    """Bytes of the pieces of a request that the previous request did not carry."""
    seen = {*before[0], before[1], *before[2]}
    return sum(len(u.encode("utf-8")) for u in (*now[0], now[1], *now[2]) if u not in seen)


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings (a binary search over slices)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def visible_prompt(
    defs: list[dict[str, Any]], messages: list[dict[str, Any]], provider: str | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What the model's prompt holds of a native request: deferred tools out, references in.

    Anthropic keeps deferred definitions out of the prompt and expands each
    ``tool_reference`` inline where it stands; Responses shows a namespace's name and
    description until a ``tool_search_output`` (already in the messages) carries a function.
    """
    if provider == "anthropic":
        full = {d["name"]: {k: v for k, v in d.items() if k != "defer_loading"} for d in defs}
        shown = [d for d in defs if not d.get("defer_loading")]

        def expand(block: Any) -> Any:
            if isinstance(block, dict) and block.get("type") == "tool_reference":
                return full[block["tool_name"]]
            if isinstance(block, dict) and isinstance(block.get("content"), list):
                return {**block, "content": [expand(b) for b in block["content"]]}
            return block

        said = [
            {**m, "content": [expand(b) for b in m["content"]]}
            if isinstance(m.get("content"), list)
            else m
            for m in messages
        ]
        return shown, said
    shown = [
        {"type": "namespace", "name": d["name"], "description": d["description"]}
        if d.get("type") == "namespace"
        else d
        for d in defs
    ]
    return shown, messages


def build(tools: list[Tool]) -> ToolRegistry:
    """The registry: the catalogue, a dynamic group per server, the host's group, ToolSearch."""
    reg = ToolRegistry(tools)
    for server in sorted({t.name.split("__")[0] for t in tools}):
        reg.declare_group(server, prefix=f"{server}__", dynamic=True)
    reg.register_many([Tool(name=n, description=d, group="host") for n, d in HOST_TOOLS])
    reg.declare_group("host")
    reg.register(tool_search_tool())
    return reg


@dataclass
class _Request:
    """One serialised request: its bytes, its pieces, how many bytes are new, its tools."""

    data: bytes
    units: tuple[list[str], str, list[str]]
    new: int
    tool_tokens: int
    tools: int
    marks: tuple[int, ...] = ()
    history_definitions: int = 0


class _Loop:
    """The conversation and the requests of the three hosts, step by step."""

    def __init__(
        self,
        reg: ToolRegistry,
        part: str,
        max_loaded: int | None = None,
        order: str = "tools-first",
        delivery: str = "append",
        provider: str | None = None,
        responses_array: str = "namespaces",
        *,
        trim: bool = True,
        cache: bool = True,
        surface_only: bool = False,
        namespace_size: int | None = 9,
    ) -> None:
        self.part = part
        self.trim = trim
        self.cache = cache
        self.surface_only = surface_only
        self.responses_array = responses_array
        self.order = order
        self.native = delivery == "native"
        self.provider = provider
        limits = SurfaceLimits(max_advertised_tools=128)
        if max_loaded is not None:
            limits = limits.model_copy(update={"max_loaded_entries": max_loaded})
        self.surface = ToolSurface(
            reg,
            limits=limits,
            provider=provider if self.native else None,
            delivery="native" if self.native else "append",
            namespace_size=namespace_size,
        )
        self.clip = ToolSurface(reg, deferral_mode="off", limits=SurfaceLimits(retrieval_top_k=12))
        self.everything = list(reg.tools())
        self.all_defs = [
            {"name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in self.everything
        ]
        self.all_tokens = sum(estimate_tokens(t) for t in self.everything)
        self.messages: list[dict[str, Any]] = []
        self.user_message = ""
        self.calls = 0
        self.series: dict[str, list[_Request]] = {"surface": []}
        if self.native:
            self.series["prompt"] = []
        if not surface_only:
            self.series.update({"everything": [], "clip12": []})
        self.turn_marks: list[int] = []

    def _record(
        self,
        host: str,
        defs: list[dict[str, Any]],
        system: str,
        tokens: int,
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Serialise one host's request and keep what the figures need of it."""
        said = self.messages if messages is None else messages
        pieces = units(defs, system, said, self.part)
        rows = self.series[host]
        fresh = new_bytes(pieces, rows[-1].units) if rows else 0
        data = serialise(pieces, self.part, self.order)
        # The host's breakpoints: after the tools, after the system text, after the last
        # message (Anthropic reads a prefix from the cache only up to one of them).
        # (Each one at the end of its block: the tools' after the last tool, before the
        # array's closing bracket, which a load appended under append delivery replaces.)
        tools_end = len(("[" + ",".join(pieces[0])).encode("utf-8"))
        system_end = tools_end + 2 + len(pieces[1].encode("utf-8"))
        # (The last one before the messages' closing bracket, which the next request's
        # next message replaces.)
        marks = (tools_end, system_end, len(data) - 1) if self.order == "tools-first" else ()
        definitions = sum(len(_json(b).encode("utf-8")) for b in _definitions_in(said))
        rows.append(_Request(data, pieces, fresh, tokens, len(defs), marks, definitions))

    def _responses_array(
        self, defs: list[dict[str, Any]], plan: Any
    ) -> tuple[list[dict[str, Any]], int]:
        """The Responses array in the chosen form, and the tokens the model reads of it.

        With namespaces (the library's form) the model reads each namespace's name and
        description; with loose deferred functions (``--responses-array loose``) every
        function's name and description (OpenAI's guide: only the parameters wait); with
        ``none`` the held-back functions are not sent at all (search outputs carry them).
        """
        if self.responses_array == "namespaces":
            spaces = [d for d in defs if d["type"] == "namespace"]
            seen = [Tool(name=s["name"], description=s["description"]) for s in spaces]
            return defs, sum(estimate_tokens(s) for s in seen)
        bare = [d for d in defs if d["type"] != "namespace"]
        if self.responses_array == "none":
            return bare, 0
        rendered = render_tools(plan.deferred, "openai-responses", deferred=True)
        held = [{**f, "defer_loading": True} for f in rendered]
        seen = [Tool(name=t.name, description=t.description) for t in plan.deferred]
        return [*bare[:-1], *held, bare[-1]], sum(estimate_tokens(s) for s in seen)

    def request(self) -> None:
        """One provider request of each host, on the conversation as it stands."""
        plan = self.surface.plan()
        if self.native and self.trim:
            # The host's recipe: the history sent is the history kept (trimmed at unloads).
            self.messages = plan.trim_history(self.messages)
        read = [*plan.tools, *(self.surface.registry.get(n) for n in plan.loaded)]
        tokens = sum(estimate_tokens(t) for t in read)
        defs = plan.render(cache=self.cache) if self.native else plan.definitions()
        if self.native and self.provider == "openai-responses":
            defs, seen = self._responses_array(defs, plan)
            tokens += seen
        self._record("surface", defs, plan.system_text(SYSTEM), tokens)
        if self.native:
            shown, said = visible_prompt(defs, self.messages, self.provider)
            self._record("prompt", shown, plan.system_text(SYSTEM), tokens, said)
        if not self.surface_only:
            self._record("everything", self.all_defs, SYSTEM, self.all_tokens)
            clipped = self.clip.plan(user_message=self.user_message or "continue")
            tokens = sum(estimate_tokens(t) for t in clipped.tools)
            self._record("clip12", clipped.definitions(), SYSTEM, tokens)

    def call(self, name: str, arguments: dict[str, Any], result: Any) -> None:
        """The model calls a tool; its result joins the conversation; the next request."""
        self.calls += 1
        call_id = f"call_{self.calls}"
        if self.native and self.provider == "openai-responses" and name == "ToolSearch":
            # The model's tool_search_call item, then the host's tool_search_output.
            self.messages.append(
                {"type": "tool_search_call", "call_id": call_id, "arguments": arguments}
            )
            self.messages.append({**result, "call_id": call_id})
            self.request()
            return
        self.messages.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": call_id, "name": name, "input": arguments}],
            }
        )
        self.messages.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": call_id, "content": result}],
            }
        )
        self.request()

    def turn(self, message: str, action: dict[str, Any]) -> None:
        """One user turn: the message, the model's steps, the turn boundary."""
        if action.get("compact"):
            self.surface.compaction()
            self.messages = [{"role": "user", "content": SUMMARY}]
            self.turn_marks.append(len(self.series["surface"]))
            return
        self.user_message = message
        self.messages.append({"role": "user", "content": message})
        self.request()
        for key in ("search", "select", "group"):
            if key in action:
                arguments: dict[str, Any] = {"query" if key == "search" else key: action[key]}
                found = self.surface.tool_search(arguments)
                self.call("ToolSearch", arguments, found.native if self.native else found.text)
        if "use" in action:
            self.surface.note_tool_used(action["use"])
            self.call(action["use"], {}, STAND_IN_RESULT)
        self.messages.append({"role": "assistant", "content": STAND_IN_REPLY})
        self.surface.end_turn()
        self.turn_marks.append(len(self.series["surface"]))


def _definitions_in(messages: list[Any]) -> list[Any]:
    """The tool definitions a history holds: expanded references, search outputs' functions."""
    out: list[Any] = []
    for m in messages:
        if not isinstance(m, dict):
            continue
        if m.get("type") == "tool_search_output":
            for t in m.get("tools", []):
                out += t.get("tools", []) if t.get("type") == "namespace" else [t]
            continue
        for block in m.get("content") if isinstance(m.get("content"), list) else []:
            inner = block.get("content") if isinstance(block, dict) else None
            if isinstance(inner, list):
                out += [b for b in inner if isinstance(b, dict) and "input_schema" in b]
    return out


def cached_bytes(before: _Request, now: _Request, provider: str | None) -> int:
    """Bytes of ``now`` a provider's cache serves after ``before``, with the host's breakpoints.

    Anthropic: the longest prefix ending at one of ``before``'s breakpoints that ``now``
    repeats. OpenAI caches by itself in blocks of 128 tokens once 1,024 repeat: the common
    prefix rounded down to 512 bytes (about 128 tokens), nothing under 4,096 bytes.
    """
    same = common_prefix(before.data, now.data)
    if provider == "openai-responses":
        return 0 if same < 4096 else same - same % 512
    return max((m for m in before.marks if m <= same), default=0)


def figures(rows: list[_Request], provider: str | None) -> dict[str, float]:
    """The reuse, ceiling, cache and size figures of one host's requests."""
    pairs = list(itertools.pairwise(rows))
    reuse = [common_prefix(a.data, b.data) / len(b.data) for a, b in pairs]
    ceiling = [1 - b.new / len(b.data) for _, b in pairs]
    kept = [common_prefix(a.data, b.data) / len(a.data) for a, b in pairs]
    cached = [cached_bytes(a, b, provider) for a, b in pairs]
    reused = sum(common_prefix(a.data, b.data) for a, b in pairs)
    later = sum(len(b.data) for _, b in pairs)
    return {
        "requests": len(rows),
        "prefix_reuse_mean": round(statistics.fmean(reuse), 4),
        "prefix_reuse_min": round(min(reuse), 4),
        "prefix_reuse_median": round(statistics.median(reuse), 4),
        "prefix_reuse_bytes": round(reused / later, 4),
        "ceiling_mean": round(statistics.fmean(ceiling), 4),
        "kept_mean": round(statistics.fmean(kept), 4),
        "kept_min": round(min(kept), 4),
        "cached_mean": round(
            statistics.fmean(c / len(b.data) for c, (_, b) in zip(cached, pairs)), 4
        ),
        "cached_bytes": round(sum(cached) / later, 4),
        "tool_tokens_mean": round(statistics.fmean(r.tool_tokens for r in rows)),
        "tools_max": max(r.tools for r in rows),
        "tools_arrays": len({"[" + ",".join(r.units[0]) + "]" for r in rows}),
        "request_bytes_mean": round(statistics.fmean(len(r.data) for r in rows)),
        "request_bytes_max": max(len(r.data) for r in rows),
        "history_definitions_max": max(r.history_definitions for r in rows),
    }


def run(
    tools: list[Tool],
    part: str = "request",
    max_loaded: int | None = None,
    order: str = "tools-first",
    delivery: str = "append",
    provider: str | None = None,
    responses_array: str = "namespaces",
    *,
    turns: int = len(SCRIPT),
    compact: bool = True,
    trim: bool = True,
    surface_only: bool = False,
    namespace_size: int | None = 9,
) -> dict[str, dict[str, float]]:
    """Play the script (cycled to ``turns`` turns) for the hosts and measure every request."""
    loop = _Loop(
        build(tools),
        part,
        max_loaded,
        order,
        delivery,
        provider,
        responses_array,
        trim=trim,
        surface_only=surface_only,
        namespace_size=namespace_size,
    )
    for message, action in itertools.islice(itertools.cycle(SCRIPT), turns):
        if action.get("compact") and not compact:
            continue
        loop.turn(message, action)
    cache_provider = provider if delivery == "native" else "anthropic"
    out = {host: figures(rows, cache_provider) for host, rows in loop.series.items()}
    sizes = [len(r.data) for r in loop.series["surface"]]
    marks = [0, *loop.turn_marks]
    per_turn = [sum(sizes[a:b]) for a, b in itertools.pairwise(marks) if b > a]
    out["surface"]["turns"] = len(per_turn)
    out["surface"]["turn_bytes_mean"] = round(statistics.fmean(per_turn))
    out["surface"]["turn_bytes_max"] = max(per_turn)
    if "everything" in out:
        out["surface"]["tokens_vs_everything"] = round(
            out["surface"]["tool_tokens_mean"] / out["everything"]["tool_tokens_mean"], 4
        )
    return out


def grown(tools: list[Tool], size: int) -> list[Tool]:
    """The real tools, then synthetic ones up to ``size`` on the same servers.

    ``benches/speed.py``'s generator (words of the real catalogue in the real tools' shapes);
    each synthetic tool keeps its template's server prefix, so the 34 servers grow.
    """
    if size <= len(tools):
        return tools[:size]
    from speed import grow_catalogue  # only this option needs it

    out = list(tools)
    for i, tool in enumerate(grow_catalogue(tools, size, 0.3, 7)[len(tools) :]):
        server, _, rest = tool.name.partition("__")
        name = f"{server.rsplit('-', 1)[0]}__{rest}_{i}"[:128]
        out.append(tool.model_copy(update={"name": name}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--catalogue", default=str(SHARED / "catalogue" / "mcp_tools.json"))
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--part",
        choices=("request", "library"),
        default="request",
        help="the whole request (default), or only tool definitions and system prompt",
    )
    parser.add_argument(
        "--max-loaded",
        type=int,
        help="the surface's cap on loaded entries (default: SurfaceLimits' own)",
    )
    parser.add_argument(
        "--order",
        choices=("tools-first", "system-first"),
        default="tools-first",
        help="tool definitions before the system prompt (Anthropic's cache order, default) "
        "or after it",
    )
    parser.add_argument(
        "--delivery",
        choices=("append", "native"),
        default="append",
        help="how the surface host loads: appended to the list, or the provider's own deferral",
    )
    parser.add_argument(
        "--provider",
        choices=("anthropic", "openai-responses"),
        default="anthropic",
        help="the provider whose native deferral --delivery native uses",
    )
    parser.add_argument(
        "--responses-array",
        choices=("namespaces", "loose", "none"),
        default="namespaces",
        help="Responses, native: the held-back functions deferred inside namespaces (the "
        "library's form), loose and deferred, or not in the array at all (the alternatives "
        "measured for docs/tools.md)",
    )
    parser.add_argument("--turns", type=int, default=len(SCRIPT), help="the script, cycled")
    parser.add_argument("--size", type=int, help="grow the catalogue to this many tools")
    parser.add_argument("--no-compact", action="store_true", help="skip the compactions")
    parser.add_argument("--no-trim", action="store_true", help="native: send the history untrimmed")
    parser.add_argument("--surface-only", action="store_true", help="measure only the surface host")
    parser.add_argument(
        "--namespace-size",
        type=int,
        default=9,
        help="Responses, native: the most functions a namespace holds (0: one per group)",
    )
    args = parser.parse_args()
    _, tools = load_catalogue(args.catalogue)
    if args.size:
        tools = grown(tools, args.size)
    result = run(
        tools,
        args.part,
        args.max_loaded,
        args.order,
        args.delivery,
        args.provider,
        args.responses_array,
        turns=args.turns,
        compact=not args.no_compact,
        trim=not args.no_trim,
        surface_only=args.surface_only,
        namespace_size=args.namespace_size or None,
    )
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        "| host | requests | prefix reuse (mean) | (min) | (median) | (all bytes) "
        "| ceiling (mean) | kept (mean) | cached (mean) | tool tokens / request | most tools "
        "| tools arrays | bytes / request | (max) | loaded definitions in the history (max) |"
    )
    print("| --- |" + " ---: |" * 14)
    for host, r in result.items():
        print(
            f"| {host} | {r['requests']} | {r['prefix_reuse_mean']:.1%} "
            f"| {r['prefix_reuse_min']:.1%} | {r['prefix_reuse_median']:.1%} "
            f"| {r['prefix_reuse_bytes']:.1%} | {r['ceiling_mean']:.1%} "
            f"| {r['kept_mean']:.1%} | {r['cached_mean']:.1%} "
            f"| {r['tool_tokens_mean']:,} | {r['tools_max']} | {r['tools_arrays']} "
            f"| {r['request_bytes_mean']:,} | {r['request_bytes_max']:,} "
            f"| {r['history_definitions_max']:,} |"
        )
    surface = result["surface"]
    print(
        f"\nsurface: {surface['turns']} turns, bytes sent per turn {surface['turn_bytes_mean']:,} "
        f"(max {surface['turn_bytes_max']:,})"
    )
    if "tokens_vs_everything" in surface:
        print(f"surface tool tokens / everything's: {surface['tokens_vs_everything']:.1%}")


if __name__ == "__main__":
    main()
