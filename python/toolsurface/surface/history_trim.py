"""Native delivery's unloads applied to the conversation: loads of unloaded tools taken out.

Under native delivery a loaded definition lives in the history (an Anthropic
``tool_reference`` block, or a function in a Responses ``tool_search_output``), so an
unload at a safe point (a turn's end over the cap or the token budget, as append delivery
unloads) only takes effect once the host's messages lose it too. :func:`trim_history`
does that, and nothing else: messages without such a load come back as they were (the
same objects), so a history with nothing to trim keeps every cached byte.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

__all__ = ["trim_history"]


def trim_history(messages: Sequence[Any], keep: Collection[str]) -> list[Any]:
    """``messages`` with every load of a tool outside ``keep`` taken out.

    Anthropic: ``tool_reference`` blocks inside ``tool_result`` content; Responses:
    functions in ``tool_search_output`` items (inside a namespace too, an emptied namespace
    going with them). The rest of each message (the search's text, other blocks, the item
    itself, so every call keeps its output) stays. ``keep`` holds the names as sent.
    """
    return [_trimmed(m, keep) for m in messages]


def _trimmed(message: Any, keep: Collection[str]) -> Any:
    if not isinstance(message, Mapping):
        return message
    if message.get("type") == "tool_search_output":
        tools = message.get("tools")
        if not isinstance(tools, list):
            return message
        kept = _functions_kept(tools, keep)
        return message if kept is None else {**message, "tools": kept}
    content = message.get("content")
    if not isinstance(content, list):
        return message
    blocks = [_result_trimmed(b, keep) for b in content]
    if all(a is b for a, b in zip(blocks, content)):
        return message
    return {**message, "content": blocks}


def _result_trimmed(block: Any, keep: Collection[str]) -> Any:
    """A ``tool_result`` block without references to tools outside ``keep``."""
    if not isinstance(block, Mapping) or block.get("type") != "tool_result":
        return block
    content = block.get("content")
    if not isinstance(content, list):
        return block
    kept = [b for b in content if not _unkept_reference(b, keep)]
    if len(kept) == len(content):
        return block
    return {**block, "content": kept}


def _unkept_reference(block: Any, keep: Collection[str]) -> bool:
    return (
        isinstance(block, Mapping)
        and block.get("type") == "tool_reference"
        and block.get("tool_name") not in keep
    )


def _functions_kept(tools: list[Any], keep: Collection[str]) -> list[Any] | None:
    """The search output's tools without those outside ``keep``; ``None`` if none goes."""
    out: list[Any] = []
    changed = False
    for tool in tools:
        if isinstance(tool, Mapping) and tool.get("type") == "namespace":
            inner = tool.get("tools")
            kept = _functions_kept(inner, keep) if isinstance(inner, list) else None
            if kept is None:
                out.append(tool)
            else:
                changed = True
                if kept:
                    out.append({**tool, "tools": kept})
        elif isinstance(tool, Mapping) and tool.get("name") not in keep:
            changed = True
        else:
            out.append(tool)
    return out if changed else None
