"""A scripted run driven by a fake model, for the resume test (run as a subprocess).

    python tests/scripted_run.py [--engine E] [--snapshot-at N --snapshot FILE] [--resume FILE]

Prints JSON: the digest of every request's bytes (the system text and the tool
definitions) and a few facts about what happened. With --snapshot-at the run snapshots
itself before the model acts at step N and goes on, never stopping; a fresh process resumed
from that snapshot must print the same requests from step N on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent / "admission"))  # test_dispatch

from test_dispatch import build_registry, policy

from toolsurface import ToolSurface
from toolsurface.admission.admit import ToolCall

# Each step: what the fake model does after reading the request.
STEPS: list[list[Any]] = [
    [("call", "read_file", {"url": "README"})],
    [("call", "Mcp_Github_list_isues", {})],  # misspelt: one letter away
    [("search", {"select": "Mcp_Github_create_issue"})],
    [("call", "slack__send", {"wrong": 1}), ("fail", "slack__send")],  # blind, bad arguments
    [("call", "read_file", {"url": str(i)}) for i in range(200)],  # a runaway message
    [("call", "browser__click", {"url": "#a"})],  # blind call of a group with rules
    [("call", "browser__click", {"url": "#a"}), ("end_turn",)],
    [("compact",)],
    [("search", {"group": "github"})],
]


def request_bytes(surface: ToolSurface) -> str:
    plan = surface.plan()
    body = json.dumps(
        {"system": plan.system_text("You are a test host."), "tools": plan.definitions()},
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return body


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--engine", default=None)
    parser.add_argument("--snapshot-at", type=int, default=None)
    parser.add_argument("--snapshot", default=None)
    parser.add_argument("--resume", default=None)
    parser.add_argument("--mark-key", default=None, help="a fixed mark key (same bytes anywhere)")
    args = parser.parse_args()
    registry = build_registry(args.engine)
    key = args.mark_key.encode("utf-8") if args.mark_key else None
    surface = ToolSurface(registry, policy=policy, session_id="scripted", mark_key=key)
    start = 0
    if args.resume:
        state = json.loads(Path(args.resume).read_text("utf-8"))
        surface.restore(state["snapshot"])
        start = state["step"]
    requests: list[str] = []
    facts = {"capped": 0, "blind_rules": False, "misspelt_refused": False}
    for step in range(start, len(STEPS)):
        requests.append(request_bytes(surface))
        if args.snapshot_at is not None and step == args.snapshot_at:
            payload = {"step": step, "snapshot": surface.snapshot().model_dump(mode="json")}
            Path(args.snapshot).write_text(json.dumps(payload), "utf-8")
        calls = [
            ToolCall(a[1], a[2], id=f"{step}-{i}")
            for i, a in enumerate(STEPS[step])
            if a[0] == "call"
        ]
        verdicts = surface.admit(calls) if calls else []
        for v in verdicts:
            facts["capped"] += v.not_run == "capped"
            facts["blind_rules"] |= v.action == "rules"
            facts["misspelt_refused"] |= v.not_run == "unknown" and "Closest" in v.message
        for action in STEPS[step]:
            if action[0] == "search":
                surface.tool_search(action[1])
            elif action[0] == "fail":
                failed = next(v for v in verdicts if v.call.name == action[1])
                surface.failure_text(failed, TypeError("missing 'channel'"))
            elif action[0] == "end_turn":
                surface.end_turn()
            elif action[0] == "compact":
                surface.compaction()
    requests.append(request_bytes(surface))
    digests = [hashlib.sha256(r.encode("utf-8")).hexdigest() for r in requests]
    print(json.dumps({"start": start, "requests": digests, **facts}))


if __name__ == "__main__":
    main()
