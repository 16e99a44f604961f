"""A tool's field texts packed into one ``bytes`` object, as the native engine indexes them.

The layout (the native core's ``packed.rs`` reads and writes the same): the UTF-8 byte
lengths of the search hint, summary, body and parameters texts, each a little-endian
unsigned 32-bit integer, then those four texts' UTF-8 in that order. The name, the first
field, is the tool's own (a tool name is ASCII, so its field text is the name itself) and
is not repeated. One object of about the texts' size instead of a tuple of five strings:
about 290 bytes less a tool, and an index build reads the UTF-8 where it lies.
"""

from __future__ import annotations

import struct

from toolsurface.retrieval.field_texts import FieldTexts, IndexTexts

__all__ = ["IndexDoc", "StoredFields", "pack_fields", "unpack_fields"]

#: A tool's texts as a registry's engine makes them: the five (the pure engine) or packed (the
#: native engine, which reads the packed form in its index build).
StoredFields = FieldTexts | bytes
#: One document of an index build: stored texts, with the learned text where there is one
#: (a sixth string, or a pair with the packed texts).
IndexDoc = IndexTexts | bytes | tuple[bytes, str]

_HEADER = struct.Struct("<4I")


def pack_fields(texts: FieldTexts) -> bytes:
    """``texts`` but the name, packed (texts of ``tool_fields``: no lone surrogate)."""
    parts = [t.encode() for t in texts[1:]]
    return _HEADER.pack(*map(len, parts)) + b"".join(parts)


def unpack_fields(name: str, stored: StoredFields) -> FieldTexts:
    """The five texts of the tool ``name`` from what its engine made (five or packed)."""
    if isinstance(stored, tuple):
        return stored
    lens = _HEADER.unpack_from(stored)
    at = _HEADER.size
    texts = []
    for n in lens:
        texts.append(stored[at : at + n].decode())
        at += n
    return (name, texts[0], texts[1], texts[2], texts[3])
