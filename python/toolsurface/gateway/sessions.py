"""One surface per client session, over the gateway's one registry; the store is the truth.

A process holds at most ``capacity`` surfaces (least recently used dropped first); each is a
cache of the session's stored snapshot. Before a session is used its stored snapshot is
read, and when it is not the text this process last read or wrote (another process changed
the session, or this process never saw it) the surface is rebuilt from it, so a session may
move between processes from one request to the next. After use the snapshot is written
back if more than its use clock changed (the surface's ``state_key`` tells, without taking
a snapshot, when nothing did since the last comparison). A store that can tell at once that
the snapshot is the one last read (:class:`~toolsurface.gateway.store.Peekable`) is asked
so on the event loop; any other read, and every write, runs in a worker thread. A snapshot
that does not restore (tampered, sealed under another key, another session's) is refused
with the reason in the log, and the session starts fresh. Requests of one session are
served one at a time within a process; across processes the last write wins.
"""

from __future__ import annotations

import contextvars
import json
import logging
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.to_thread

from toolsurface.gateway.store import Peekable, SessionStore
from toolsurface.surface.snapshot import SnapshotError, SurfaceSnapshot
from toolsurface.surface.surface import ToolSurface

__all__ = ["CURRENT", "Sessions", "UnknownSessionError", "new_session_id"]

_log = logging.getLogger("toolsurface.gateway")

#: The session the current request belongs to, and whether its snapshot was read for it.
CURRENT: contextvars.ContextVar[tuple[str, bool] | None] = contextvars.ContextVar(
    "toolsurface_gateway_session", default=None
)


class UnknownSessionError(LookupError):
    """A session id this gateway never issued, or one whose snapshot expired or was deleted."""


def new_session_id() -> str:
    """A fresh session id: 32 random bytes, URL-safe (visible ASCII, as MCP requires)."""
    return secrets.token_urlsafe(32)


@dataclass
class _Held:
    """A session as this process holds it: its surface and the snapshot text it came from."""

    surface: ToolSurface | None = None
    text: str | None = None
    #: ``_material(text)``: what a resume from ``text`` restores beyond the use clock.
    key: dict[str, Any] | None = None
    #: The surface's ``state_key()`` when its snapshot last matched ``key`` (None: unknown).
    state: Hashable | None = None
    lock: anyio.Lock = field(default_factory=anyio.Lock)


#: What a snapshot says beyond what a plain call moves: the use clock, each loaded row's
#: last use, and the seal over them.
_CLOCKS: Any = {"clock": True, "seal": True, "loaded": {"__all__": {"last_use"}}}


def _material(text: str) -> dict[str, Any]:
    """A stored snapshot's data without its use clock, seal and per-row last use."""
    data: dict[str, Any] = json.loads(text)
    data.pop("clock", None)
    data.pop("seal", None)
    for entry in data.get("loaded", []):
        entry.pop("last_use", None)
    return data


def _material_of(snap: SurfaceSnapshot) -> dict[str, Any]:
    """``_material(snap.to_json())`` without the JSON: the same data (plain JSON types)."""
    return snap.model_dump(exclude=_CLOCKS)


class Sessions:
    """The sessions of one gateway process: surfaces made by ``new_surface``, kept in ``store``."""

    def __init__(
        self,
        new_surface: Callable[[str], ToolSurface],
        store: SessionStore,
        *,
        capacity: int = 1024,
    ) -> None:
        if capacity < 1:
            raise ValueError(f"sessions capacity: must be at least 1, got {capacity!r}")
        self.new_surface = new_surface
        self.store = store
        self.capacity = capacity
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._peek = store.peek if isinstance(store, Peekable) else None
        self._followers: list[Callable[[str], Awaitable[None]]] = []

    def __len__(self) -> int:
        return len(self._held)

    def _slot(self, session_id: str) -> _Held:
        """The session's slot, most recently used; the least recently used idle ones go."""
        held = self._held.get(session_id)
        if held is None:
            held = self._held[session_id] = _Held()
        self._held.move_to_end(session_id)
        if len(self._held) > self.capacity:
            for old in [k for k, h in self._held.items() if not h.lock.locked()]:
                if len(self._held) <= self.capacity:
                    break
                del self._held[old]
        return held

    async def _refresh(self, session_id: str, held: _Held, *, create: bool) -> None:
        """Bring the held surface up to the stored snapshot (see the module's docstring)."""
        known, text = self._peek(session_id) if self._peek is not None else (False, None)
        if not known:
            text = await anyio.to_thread.run_sync(self.store.load, session_id)
        if text is None:
            if create:
                if held.surface is None:
                    held.surface = self.new_surface(session_id)
                return
            # Never issued, or expired, evicted or ended (by any process): the store is the
            # truth, and a surface held here only its cache. Kept, it would be served and
            # written back, bringing an ended session back for every process.
            held.surface, held.text, held.key, held.state = None, None, None, None
            raise UnknownSessionError(session_id)
        if held.surface is not None and text == held.text:
            return
        surface = self.new_surface(session_id)
        try:
            dropped = surface.restore(text)
            key: dict[str, Any] | None = _material(text)
        except (SnapshotError, ValueError, TypeError, AttributeError) as exc:
            # Truncated, garbage, tampered, sealed under another key, another session's:
            # the session starts fresh (its fresh snapshot replaces the broken one on the
            # next write), never an error for the client.
            _log.warning(
                "toolsurface gateway: session %s: stored snapshot refused, starting fresh: %s",
                _short(session_id),
                exc,
            )
            held.surface, held.text, held.key, held.state = (
                self.new_surface(session_id),
                None,
                None,
                None,
            )
            return
        if dropped:
            _log.info(
                "toolsurface gateway: session %s resumed without %s",
                _short(session_id),
                dropped,
            )
        held.surface, held.text, held.key, held.state = surface, text, key, None

    async def _save(self, session_id: str, held: _Held) -> None:
        assert held.surface is not None
        state = held.surface.state_key()
        if held.text is not None and state is not None and state == held.state:
            return  # the surface's state is the one last compared with the stored text
        snap = held.surface.snapshot()
        key = _material_of(snap)
        if held.text is not None and key == held.key:
            # Only the use clock (and the seal over it) moved, as on a plain forwarded call:
            # the store keeps the text it has, and this process the surface it holds.
            held.state = state
            return
        text = snap.to_json()
        if text == held.text:
            held.state = state
            return
        await anyio.to_thread.run_sync(self.store.save, session_id, text)
        held.text, held.key, held.state = text, key, state
        for follow in self._followers:
            await follow(session_id)

    async def issue(self) -> str:
        """Open a new session: a fresh surface, stored at once so every process knows it."""
        session_id = new_session_id()
        async with self.use(session_id, create=True):
            pass
        return session_id

    async def check(self, session_id: str) -> None:
        """Read the session for the request about to use it (:class:`UnknownSessionError`)."""
        held = self._slot(session_id)
        try:
            async with held.lock:
                await self._refresh(session_id, held, create=False)
        except UnknownSessionError:
            if held.surface is None:
                self._held.pop(session_id, None)
            raise

    @asynccontextmanager
    async def use(self, session_id: str, *, create: bool = False) -> AsyncIterator[ToolSurface]:
        """The session's surface, alone, up to date with the store; saved if it changed."""
        held = self._slot(session_id)
        async with held.lock:
            current = CURRENT.get()
            fresh = current is not None and current == (session_id, True)
            if held.surface is None or not fresh:
                try:
                    await self._refresh(session_id, held, create=create)
                except UnknownSessionError:
                    self._held.pop(session_id, None)
                    raise
            assert held.surface is not None
            if fresh:
                CURRENT.set((session_id, False))  # a second use in this request reads again
            try:
                yield held.surface
            finally:
                await self._save(session_id, held)

    def follow_writes(self, follow: Callable[[str], Awaitable[None]]) -> None:
        """Have ``follow(session_id)`` awaited after each write of a session's snapshot.

        What is stored beside a session (its client's binding, ``ops.OpsMiddleware``) is
        written again after it, so a store over its cap, which drops the least recently
        written first, never drops that before the session. ``follow`` is awaited by the
        task that wrote, before it releases the session: every write is followed, whatever
        the request (or the stream's news) that made it, and however requests interleave.
        """
        self._followers.append(follow)

    def forget_held(self) -> None:
        """Drop every held surface: each session's next request makes it anew from the store.

        For a change the surfaces cannot see themselves (a client's policy, reloaded).
        """
        self._held.clear()

    async def end(self, session_id: str) -> None:
        """The client ended the session: forget it here and in the store."""
        self._held.pop(session_id, None)
        await anyio.to_thread.run_sync(self.store.delete, session_id)


def _short(session_id: str) -> str:
    """A session id cut short for the log (the whole id is a credential of sorts)."""
    return session_id[:8] + "…" if len(session_id) > 8 else session_id
