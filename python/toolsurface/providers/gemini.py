"""A tool's JSON Schema as Gemini takes it: its own schema, sent as ``parametersJsonSchema``.

Gemini's ``FunctionDeclaration`` has two fields for a function's parameters: ``parameters``,
an OpenAPI-style subset (upper-case types, no ``$ref``, ``oneOf`` or type lists), and
``parametersJsonSchema`` (google-genai 1.21 and later), JSON Schema as it is, ``$defs``,
``$ref``, ``anyOf``, ``oneOf`` and type lists included. toolsurface sends the second: the
tool's own schema, so nothing the model reads is rewritten away and no converter of ours
has to follow Gemini's subset (a 330-line one did until 0.1.0).

One keyword is left out: a ``$schema`` at the root (pydantic- and zod-built MCP servers send
one: 233 of the 1,635 real tools), which the Gemini API refuses by name on either field
("Unknown name "$schema""). JSON Schema puts ``$schema`` only at a schema resource's root,
so the root is the one place it is looked for. The result is deterministic, the same schema
always giving the same bytes, which keeps the rendered request cache-stable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["REFUSED_KEYWORDS", "gemini_parameters"]

#: Keywords of a root schema the Gemini API refuses, which the rendering leaves out.
REFUSED_KEYWORDS = ("$schema",)


def gemini_parameters(schema: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Gemini's ``parametersJsonSchema`` for a tool's input schema, and a note per change made.

    The schema is the tool's own, less the root keywords the API refuses
    (:data:`REFUSED_KEYWORDS`); the notes name each, for ``toolsurface doctor``.

    >>> params, notes = gemini_parameters({
    ...     "$schema": "http://json-schema.org/draft-07/schema#",
    ...     "type": "object",
    ...     "properties": {"tag": {"type": ["string", "null"]}},
    ... })
    >>> params
    {'type': 'object', 'properties': {'tag': {'type': ['string', 'null']}}}
    >>> notes
    ['$: $schema left out (the Gemini API refuses it)']
    """
    params = {key: value for key, value in schema.items() if key not in REFUSED_KEYWORDS}
    notes = [
        f"$: {key} left out (the Gemini API refuses it)"
        for key in REFUSED_KEYWORDS
        if key in schema
    ]
    return params, notes
