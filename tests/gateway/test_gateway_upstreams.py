"""The gateway's upstreams (issue 25): real servers from PyPI, HTTP upstreams, death and retry.

Every test runs ``toolsurface gateway`` as a process and talks to it with the MCP SDK's own
``ClientSession`` over stdio. The gateway fronts mcp-server-time, mcp-server-git (over a
temporary repository), mcp-server-fetch, mcp-server-sqlite, mcp-server-calculator and the
project's demo server; a client finds a tool of each in English and in Russian, loads it and
calls it. An upstream killed and kept down is reported, its calls answer tool errors, and its
tools come back (with ``tools/list_changed``) when it does; an HTTP upstream (streamable
HTTP or legacy SSE) gets the configured headers, and no header or env value is ever shown;
an upstream's wrong answers are tool errors that say what was wrong.

mcp-server-sqlite and mcp-server-calculator run only on mcp 1.x (the calculator requires
``mcp<2``; the sqlite server uses the 1.x ``Server`` decorators), while this project runs on
mcp 2.x: their tests need ``TOOLSURFACE_MCP1_PYTHON``, a Python with ``mcp<2`` and both
packages installed, and are skipped, naming the package, without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import TextContent  # noqa: E402

from toolsurface.gateway.config import (  # noqa: E402
    GatewayConfigError,
    Supervision,
    read_config,
)

SERVERS = Path(__file__).resolve().parents[1] / "mcp_servers"
TIMEOUT = 20.0
#: Fast retries for the tests: the gateway's defaults are for people, not for a suite. The
#: connect timeout is the gateway's default: a first start of a PyPI server (mcp-server-fetch
#: imports a lot) took over 10 s on a machine running two suites at once. It only bounds a
#: wait: an upstream that cannot start fails at once.
FAST = {"retryBase": 0.05, "retryCap": 0.3, "pingInterval": 1, "connectTimeout": 30}
MCP1_PYTHON = os.environ.get("TOOLSURFACE_MCP1_PYTHON", "")
MCP1_REASON = (
    "{pkg} runs only on mcp 1.x and this project tests on mcp 2.x: set "
    "TOOLSURFACE_MCP1_PYTHON to a Python with 'mcp<2' and {pkg} installed"
)


def _has_module(python: str, module: str) -> bool:
    if not python or not Path(python).exists():
        return False
    found = subprocess.run([python, "-c", f"import {module}"], capture_output=True, check=False)
    return found.returncode == 0


def _git_repo(root: Path) -> Path:
    repo = root / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    (repo / "README.md").write_text("hello\n", "utf-8")
    for cmd in (["init", "-q"], ["add", "README.md"], ["commit", "-q", "-m", "first"]):
        subprocess.run(["git", "-C", str(repo), *cmd], check=True, env=env)
    (repo / "README.md").write_text("hello, world\n", "utf-8")
    return repo


def _pypi_servers(tmp: Path) -> dict[str, Any]:
    """Every PyPI server that can run here, by upstream name, plus the demo server."""
    py = sys.executable
    servers: dict[str, Any] = {"ops": {"command": py, "args": [str(SERVERS / "demo_server.py")]}}
    servers["time"] = {"command": py, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
    repo = _git_repo(tmp)
    servers["git"] = {"command": py, "args": ["-m", "mcp_server_git", "--repository", str(repo)]}
    servers["fetch"] = {"command": py, "args": ["-m", "mcp_server_fetch"]}
    if _has_module(MCP1_PYTHON, "mcp_server_sqlite"):
        code = "from mcp_server_sqlite import main; main()"
        db = str(tmp / "notes.db")
        servers["sqlite"] = {"command": MCP1_PYTHON, "args": ["-c", code, "--db-path", db]}
    if _has_module(MCP1_PYTHON, "mcp_server_calculator"):
        servers["calculator"] = {"command": MCP1_PYTHON, "args": ["-m", "mcp_server_calculator"]}
    return servers


def _write(tmp: Path, servers: dict[str, Any], policy: dict[str, Any] | None = None) -> None:
    config = {"mcpServers": servers, "toolsurface": FAST}
    (tmp / "mcp.json").write_text(json.dumps(config), "utf-8")
    (tmp / "policy.json").write_text(json.dumps(policy or {}), "utf-8")


@dataclass
class _Client:
    """The session, the count of ``tools/list_changed`` seen, and the gateway's stderr."""

    session: ClientSession
    log: Path
    instructions: str
    changes: list[int] = field(default_factory=lambda: [0])
    _event: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_message(self, message: Any) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/tools/list_changed":
            self.changes[0] += 1
            self._event.set()

    @property
    def changed(self) -> int:
        return self.changes[0]

    async def change_after(self, seen: int) -> None:
        """Wait for a ``tools/list_changed`` beyond the first ``seen``."""
        while self.changed <= seen:
            self._event.clear()
            await asyncio.wait_for(self._event.wait(), TIMEOUT)

    async def names(self) -> list[str]:
        return [t.name for t in (await self.session.list_tools()).tools]

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        result = await asyncio.wait_for(self.session.call_tool(name, arguments), TIMEOUT)
        text = "\n".join(c.text for c in result.content if isinstance(c, TextContent))
        return text, bool(result.is_error)

    def stderr(self) -> str:
        return self.log.read_text("utf-8", errors="replace")

    async def log_holds(self, text: str, *, times: int = 1) -> None:
        """Wait until the gateway's stderr holds ``text`` ``times`` times (a readiness check)."""
        deadline = time.monotonic() + TIMEOUT
        while self.stderr().count(text) < times:
            assert time.monotonic() < deadline, f"the gateway never logged {text!r} {times}x"
            await asyncio.sleep(0.05)


@asynccontextmanager
async def _gateway(tmp: Path, *extra: str) -> AsyncIterator[_Client]:
    args = ["-m", "toolsurface.cli", "gateway", "--config", str(tmp / "mcp.json")]
    args += ["--policy", str(tmp / "policy.json"), *extra]
    # The child imports this checkout (not an installed copy) and runs the suite's engine.
    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    # The engine, and the semantic switch (off for the suite: tests/conftest.py).
    for var in ("TOOLSURFACE_ENGINE", "TOOLSURFACE_SEMANTIC"):
        if var in os.environ:
            env[var] = os.environ[var]
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    log = tmp / "gateway.log"
    with log.open("w", encoding="utf-8") as errlog:
        holder: list[_Client] = []

        async def handler(message: Any) -> None:
            if holder:
                await holder[0].on_message(message)

        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            init = await asyncio.wait_for(session.initialize(), TIMEOUT * 2)
            client = _Client(session, log, init.instructions or "")
            holder.append(client)
            yield client


# -- real servers from PyPI ---------------------------------------------------------------


@dataclass(frozen=True)
class _Case:
    server: str
    tool: str
    english: str
    russian: str
    arguments: dict[str, Any]
    answer: str | None  # a word the answer holds; None: the call may fail (no network)


CASES = [
    _Case("time", "get_current_time", "what time is it now in Tokyo", "текущее время в Токио",
          {"timezone": "Asia/Tokyo"}, "Asia/Tokyo"),
    _Case("git", "git_status", "show the git status of the repository",
          "покажи статус git репозитория", {"repo_path": "{repo}"}, "README.md"),
    _Case("fetch", "fetch", "fetch a web page from a URL", "скачай веб-страницу по URL",
          {"url": "http://127.0.0.1:9/"}, None),
    _Case("sqlite", "list_tables", "list the tables of the sqlite database",
          "покажи все таблицы базы данных sqlite", {}, None),
    _Case("calculator", "calculate", "calculate a math expression",
          "посчитай математическое выражение", {"expression": "6*7"}, "42"),
    _Case("ops", "restart_service", "restart a service", "перезапусти сервис",
          {"service": "api", "environment": "staging"}, "api"),
]  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=[c.server for c in CASES])
def test_a_tool_of_each_upstream_is_found_in_both_languages_loaded_and_called(
    tmp_path: Path, case: _Case
) -> None:
    servers = _pypi_servers(tmp_path)
    if case.server not in servers:
        pytest.skip(MCP1_REASON.format(pkg=f"mcp-server-{case.server}"))
    _write(tmp_path, servers)
    name = f"{case.server}__{case.tool}"
    arguments = {
        k: (str(tmp_path / "repo") if v == "{repo}" else v) for k, v in case.arguments.items()
    }

    async def run() -> tuple[list[str], str, str, list[str], tuple[str, bool], int, str]:
        async with _gateway(tmp_path) as gw:
            first = await gw.names()
            russian, _ = await gw.call("ToolSearch", {"query": case.russian})
            after_russian = await gw.names()
            english, _ = await gw.call("ToolSearch", {"query": case.english})
            await gw.call("ToolSearch", {"select": [name]})
            called = await gw.call(name, arguments)
            return first, russian, english, after_russian, called, gw.changed, gw.instructions

    first, russian, english, listed, (text, error), changed, instructions = asyncio.run(run())
    assert first == ["ToolSearch"]  # every upstream is held back behind ToolSearch
    assert f"- {case.server}:" in instructions  # the catalogue names every upstream
    assert name in russian and name in listed  # found and loaded by a Russian request
    assert name in english
    assert changed >= 1
    if case.answer is None:
        assert text  # it may fail (no network here), but as a tool's answer, not a crash
    else:
        assert not error and case.answer in text


def test_a_blocked_tool_is_never_shown(tmp_path: Path) -> None:
    servers = _pypi_servers(tmp_path)
    _write(
        tmp_path,
        servers,
        {"deny": ["time__convert_*"], "servers": {"git": {"deny": ["git_reset"]}}},
    )

    async def run() -> tuple[list[str], str, str, str, str]:
        async with _gateway(tmp_path) as gw:
            found, _ = await gw.call("ToolSearch", {"query": "undo staged changes git reset"})
            converted, _ = await gw.call("ToolSearch", {"query": "convert time between timezones"})
            await gw.call("ToolSearch", {"select": ["git__git_reset", "time__convert_time"]})
            called, _ = await gw.call("git__git_reset", {"repo_path": str(tmp_path / "repo")})
            seen = found + converted + called + gw.instructions
            return await gw.names(), seen, called, gw.instructions, gw.stderr()

    listed, seen, called, instructions, _ = asyncio.run(run())
    assert "git__git_status" in seen  # the search ran and found the server's other tools
    for blocked in ("git__git_reset", "time__convert_time"):
        assert blocked not in listed and blocked not in instructions
    assert "git_reset" not in seen.replace("Unknown tool 'git__git_reset'", "")
    assert "convert_time" not in seen
    assert called.startswith("Unknown tool 'git__git_reset'")


# -- an upstream killed, kept down, and brought back --------------------------------------


async def _alive_after(pid: int) -> bool:
    """Whether process ``pid`` still runs once the gateway has had TIMEOUT to stop it."""
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        await asyncio.sleep(0.05)
    return True


def test_a_killed_upstream_is_reported_retried_and_comes_back(tmp_path: Path) -> None:
    pidfile, gate = tmp_path / "flaky.pid", tmp_path / "flaky.down"
    flaky = {
        "command": sys.executable,
        "args": [str(SERVERS / "flaky_server.py"), str(pidfile), str(gate)],
    }
    time_server = {"command": sys.executable, "args": ["-m", "mcp_server_time"]}
    _write(tmp_path, {"weather": flaky, "time": time_server})
    tool = "weather__get_weather_forecast"

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _gateway(tmp_path) as gw:
            await gw.call("ToolSearch", {"select": [tool, "time__get_current_time"]})
            out["before"] = await gw.call(tool, {"city": "Oslo"})
            first_pid = int(pidfile.read_text("utf-8"))
            seen = gw.changed
            gate.touch()  # the restarted server exits at once: the upstream stays down
            os.kill(first_pid, signal.SIGKILL)
            await gw.change_after(seen)
            out["down_list"] = await gw.names()
            out["down_call"] = await gw.call(tool, {"city": "Oslo"})
            out["other"] = await gw.call("time__get_current_time", {"timezone": "UTC"})
            await gw.log_holds("retrying in", times=3)  # it was retried, and failed, twice
            pidfile.unlink()
            seen = gw.changed
            gate.unlink()  # the next retry starts it for good
            await gw.change_after(seen)
            out["up_list"] = await gw.names()
            out["after"] = await gw.call(tool, {"city": "Oslo"})
            out["pids"] = (first_pid, int(pidfile.read_text("utf-8")))
            out["log"] = gw.stderr()
        out["orphan"] = await _alive_after(out["pids"][1])  # the gateway stopped its child
        return out

    out = asyncio.run(run())
    text, error = out["before"]
    assert not error and "Oslo" in text
    assert tool not in out["down_list"] and "time__get_current_time" in out["down_list"]
    text, error = out["down_call"]
    assert error and "unavailable" in text and "'weather'" in text and "retrying" in text
    assert not out["other"][1]  # the other upstream is untouched
    assert tool in out["up_list"]
    text, error = out["after"]
    assert not error and "Oslo" in text
    assert out["pids"][0] != out["pids"][1]
    assert "upstream 'weather'" in out["log"] and "lost" in out["log"]
    assert "retrying in" in out["log"] and "is back" in out["log"]
    assert not out["orphan"]


def test_an_upstream_that_never_starts_leaves_the_others_serving(tmp_path: Path) -> None:
    missing = {"command": str(tmp_path / "no-such-server"), "env": {"API_KEY": "k-93f1-secret"}}
    _write(
        tmp_path,
        {"broken": missing, "time": {"command": sys.executable, "args": ["-m", "mcp_server_time"]}},
    )

    async def run() -> tuple[list[str], tuple[str, bool], str]:
        async with _gateway(tmp_path) as gw:
            await gw.call("ToolSearch", {"select": ["time__get_current_time"]})
            called = await gw.call("time__get_current_time", {"timezone": "UTC"})
            return await gw.names(), called, gw.stderr()

    listed, (text, error), log = asyncio.run(run())
    assert "time__get_current_time" in listed and not error and "UTC" in text
    assert "upstream 'broken'" in log and "did not start" in log
    assert "k-93f1-secret" not in log


def test_an_upstreams_wrong_answers_are_tool_errors_that_say_what_was_wrong(
    tmp_path: Path,
) -> None:
    _write(
        tmp_path, {"wrong": {"command": sys.executable, "args": [str(SERVERS / "wrong_server.py")]}}
    )
    names = ["wrong__shapeless", "wrong__off_schema", "wrong__refuses", "wrong__fine"]

    async def run() -> list[tuple[str, bool]]:
        async with _gateway(tmp_path) as gw:
            await gw.call("ToolSearch", {"select": names})
            return [await gw.call(name, {}) for name in names]

    shapeless, off_schema, refuses, fine = asyncio.run(run())
    assert shapeless[1] and "wrong__shapeless" in shapeless[0] and "content" in shapeless[0]
    assert off_schema[1] and "wrong__off_schema" in off_schema[0] and "schema" in off_schema[0]
    assert refuses[1] and "the desk is closed today" in refuses[0]
    assert fine == ("all good", False)


# -- HTTP upstreams -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_listening(port: int, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the HTTP test server exited"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError("the HTTP test server did not start listening")


KEY = "hk-5d1e9a77-upstream-secret"
ENV_SECRET = "ev-0c3b42aa-child-secret"


def test_an_http_upstream_gets_its_headers_and_no_secret_is_ever_shown(tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "UPSTREAM_KEY": KEY}
    server = subprocess.Popen([sys.executable, str(SERVERS / "http_server.py"), str(port)], env=env)
    try:
        _wait_listening(port, server)
        url = f"http://127.0.0.1:{port}/mcp"
        servers = {
            "notes": {
                "type": "http",
                "url": url,
                "headers": {"X-Upstream-Key": KEY, "X-Tenant": "acme"},
            },
            "locked": {"url": url, "headers": {"X-Upstream-Key": "wrong-" + KEY}},
            "ops": {
                "command": sys.executable,
                "args": [str(SERVERS / "demo_server.py")],
                "env": {"OPS_TOKEN": ENV_SECRET},
            },
        }
        _write(tmp_path, servers)

        async def run() -> tuple[list[str], list[str], str]:
            async with _gateway(tmp_path) as gw:
                texts = [gw.instructions]
                texts.append((await gw.call("ToolSearch", {"query": "save a note"}))[0])
                texts.append((await gw.call("ToolSearch", {"select": ["notes__whoami"]}))[0])
                texts.append((await gw.call("notes__whoami", {}))[0])
                texts.append((await gw.call("locked__whoami", {}))[0])
                tools = (await gw.session.list_tools()).model_dump_json()
                return await gw.names(), [*texts, tools], gw.stderr()

        listed, texts, log = asyncio.run(run())
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(TIMEOUT)
    assert "notes__add_note" in texts[1] and "notes__add_note" in listed
    assert texts[3] == "tenant=acme"  # the configured headers reached the server
    assert "locked__whoami" not in listed  # the server refused the wrong key: never connected
    assert "upstream 'locked'" in log and "did not start" in log
    upstreams = read_config(tmp_path / "mcp.json")
    shown = "\n".join([*texts, log, repr(upstreams), *(u.shown for u in upstreams)])
    for secret in (KEY, ENV_SECRET):
        assert secret not in shown


def _http_server(port: int, *extra: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "UPSTREAM_KEY": KEY}
    args = [sys.executable, str(SERVERS / "http_server.py"), str(port), *extra]
    proc = subprocess.Popen(args, env=env)
    _wait_listening(port, proc)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(TIMEOUT)
    except subprocess.TimeoutExpired:  # pragma: no cover - a stuck test server
        proc.kill()
        proc.wait(TIMEOUT)


def test_an_sse_upstream_is_searched_loaded_and_called_with_its_headers(tmp_path: Path) -> None:
    port = _free_port()
    headers = {"X-Upstream-Key": KEY, "X-Tenant": "acme"}
    url = f"http://127.0.0.1:{port}/sse"
    _write(tmp_path, {"notes": {"type": "sse", "url": url, "headers": headers}})
    proc = _http_server(port, "--sse")

    async def run() -> tuple[str, tuple[str, bool], tuple[str, bool], list[str]]:
        async with _gateway(tmp_path) as gw:
            found = (await gw.call("ToolSearch", {"query": "сохрани заметку"}))[0]
            await gw.call("ToolSearch", {"select": ["notes__whoami", "notes__add_note"]})
            whoami = await gw.call("notes__whoami", {})
            saved = await gw.call("notes__add_note", {"title": "t", "text": "abc"})
            return found, whoami, saved, await gw.names()

    try:
        found, whoami, saved, listed = asyncio.run(run())
    finally:
        _stop(proc)
    assert "notes__add_note" in found
    assert whoami == ("tenant=acme", False)  # the headers reached the server over SSE
    assert saved == ("Saved note 't' (3 chars)", False)
    assert {"notes__whoami", "notes__add_note"} <= set(listed)


def test_an_http_upstream_that_goes_away_is_retried_and_comes_back(tmp_path: Path) -> None:
    port = _free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"X-Upstream-Key": KEY, "X-Tenant": "acme"}
    _write(tmp_path, {"notes": {"url": url, "headers": headers}})
    procs = [_http_server(port)]
    tool = "notes__whoami"

    async def run() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with _gateway(tmp_path) as gw:
            await gw.call("ToolSearch", {"select": [tool]})
            out["before"] = await gw.call(tool, {})
            seen = gw.changed
            _stop(procs[0])  # the server goes away: a ping (or a call) finds it gone
            await gw.change_after(seen)
            out["down_list"] = await gw.names()
            out["down_call"] = await gw.call(tool, {})
            seen = gw.changed
            procs.append(_http_server(port))
            await gw.change_after(seen)
            out["after"] = await gw.call(tool, {})
            out["log"] = gw.stderr()
        return out

    try:
        out = asyncio.run(run())
    finally:
        for proc in procs:
            if proc.poll() is None:
                _stop(proc)
    assert out["before"] == ("tenant=acme", False)
    assert tool not in out["down_list"]
    text, error = out["down_call"]
    assert error and "unavailable" in text and "'notes'" in text
    assert out["after"] == ("tenant=acme", False)
    assert "upstream 'notes'" in out["log"] and "is back" in out["log"]
    assert KEY not in out["log"]


# -- the config ---------------------------------------------------------------------------


def _config_error(tmp: Path, data: Any) -> str:
    path = tmp / "bad.json"
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(GatewayConfigError) as caught:
        read_config(path)
    return str(caught.value)


def test_http_and_stdio_entries_are_read_in_the_forms_clients_write(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    servers = {
        "a": {"type": "streamable-http", "url": "https://h.example/mcp", "headers": {"X-K": "v1"}},
        "b": {"url": "http://127.0.0.1:8000/mcp?key=k-secret-1"},
        "c": {"type": "sse", "url": "http://127.0.0.1:8000/sse"},
        "d": {
            "type": "stdio",
            "command": "srv",
            "args": ["--x"],
            "toolsurface": {"callTimeout": 5},
        },
        "e": {"command": "off", "disabled": True},
        "w": {"serverUrl": "https://w.example/mcp"},
    }
    path.write_text(json.dumps({"mcpServers": servers, "toolsurface": {"retryCap": 9}}), "utf-8")
    ups = {u.name: u for u in read_config(path)}
    assert sorted(ups) == ["a", "b", "c", "d", "w"]  # a disabled server is left out
    assert [ups[n].transport for n in "abcdw"] == ["http", "http", "sse", "stdio", "http"]
    assert ups["d"].supervision.call_timeout == 5 and ups["d"].supervision.retry_cap == 9
    assert ups["b"].shown == "http://127.0.0.1:8000/mcp"
    assert "k-secret-1" not in repr(ups["b"]) and "v1" not in repr(ups["a"])
    vscode = {"servers": {"v": {"type": "stdio", "command": "srv"}}}  # .vscode/mcp.json
    path.write_text(json.dumps(vscode), "utf-8")
    assert [u.name for u in read_config(path)] == ["v"]


@pytest.mark.parametrize(
    ("servers", "message"),
    [
        ({"x": {"url": "h.example/mcp"}}, r"mcpServers.x.url: must be an http"),
        ({"x": {"type": "websocket", "url": "http://h"}}, "mcpServers.x.type: must be one of"),
        ({"x": {"url": "http://h", "command": "c"}}, "mcpServers.x: give either command"),
        ({"x": {"url": "http://h", "env": {"A": "b"}}}, "mcpServers.x.env: is for stdio"),
        ({"x": {"command": "c", "headers": {"A": "b"}}}, "mcpServers.x.headers: is for HTTP"),
        (
            {"x": {"url": "http://h", "headers": {"A": 1}}},
            "mcpServers.x.headers: must be an object",
        ),
        ({"x": {"url": "http://h", "headers": {"A b": "v"}}}, "is not a header name"),
        ({"x": {"command": "c", "env": ["A=b"]}}, "mcpServers.x.env: must be an object"),
        ({"x": {"command": "c", "disabled": "yes"}}, "mcpServers.x.disabled"),
        ({"x": {"command": "c", "toolsurface": {"callTimeout": 0}}}, "x.toolsurface.callTimeout"),
        ({"x": {"command": "c", "toolsurface": {"timeout": 1}}}, "x.toolsurface.timeout: unknown"),
        ({"x": {"command": "c", "toolsurface": {"retryBase": 9, "retryCap": 1}}}, "retryCap"),
    ],
)
def test_a_bad_entry_is_an_error_naming_its_place(
    tmp_path: Path, servers: dict[str, Any], message: str
) -> None:
    assert message in _config_error(tmp_path, {"mcpServers": servers})


def test_a_header_value_is_never_in_an_error(tmp_path: Path) -> None:
    text = _config_error(
        tmp_path, {"mcpServers": {"x": {"url": "http://h", "headers": {"K": "sec-ret\nvalue"}}}}
    )
    assert "mcpServers.x.headers.K" in text and "sec-ret" not in text


def test_retry_delays_grow_to_the_cap_with_bounded_jitter() -> None:
    sup = Supervision(retry_base=0.5, retry_cap=8.0, retry_jitter=0.25)
    plain = [sup.retry_delay(n) for n in range(7)]
    assert plain == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert sup.retry_delay(3, -1.0) == 3.0 and sup.retry_delay(3, 1.0) == 5.0
    assert sup.retry_delay(10_000) == 8.0


def test_a_crash_during_a_call_says_the_call_may_have_run(tmp_path: Path) -> None:
    mark = tmp_path / "charged"
    dying = Path(__file__).resolve().parent / "dying_server.py"
    _write(tmp_path, {"till": {"command": sys.executable, "args": [str(dying), str(mark)]}})

    async def run() -> tuple[tuple[str, bool], tuple[str, bool]]:
        async with _gateway(tmp_path) as gw:
            crashed = await gw.call("till__charge_card", {"amount": 500})
            after = await gw.call("till__charge_card", {"amount": 500})
            return crashed, after

    (crashed, crashed_error), (after, after_error) = asyncio.run(run())
    assert mark.read_text("utf-8") == "500"  # the work was done before the crash
    assert crashed_error and "may have run" in crashed, crashed
    assert "did not run" not in crashed
    assert after_error and "did not run" in after and "may have run" not in after, after
