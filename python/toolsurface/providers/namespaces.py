"""A large server's tools as Responses namespaces of related tools, each under ten functions.

OpenAI advises namespaces of fewer than ten functions; a real server can have 216. The
tools of a group are keyed by the resource their name is about (the first word after a
leading verb: ``create_issue``, ``list_issues`` and ``get_issue`` are about ``issue``),
resources in name order fill namespaces of at most :data:`MAX_FUNCTIONS`, a resource
with more than that filling several. Only the names decide, so the same catalogue gives
the same namespaces in every run and process (the array's bytes, and so the cache, hold).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["MAX_FUNCTIONS", "resource_of", "split_namespace"]

#: The most functions one namespace holds (OpenAI: "fewer than 10").
MAX_FUNCTIONS = 9
#: Words that say what a tool does rather than what it acts on.
_VERBS = frozenset(
    "get list create update delete remove add set search find fetch read write run "
    "execute start stop cancel retry open close merge edit modify move copy upload "
    "download send post put patch query describe show view check enable disable manage "
    "assign unassign archive restore resolve approve reject invite count analyze analyse "
    "explain export import sync trigger rename replace submit take use lookup insert "
    "upsert apply install uninstall scale restart deploy drop mark batch bulk".split()
)
#: Words that qualify a resource rather than name one.
_QUALIFIERS = frozenset(
    "all new my default global custom pending current latest by to of for".split()
)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_NAME_MAX = 64


def resource_of(name: str) -> str:
    """The resource a tool's name is about: its first word after leading verbs, singular.

    The server's prefix (up to the last ``__``) is left out; a name of verbs only is about
    its last verb.
    """
    nouns = _nouns(name)
    if nouns:
        return nouns[0]
    words = _words(name)
    return words[-1] if words else "other"


def _words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name.rpartition("__")[2])]


def _nouns(name: str) -> list[str]:
    """The words of a name that are neither verbs nor qualifiers, singular, in order."""
    return [_singular(w) for w in _words(name) if w not in _VERBS and w not in _QUALIFIERS]


def _singular(word: str) -> str:
    if len(word) <= 3 or word.endswith("ss"):
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "sses")):
        return word[:-2]
    return word[:-1] if word.endswith("s") else word


def _key(name: str, deep: bool) -> str:
    """The resource, or with ``deep`` the resource and the next noun (``jira issue``)."""
    nouns = _nouns(name)
    if not nouns:
        return resource_of(name)
    return " ".join(nouns[:2]) if deep else nouns[0]


def split_namespace(
    group: str, description: str, members: Sequence[str], most: int | None = MAX_FUNCTIONS
) -> list[tuple[str, str, tuple[str, ...]]]:
    """``group``'s members as namespaces of related tools: (name, description, members).

    A group of at most ``most`` (:data:`MAX_FUNCTIONS`; ``None``: no split) is one
    namespace, ``group`` itself. Past that,
    each namespace is named ``GROUP__RESOURCE`` after its first resource (``_2``, ``_3``
    for the further parts of one resource) and described by the group's description and
    the resources it holds; members keep their order within a resource.
    """
    if most is None or len(members) <= most:
        return [(group, description, tuple(members))]
    if most < 1:
        raise ValueError(f"a namespace holds at least one function, not {most}")
    by_resource: dict[str, list[str]] = {}
    for name in members:
        by_resource.setdefault(_key(name, deep=False), []).append(name)
    for resource, tools in list(by_resource.items()):
        if len(tools) > most:
            # A resource past the size (a product's tools: ``jira_...``) is split by the
            # noun after it (``jira issue``, ``jira sprint``).
            del by_resource[resource]
            for name in tools:
                by_resource.setdefault(_key(name, deep=True), []).append(name)
    parts: list[tuple[str, list[str]]] = []  # (resource, members), each at most the max
    for resource in sorted(by_resource):
        tools = by_resource[resource]
        for start in range(0, len(tools), most):
            parts.append((resource, tools[start : start + most]))
    spaces: list[tuple[list[str], list[str]]] = []  # (resources, members)
    for resource, tools in parts:
        last = spaces[-1] if spaces else None
        if last is not None and len(last[1]) + len(tools) <= most:
            if resource not in last[0]:
                last[0].append(resource)
            last[1].extend(tools)
        else:
            spaces.append(([resource], list(tools)))
    out: list[tuple[str, str, tuple[str, ...]]] = []
    used: set[str] = set()
    for resources, tools in spaces:
        name = _space_name(group, resources[0].replace(" ", "_"), used)
        about = f"{description.rstrip('.')}: {', '.join(resources)}."
        out.append((name, about, tuple(tools)))
    return out


def _space_name(group: str, resource: str, used: set[str]) -> str:
    """``GROUP__RESOURCE`` cut to the API's 64 characters, numbered if taken already."""
    base = re.sub(r"[^a-zA-Z0-9_-]", "_", f"{group}__{resource}")[:_NAME_MAX]
    name, n = base, 1
    while name in used:
        n += 1
        tail = f"_{n}"
        name = base[: _NAME_MAX - len(tail)] + tail
    used.add(name)
    return name
