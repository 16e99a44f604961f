"""Native delivery: held-back tools loaded through the provider's own deferral.

With ``delivery="append"`` (the default, every provider) a load appends the tool to the next
request's tool list. Two providers can load a tool without touching the list, so that the
cached prefix (tools, system prompt, conversation) survives every load:

- **Anthropic Messages** (``provider="anthropic"``): every admitted held-back tool is in the
  ``tools`` array from the start with ``defer_loading: true``, in name order after the base,
  so the array is the same bytes on every request of the run; ToolSearch's ``tool_result``
  carries one ``tool_reference`` block per loaded tool (:func:`anthropic_content`), which
  makes its definition visible from there on. ToolSearch itself is never deferred.
- **OpenAI Responses** (``provider="openai-responses"``): the client ``tool_search`` tool
  takes ToolSearch's place (:func:`responses_search_tool`), and every admitted held-back
  tool is in the array with ``defer_loading: true`` inside a ``namespace`` of its group, of
  which the model reads only the name and description until a search loads a function
  (loose deferred functions would show every name and description: measured in
  docs/tools.md). The model's ``tool_search_call`` is answered with a
  ``tool_search_output`` item carrying the loaded definitions (:func:`responses_output`).

Either way a compaction drops the references with the history, so it unloads what was
loaded (the model searches again); and a blind call runs without being loaded (only a
reference or a search output makes a definition visible).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from toolsurface.models import Tool
from toolsurface.providers import render_tools
from toolsurface.providers.names import alias_for
from toolsurface.providers.namespaces import MAX_FUNCTIONS, split_namespace
from toolsurface.registry.view import RegistryView
from toolsurface.surface.deferral import Decision, held_members
from toolsurface.surface.search import ToolSearchResult
from toolsurface.surface.state import LoadedEntry, loaded_tools

__all__ = [
    "NATIVE_PROVIDERS",
    "Delivery",
    "Space",
    "anthropic_content",
    "check_delivery",
    "discovery_label",
    "namespace_description",
    "native_answer",
    "native_parts",
    "render_native",
    "responses_output",
    "responses_search_tool",
    "tool_search_call",
]

Delivery = Literal["append", "native"]
#: A held-back group sent as a Responses namespace: its name, description and members.
Space = tuple[str, str, tuple[str, ...]]
#: The providers with a deferral of their own, and what it is called there.
NATIVE_PROVIDERS = {
    "anthropic": "defer_loading and tool_reference",
    "openai-responses": "the client tool_search tool and tool_search_output",
}
#: The name the catalogue gives the discovery tool under Responses' native delivery.
RESPONSES_SEARCH_LABEL = "the tool_search tool"
_NAMESPACE_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")


def check_delivery(delivery: str, provider: str | None) -> Delivery:
    """``delivery`` after checking that the run's provider can take it."""
    if delivery == "append":
        return "append"
    if delivery != "native":
        raise ValueError(f"delivery must be 'append' or 'native', got {delivery!r}")
    if provider not in NATIVE_PROVIDERS:
        known = ", ".join(f"{p} ({how})" for p, how in NATIVE_PROVIDERS.items())
        which = "no provider was given" if provider is None else f"{provider!r} has none"
        raise ValueError(
            f"delivery='native' needs a provider with its own deferral, and {which}: "
            f"native delivery is for {known}; use delivery='append' elsewhere"
        )
    return "native"


def discovery_label(delivery: Delivery, provider: str | None, name: str | None) -> str | None:
    """What the catalogue calls the discovery tool (a name, or a description of it).

    Under Responses' native delivery the model calls the client ``tool_search`` tool, which
    has no name of its own.
    """
    if name and delivery == "native" and provider == "openai-responses":
        return RESPONSES_SEARCH_LABEL
    return name


def responses_search_tool(discovery: Tool) -> dict[str, Any]:
    """The client ``tool_search`` tool of the Responses API, with ToolSearch's own arguments."""
    return {
        "type": "tool_search",
        "execution": "client",
        "description": discovery.description,
        "parameters": discovery.input_schema,
    }


def render_native(
    tools: Sequence[Tool],
    deferred: Sequence[Tool],
    provider: str,
    discovery_tool: str | None,
    spaces: Sequence[Space] = (),
) -> list[dict[str, Any]]:
    """The ``tools`` array of a native-delivery request (copies of the definitions).

    Anthropic: the listed tools, then every deferred one with ``defer_loading: true``.
    Responses: the listed functions, each of ``spaces`` as a namespace of its deferred
    functions, the deferred tools no namespace holds, then the client ``tool_search``.
    """
    held = [{**d, "defer_loading": True} for d in render_tools(deferred, provider, deferred=True)]
    if provider == "anthropic":
        return [*render_tools(tools, provider), *held]
    if provider != "openai-responses":
        raise ValueError(f"native delivery is for anthropic or openai-responses, not {provider!r}")
    search = [t for t in tools if t.name == discovery_tool]
    functions = render_tools([t for t in tools if t.name != discovery_tool], provider)
    by_name = dict(zip((t.name for t in deferred), held))
    out = [*functions]
    for group, about, members in spaces:
        inside = [by_name.pop(n) for n in members if n in by_name]
        out.append({"type": "namespace", "name": group, "description": about, "tools": inside})
    out.extend(by_name.values())
    return [*out, *(responses_search_tool(t) for t in search)]


def native_parts(
    delivery: Delivery,
    d: Decision,
    names: Sequence[str],
    entries: Sequence[LoadedEntry],
    view: RegistryView,
    namespace_size: int | None = MAX_FUNCTIONS,
) -> tuple[tuple[Tool, ...], tuple[str, ...], tuple[Space, ...]]:
    """The held-back tools to send deferred, the loads the model sees, and the namespaces.

    Native only (append delivery has none of them). A namespace is a held-back group whose
    name the Responses API takes, with its description (or a line saying what it is); a
    group of more functions than OpenAI advises is split into namespaces of related tools
    (:func:`toolsurface.providers.namespaces.split_namespace`) of at most
    ``namespace_size`` (``None``: one namespace a group).
    """
    if delivery == "append":
        return (), (), ()
    listed = set(names)
    held = sorted(n for n in held_members(d) if n in d.admitted_set and n not in listed)
    loaded = dict.fromkeys(n for n, _ in loaded_tools(entries, d, view) if n not in listed)
    spaces = []
    for group in sorted(d.held):
        members = tuple(n for n in d.members.get(group, ()) if n not in listed)
        if members and _namespace_name(group):
            about = namespace_description(view, group)
            spaces += split_namespace(group, about, members, namespace_size)
    return tuple(view.get(n) for n in held), tuple(loaded), tuple(spaces)


def namespace_description(view: RegistryView, group: str) -> str:
    """The description of ``group``'s Responses namespace: its own, or a line saying what it is.

    The array's namespace and a search output's use this one text, so a loaded function
    comes back in the very namespace that deferred it.
    """
    return view.group(group).description or f"Tools of the {group} group."


def anthropic_content(text: str, loaded: Sequence[str]) -> list[dict[str, Any]]:
    """ToolSearch's ``tool_result`` content: its text, then a reference to each loaded tool."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}]
    blocks += [{"type": "tool_reference", "tool_name": name} for name in loaded]
    return blocks


def responses_output(
    call_id: str,
    loaded: Sequence[Tool],
    space_of: Callable[[str], tuple[str, str] | None],
) -> dict[str, Any]:
    """The ``tool_search_output`` item answering a ``tool_search_call``: the loaded tools.

    A loaded tool comes inside the namespace that deferred it (``space_of`` gives its name
    and description, as the array has them: the model reads what the namespace is for
    once; the function keeps its own name); a tool no namespace deferred comes as a plain
    function, in the order they were loaded.
    """
    functions = render_tools(loaded, "openai-responses")
    out: list[dict[str, Any]] = []
    spaces: dict[str, dict[str, Any]] = {}
    for tool, function in zip(loaded, functions):
        space = space_of(tool.name)
        if space is None:
            out.append(function)
            continue
        name, about = space
        if name not in spaces:
            spaces[name] = {"type": "namespace", "name": name, "description": about, "tools": []}
            out.append(spaces[name])
        spaces[name]["tools"].append(function)
    item: dict[str, Any] = {
        "type": "tool_search_output",
        "execution": "client",
        "status": "completed",
        "tools": out,
    }
    if call_id:
        item["call_id"] = call_id
    return item


def native_answer(
    result: ToolSearchResult,
    provider: str,
    call_id: str,
    view: RegistryView,
    spaces: Sequence[Space] = (),
) -> ToolSearchResult:
    """``result`` with ``native`` set: what the provider's native delivery sends back.

    Anthropic: the ``tool_result`` content (text and references); Responses: the
    ``tool_search_output`` item, each tool in the one of ``spaces`` (the request's
    namespaces) that defers it. Only the tools the answer loaded are named.
    """
    # Each tool as the array names it: a name the provider refuses goes as its alias there,
    # so a reference or a loaded function must use the alias too, or it names no tool.
    shown = {n: alias_for(n, provider) for n in result.loaded}
    if provider == "anthropic":
        native: Any = anthropic_content(result.text, [shown[n] for n in result.loaded])
    else:
        where = {shown.get(n, n): (name, about) for name, about, members in spaces for n in members}
        tools = [_named(view.get(n), shown[n]) for n in result.loaded]
        native = responses_output(call_id, tools, where.get)
    return dataclasses.replace(result, native=native)


def tool_search_call(item: Any) -> tuple[Any, str] | None:
    """The arguments and call id of a Responses ``tool_search_call`` item, else ``None``.

    The item may be the SDK's model (``ResponseToolSearchCall``) or its dict form.
    """
    if isinstance(item, Mapping):
        if item.get("type") != "tool_search_call":
            return None
        return item.get("arguments"), str(item.get("call_id") or "")
    if getattr(item, "type", None) == "tool_search_call":
        return getattr(item, "arguments", None), str(getattr(item, "call_id", "") or "")
    return None


def _named(tool: Tool, name: str) -> Tool:
    return tool if tool.name == name else tool.model_copy(update={"name": name})


def _namespace_name(group: str) -> bool:
    return _NAMESPACE_NAME.fullmatch(group) is not None
