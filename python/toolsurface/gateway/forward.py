"""Every upstream's resources, resource templates, prompts and completions, through the gateway.

Tools go through the surface (ranked, held back, loaded on demand); the rest of an
upstream's MCP is forwarded as it is, under names that say whose it is
(:mod:`toolsurface.gateway.namespace`): a listing asks every live upstream that offers the
capability (at once, each bounded by its call timeout; one that fails is left out with a
log line, never failing the others) and answers their items in one page; a read, a
``prompts/get`` or a completion goes to the upstream its name or URI names, under the
upstream's own name or URI, and the URIs in its answer are named back.

The policy is the tools' policy, over the gateway's names: a prompt is matched as a tool
is (``upstream__prompt``, or the prompt's own name under the upstream's section); a
resource or template by ``upstream__URI`` (its own URI, or template, under the upstream's
section). Over HTTP with a tokens file the request's client narrows it
(:func:`~toolsurface.gateway.clients.admitted`): an upstream its token does not admit is
not even asked for a listing. What is not admitted is never listed, and reading it answers
exactly what an unknown one does. Subscriptions are held per gateway session and forwarded once
per upstream URI; ``notifications/resources/updated`` goes to each session subscribed.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp import MCPError, types
from mcp_types import INVALID_PARAMS
from pydantic import BaseModel

from toolsurface.adapters.mcp import MAX_LIST_PAGES
from toolsurface.gateway.clients import admitted, sees
from toolsurface.gateway.config import Policy
from toolsurface.gateway.namespace import (
    SEPARATOR,
    prompt_name,
    split_prompt,
    split_uri,
    uri_of,
)
from toolsurface.gateway.upstreams import Capability, UpstreamSet

__all__ = ["RESOURCE_NOT_FOUND", "Forwarder", "Subscriptions"]

_log = logging.getLogger("toolsurface.gateway")

#: MCP's error code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002

_R = TypeVar("_R", bound=BaseModel)
#: Awaited with a gateway session id and a gateway URI when that session's resource changed.
Deliver = Callable[[str, str], Awaitable[None]]
#: Told of each request forwarded: the upstream, the MCP method, and whether it answered.
Counted = Callable[[str, str, bool], None]


def _not_found(uri: str) -> MCPError:
    return MCPError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}")


def _unknown_prompt(name: str) -> MCPError:
    return MCPError(INVALID_PARAMS, f"Unknown prompt: {name}")


class Subscriptions:
    """Which gateway sessions follow which upstream resource (upstream, own URI)."""

    def __init__(self) -> None:
        self._by_uri: dict[tuple[str, str], set[str]] = {}

    def add(self, session: str, upstream: str, uri: str) -> bool:
        """Subscribe a session; whether it is the URI's first subscriber."""
        followers = self._by_uri.setdefault((upstream, uri), set())
        first = not followers
        followers.add(session)
        return first

    def remove(self, session: str, upstream: str, uri: str) -> bool:
        """Unsubscribe a session; whether the URI has no subscriber left (and was followed)."""
        followers = self._by_uri.get((upstream, uri))
        if followers is None or session not in followers:
            return False
        followers.discard(session)
        if followers:
            return False
        del self._by_uri[(upstream, uri)]
        return True

    def followers(self, upstream: str, uri: str) -> list[tuple[str, str]]:
        """(session, subscribed own URI) of every session following ``uri`` or a URI above it.

        An update may name a sub-resource of the URI subscribed to (MCP says so).
        """
        found: list[tuple[str, str]] = []
        for (up, followed), sessions in self._by_uri.items():
            if up == upstream and (uri == followed or uri.startswith(followed)):
                found.extend((s, followed) for s in sorted(sessions))
        return found

    def uris(self, upstream: str) -> list[str]:
        """Every own URI of ``upstream`` some session follows."""
        return [uri for (up, uri) in self._by_uri if up == upstream]


class Forwarder:
    """The gateway's handlers for resources, templates, prompts, completions, subscriptions."""

    def __init__(
        self,
        upstreams: Callable[[], UpstreamSet | None],
        policy: Policy,
        *,
        session_of: Callable[[], str],
        on_forward: Counted | None = None,
    ) -> None:
        self._upstreams = upstreams
        self.policy = policy
        self._session_of = session_of
        self._on_forward = on_forward
        self.subscriptions = Subscriptions()
        #: Gateway prompt name to the upstream's own, per upstream, from its last listing.
        self._prompts: dict[str, dict[str, str]] = {}
        #: The connection (client session) of each upstream last seen by upstreams_changed.
        self._connections: dict[str, object] = {}

    # -- policy ---------------------------------------------------------------------------

    def admits_prompt(self, upstream: str, name: str) -> bool:
        """Whether the policy (and the request's client) admit ``upstream``'s prompt ``name``."""
        return admitted(self.policy, prompt_name(upstream, name), lambda _n: (upstream, name))

    def admits_uri(self, upstream: str, uri: str) -> bool:
        """Whether the policy (and the request's client) admit ``upstream``'s URI or template."""
        return admitted(self.policy, f"{upstream}{SEPARATOR}{uri}", lambda _n: (upstream, uri))

    # -- plumbing -------------------------------------------------------------------------

    def _set(self) -> UpstreamSet:
        upstreams = self._upstreams()
        if upstreams is None:
            raise MCPError(INVALID_PARAMS, "the gateway's upstreams are not connected yet")
        return upstreams

    async def _gather(
        self, capability: Capability, each: Callable[[UpstreamSet, str], Awaitable[list[Any]]]
    ) -> list[Any]:
        """``each`` of every live upstream offering ``capability``, in config order."""
        upstreams = self._set()
        names = [name for name in upstreams.offering(capability) if sees(name)]
        found: dict[str, list[Any]] = {}

        async def one(name: str) -> None:
            try:
                found[name] = await each(upstreams, name)
            except Exception as exc:  # one upstream's failure leaves it out, nothing more
                _log.warning(
                    "toolsurface gateway: upstream %r: listing its %s failed: %s",
                    name,
                    capability,
                    upstreams.describe(name, exc),
                )

        async with anyio.create_task_group() as tasks:
            for name in names:
                tasks.start_soon(one, name)
        return [item for name in names for item in found.get(name, [])]

    async def _ask(
        self, upstreams: UpstreamSet, upstream: str, request: BaseModel, result: type[_R]
    ) -> _R:
        """One request forwarded to ``upstream``, counted (``on_forward``) as answered or not."""
        ok = False
        try:
            answer = await upstreams.request(upstream, request, result)
            ok = True
            return answer
        finally:
            if self._on_forward is not None:
                self._on_forward(upstream, str(getattr(request, "method", "?")), ok)

    async def _pages(
        self,
        upstreams: UpstreamSet,
        name: str,
        request: Callable[[types.PaginatedRequestParams | None], BaseModel],
        result: type[_R],
        field: str,
    ) -> list[Any]:
        """Every page of one upstream's listing (a cursor seen twice ends it with an error)."""
        items: list[Any] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_LIST_PAGES):
            params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
            page = await self._ask(upstreams, name, request(params), result)
            items.extend(getattr(page, field))
            cursor = getattr(page, "next_cursor", None)
            if not cursor:
                return items
            if cursor in seen:
                raise ValueError(f"its listing returned cursor {cursor!r} twice")
            seen.add(cursor)
        raise ValueError(f"its listing was still paging after {MAX_LIST_PAGES} pages")

    def _live(self, upstream: str, capability: Capability) -> UpstreamSet | None:
        upstreams = self._set()
        return upstreams if upstream in upstreams.offering(capability) else None

    # -- resources ------------------------------------------------------------------------

    async def list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        """``resources/list``: every admitted resource of every live upstream, URIs prefixed."""

        async def each(upstreams: UpstreamSet, name: str) -> list[types.Resource]:
            items = await self._pages(
                upstreams,
                name,
                lambda p: types.ListResourcesRequest(params=p),
                types.ListResourcesResult,
                "resources",
            )
            return [
                r.model_copy(update={"uri": uri_of(name, r.uri)})
                for r in items
                if self.admits_uri(name, r.uri)
            ]

        return types.ListResourcesResult(resources=await self._gather("resources", each))

    async def list_resource_templates(
        self, ctx: Any, params: Any
    ) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: every admitted template, prefixed like a URI."""

        async def each(upstreams: UpstreamSet, name: str) -> list[types.ResourceTemplate]:
            items = await self._pages(
                upstreams,
                name,
                lambda p: types.ListResourceTemplatesRequest(params=p),
                types.ListResourceTemplatesResult,
                "resource_templates",
            )
            return [
                t.model_copy(update={"uri_template": uri_of(name, t.uri_template)})
                for t in items
                if self.admits_uri(name, t.uri_template)
            ]

        templates = await self._gather("resources", each)
        return types.ListResourceTemplatesResult(resource_templates=templates)

    def _resource(self, uri: str) -> tuple[UpstreamSet, str, str]:
        """The upstream set, upstream and own URI a gateway URI reaches, or not found."""
        parts = split_uri(uri)
        if parts is None:
            raise _not_found(uri)
        upstream, own = parts
        upstreams = self._set()
        if upstream not in upstreams.supervisors or not self.admits_uri(upstream, own):
            raise _not_found(uri)
        if self._live(upstream, "resources") is None:
            raise upstreams.down_error(upstream, f"resource {uri}")
        return upstreams, upstream, own

    async def read_resource(self, ctx: Any, params: Any) -> types.ReadResourceResult:
        """``resources/read``: the upstream's contents, their URIs prefixed."""
        upstreams, upstream, own = self._resource(params.uri)
        request = types.ReadResourceRequest(params=params.model_copy(update={"uri": own}))
        result = await self._ask(upstreams, upstream, request, types.ReadResourceResult)
        contents = [c.model_copy(update={"uri": uri_of(upstream, c.uri)}) for c in result.contents]
        return result.model_copy(update={"contents": contents})

    async def subscribe(self, ctx: Any, params: Any) -> types.EmptyResult:
        """``resources/subscribe``: followed for this session; the upstream asked once per URI."""
        upstreams, upstream, own = self._resource(params.uri)
        if not upstreams.offers(upstream, "subscribe"):
            raise MCPError(INVALID_PARAMS, f"Resource {params.uri} does not support subscribing")
        if self.subscriptions.add(self._session_of(), upstream, own):
            request = types.SubscribeRequest(params=params.model_copy(update={"uri": own}))
            try:
                await self._ask(upstreams, upstream, request, types.EmptyResult)
            except BaseException:
                self.subscriptions.remove(self._session_of(), upstream, own)
                raise
        return types.EmptyResult()

    async def unsubscribe(self, ctx: Any, params: Any) -> types.EmptyResult:
        """``resources/unsubscribe``: the upstream is told once no session follows the URI."""
        parts = split_uri(params.uri)
        if parts is None:
            raise _not_found(params.uri)
        upstream, own = parts
        if self.subscriptions.remove(self._session_of(), upstream, own):
            upstreams = self._live(upstream, "resources")
            if upstreams is not None:
                request = types.UnsubscribeRequest(params=params.model_copy(update={"uri": own}))
                await self._ask(upstreams, upstream, request, types.EmptyResult)
        return types.EmptyResult()

    async def resource_updated(self, upstream: str, uri: str, deliver: Deliver) -> None:
        """An upstream's resource changed: tell every session following it (once each)."""
        if not self.admits_uri(upstream, uri):
            return
        told: set[str] = set()
        for session, _followed in self.subscriptions.followers(upstream, uri):
            if session in told:
                continue
            told.add(session)
            try:
                await deliver(session, uri_of(upstream, uri))
            except Exception as exc:  # a session gone is not the others' problem
                _log.debug("toolsurface gateway: resource update to %s lost: %r", session, exc)

    async def upstreams_changed(self) -> None:
        """An upstream came or went: one connected anew is asked again for what is followed."""
        upstreams = self._upstreams()
        if upstreams is None:
            return
        for name, sup in upstreams.supervisors.items():
            session = sup.session
            if session is not None and self._connections.get(name) is not session:
                self._connections[name] = session
                self._prompts.pop(name, None)
                await self._resubscribe(upstreams, name)

    async def _resubscribe(self, upstreams: UpstreamSet, upstream: str) -> None:
        """Follow again every URI of ``upstream`` its sessions still follow."""
        if not upstreams.offers(upstream, "subscribe"):
            return
        for own in self.subscriptions.uris(upstream):
            request = types.SubscribeRequest(params=types.SubscribeRequestParams(uri=own))
            try:
                await self._ask(upstreams, upstream, request, types.EmptyResult)
            except Exception as exc:
                _log.warning(
                    "toolsurface gateway: upstream %r: subscribing again to %s failed: %s",
                    upstream,
                    own,
                    upstreams.describe(upstream, exc),
                )

    # -- prompts --------------------------------------------------------------------------

    async def list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        """``prompts/list``: every admitted prompt of every live upstream, named per upstream."""

        async def each(upstreams: UpstreamSet, name: str) -> list[types.Prompt]:
            items: list[types.Prompt] = await self._pages(
                upstreams,
                name,
                lambda p: types.ListPromptsRequest(params=p),
                types.ListPromptsResult,
                "prompts",
            )
            self._prompts[name] = {prompt_name(name, p.name): p.name for p in items}
            return [
                p.model_copy(update={"name": prompt_name(name, p.name)})
                for p in items
                if self.admits_prompt(name, p.name)
            ]

        return types.ListPromptsResult(prompts=await self._gather("prompts", each))

    async def _prompt(self, name: str) -> tuple[UpstreamSet, str, str]:
        """The upstream set, upstream and own name a gateway prompt name reaches."""
        parts = split_prompt(name)
        if parts is None:
            raise _unknown_prompt(name)
        upstream, rest = parts
        upstreams = self._set()
        if upstream not in upstreams.supervisors or not sees(upstream):
            raise _unknown_prompt(name)
        own: str | None = rest if prompt_name(upstream, rest) == name else None
        if own is None:  # an altered name: its own name is in a listing
            own = self._prompts.get(upstream, {}).get(name)
        if own is None and self._live(upstream, "prompts") is not None:
            items = await self._pages(
                upstreams,
                upstream,
                lambda p: types.ListPromptsRequest(params=p),
                types.ListPromptsResult,
                "prompts",
            )
            self._prompts[upstream] = {prompt_name(upstream, p.name): p.name for p in items}
            own = self._prompts[upstream].get(name)
        if own is None or not self.admits_prompt(upstream, own):
            raise _unknown_prompt(name)
        if self._live(upstream, "prompts") is None:
            raise upstreams.down_error(upstream, f"prompt {name}")
        return upstreams, upstream, own

    async def get_prompt(self, ctx: Any, params: Any) -> types.GetPromptResult:
        """``prompts/get``: the upstream's prompt, as it answers it."""
        upstreams, upstream, own = await self._prompt(params.name)
        request = types.GetPromptRequest(params=params.model_copy(update={"name": own}))
        return await self._ask(upstreams, upstream, request, types.GetPromptResult)

    # -- completions ----------------------------------------------------------------------

    async def complete(self, ctx: Any, params: Any) -> types.CompleteResult:
        """``completion/complete`` of a prompt's or a template's argument, by its upstream."""
        ref = params.ref
        if isinstance(ref, types.PromptReference):
            upstreams, upstream, own = await self._prompt(ref.name)
            new_ref: BaseModel = ref.model_copy(update={"name": own})
        else:
            upstreams, upstream, own = self._resource(ref.uri)
            new_ref = ref.model_copy(update={"uri": own})
        if not upstreams.offers(upstream, "completions"):
            return types.CompleteResult(completion=types.Completion(values=[]))
        request = types.CompleteRequest(params=params.model_copy(update={"ref": new_ref}))
        return await self._ask(upstreams, upstream, request, types.CompleteResult)
