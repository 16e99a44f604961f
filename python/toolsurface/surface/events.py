"""What the surface reports to the host: one event a thing it did."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Event", "report"]

_log = logging.getLogger("toolsurface.surface")


@dataclass(frozen=True)
class Event:
    """Something the surface did, for the host's callback and for ``logging``."""

    kind: str
    data: dict[str, Any]


def report(on_event: Callable[[Event], None] | None, kind: str, data: dict[str, Any]) -> None:
    """Log an event and hand it to the host's callback; a failing callback is only logged."""
    if _log.isEnabledFor(logging.INFO):  # a large event is serialised only when logged
        _log.info("%s %s", kind, json.dumps(data, ensure_ascii=False, sort_keys=True))
    if on_event is not None:
        try:
            on_event(Event(kind, data))
        except Exception:
            _log.exception("toolsurface: the host's event callback failed on %s", kind)
