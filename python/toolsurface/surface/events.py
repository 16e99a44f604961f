"""What the surface reports to the host: one event a thing it did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["Event"]


@dataclass(frozen=True)
class Event:
    """Something the surface did, for the host's callback and for ``logging``."""

    kind: str
    data: dict[str, Any]
