"""Which tools a run may call: a policy (names or a predicate) and name collections."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection

__all__ = ["Policy", "admits"]

_log = logging.getLogger("toolsurface.surface")

#: Which tools a run may call: names, a predicate, or ``None`` for every registered tool.
Policy = Collection[str] | Callable[[str], bool] | None


def _names(value: Collection[str], what: str) -> frozenset[str]:
    """A collection of tool names; a lone string is refused, not read as its characters."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Collection):
        raise TypeError(f"{what} must be a collection of tool names, not {type(value).__name__}")
    bad = [n for n in value if not isinstance(n, str)]
    if bad:
        raise TypeError(f"{what} must hold tool names (str), got {type(bad[0]).__name__}")
    return frozenset(value)


def _names_or_none(value: Collection[str] | None, what: str) -> frozenset[str] | None:
    """:func:`_names`, or ``None`` for no allowlist."""
    return None if value is None else _names(value, what)


def _check_policy(policy: Policy) -> Policy:
    """A policy is ``None``, a predicate, or a collection of names (never a lone string)."""
    if policy is None or callable(policy):
        return policy
    return _names(policy, "policy")


def admits(policy: Policy, allowlist: Collection[str] | None, name: str) -> bool:
    """Whether ``policy`` and ``allowlist`` admit ``name`` (registered or not: not checked)."""
    if allowlist is not None and name not in allowlist:
        return False
    if policy is None:
        return True
    try:
        if callable(policy):
            return bool(policy(name))
        return name in policy
    except Exception:
        # A policy that cannot be read admits nothing: fail closed, never open.
        _log.exception("toolsurface: the run's policy failed on %r; not admitted", name)
        return False
