"""Where a request's prompt-cache breakpoints go, per provider, and the stable cache key.

Anthropic caches a prefix up to a ``cache_control`` breakpoint; a deferred tool cannot
carry one (the API refuses the request), so the tools' breakpoint goes on the last tool
the model sees from the start, and the system text's on its block. OpenAI caches
prefixes by itself and routes by ``prompt_cache_key``: one key per catalogue keeps the
requests of every session over it on the same cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["CACHE_KEY_PREFIX", "EPHEMERAL", "cache_key", "mark_last_shown", "system_blocks"]

#: Anthropic's breakpoint: the default five-minute cache.
EPHEMERAL: dict[str, Any] = {"type": "ephemeral"}
#: What every key :func:`cache_key` makes starts with (the rest is 32 hex characters).
CACHE_KEY_PREFIX = "toolsurface-"


def mark_last_shown(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``tools`` with a breakpoint on the last tool not deferred (none if every one is).

    The array is changed in place and returned; the marked tool is a new dict, so a
    definition shared with another array is never marked through this one.
    """
    for i in range(len(tools) - 1, -1, -1):
        if not tools[i].get("defer_loading"):
            tools[i] = {**tools[i], "cache_control": dict(EPHEMERAL)}
            break
    return tools


def system_blocks(text: str, *, cache: bool) -> list[dict[str, Any]]:
    """Anthropic's ``system`` as text blocks: one block, with a breakpoint if ``cache``.

    An empty text is no block at all (the API refuses an empty text block).
    """
    if not text:
        return []
    block: dict[str, Any] = {"type": "text", "text": text}
    if cache:
        block["cache_control"] = dict(EPHEMERAL)
    return [block]


def cache_key(provider: str | None, shown: Sequence[str], held: Iterable[str]) -> str:
    """A ``prompt_cache_key`` the same for every request and session over one catalogue.

    Made from the provider, the tools listed from the start (loads left out, so a load
    keeps the key) and the held-back tools, never from the conversation.
    """
    data = json.dumps([provider, list(shown), sorted(held)], separators=(",", ":"))
    return CACHE_KEY_PREFIX + hashlib.sha256(data.encode("utf-8")).hexdigest()[:32]
