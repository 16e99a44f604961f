"""Tool groups: what a host holds back and loads as one, and how eagerly.

A tool joins a group by its own ``group`` field or by a declared name prefix (the longest
matching prefix wins). Membership is the host's bookkeeping: it never reaches the provider.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import ConfigDict, Field, field_validator
from pydantic.dataclasses import dataclass

from toolsurface._internal.json_check import text_problem

__all__ = ["GROUP_NAME_PATTERN", "MAX_ALIASES", "MAX_ALIAS_CHARS", "LoadMode", "ToolGroup"]

#: ``eager``: never held back for size, gives way only to a provider's count limit;
#: ``auto``: held back when the surface is over budget; ``lazy``: held back whenever the run
#: has a discovery tool, even when everything fits.
LoadMode = Literal["eager", "auto", "lazy"]
#: A group's name: what the catalogue and ToolSearch's ``group`` argument use.
GROUP_NAME_PATTERN = re.compile(r"[A-Za-z0-9_.\-]{1,64}")
#: Rules longer than this are refused at declaration.
MAX_RULES_CHARS = 8_000
#: A group's description is one line of at most this many characters.
MAX_DESCRIPTION_CHARS = 200
#: A group carries at most this many aliases (its name is one more, always).
MAX_ALIASES = 16
#: An alias is one line of at most this many characters.
MAX_ALIAS_CHARS = 64


@dataclass(frozen=True, slots=True, config=ConfigDict(extra="forbid"))
class ToolGroup:
    """A declared group: its name, how tools join it, whether the host writes it, load mode.

    ``rules`` go to the model with the group's tools; ``description`` is the one line the
    catalogue and ToolSearch show for the group; ``aliases`` are other names a request may
    call the service by (a query that mentions the group's name or an alias weights its
    tools up, ``docs/analysis.md`` §8). Membership and aliases never reach the provider.

    A validated, frozen dataclass with slots, not a pydantic model: a host with a server
    per tool declares a group per tool, and a model's per-instance dictionary and set of
    given fields took six times a slotted instance's room.
    """

    name: str
    prefix: str | None = Field(default=None, min_length=1, max_length=128)
    dynamic: bool = False
    load: LoadMode = "auto"
    rules: str | None = Field(default=None, max_length=MAX_RULES_CHARS)
    description: str | None = None
    aliases: tuple[str, ...] = ()

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not GROUP_NAME_PATTERN.fullmatch(value):
            raise ValueError("must be 1 to 64 letters, digits, '_', '-' or '.'")
        return value

    @field_validator("description")
    @classmethod
    def _check_description(cls, value: str | None) -> str | None:
        """One line: runs of whitespace (newlines included) become one space."""
        if value is None:
            return None
        problem = text_problem(value)
        if problem is not None:  # the catalogue sends it: it must be text
            raise ValueError(f"must be text: {problem}")
        line = " ".join(value.split())
        if len(line) > MAX_DESCRIPTION_CHARS:
            raise ValueError(f"must be one line of at most {MAX_DESCRIPTION_CHARS} characters")
        return line or None

    @field_validator("aliases")
    @classmethod
    def _check_aliases(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """One line each (white space folded), distinct, at most ``MAX_ALIASES`` of them."""
        if len(value) > MAX_ALIASES:
            raise ValueError(f"at most {MAX_ALIASES} aliases, got {len(value)}")
        out: list[str] = []
        for alias in value:
            problem = text_problem(alias)
            if problem is not None:  # analysed as text by either engine
                raise ValueError(f"alias {alias[:MAX_ALIAS_CHARS]!r} must be text: {problem}")
            line = " ".join(alias.split())
            if not 0 < len(line) <= MAX_ALIAS_CHARS:
                raise ValueError(
                    f"alias {alias!r} must be one line of 1 to {MAX_ALIAS_CHARS} characters"
                )
            if line not in out:
                out.append(line)
        return tuple(out)

    @field_validator("rules")
    @classmethod
    def _check_rules(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            return None
        return value
