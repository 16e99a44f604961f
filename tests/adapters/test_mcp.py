"""The MCP adapter against real servers over stdio: our demo server and published ones.

Nothing is mocked: each test starts server processes with ``sys.executable`` and talks to
them through the official SDK's ``stdio_client`` and ``ClientSession``. Each test runs under
an overall timeout, and the SDK's stdio transport ends the processes when the blocks exit.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TextIO, TypeVar

import pytest

from toolsurface import ToolRegistry, ToolSurface, tool_search_tool
from toolsurface.adapters.mcp import (
    McpAdapterError,
    McpServerLink,
    ToolListChangedHandler,
    connect_server,
    is_tools_list_changed,
    mcp_tool_name,
    message_handler,
    tools_from_list_result,
)
from toolsurface.catalogue import demo_catalogue
from toolsurface.errors import CatalogueFormatError, UnknownToolError

mcp = pytest.importorskip("mcp", reason="the mcp SDK is not installed: pip install '.[test]'")
from mcp import ClientSession, StdioServerParameters, stdio_client  # noqa: E402
from mcp.types import ToolListChangedNotification  # noqa: E402

DEMO_SERVER = Path(__file__).resolve().parents[1] / "mcp_servers" / "demo_server.py"
#: Bound on one whole test (server start-up is a few seconds each on a small machine).
TEST_TIMEOUT = 120.0
#: Bound on a server's start and handshake.
START_TIMEOUT = 60.0
#: Bound on waiting for a tools/list_changed to reach the registry.
CHANGE_TIMEOUT = 10.0
#: Any stray HTTP from a server goes to the loopback discard port, never out.
NO_NETWORK = {
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "ALL_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "",
}

HAVE_PROC = Path("/proc/self/cmdline").exists()

T = TypeVar("T")


class ServerStartError(Exception):
    """A published server package could not be started or did not complete the handshake."""


def _leaf(exc: BaseException) -> BaseException:
    """The single exception inside anyio's nested exception groups, if there is just one."""
    inner = getattr(exc, "exceptions", None)
    while isinstance(inner, tuple) and len(inner) == 1:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return exc


def run(main: Callable[[], Awaitable[T]], timeout: float = TEST_TIMEOUT) -> T:
    """Run a test's async body under a timeout; a published server that did not start skips."""

    async def bounded() -> T:
        return await asyncio.wait_for(main(), timeout)

    try:
        return asyncio.run(bounded())
    except BaseException as exc:
        leaf = _leaf(exc)
        if isinstance(leaf, ServerStartError):
            pytest.skip(str(leaf))
        if leaf is exc:
            raise
        raise leaf.with_traceback(leaf.__traceback__) from None


def _stderr_tail(log: TextIO, limit: int = 800) -> str:
    log.flush()
    log.seek(0)
    text = log.read().strip()
    return text[-limit:] if text else "(nothing on stderr)"


@asynccontextmanager
async def session_for(
    args: list[str],
    *,
    handler: ToolListChangedHandler | None = None,
    package: str | None = None,
) -> AsyncIterator[ClientSession]:
    """An initialised session with a server process; ``package`` marks a published server.

    A published server that does not finish the handshake raises ``ServerStartError`` (the
    test is skipped naming the failure and the server's stderr); our own demo server's
    failure fails the test.
    """
    params = StdioServerParameters(command=sys.executable, args=args, env=NO_NETWORK)
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write, message_handler=handler) as session,
        ):
            try:
                await asyncio.wait_for(session.initialize(), START_TIMEOUT)
            except Exception as exc:
                if package is None:
                    raise
                raise ServerStartError(
                    f"{package} did not start or complete the MCP handshake: {exc!r}; "
                    f"its stderr: {_stderr_tail(log)}"
                ) from exc
            yield session


async def wait_until(
    check: Callable[[], bool], what: str, timeout: float = CHANGE_TIMEOUT
) -> float:
    """Poll ``check`` until true (returns the seconds it took) or fail after ``timeout``."""
    start = time.perf_counter()
    while not check():
        if time.perf_counter() - start > timeout:
            raise AssertionError(f"not within {timeout:.0f} s: {what}")
        await asyncio.sleep(0.02)
    return time.perf_counter() - start


def result_text(result: Any) -> str:
    data = result.model_dump(by_alias=True, mode="json")
    assert data.get("isError") in (False, None), data
    return "\n".join(c.get("text", "") for c in data["content"])


def _command_lines() -> list[str]:
    """Every process's command line (Linux /proc; empty elsewhere)."""
    lines: list[str] = []
    if not HAVE_PROC:
        return lines
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                lines.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue  # the process ended while we looked
    return lines


def need_package(module: str, package: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{package} is not installed (pip install {package}): its test needs it")


@pytest.fixture
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(engine=engine_name)  # type: ignore[arg-type]


# -- without a server ----------------------------------------------------------------------


def test_names_from_a_plain_tools_list_result(caplog: pytest.LogCaptureFixture) -> None:
    long_name = "x" * 200
    listing = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "tools": [
                {
                    "name": "list_tickets",
                    "description": "List tickets.",
                    "inputSchema": {"type": "object"},
                },
                {"name": "ticket stats/weekly", "description": "Weekly stats."},
                {"name": "ticket_stats_weekly", "description": "The clean one keeps its name."},
                {"name": long_name, "description": "A very long name."},
                {"name": "broken", "description": "Bad schema.", "inputSchema": {"type": "array"}},
                {"description": "no name at all"},
                {"name": "list_tickets", "description": "Listed twice."},
                {
                    "name": "titled",
                    "title": "Find Things Quickly",
                    "inputSchema": {"type": "object"},
                },
                {"name": "", "description": "An empty name would be the bare prefix."},
                {"name": "odd_description", "description": {"text": "not a string"}},
            ]
        },
    }
    with caplog.at_level(logging.WARNING, logger="toolsurface.mcp"):
        tools = tools_from_list_result(listing, "ops")
    by_name = {t.name: t for t in tools}
    assert "ops__list_tickets" in by_name
    assert by_name["ops__ticket_stats_weekly"].description == "The clean one keeps its name."
    odd = [n for n in by_name if n.startswith("ops__ticket_stats_weekly_")]
    assert len(odd) == 1 and len(odd[0]) == len("ops__ticket_stats_weekly_") + 8
    assert by_name[odd[0]].input_schema == {"type": "object", "properties": {}}
    long_ones = [n for n in by_name if n.startswith("ops__xxx")]
    assert len(long_ones) == 1 and len(long_ones[0]) == 128
    assert long_ones[0] == mcp_tool_name("ops__", long_name)
    # A title is a display name: not indexed, as the catalogue reader does not index it.
    assert by_name["ops__titled"].search_hint == ""
    assert "ops__broken" not in by_name
    assert "ops__" not in by_name and "ops__odd_description" not in by_name
    text = caplog.text
    assert "'broken' skipped" in text and "input_schema" in text and "'array'" in text
    assert "item 5" in text and "listed twice" in text
    assert "item 8" in text and "non-empty 'name'" in text
    assert "'odd_description' skipped: its description is a dict" in text
    assert len(tools) == 5


def test_sanitised_names_do_not_depend_on_the_listing_order() -> None:
    listed = [
        {"name": "a b", "description": "first"},
        {"name": "a/b", "description": "second"},
        {"name": "a_b", "description": "clean"},
        {"name": "c d", "description": "alone"},
    ]

    def mapping(items: list[dict[str, str]]) -> dict[str, str]:
        return {t.name: t.description for t in tools_from_list_result({"tools": items}, "srv")}

    forward = mapping(listed)
    assert forward == mapping(listed[::-1]) == mapping(listed[1:] + listed[:1])
    assert forward["srv__a_b"] == "clean"  # a name kept as is never carries a hash
    assert forward[mcp_tool_name("srv__", "a b")] == "first"
    assert forward[mcp_tool_name("srv__", "a/b")] == "second"
    # a name that needed cleaning always ends with its own hash, even with nothing beside it
    assert forward[mcp_tool_name("srv__", "c d")] == "alone" and "srv__c_d" not in forward
    assert mapping(listed[:1]) == {mcp_tool_name("srv__", "a b"): "first"}
    # a listed name that spells an altered one's registry name wins it, in either order
    squatter = {"name": mcp_tool_name("", "a b"), "description": "spelled out"}
    both = [listed[0], squatter]
    assert mapping(both) == mapping(both[::-1]) == {mcp_tool_name("srv__", "a b"): "spelled out"}


def test_a_group_already_declared_is_refused_before_the_session_is_used() -> None:
    registry = ToolRegistry()
    registry.declare_group("gh", prefix="gh__", rules="The host's own rules.")
    untouched = object()  # any use of the session would fail: nothing may be listed

    async def main() -> None:
        await connect_server(registry, "gh", untouched)  # type: ignore[arg-type]

    with pytest.raises(McpAdapterError, match="MCP server 'gh': a group named 'gh' is already"):
        asyncio.run(main())
    assert registry.groups()["gh"].rules == "The host's own rules."


def test_a_prefix_the_hosts_own_tools_carry_is_refused() -> None:
    # The server's group would take the host's tool over: hold it back, show it to the model
    # as the server's, apply the server's rules to it. The connect is refused instead.
    registry = ToolRegistry()
    registry.register({"name": "db__backup", "description": "The host's own backup."})
    untouched = object()

    async def main() -> None:
        await connect_server(registry, "db", untouched)  # type: ignore[arg-type]

    with pytest.raises(McpAdapterError, match=r"already carry its prefix 'db__' \(db__backup\)"):
        asyncio.run(main())
    assert registry.groups() == {} and registry.group_of("db__backup") is None


def test_plain_result_errors() -> None:
    with pytest.raises(CatalogueFormatError, match="tools/list"):
        tools_from_list_result({"nope": []}, "ops")
    with pytest.raises(ValueError, match="server name"):
        tools_from_list_result({"tools": []}, "bad name")
    with pytest.raises(ValueError, match="prefix"):
        tools_from_list_result({"tools": []}, "ops", prefix="ops/")
    assert tools_from_list_result({"tools": []}, "ops") == []


def test_list_changed_is_recognised_in_both_sdk_shapes() -> None:
    v2 = ToolListChangedNotification()
    assert is_tools_list_changed(v2)
    assert is_tools_list_changed(SimpleNamespace(root=v2))  # mcp 1.x: a RootModel around it
    assert not is_tools_list_changed(SimpleNamespace(method="notifications/prompts/list_changed"))
    assert not is_tools_list_changed(ValueError("transport fault"))


def test_handler_forwards_to_the_hosts_own() -> None:
    seen: list[object] = []

    async def inner(message: object) -> None:
        seen.append(message)

    handler = message_handler(inner)
    note = ToolListChangedNotification()
    asyncio.run(handler(note))  # no link bound yet: nothing to refresh, still forwarded
    assert seen == [note]


# -- the demo server -----------------------------------------------------------------------


def test_demo_server_end_to_end(registry: ToolRegistry, caplog: pytest.LogCaptureFixture) -> None:
    registry.register_many(demo_catalogue())
    base = len(registry)
    timings: dict[str, float] = {}

    async def main() -> None:
        handler = message_handler()
        async with session_for([str(DEMO_SERVER)], handler=handler) as session:
            with caplog.at_level(logging.WARNING, logger="toolsurface.mcp"):
                link = await connect_server(registry, "demo", session, handler=handler)
            names = link.names()
            assert len(names) >= 30  # 35 listed over three pages
            assert "demo__list_services" in names
            assert "demo__disable_tool" in names  # on the last page: every page was read
            assert all(n.startswith("demo__") for n in names)
            assert all(n in registry for n in names)
            assert all(n in link for n in names) and "create_ticket" not in link
            group = registry.groups()["demo"]
            assert group.dynamic and group.prefix == "demo__"
            assert registry.group_of("demo__create_ticket") == "demo"
            assert link.server_name("demo__create_ticket") == "create_ticket"
            # The server's readOnlyHint, as its SDK sent it; a tool without one says nothing.
            assert registry.get("demo__list_tickets").read_only is True
            assert registry.get("demo__create_ticket").read_only is False
            assert registry.get("demo__assign_ticket").read_only is None

            assert registry.search("создай тикет в поддержку", k=3)[0].name == "demo__create_ticket"
            assert (
                registry.search("roll back the last deploy", k=3)[0].name == "demo__rollback_deploy"
            )

            text = result_text(
                await link.call(
                    "demo__create_ticket",
                    {"title": "Printer on fire", "description": "Smoke", "priority": "urgent"},
                )
            )
            assert "Created ticket OPS-1043: Printer on fire (priority urgent" in text
            with pytest.raises(UnknownToolError):
                await link.call("demo__no_such_tool", {})

            result_text(await link.call("demo__enable_extra_tools", {}))
            extras = ("demo__get_sla_report", "demo__export_tickets_csv", "demo__merge_tickets")
            timings["list_changed add"] = await wait_until(
                lambda: all(n in registry for n in extras), "the three extra tools registered"
            )
            assert registry.search("monthly SLA report", k=3)[0].name == "demo__get_sla_report"
            assert registry.group_of("demo__get_sla_report") == "demo"

            result_text(await link.call("demo__disable_tool", {"name": "merge_tickets"}))
            timings["list_changed remove"] = await wait_until(
                lambda: "demo__merge_tickets" not in registry, "demo__merge_tickets unregistered"
            )
            assert "demo__get_sla_report" in registry

            new_text = "Open a ticket on the operations desk (reworded)."
            result_text(
                await link.call(
                    "demo__reword_tool", {"name": "create_ticket", "description": new_text}
                )
            )
            timings["list_changed replace"] = await wait_until(
                lambda: registry.get("demo__create_ticket").description == new_text,
                "demo__create_ticket replaced with its new description",
            )
            await link.wait_idle()
            assert link.last_refresh is not None
            assert link.last_refresh.replaced == ("demo__create_ticket",)

            removed = await link.disconnect()
            assert "demo__get_sla_report" in removed
            assert not [n for n in registry.names() if n.startswith("demo__")]
            assert "demo" not in registry.groups()
            assert len(registry) == base
            with pytest.raises(McpAdapterError, match="closed"):
                await link.call("demo__create_ticket", {"title": "x", "description": "y"})

            # A later server of the same name starts clean (here: the same live session).
            again = await connect_server(registry, "demo", session)
            assert "demo__list_services" in again.names()
            assert "demo__get_sla_report" in again.names()
            assert "demo__merge_tickets" not in again.names()
            await again.close()
            assert len(registry) == base and "demo" not in registry.groups()

    run(main)
    print(f"\nlist_changed reached the registry in: {timings}")


def test_refresh_brings_the_registry_back_in_step(registry: ToolRegistry) -> None:
    marker = f"--marker-{os.getpid()}-{time.monotonic_ns()}"  # to find the server process

    async def main() -> None:
        async with session_for([str(DEMO_SERVER), marker]) as session:
            assert not HAVE_PROC or any(marker in line for line in _command_lines())
            link = await connect_server(registry, "ops", session, prefix="ops.", load="lazy")
            assert registry.groups()["ops"].load == "lazy"
            assert "ops.create_ticket" in registry and link.refresh_count == 1
            # The host edits one definition and drops another behind the link's back.
            edited = registry.get("ops.get_runbook").model_copy(update={"description": "stale"})
            registry.register(edited, replace=True)
            registry.unregister("ops.list_alerts")
            result = await link.refresh()
            assert result.replaced == ("ops.get_runbook",)
            assert result.added == ("ops.list_alerts",)
            assert result.removed == ()
            assert registry.get("ops.get_runbook").description.startswith("Fetch the runbook")
            unchanged = await link.refresh()
            assert not unchanged.changed
            async with link:
                pass
            assert link.closed and not [n for n in registry.names() if n.startswith("ops.")]
            assert await link.close() == []  # idempotent
            assert not (await link.refresh()).changed

    run(main)
    assert not any(marker in line for line in _command_lines()), "the server process lives on"


def test_a_second_link_under_one_name_is_refused_and_close_keeps_others_groups(
    registry: ToolRegistry,
) -> None:
    registry.register(tool_search_tool())

    async def main() -> None:
        async with session_for([str(DEMO_SERVER)]) as session:
            first = await connect_server(registry, "demo", session)
            names = first.names()
            with pytest.raises(McpAdapterError, match="MCP server 'demo'"):
                await connect_server(registry, "demo", session)
            assert registry.groups()["demo"].dynamic and first.names() == names
            assert ToolSurface(registry).plan().held_back == ("demo",)  # still held back
            await first.close()
            again = await connect_server(registry, "demo", session)  # closed: free again
            # The host redeclares the group under the link: close() leaves the host's alone.
            mine = registry.declare_group("demo", prefix="demo__", rules="The host's.")
            await again.close()
            assert registry.groups()["demo"] is mine
            assert not [n for n in registry.names() if n.startswith("demo__")]

    run(main)


def test_a_broken_listing_registers_nothing(registry: ToolRegistry) -> None:
    async def main() -> None:
        async with session_for([str(DEMO_SERVER), "--endless-cursor"]) as session:
            with pytest.raises(McpAdapterError, match="cursor '12' twice"):
                await connect_server(registry, "demo", session)
            assert len(registry) == 0 and registry.groups() == {}

    run(main)


# -- published servers from PyPI ------------------------------------------------------------


def test_mcp_server_time(registry: ToolRegistry) -> None:
    need_package("mcp_server_time", "mcp-server-time")

    async def main() -> None:
        args = ["-m", "mcp_server_time", "--local-timezone", "Etc/UTC"]
        async with session_for(args, package="mcp-server-time") as session:
            async with await connect_server(registry, "time", session) as link:
                assert {"time__get_current_time", "time__convert_time"} <= set(link.names())
                assert registry.group_of("time__convert_time") == "time"
                text = result_text(
                    await link.call("time__get_current_time", {"timezone": "Europe/Moscow"})
                )
                assert '"timezone": "Europe/Moscow"' in text and "datetime" in text
                text = result_text(
                    await link.call(
                        "time__convert_time",
                        {
                            "source_timezone": "Etc/UTC",
                            "time": "12:00",
                            "target_timezone": "Asia/Tokyo",
                        },
                    )
                )
                assert "21:00" in text
            assert not [n for n in registry.names() if n.startswith("time__")]

    run(main)


def test_mcp_server_git(registry: ToolRegistry, tmp_path: Path) -> None:
    need_package("mcp_server_git", "mcp-server-git")
    repo = tmp_path / "repo"
    repo.mkdir()
    try:
        subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"git is needed to make the test repository and failed: {exc!r}")
    (repo / "hello.txt").write_text("hello\n", encoding="utf-8")

    async def main() -> None:
        args = ["-m", "mcp_server_git", "--repository", str(repo)]
        async with session_for(args, package="mcp-server-git") as session:
            link = await connect_server(registry, "git", session)
            assert {"git__git_status", "git__git_log", "git__git_diff_unstaged"} <= set(
                link.names()
            )
            text = result_text(await link.call("git__git_status", {"repo_path": str(repo)}))
            assert "Repository status" in text and "hello.txt" in text
            await link.close()
            assert "git" not in registry.groups()

    run(main)


def test_mcp_server_fetch_lists_without_fetching(registry: ToolRegistry) -> None:
    need_package("mcp_server_fetch", "mcp-server-fetch")

    async def main() -> None:
        args = ["-m", "mcp_server_fetch", "--proxy-url", "http://127.0.0.1:9"]
        async with session_for(args, package="mcp-server-fetch") as session:
            link = await connect_server(registry, "fetch", session)
            assert "fetch__fetch" in link.names()
            assert "url" in registry.get("fetch__fetch").input_schema["properties"]
            await link.close()  # no call: the test makes no network request

    run(main)


# -- a ToolSurface over connected servers ---------------------------------------------------


def test_surface_holds_servers_back_and_loads_by_search(registry: ToolRegistry) -> None:
    need_package("mcp_server_time", "mcp-server-time")
    registry.register({"name": "read_file", "description": "Read a file of the workspace."})
    registry.register(tool_search_tool())

    async def main() -> None:
        async with (
            session_for([str(DEMO_SERVER)]) as demo_session,
            session_for(["-m", "mcp_server_time"], package="mcp-server-time") as time_session,
        ):
            links: list[McpServerLink] = [
                await connect_server(registry, "demo", demo_session),
                await connect_server(registry, "time", time_session),
            ]
            surface = ToolSurface(registry)
            plan = surface.plan()
            assert set(plan.held_back) == {"demo", "time"}
            assert plan.names == ("read_file", "ToolSearch")
            assert "Connected servers:" in plan.catalogue
            assert "- demo: 35 tools, every name starts with 'demo__'" in plan.catalogue
            assert "- time: time__convert_time, time__get_current_time" in plan.catalogue

            found = surface.tool_search({"query": "заведи тикет в поддержку"})
            assert found.loaded[0] == "demo__create_ticket"
            found = surface.tool_search({"query": "what time is it in Tokyo"})
            assert "time__get_current_time" in found.loaded
            plan = surface.plan()
            assert {"demo__create_ticket", "time__get_current_time"} <= set(plan.names)
            assert plan.names[:2] == ("read_file", "ToolSearch")

            text = result_text(
                await links[0].call(
                    "demo__create_ticket", {"title": "VPN down", "description": "-"}
                )
            )
            assert "VPN down" in text
            for link in links:
                await link.close()
            assert registry.names() == ["ToolSearch", "read_file"]
            assert registry.groups() == {}

    run(main)


BROKEN_LISTING = Path(__file__).resolve().parents[1] / "mcp_servers" / "broken_listing_server.py"


@pytest.mark.parametrize("broken", ["schema_str", "no_name", "array_schema", "bad_props"])
def test_one_tool_the_sdk_refuses_takes_none_of_the_others_with_it(
    broken: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The SDK validates a tools/list page whole; read loosely, the bad tool alone is skipped,
    named in the log, and the good ones are registered and callable (the session knows them,
    so a call does not list again and fail again)."""
    registry = ToolRegistry()

    async def main() -> str:
        env = {**NO_NETWORK, "BROKEN": broken}
        params = StdioServerParameters(command=sys.executable, args=[str(BROKEN_LISTING)], env=env)
        with tempfile.TemporaryFile("w+", encoding="utf-8") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await asyncio.wait_for(session.initialize(), START_TIMEOUT)
                with caplog.at_level(logging.WARNING, logger="toolsurface.mcp"):
                    link = await connect_server(registry, "srv", session)
                assert sorted(link.names()) == ["srv__good_one", "srv__good_two"]
                return result_text(await link.call("srv__good_two", {"x": "1"}))

    assert asyncio.run(main()) == "ran good_two"
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(skipped) == 1, caplog.text
    # Refused by the SDK's model (named by its place) or by the registry's (by its name).
    assert "MCP server 'srv'" in skipped[0]
    assert ("item 1 (no name)" if broken == "no_name" else "'broken'") in skipped[0]
