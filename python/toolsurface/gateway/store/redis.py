"""A Redis session store, so several gateway processes behind one address share sessions.

Each session's snapshot is one string key, ``toolsurface:session:<sha256 of the id>``,
written whole with ``SET`` (a reader sees the old snapshot or the new one), with the time to
live restarted on every write when one is given. The client times out rather than hangs, so
a Redis that stops answering fails a request, never the gateway.

Whoever else writes to the Redis is not trusted with the gateway's keys: a session key
turned into another type reads as a broken snapshot (the session starts fresh, and the
next write replaces it); an index that is not a sorted set is rebuilt; and the cap only
ever deletes keys under the store's prefix, whatever the index names.
"""

from __future__ import annotations

import logging
import time
from urllib.parse import urlsplit

from toolsurface.gateway.store.base import MAX_STORED, StoreError, digest_of

__all__ = ["KEY_PREFIX", "RedisStore"]

_log = logging.getLogger("toolsurface.gateway")

#: Every key the gateway writes starts with this, so a shared Redis stays tidy.
KEY_PREFIX = "toolsurface:session:"
#: Seconds a connect or a command may take before it is an error.
TIMEOUT = 5.0


def _redacted(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class RedisStore:
    """Snapshots in Redis at ``url`` (``redis://host:port/db``; ``rediss://`` for TLS)."""

    shared = True

    def __init__(
        self,
        url: str,
        *,
        ttl: float | None = None,
        prefix: str = KEY_PREFIX,
        max_sessions: int = MAX_STORED,
    ) -> None:
        try:
            import redis
        except ImportError:
            raise StoreError(
                f"store {_redacted(url)}: the redis package is missing "
                "(pip install 'toolsurface[mcp]')"
            ) from None
        self.url = _redacted(url)
        self.ttl = ttl
        self.prefix = prefix
        self.max_sessions = max_sessions
        #: A sorted set of the session keys by last write time, for the cap (outside the
        #: prefix, so a scan of the session keys never meets it).
        self.index = prefix.rstrip(":") + "-index"
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT, decode_responses=False
            )
        except ValueError as exc:
            raise StoreError(f"store {self.url}: not a Redis URL ({exc})") from None
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._response_error: type[BaseException] = redis.ResponseError

    def key(self, session_id: str) -> str:
        """The Redis key of a session."""
        return self.prefix + digest_of(session_id)

    def ping(self) -> None:
        """Check that the server answers; a clear error naming the URL if not."""
        try:
            self._redis.ping()
        except self._errors as exc:
            raise StoreError(f"store {self.url}: Redis does not answer ({exc})") from None

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``."""
        try:
            value = self._redis.get(self.key(session_id))
        except self._response_error as exc:
            if not _wrong_type(exc):
                raise StoreError(f"store {self.url}: cannot read a session ({exc})") from None
            return ""  # another type put there: a broken snapshot, and the session starts fresh
        except self._errors as exc:
            raise StoreError(f"store {self.url}: cannot read a session ({exc})") from None
        if not isinstance(value, bytes):
            return None
        # Bytes that are not UTF-8 read as U+FFFD: a broken snapshot the gateway refuses
        # (the session starts fresh), never an error of the request.
        return value.decode("utf-8", errors="replace")

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot (restarting its time to live)."""
        key = self.key(session_id)
        try:
            try:
                count = self._write(key, snapshot)
            except self._response_error as exc:
                if not _wrong_type(exc):
                    raise
                # The index was replaced by another type: rebuilt from this write on.
                _log.warning(
                    "toolsurface gateway: store %s: index %s rebuilt", self.url, self.index
                )
                self._redis.delete(self.index)
                count = self._write(key, snapshot)
            excess = count - self.max_sessions
            if excess > 0:  # the least recently written go (expired ones are gone already)
                old = self._redis.zrange(self.index, 0, excess - 1)
                if old:
                    # Only keys of this store are deleted: a name someone slipped into the
                    # index is dropped from it, never deleted.
                    mine = self.prefix.encode("utf-8")
                    ours = [k for k in old if isinstance(k, bytes) and k.startswith(mine)]
                    pipe = self._redis.pipeline(transaction=True)
                    if ours:
                        pipe.delete(*ours)
                    pipe.zrem(self.index, *old)
                    pipe.execute()
        except self._errors as exc:
            raise StoreError(f"store {self.url}: cannot write a session ({exc})") from None

    def _write(self, key: str, snapshot: str) -> int:
        """SET the snapshot (a key of any type is replaced) and index it; the index's size."""
        ex = max(1, round(self.ttl)) if self.ttl is not None else None
        pipe = self._redis.pipeline(transaction=True)
        pipe.set(key, snapshot, ex=ex)
        pipe.zadd(self.index, {key: time.time()})
        pipe.zcard(self.index)
        return int(pipe.execute()[-1])

    def delete(self, session_id: str) -> None:
        """Forget the session."""
        try:
            pipe = self._redis.pipeline(transaction=True)
            pipe.delete(self.key(session_id))
            pipe.zrem(self.index, self.key(session_id))
            pipe.execute()
        except self._errors as exc:
            raise StoreError(f"store {self.url}: cannot delete a session ({exc})") from None

    def close(self) -> None:
        """Close the connection pool."""
        self._redis.close()


def _wrong_type(exc: BaseException) -> bool:
    """Whether Redis refused a command for a key holding another type."""
    return "WRONGTYPE" in str(exc)  # in a pipeline, after "Command # N (...) caused error:"
