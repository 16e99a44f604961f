"""Per-client bearer tokens from a file, each client with its own policy, reloaded live.

``--clients FILE`` names the clients of an HTTP gateway::

    {"clients": {
      "ci-bot": {"tokenSha256": "9f86d0…", "upstreams": ["ops"],
                 "allow": ["ops__list_*", "ops__get_*"]},
      "alice":  {"token": "a-long-random-token-of-16+-chars", "deny": ["*__delete_*"]}}}

A client is named by its key; its token is given as ``token`` (16 characters or more) or,
so that the file holds no secret, as ``tokenSha256`` (the hex SHA-256 of the token). Its
policy is a policy file's (``allow``, ``deny``, ``servers``; see ``config.Policy``) and
``upstreams``, the upstreams whose tools it may see at all; the gateway's own policy applies
first, so a client's can only narrow it. The file is read at start (an error there stops
the gateway naming the field) and read again, between requests, whenever its modification
time, size or inode changes: a client added, removed or changed takes effect without a
restart. A file that no longer reads keeps the clients read before, with an error in the log.

A client's policy scopes all it meets, not only tools: :func:`admitted` is the one test of
a gateway name (a tool, a prompt, a resource) for the request being served, and
:func:`sees` of an upstream as a whole (its listings, its news on the GET stream, its
labels in ``/metrics``).
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import json
import logging
import os
import re
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolsurface.gateway.config import (
    GatewayConfigError,
    Policy,
    check_upstream_names,
    parse_policy,
)
from toolsurface.groups import GROUP_NAME_PATTERN

__all__ = ["CLIENT", "Client", "ClientTokens", "admitted", "read_clients", "sees"]

_log = logging.getLogger("toolsurface.gateway")

#: The client of the HTTP request being served (``None``: no tokens file, or stdio).
CLIENT: contextvars.ContextVar[Client | None] = contextvars.ContextVar(
    "toolsurface_gateway_client", default=None
)
#: The shortest plain token a file may give.
MIN_TOKEN_CHARS = 16
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CLIENT_KEYS = ("token", "tokenSha256", "upstreams")


@dataclass(frozen=True)
class Client:
    """One client of the gateway: its name, the digest of its token, and its policy."""

    name: str
    digest: bytes
    policy: Policy
    #: The upstreams whose tools it may see (``None``: every upstream).
    upstreams: frozenset[str] | None = None

    def admits(self, name: str, server_name: Callable[[str], tuple[str, str] | None]) -> bool:
        """Whether this client may see and call the gateway tool ``name``."""
        if self.upstreams is not None:
            found = server_name(name)
            if found is None or found[0] not in self.upstreams:
                return False
        return self.policy.admits(name, server_name)

    def sees(self, upstream: str) -> bool:
        """Whether this client may meet anything of upstream ``upstream`` at all."""
        return self.upstreams is None or upstream in self.upstreams


#: Gives the upstream a gateway name belongs to and the upstream's own name for it.
Owner = Callable[[str], tuple[str, str] | None]


def admitted(policy: Policy, name: str, owner: Owner) -> bool:
    """Whether the gateway's ``policy`` and the current request's client both admit ``name``.

    Outside a client's request (stdio, no tokens file) the gateway's policy alone decides.
    """
    if not policy.admits(name, owner):
        return False
    client = CLIENT.get()
    return client is None or client.admits(name, owner)


def sees(upstream: str) -> bool:
    """Whether the current request's client (if any) may meet upstream ``upstream`` at all."""
    client = CLIENT.get()
    return client is None or client.sees(upstream)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


def _client(name: str, spec: Any, at: str, known: Collection[str] | None = None) -> Client:
    if not GROUP_NAME_PATTERN.fullmatch(name):
        raise GatewayConfigError(f"{at}: a client name is 1 to 64 of A-Z a-z 0-9 _ - .")
    policy = parse_policy(spec, at, _CLIENT_KEYS)
    assert isinstance(spec, Mapping)  # parse_policy refused anything else
    token, hashed = spec.get("token"), spec.get("tokenSha256")
    if (token is None) == (hashed is None):
        raise GatewayConfigError(f"{at}: give exactly one of token and tokenSha256")
    if token is not None:
        if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS or token != token.strip():
            # The value is a secret: the message never shows it.
            raise GatewayConfigError(
                f"{at}.token: must be {MIN_TOKEN_CHARS} or more characters, no outer spaces"
            )
        digest = _digest(token)
    else:
        if not isinstance(hashed, str) or not _HEX64.fullmatch(hashed.lower()):
            raise GatewayConfigError(f"{at}.tokenSha256: must be 64 hex digits")
        digest = bytes.fromhex(hashed)
    upstreams = spec.get("upstreams")
    if upstreams is not None and (
        not isinstance(upstreams, list) or not all(isinstance(u, str) for u in upstreams)
    ):
        raise GatewayConfigError(f"{at}.upstreams: must be a list of upstream names")
    if known is not None:
        check_upstream_names(policy.servers, known, f"{at}.servers")
        check_upstream_names(upstreams or (), known, f"{at}.upstreams")
    return Client(name, digest, policy, frozenset(upstreams) if upstreams is not None else None)


def read_clients(path: str | Path, known: Collection[str] | None = None) -> dict[bytes, Client]:
    """The clients of a tokens file, by the digest of their token; errors name the field.

    With ``known`` (the config's server names), a client's ``servers`` section or
    ``upstreams`` entry naming another server is refused: a misspelt one would apply its
    deny to nothing.
    """
    where = Path(path)
    try:
        data = json.loads(where.read_text("utf-8"))
    except FileNotFoundError:
        raise GatewayConfigError(f"clients {where}: no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise GatewayConfigError(f"clients {where}: not JSON ({exc})") from None
    except RecursionError:
        raise GatewayConfigError(f"clients {where}: JSON nested too deeply to read") from None
    clients = data.get("clients") if isinstance(data, Mapping) else None
    if not isinstance(clients, Mapping) or not clients:
        raise GatewayConfigError(f"clients {where}: expected an object with 'clients'")
    out: dict[bytes, Client] = {}
    for name, spec in clients.items():
        at = f"clients {where}: clients.{name}"
        client = _client(str(name), spec, at, known)
        if client.digest in out:
            other = out[client.digest].name
            raise GatewayConfigError(f"{at}: the same token as client {other!r}")
        out[client.digest] = client
    return out


class ClientTokens:
    """The clients of ``path``, read again whenever the file changes (checked every second)."""

    #: Seconds between two looks at the file's stamp.
    CHECK_EVERY = 1.0

    def __init__(self, path: str | Path, known: Collection[str] | None = None) -> None:
        self.path = Path(path)
        self._known = known
        self._stamp = self._stat()
        self._clients = read_clients(self.path, known)
        self._checked = time.monotonic()
        #: Moves on every reload that changed the clients.
        self.generation = 0

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    def refresh(self) -> bool:
        """Read the file again if it changed since the last look; whether the clients changed."""
        now = time.monotonic()
        if now - self._checked < self.CHECK_EVERY:
            return False
        self._checked = now
        stamp = self._stat()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        try:
            clients = read_clients(self.path, self._known)
        except (GatewayConfigError, OSError) as exc:
            _log.error("toolsurface gateway: %s; keeping the clients read before", exc)
            return False
        if clients == self._clients:
            return False
        self._clients = clients
        self.generation += 1
        _log.info(
            "toolsurface gateway: clients %s read again: %d client(s)", self.path, len(clients)
        )
        return True

    def client(self, authorization: str | None) -> Client | None:
        """The client whose bearer token ``authorization`` carries, or ``None``."""
        if not authorization or not authorization.startswith("Bearer "):
            return None
        digest = _digest(authorization.removeprefix("Bearer "))
        for known, client in self._clients.items():  # compared in constant time, each
            if hmac.compare_digest(known, digest):
                return client
        return None

    def named(self, name: str) -> Client | None:
        """The client called ``name`` as the file now reads, or ``None`` (removed since)."""
        for client in self._clients.values():
            if client.name == name:
                return client
        return None

    def names(self) -> list[str]:
        """The clients' names, sorted."""
        return sorted(c.name for c in self._clients.values())
