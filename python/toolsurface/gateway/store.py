"""Where the gateway keeps each session's snapshot: a directory, one file a session.

A session's snapshot is written after every change (atomically: a temporary file renamed
over the old one), so a gateway restarted mid-session resumes with the same tool list.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["DirectoryStore"]


class DirectoryStore:
    """Snapshots by session id in ``root`` (made if missing); file names are digests."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def _path(self, session_id: str) -> Path:
        digest = hashlib.sha256(session_id.encode("utf-8")).hexdigest()[:32]
        return self.root / f"session-{digest}.json"

    def load(self, session_id: str) -> str | None:
        """The session's last snapshot, or ``None``."""
        try:
            return self._path(session_id).read_text("utf-8")
        except FileNotFoundError:
            return None

    def save(self, session_id: str, snapshot: str) -> None:
        """Replace the session's snapshot, atomically."""
        fd, tmp = tempfile.mkstemp(dir=self.root, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(snapshot)
        os.replace(tmp, self._path(session_id))
