"""The run's own state: what the model loaded, in discovery order, and when it last used it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["LoadHow", "LoadedEntry"]

LoadHow = Literal["search", "select", "group", "seed", "blind"]


@dataclass
class LoadedEntry:
    """A tool or a whole group the model loaded; a group counts as one entry under the cap."""

    key: str
    kind: Literal["tool", "group"]
    name: str
    how: LoadHow
    order: int
    last_use: int
    called: bool = False
