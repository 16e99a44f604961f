"""The gateway's inputs: the ``mcpServers`` file MCP clients use, and a policy file.

Both are read whole and checked before anything starts, so a typo is an error naming the
server and the field, never a half-started gateway.
"""

from __future__ import annotations

import fnmatch
import json
import math
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from toolsurface.errors import ToolsurfaceError
from toolsurface.groups import GROUP_NAME_PATTERN

__all__ = [
    "GatewayConfigError",
    "Policy",
    "Supervision",
    "Transport",
    "Upstream",
    "check_upstream_names",
    "config_server_names",
    "parse_policy",
    "read_allowed_hosts",
    "read_config",
    "read_policy",
]

#: How an upstream is reached: a child process over stdio, streamable HTTP, or legacy SSE.
Transport = Literal["stdio", "http", "sse"]
#: The ``type`` values clients write, by the transport each one means.
_TYPES: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
_HEADER_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


class GatewayConfigError(ToolsurfaceError, ValueError):
    """A configuration or policy file the gateway cannot use; the message names the place."""


@dataclass(frozen=True)
class Supervision:
    """How the gateway watches an upstream; every timing constant of the gateway lives here.

    A forwarded call waits ``call_timeout`` seconds at most; connecting (start, initialize,
    first listing) ``connect_timeout``; a live link is pinged every ``ping_interval`` and is
    lost if a ping takes over ``ping_timeout``. A lost or failed upstream is retried after
    ``retry_base * 2**attempt`` seconds, capped at ``retry_cap``, each delay spread by up to
    ``retry_jitter`` of itself either way so that upstreams lost together do not retry together.
    """

    call_timeout: float = 60.0
    connect_timeout: float = 30.0
    ping_interval: float = 10.0
    ping_timeout: float = 10.0
    retry_base: float = 0.5
    retry_cap: float = 30.0
    retry_jitter: float = 0.2

    def retry_delay(self, attempt: int, spread: float = 0.0) -> float:
        """The wait before retry ``attempt`` (0 first); ``spread`` in [-1, 1] picks the jitter."""
        delay = min(self.retry_cap, self.retry_base * 2.0 ** min(attempt, 60))
        return max(0.0, delay * (1.0 + self.retry_jitter * spread))


#: The keys of a ``toolsurface`` section (the file's, or one server's), by field.
_SUPERVISION_KEYS = {
    "callTimeout": "call_timeout",
    "connectTimeout": "connect_timeout",
    "pingInterval": "ping_interval",
    "pingTimeout": "ping_timeout",
    "retryBase": "retry_base",
    "retryCap": "retry_cap",
    "retryJitter": "retry_jitter",
}


@dataclass(frozen=True)
class Upstream:
    """One upstream MCP server: a stdio command, or an HTTP endpoint with its headers.

    ``env``, ``headers`` and ``url`` (which may carry a key in its query) are secrets: they
    are left out of ``repr``; :attr:`shown` is what logs and messages print.
    """

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] | None = field(default=None, repr=False)
    cwd: str | None = None
    url: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] | None = field(default=None, repr=False)
    transport: Transport = "stdio"
    supervision: Supervision = field(default_factory=Supervision)

    @property
    def shown(self) -> str:
        """The upstream as logs print it: the command's name, or the URL without secrets."""
        if self.url is None:
            return Path(self.command or "?").name
        parts = urlsplit(self.url)
        host = parts.hostname or "?"
        port = f":{parts.port}" if parts.port else ""
        return f"{parts.scheme}://{host}{port}{parts.path}"

    def secrets(self) -> list[str]:
        """The values that must never be printed: env and header values, the URL's query."""
        out = [v for v in (self.env or {}).values() if len(v) >= 4]
        out += [v for v in (self.headers or {}).values() if len(v) >= 4]
        if self.url is not None:
            parts = urlsplit(self.url)
            out += [p for p in (parts.query, parts.password or "", self.url) if len(p) >= 4]
        return sorted(set(out), key=len, reverse=True)


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
    except RecursionError:
        raise GatewayConfigError(f"{what} {path}: JSON nested too deeply to read") from None


def config_server_names(path: str | Path) -> frozenset[str]:
    """The names of a config file's servers, ``disabled`` ones too (read after ``read_config``)."""
    data = _load(Path(path), "config")
    servers = data.get("mcpServers", data.get("servers")) if isinstance(data, Mapping) else None
    return frozenset(str(n) for n in servers) if isinstance(servers, Mapping) else frozenset()


def check_upstream_names(names: Iterable[str], known: Collection[str], at: str) -> None:
    """Refuse a section or list naming an upstream the config does not have.

    A misspelt ``servers.<name>`` would otherwise apply its deny to nothing, silently.
    """
    for name in names:
        if name not in known:
            raise GatewayConfigError(
                f"{at}: {name!r} is no server of the config (its servers: "
                f"{', '.join(sorted(known))})"
            )


#: Keys of the file's top ``toolsurface`` section that are the gateway's, not timings.
_GATEWAY_KEYS = ("allowHosts",)
#: A name (or ``NAME:PORT``, ``[v6]:PORT``) a ``Host`` header may carry: no space, no path.
_HOST_NAME = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9][A-Za-z0-9.\-]*)(?::[0-9]{1,5})?")


def _supervision(
    spec: Any, base: Supervision, at: str, others: tuple[str, ...] = ()
) -> Supervision:
    """``base`` with a ``toolsurface`` section's timings over it (seconds, positive).

    ``others`` are keys of the section read elsewhere (the top section's ``allowHosts``).
    """
    if spec is None:
        return base
    if not isinstance(spec, Mapping):
        raise GatewayConfigError(f"{at}: must be an object")
    changes: dict[str, float] = {}
    for key, value in spec.items():
        if key in others:
            continue
        if key not in _SUPERVISION_KEYS:
            known = ", ".join(_SUPERVISION_KEYS)
            raise GatewayConfigError(f"{at}.{key}: unknown setting (known: {known})")
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        jitter = key == "retryJitter"
        if not number or not math.isfinite(value) or value < 0 or (value == 0 and not jitter):
            raise GatewayConfigError(f"{at}.{key}: must be a positive number of seconds")
        if jitter and value > 1:
            raise GatewayConfigError(f"{at}.{key}: must be a fraction from 0 to 1")
        changes[_SUPERVISION_KEYS[key]] = float(value)
    made = replace(base, **changes)
    if made.retry_cap < made.retry_base:
        raise GatewayConfigError(f"{at}.retryCap: must not be below retryBase")
    return made


def _string_map(value: Any, at: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise GatewayConfigError(f"{at}: must be an object of strings")
    return dict(value)


def _transport(spec: Mapping[str, Any], at: str) -> Transport:
    kind = spec.get("type", spec.get("transport"))
    has_url = "url" in spec or "serverUrl" in spec
    if kind is None:
        if has_url and "command" in spec:
            raise GatewayConfigError(f"{at}: give either command (stdio) or url (HTTP), not both")
        return "http" if has_url else "stdio"
    if not isinstance(kind, str) or kind not in _TYPES:
        raise GatewayConfigError(f"{at}.type: must be one of {', '.join(_TYPES)}; got {kind!r}")
    return _TYPES[kind]


def _http(
    name: str, spec: Mapping[str, Any], at: str, kind: Transport, sup: Supervision
) -> Upstream:
    url = spec.get("url", spec.get("serverUrl"))
    field_name = "url" if "url" in spec else "serverUrl"
    if not isinstance(url, str) or not url:
        raise GatewayConfigError(f"{at}.url: an HTTP server needs its URL")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise GatewayConfigError(f"{at}.{field_name}: must be an http:// or https:// URL")
    for key in ("command", "args", "env", "cwd"):
        if key in spec:
            raise GatewayConfigError(f"{at}.{key}: is for stdio servers, not an HTTP one")
    headers = _string_map(spec.get("headers"), f"{at}.headers")
    for key, value in (headers or {}).items():
        if not _HEADER_NAME.fullmatch(key):
            raise GatewayConfigError(f"{at}.headers: {key!r} is not a header name")
        if "\r" in value or "\n" in value:
            # The value is a secret: the message names the header only.
            raise GatewayConfigError(f"{at}.headers.{key}: a value must be one line")
    return Upstream(name, url=url, headers=headers or None, transport=kind, supervision=sup)


def _stdio(name: str, spec: Mapping[str, Any], at: str, sup: Supervision) -> Upstream:
    command = spec.get("command")
    if not isinstance(command, str) or not command:
        raise GatewayConfigError(f"{at}.command: must be a command to run")
    for key in ("url", "serverUrl", "headers"):
        if key in spec:
            raise GatewayConfigError(f"{at}.{key}: is for HTTP servers, not a stdio one")
    env = _string_map(spec.get("env"), f"{at}.env")
    cwd = spec.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise GatewayConfigError(f"{at}.cwd: must be a path")
    args = _strings(spec.get("args", []), f"{at}.args")
    return Upstream(name, command, args, env or None, cwd, supervision=sup)


def _separable(name: str, names: list[str], at: str) -> None:
    """Refuse a server key that would make ``KEY__TOOL`` names ambiguous.

    The gateway names a tool ``KEY__TOOL`` and finds its server at the first ``__``. A key
    with ``__`` in it would route its calls to another server, and ``a`` with tool ``b__c``
    and ``a__b`` with tool ``c`` would both be ``a__b__c``; a key ending in ``_`` makes
    ``a_`` with tool ``b`` and ``a`` with tool ``_b`` both ``a___b``. Without either, the
    first ``__`` of every name is right after its key, so no two servers' names meet.
    Refused rather than escaped: an escaped name would not be the key the user wrote.
    """
    if "__" in name:
        head = name.split("__", 1)[0]
        clash = f"; it would collide with server {head!r}" if head in names else ""
        raise GatewayConfigError(
            f"{at}: a server name must not contain '__' (the gateway names tools "
            f"SERVER__TOOL){clash}: rename it, e.g. {name.replace('__', '_-')!r}"
        )
    if name.endswith("_"):
        head = name.rstrip("_")
        clash = f"; it would collide with server {head!r}" if head in names else ""
        raise GatewayConfigError(
            f"{at}: a server name must not end with '_' (the gateway names tools "
            f"SERVER__TOOL, so {name}__x and {head}__{'_' * (len(name) - len(head))}x "
            f"would meet){clash}"
        )


def read_config(path: str | Path) -> list[Upstream]:
    """The upstreams of an ``mcpServers`` file, in the file's order (``disabled`` ones left out).

    A server is stdio (``command``, ``args``, ``env``, ``cwd``) or HTTP (``url``, ``headers``;
    ``type`` ``http``/``streamable-http`` or ``sse``). An optional ``toolsurface`` object, at
    the top or in a server, sets the :class:`Supervision` timings in seconds (``callTimeout``,
    ``connectTimeout``, ``pingInterval``, ``pingTimeout``, ``retryBase``, ``retryCap``,
    ``retryJitter``). Other keys of a server, which clients write for themselves, are ignored.
    """
    where = Path(path)
    data = _load(where, "config")
    servers = None
    if isinstance(data, Mapping):  # VS Code's .vscode/mcp.json names the object "servers"
        servers = data.get("mcpServers", data.get("servers"))
    if not isinstance(servers, Mapping) or not servers:
        raise GatewayConfigError(f"config {where}: expected an object with 'mcpServers'")
    top = data.get("toolsurface")
    base = _supervision(top, Supervision(), f"config {where}: toolsurface", _GATEWAY_KEYS)
    out = []
    for name, spec in servers.items():
        at = f"config {where}: mcpServers.{name}"
        if not GROUP_NAME_PATTERN.fullmatch(str(name)):
            raise GatewayConfigError(f"{at}: a server name is 1 to 64 of A-Z a-z 0-9 _ - .")
        _separable(str(name), [str(k) for k in servers], at)
        if not isinstance(spec, Mapping):
            raise GatewayConfigError(f"{at}: must be an object")
        disabled = spec.get("disabled", False)
        if not isinstance(disabled, bool):
            raise GatewayConfigError(f"{at}.disabled: must be true or false")
        sup = _supervision(spec.get("toolsurface"), base, f"{at}.toolsurface")
        kind = _transport(spec, at)
        made = _stdio(str(name), spec, at, sup) if kind == "stdio" else None
        if made is None:
            made = _http(str(name), spec, at, kind, sup)
        if not disabled:
            out.append(made)
    if not out:
        raise GatewayConfigError(f"config {where}: every server is disabled")
    return out


def read_allowed_hosts(path: str | Path) -> tuple[str, ...]:
    """The ``Host`` names the HTTP gateway also answers, from the config file's top section.

    ``{"toolsurface": {"allowHosts": ["gw.example.com", "proxy.example:443"]}}`` is the
    file's form of ``--allow-host`` (the two are joined). Only the top section holds it: a
    server's own section has no Host of its own, so ``allowHosts`` there is refused.
    """
    where = Path(path)
    data = _load(where, "config")
    top = data.get("toolsurface") if isinstance(data, Mapping) else None
    if not isinstance(top, Mapping) or "allowHosts" not in top:
        return ()
    at = f"config {where}: toolsurface.allowHosts"
    names = _strings(top["allowHosts"], at)
    for i, name in enumerate(names):
        if not _HOST_NAME.fullmatch(name):
            raise GatewayConfigError(
                f"{at}[{i}]: {name!r} is not a host name (NAME or NAME:PORT, no scheme or path)"
            )
    return names


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

    def closes(self, upstream: str) -> bool:
        """Whether the globs alone deny everything of ``upstream``: tools, prompts, URIs.

        Its gateway names all start ``upstream__`` and its own names are anything, so: a
        deny glob ending in ``*`` that matches that prefix (the ``*`` takes any rest), a
        ``deny`` of only ``*`` in its own section, or an ``allow`` none of whose globs can
        start so (the text before a glob's first wildcard leads elsewhere). Not found: a
        set of globs that together deny every name, none of them alone.
        """
        prefix = f"{upstream}__"
        if any(g.endswith("*") and fnmatch.fnmatchcase(prefix, g) for g in self.deny):
            return True
        if self.allow and not any(_may_start(g, prefix) for g in self.allow):
            return True
        _, deny = self.servers.get(upstream, ((), ()))
        return any(g.strip("*") == "" for g in deny)


def _may_start(glob: str, prefix: str) -> bool:
    """Whether ``glob`` may match a name starting with ``prefix``: its literal start allows it."""
    literal = re.split(r"[*?\[]", glob, maxsplit=1)[0]
    return literal.startswith(prefix) or prefix.startswith(literal)


def read_policy(path: str | Path | None) -> Policy:
    """A policy file (``{"allow": [...], "deny": [...], "servers": {NAME: {...}}}``)."""
    if path is None:
        return Policy()
    where = Path(path)
    return parse_policy(_load(where, "policy"), f"policy {where}")


def parse_policy(data: Any, at: str, extra: tuple[str, ...] = ()) -> Policy:
    """A policy object (a policy file's, or a client's in a tokens file); errors name ``at``.

    ``extra`` are other keys the object may hold, read by the caller.
    """
    if not isinstance(data, Mapping):
        raise GatewayConfigError(f"{at}: expected an object")
    unknown = set(data) - {"allow", "deny", "servers", *extra}
    if unknown:
        raise GatewayConfigError(f"{at}: unknown field {sorted(unknown)[0]!r}")
    servers: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for name, spec in (data.get("servers") or {}).items():
        where = f"{at}: servers.{name}"
        if not isinstance(spec, Mapping) or set(spec) - {"allow", "deny"}:
            raise GatewayConfigError(f"{where}: must be an object of allow and deny")
        servers[str(name)] = (
            _strings(spec.get("allow", []), f"{where}.allow"),
            _strings(spec.get("deny", []), f"{where}.deny"),
        )
    return Policy(
        _strings(data.get("allow", []), f"{at}: allow"),
        _strings(data.get("deny", []), f"{at}: deny"),
        servers,
    )
