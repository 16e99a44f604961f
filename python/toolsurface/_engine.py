"""Engine choice at import: native when it loads and matches the package version, else pure.

``TOOLSURFACE_ENGINE=pure`` forces the pure engine; ``TOOLSURFACE_ENGINE=native`` forces the
native one and fails loudly when it is missing or stale, never falling back in silence.
Any other value is refused where an engine is chosen (:func:`engine`, so every registry
built without ``engine=``), naming the variable, not at import: a command line can say so
in one line, and ``import toolsurface`` never fails on the environment.
"""

from __future__ import annotations

import logging
import os
from types import ModuleType
from typing import Literal

from toolsurface._version import __version__
from toolsurface.errors import EngineUnavailableError

__all__ = ["EngineName", "engine", "native_module"]

EngineName = Literal["native", "pure"]
_log = logging.getLogger("toolsurface")


def _refused(forced: str) -> str | None:
    """Why the value of ``TOOLSURFACE_ENGINE`` is refused, or None for a valid one."""
    if forced in ("", "pure", "native"):
        return None
    return f"TOOLSURFACE_ENGINE={forced[:64]!r}: expected 'pure' or 'native' (or unset)"


def _load(forced: str) -> ModuleType | None:
    if forced == "pure":
        return None
    try:
        import toolsurface._native as _native
    except ImportError as exc:
        if forced == "native":
            raise EngineUnavailableError(
                f"TOOLSURFACE_ENGINE=native but the native core does not import: {exc}"
            ) from exc
        _log.info("toolsurface: native core not importable (%s); using the pure engine", exc)
        return None
    version = getattr(_native, "__version__", None)
    if version != __version__:
        message = f"native core version {version!r} differs from the package's {__version__!r}"
        if forced == "native":
            raise EngineUnavailableError(f"TOOLSURFACE_ENGINE=native but the {message}")
        _log.warning("toolsurface: %s; using the pure engine", message)
        return None
    return _native


_FORCED = os.environ.get("TOOLSURFACE_ENGINE", "").strip().lower()
_REFUSED = _refused(_FORCED)
# A refused value loads as unset would: what the package makes at import is the same on
# either engine, and the refusal comes where the engine is chosen.
_NATIVE = _load("" if _REFUSED is not None else _FORCED)


def native_module() -> ModuleType | None:
    """The loaded native module, or ``None`` when the pure engine is live."""
    return _NATIVE


def engine() -> EngineName:
    """Which engine is live in this process: ``"native"`` or ``"pure"``.

    Raises :class:`EngineUnavailableError` naming ``TOOLSURFACE_ENGINE`` when its value is
    neither.
    """
    if _REFUSED is not None:
        raise EngineUnavailableError(_REFUSED)
    return "native" if _NATIVE is not None else "pure"
