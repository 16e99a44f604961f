"""The doors of the gateway over HTTP, each attacked from outside (issue "whole MCP proxy").

A gateway bound to a loopback address other than 127.0.0.1 (127.0.0.2, where no token is
required) must still refuse a foreign ``Host`` (DNS rebinding), and a refused request must
leave nothing in the store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the gateway needs the mcp extra")
pytest.importorskip("uvicorn", reason="the HTTP gateway needs uvicorn (the mcp extra)")
import httpx2
from gateway_procs import INIT, GatewayProcess, write_config

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

ALLOW = ["--allow-host", "gw.internal"]
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _stored(store: Path) -> list[Path]:
    return sorted(store.glob("session-*.json")) if store.exists() else []


def test_a_foreign_host_is_refused_on_every_loopback_address_and_stores_nothing(
    tmp_path: Path,
) -> None:
    write_config(tmp_path)
    store = tmp_path / "store"
    gw = GatewayProcess(tmp_path, store=str(store))
    # The last --http wins: bind 127.0.0.2, where no token is required.
    gw.extra = ["--http", f"127.0.0.2:{gw.port}", *ALLOW]
    with gw:
        url = f"http://127.0.0.2:{gw.port}/mcp"

        def post(host: str) -> httpx2.Response:
            return httpx2.post(url, json=INIT, headers={**ACCEPT, "Host": host}, timeout=30)

        for evil in ("evil.example", f"evil.example:{gw.port}", "127.0.0.3", "gw.internal.evil"):
            refused = post(evil)
            assert refused.status_code == 421, (evil, refused.status_code, refused.text)
            assert "Host" in refused.text and "--allow-host" in refused.text
        assert _stored(store) == []  # no session for a refused request

        for good in (f"127.0.0.2:{gw.port}", "127.0.0.2", f"localhost:{gw.port}", "gw.internal"):
            accepted = post(good)
            assert accepted.status_code == 200, (good, accepted.text)
            assert accepted.headers.get("mcp-session-id")
        assert len(_stored(store)) == 4


def test_the_host_check_knows_ipv6_brackets_ports_and_wildcards() -> None:
    from toolsurface.gateway.http import HostCheck

    v6 = HostCheck("::1")
    assert v6.admits("[::1]:8080") and v6.admits("[::1]") and v6.admits("localhost:8080")
    assert not v6.admits("[::2]:8080") and not v6.admits("evil.example") and not v6.admits(None)
    assert not v6.admits("") and not v6.admits("::1.evil.example")
    lan = HostCheck("192.0.2.7", ("Gw.Example", "proxy.example:443"))
    assert lan.admits("192.0.2.7") and lan.admits("192.0.2.7:80") and lan.admits("gw.example:1")
    assert lan.admits("proxy.example:443") and not lan.admits("proxy.example:80")
    assert not lan.admits("localhost:80")  # loopback names only on a loopback bind
    assert not HostCheck("0.0.0.0").admits("0.0.0.0:80")


def test_server_keys_that_could_collide_on_a_tool_name_are_refused_naming_both(
    tmp_path: Path,
) -> None:
    import json
    import sys

    from toolsurface.gateway.config import GatewayConfigError, read_config

    def config(*keys: str) -> Path:
        path = tmp_path / "mcp.json"
        servers = {k: {"command": sys.executable, "args": ["-V"]} for k in keys}
        path.write_text(json.dumps({"mcpServers": servers}), "utf-8")
        return path

    # a's b__c and a__b's c would both be a__b__c; a__b's calls would route to a.
    with pytest.raises(GatewayConfigError) as caught:
        read_config(config("a", "a__b"))
    said = str(caught.value)
    assert "mcpServers.a__b" in said and "'__'" in said and "'a'" in said
    with pytest.raises(GatewayConfigError, match=r"mcpServers\.solo__x.*'__'"):
        read_config(config("solo__x"))
    # a_'s b and a's _b would both be a___b.
    with pytest.raises(GatewayConfigError, match=r"mcpServers\.a_: .*end with '_'"):
        read_config(config("a", "a_"))
    assert [u.name for u in read_config(config("a", "a_b", "b-c"))] == ["a", "a_b", "b-c"]


def test_allowed_hosts_can_be_written_in_the_config_file(tmp_path: Path) -> None:
    import json

    from toolsurface.gateway.config import GatewayConfigError, read_allowed_hosts

    config, _ = write_config(tmp_path)
    data = json.loads(config.read_text("utf-8"))
    data["toolsurface"] = {"allowHosts": ["gw.internal"], "callTimeout": 30}
    config.write_text(json.dumps(data), "utf-8")
    gw = GatewayProcess(tmp_path)
    gw.extra = ["--http", f"127.0.0.2:{gw.port}", "--allow-host", "flag.internal"]
    with gw:
        url = f"http://127.0.0.2:{gw.port}/mcp"
        for host, status in (("gw.internal", 200), ("flag.internal", 200), ("evil.example", 421)):
            answer = httpx2.post(url, json=INIT, headers={**ACCEPT, "Host": host}, timeout=30)
            assert answer.status_code == status, (host, answer.text)

    for bad, named in (
        (["http://gw.example/"], r"allowHosts\[0\]: 'http://gw.example/' is not a host name"),
        ("gw.example", "allowHosts: must be a list of strings"),
    ):
        data["toolsurface"] = {"allowHosts": bad}
        config.write_text(json.dumps(data), "utf-8")
        with pytest.raises(GatewayConfigError, match=named):
            read_allowed_hosts(config)
    # A server's own section has no Host of its own: allowHosts there is an unknown setting.
    data["toolsurface"] = {}
    data["mcpServers"]["ops"]["toolsurface"] = {"allowHosts": ["x"]}
    config.write_text(json.dumps(data), "utf-8")
    from toolsurface.gateway.config import read_config

    with pytest.raises(GatewayConfigError, match=r"mcpServers\.ops\.toolsurface\.allowHosts"):
        read_config(config)
