"""Provider-safe aliases: a name a provider refuses, sent as a stable one it takes.

MCP allows tool names that some providers refuse (``docs.search``, 100 characters). The
rendered request carries an alias instead, the same in every run and process (the name's
allowed characters, cut, and a digest of the whole name), and the model's calls and
selections of the alias are mapped back to the real name: the host never sees one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping

from toolsurface.providers.formats import PROVIDERS, provider_spec

__all__ = ["DIGEST_CHARS", "alias_for", "alias_map"]

#: Hex characters of the digest that ends an alias (so two long names never share one).
DIGEST_CHARS = 8
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
_MAX_CHARS = {"openai": 64, "openai-responses": 64, "anthropic": 128, "gemini": 64}


def alias_for(name: str, provider: str) -> str:
    """The name ``provider`` is sent for ``name``: itself when the provider takes it.

    >>> alias_for("github__create_issue", "openai")
    'github__create_issue'
    >>> alias_for("docs.search", "openai")
    'docs_search_a7e557a3'
    """
    spec = provider_spec(provider)
    if spec.name_pattern.fullmatch(name):
        return name
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:DIGEST_CHARS]
    head = _UNSAFE.sub("_", name)[: _MAX_CHARS[spec.name] - DIGEST_CHARS - 2]
    alias = f"{head}_{digest}"
    if not spec.name_pattern.fullmatch(alias):  # a first character the provider refuses
        alias = f"t_{alias}"[: _MAX_CHARS[spec.name]]
    return alias


def alias_map(names: Iterable[str]) -> Mapping[str, str]:
    """Every provider's alias of each of ``names`` that needs one, mapped to the name."""
    out: dict[str, str] = {}
    for name in names:
        for provider in PROVIDERS:
            alias = alias_for(name, provider)
            if alias != name:
                out.setdefault(alias, name)
    return out
