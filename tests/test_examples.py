"""The examples as a newcomer runs them: the host loop in subprocesses, the SDK loops imported.

The host loop starts a real MCP server over stdio, so each run takes a few seconds; the runs
of one round go in parallel, each bounded in time. A run stopped midway and resumed in a
fresh process must send the same requests, byte for byte, as a run that never stopped.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import toolsurface
from conftest import ROOT, native_available
from toolsurface.providers import provider_spec

EXAMPLES = ROOT / "examples"
HOST_LOOP = EXAMPLES / "host_loop.py"
#: Bound on one run of the host loop (importing the MCP SDK and starting a server take seconds).
RUN_TIMEOUT = 300.0
#: Where the stop-and-resume runs stop: before the MCP tool's call, and after the compaction.
STOPS = (4, 8)
#: The run stopped after the compaction resumes on the other engine (when both are built).
OTHER_ENGINE_AT = 8
NO_MCP = "the mcp SDK is not installed (pip install '.[test]'): the host loop needs it"


def _env(engine: str | None = None) -> dict[str, str]:
    """The test's environment, with this toolsurface first on the path and the engine chosen."""
    env = dict(os.environ)
    here = str(Path(toolsurface.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    env["PYTHONIOENCODING"] = "utf-8"
    if engine is not None:
        env["TOOLSURFACE_ENGINE"] = engine
    return env


class Runs:
    """Host-loop processes started together and awaited together, none left behind."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen[str]] = {}

    def start(self, key: str, *args: str, engine: str | None = None) -> None:
        self.procs[key] = subprocess.Popen(
            [sys.executable, str(HOST_LOOP), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            cwd=ROOT,
            env=_env(engine),
        )

    def finish(self, key: str) -> tuple[dict[str, Any], str]:
        """The run's JSON summary (stdout) and its readable log (stderr); it must end with 0."""
        proc = self.procs[key]
        try:
            out, err = proc.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            pytest.fail(f"host_loop.py {key} did not end within {RUN_TIMEOUT:.0f} s: {err[-2000:]}")
        assert proc.returncode == 0, f"host_loop.py {key} exited {proc.returncode}: {err[-3000:]}"
        return json.loads(out), err

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.communicate()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Every host-loop run the tests look at, in two parallel rounds."""
    if importlib.util.find_spec("mcp") is None:
        pytest.skip(NO_MCP)
    state = tmp_path_factory.mktemp("host_loop")
    other = "pure" if toolsurface.engine() == "native" else "native"
    resume_engine = {OTHER_ENGINE_AT: other} if native_available() else {}
    group = Runs()
    try:
        group.start("full", "--json")
        group.start("demo", "--json", "--server", "demo")
        for n in STOPS:
            group.start(
                f"stop{n}", "--json", "--stop-after", str(n), "--snapshot", str(state / f"{n}")
            )
        done = {key: group.finish(key) for key in list(group.procs)}
        for n in STOPS:
            engine = resume_engine.get(n)
            group.start(f"resume{n}", "--json", "--resume", str(state / f"{n}"), engine=engine)
        done |= {f"resume{n}": group.finish(f"resume{n}") for n in STOPS}
        yield done
    finally:
        group.close()


def summary_line(log: str, start: str, request: int) -> str:
    """The line of a request's block in the readable log that starts with ``start``."""
    block = log.split("== request ")[request]
    return next(line for line in block.splitlines() if line.strip().startswith(start))


def test_host_loop_runs_to_the_end(runs: dict[str, Any]) -> None:
    summary, log = runs["full"]
    tool = "time__get_current_time" if summary["server"] == "time" else "ops__get_service_health"
    assert summary["engine"] == toolsurface.engine()
    assert len(summary["requests"]) == 10
    assert log.count("== request ") == 10
    assert f"final request sha256: {summary['final_sha256']}" in log
    assert summary["final_sha256"] == summary["requests"][-1]
    assert summary["capped"] == 16 and "80 calls: 64 ran, 16 not run" in log
    assert len(summary["unknown"]) == 1 and f"Closest: {tool}" in summary["unknown"][0]
    assert summary["restored_identical"] is True
    assert "byte for byte the same: yes" in log
    assert "tools: read_file, run_tests, write_file, ToolSearch\n" in log  # the first request
    # "покажи" asks to read: the pull-request tools that read are loaded, merging is not.
    assert "loaded: github__list_pull_requests, github__list_pull_request_files" in log
    assert "merge_pull_request" not in summary_line(log, "tools:", 2)
    assert f"-> {tool}(" in log
    assert "github__get_file_contents" in summary_line(log, "added:", 4)  # loaded by the blind call
    assert "It takes: github__get_file_contents(owner*, repo*, path*, ref)" in log


def test_the_demo_server_stands_in_for_the_time_server(runs: dict[str, Any]) -> None:
    summary, log = runs["demo"]
    assert summary["server"] == "ops"
    assert summary["capped"] == 16 and summary["restored_identical"] is True
    assert "Closest: ops__get_service_health" in summary["unknown"][0]
    assert '"p99_ms": 310' in log  # the demo server's answer came back over stdio


@pytest.mark.parametrize("stop", STOPS)
def test_a_run_resumed_in_a_fresh_process_sends_the_same_requests(
    runs: dict[str, Any], stop: int
) -> None:
    full, _ = runs["full"]
    stopped, stop_log = runs[f"stop{stop}"]
    resumed, resume_log = runs[f"resume{stop}"]
    assert stopped["requests"] == full["requests"][:stop]
    assert "stopped after" in stop_log and "final request" not in stop_log
    assert resumed["resumed_at"] == stop
    assert "resumed from" in resume_log
    assert resume_log.count("== request ") == len(full["requests"]) - stop
    assert resumed["requests"] == full["requests"]
    assert resumed["final_sha256"] == full["final_sha256"]
    assert resumed["capped"] == full["capped"] and resumed["unknown"] == full["unknown"]


def test_a_snapshot_resumes_on_the_other_engine_with_the_same_bytes(runs: dict[str, Any]) -> None:
    if not native_available():
        pytest.skip("the native core is not built: one engine only")
    full, _ = runs["full"]
    resumed, _ = runs[f"resume{OTHER_ENGINE_AT}"]
    assert resumed["engine"] != full["engine"]
    assert resumed["requests"] == full["requests"]


def test_host_loop_refuses_a_stop_without_a_file() -> None:
    proc = subprocess.run(
        [sys.executable, str(HOST_LOOP), "--stop-after", "3"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=_env(),
        timeout=RUN_TIMEOUT,
    )
    assert proc.returncode == 2 and "--stop-after and --snapshot go together" in proc.stderr


# -- the official SDKs, their HTTP answered by a local fake -----------------------------------


def _example(name: str) -> ModuleType:
    """Import an example file as a module (the examples are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the file runs
    spec.loader.exec_module(module)
    return module


def _limit(provider: str) -> float:
    cap = provider_spec(provider).max_tools
    return math.inf if cap is None else cap


def test_anthropic_sdk_sends_the_planned_tools() -> None:
    anthropic = pytest.importorskip(
        "anthropic", reason="the anthropic SDK is not installed: pip install '.[test]'"
    )
    example = _example("anthropic_loop")
    done = example.run()
    assert len(done.bodies) == len(done.plans) == len(example.SCRIPT)
    for body, plan in zip(done.bodies, done.plans):
        listed = [t["name"] for t in body["tools"] if not t.get("defer_loading")]
        assert listed == list(plan.names)
        assert body["tools"] == plan.render("anthropic") == done.bodies[0]["tools"]  # native
        assert len(body["tools"]) <= _limit("anthropic")
        assert body["system"] == plan.system_text(example.SYSTEM)
        assert "<tool_catalogue>" in body["system"]
    first, second = done.plans[:2]
    assert first.names == second.names == ("read_file", "ToolSearch")
    assert {t.name for t in first.deferred} >= {"github__list_pull_requests"}
    assert "github__list_pull_requests" in second.loaded
    assert done.verdicts[1][0].call.name == "github__list_pull_requests"
    assert done.verdicts[1][0].runs and not done.verdicts[1][0].blind  # it was referenced
    found = done.bodies[1]["messages"][-1]["content"][0]
    assert found["type"] == "tool_result"
    ref = {"type": "tool_reference", "tool_name": "github__list_pull_requests"}
    assert ref in found["content"]
    asked = [b["id"] for b in done.bodies[3]["messages"][-2]["content"] if b["type"] == "tool_use"]
    results = done.bodies[3]["messages"][-1]["content"]
    assert len(asked) == 80 and [r["tool_use_id"] for r in results] == asked
    not_run = [r for r in results if r["is_error"]]
    assert len(not_run) == 16 and results[:64] == [r for r in results if not r["is_error"]]
    assert all(r["content"].startswith("Not run: this message asked for 80") for r in not_run)
    fake = example.FakeMessagesApi(example.SCRIPT)
    for _ in example.SCRIPT:  # every canned answer is a valid Messages response
        request = example.HTTP.Request("POST", "https://api.anthropic.com/v1/messages", json={})
        anthropic.types.Message.model_validate(fake(request).json())


def test_openai_sdk_sends_the_planned_tools_within_its_limit() -> None:
    openai = pytest.importorskip(
        "openai", reason="the openai SDK is not installed: pip install '.[test]'"
    )
    example = _example("openai_loop")
    assert len(example.build_registry()) > 128  # sent whole, OpenAI would refuse it
    done = example.run()
    assert len(done.bodies) == len(done.plans) == len(example.SCRIPT)
    for body, plan in zip(done.bodies, done.plans):
        assert [t["function"]["name"] for t in body["tools"]] == list(plan.names)
        assert body["tools"] == plan.render("openai")
        assert len(body["tools"]) <= _limit("openai") == 128
        assert body["messages"][0] == {
            "role": "system",
            "content": plan.system_text(example.SYSTEM),
        }
        assert "<tool_catalogue>" in body["messages"][0]["content"]
    first, second = done.plans[:2]
    assert "github" in first.held_back and "read_file" in first.names
    assert not [n for n in first.names if n.startswith("github__")]
    assert second.names[: len(first.names)] == first.names  # loads only append
    assert "github__list_pull_requests" in second.names[len(first.names) :]
    assert (
        done.verdicts[1][0].call.name == "github__list_pull_requests" and done.verdicts[1][0].runs
    )
    messages = done.bodies[3]["messages"]
    asked = [c["id"] for c in messages[-81]["tool_calls"]]
    results = messages[-80:]
    assert len(asked) == 80 and [r["tool_call_id"] for r in results] == asked
    assert {r["role"] for r in results} == {"tool"}
    not_run = [r for r in results if r["content"].startswith("Not run")]
    assert len(not_run) == 16 and results[64:] == not_run
    fake = example.FakeChatCompletions(example.SCRIPT)
    for _ in example.SCRIPT:  # every canned answer is a valid Chat Completions response
        request = example.HTTP.Request(
            "POST", "https://api.openai.com/v1/chat/completions", json={}
        )
        openai.types.chat.ChatCompletion.model_validate(fake(request).json())


def test_openai_responses_sdk_runs_in_native_delivery() -> None:
    pytest.importorskip("openai", reason="the openai SDK is not installed: pip install '.[test]'")
    example = _example("openai_responses_loop")
    done = example.run()
    assert len(done.bodies) == len(example.SCRIPT)
    first = done.bodies[0]["tools"]
    kinds = [t["type"] for t in first]
    assert first[0]["name"] == "read_file" and kinds[-1] == "tool_search"
    assert set(kinds[1:-1]) == {"namespace"}  # every held-back server, its functions deferred
    assert all(body["tools"] == first for body in done.bodies)  # one array for the whole run
    sent = next(i for i in done.bodies[1]["input"] if i.get("type") == "tool_search_output")
    (space,) = sent["tools"]  # back in the namespace that deferred it
    assert space["type"] == "namespace" and space["name"].startswith("github__")
    assert space["name"] in {t["name"] for t in first if t["type"] == "namespace"}
    loaded = [t["name"] for t in space["tools"]]
    assert sent["call_id"] == "search_1" and "github__list_pull_requests" in loaded
    (verdict,) = done.verdicts
    assert verdict.call.name == "github__list_pull_requests" and verdict.runs
    assert not verdict.blind  # its definition came in the search output
    assert "<tool_catalogue>" in done.bodies[0]["instructions"]
