"""The gateway's inputs: the ``mcpServers`` file MCP clients use, and a policy file.

Both are read whole and checked before anything starts, so a typo is an error naming the
server and the field, never a half-started gateway.
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolsurface.errors import ToolsurfaceError
from toolsurface.groups import GROUP_NAME_PATTERN

__all__ = ["GatewayConfigError", "Policy", "Upstream", "read_config", "read_policy"]


class GatewayConfigError(ToolsurfaceError, ValueError):
    """A configuration or policy file the gateway cannot use; the message names the place."""


@dataclass(frozen=True)
class Upstream:
    """One upstream MCP server: a stdio command (HTTP upstreams are not served yet)."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = None
    cwd: str | None = None


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise GatewayConfigError(f"{where}: must be a list of strings")
    return tuple(value)


def _load(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise GatewayConfigError(f"{what} {path}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GatewayConfigError(f"{what} {path}: not JSON ({exc})") from None


def read_config(path: str | Path) -> list[Upstream]:
    """The upstreams of an ``mcpServers`` file, in the file's order."""
    where = Path(path)
    data = _load(where, "config")
    servers = data.get("mcpServers") if isinstance(data, Mapping) else None
    if not isinstance(servers, Mapping) or not servers:
        raise GatewayConfigError(f"config {where}: expected an object with 'mcpServers'")
    out = []
    for name, spec in servers.items():
        at = f"config {where}: mcpServers.{name}"
        if not GROUP_NAME_PATTERN.fullmatch(str(name)):
            raise GatewayConfigError(f"{at}: a server name is 1 to 64 of A-Z a-z 0-9 _ - .")
        if not isinstance(spec, Mapping):
            raise GatewayConfigError(f"{at}: must be an object")
        if "url" in spec:
            raise GatewayConfigError(f"{at}: streamable-HTTP upstreams (url) are not served yet")
        command = spec.get("command")
        if not isinstance(command, str) or not command:
            raise GatewayConfigError(f"{at}.command: must be a command to run")
        env = spec.get("env")
        if env is not None and not (
            isinstance(env, Mapping) and all(isinstance(v, str) for v in env.values())
        ):
            raise GatewayConfigError(f"{at}.env: must be an object of strings")
        cwd = spec.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise GatewayConfigError(f"{at}.cwd: must be a path")
        args = _strings(spec.get("args", []), f"{at}.args")
        out.append(Upstream(str(name), command, args, dict(env) if env else None, cwd))
    return out


@dataclass(frozen=True)
class Policy:
    """Allow and deny globs, for every upstream and per upstream; deny wins.

    A glob matches the gateway's name of a tool (``server__tool``) or, under a server's own
    section, the server's name of it. With no ``allow`` every tool is allowed.
    """

    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    servers: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    def admits(self, name: str, server_name: Callable[[str], tuple[str, str] | None]) -> bool:
        """Whether the tool ``name`` may be called; ``server_name`` gives (server, its name)."""
        if any(fnmatch.fnmatchcase(name, g) for g in self.deny):
            return False
        if self.allow and not any(fnmatch.fnmatchcase(name, g) for g in self.allow):
            return False
        found = server_name(name)
        if found is None or found[0] not in self.servers:
            return True
        allow, deny = self.servers[found[0]]
        local = found[1]
        if any(fnmatch.fnmatchcase(local, g) for g in deny):
            return False
        return not allow or any(fnmatch.fnmatchcase(local, g) for g in allow)


def read_policy(path: str | Path | None) -> Policy:
    """A policy file (``{"allow": [...], "deny": [...], "servers": {NAME: {...}}}``)."""
    if path is None:
        return Policy()
    where = Path(path)
    data = _load(where, "policy")
    if not isinstance(data, Mapping):
        raise GatewayConfigError(f"policy {where}: expected an object")
    unknown = set(data) - {"allow", "deny", "servers"}
    if unknown:
        raise GatewayConfigError(f"policy {where}: unknown field {sorted(unknown)[0]!r}")
    servers: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for name, spec in (data.get("servers") or {}).items():
        at = f"policy {where}: servers.{name}"
        if not isinstance(spec, Mapping) or set(spec) - {"allow", "deny"}:
            raise GatewayConfigError(f"{at}: must be an object of allow and deny")
        servers[str(name)] = (
            _strings(spec.get("allow", []), f"{at}.allow"),
            _strings(spec.get("deny", []), f"{at}.deny"),
        )
    return Policy(
        _strings(data.get("allow", []), f"policy {where}: allow"),
        _strings(data.get("deny", []), f"policy {where}: deny"),
        servers,
    )
