"""Group membership: the map of tool to group follows every change to the tools and groups."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolsurface import Tool, ToolRegistry
from toolsurface.groups import ToolGroup
from toolsurface.retrieval.membership import LOOKUPS_BEFORE_MAP, Prefixes


def _both_ways(reg: ToolRegistry, name: str) -> str | None:
    """``group_of`` answered before the generation's map is made, then from the map.

    The first lookups of a generation go by the declared prefixes; the map is made after
    ``LOOKUPS_BEFORE_MAP`` of them, and ``group_map`` makes it at once. Both must agree.
    """
    fresh = reg.group_of(name)
    mapped = reg.group_map().get(name)
    for _ in range(LOOKUPS_BEFORE_MAP + 1):
        assert reg.group_of(name) == mapped
    assert fresh == mapped, (name, fresh, mapped)
    return mapped


def _expect(reg: ToolRegistry, expected: dict[str, str | None]) -> None:
    for name, group in expected.items():
        assert _both_ways(reg, name) == group, name
    members: dict[str, list[str]] = {}
    for name, group in sorted(expected.items()):
        if group is not None and name in reg:
            members.setdefault(group, []).append(name)
    for group, names in members.items():
        assert reg.group_members(group) == tuple(names), group
    assert dict(reg.group_map()) == {n: g for n, g in expected.items() if g and n in reg}


@pytest.fixture
def reg(engine_name: str) -> ToolRegistry:
    return ToolRegistry(
        [
            Tool(name="gh__list_pull_requests", description="List pull requests."),
            Tool(name="gh__create_issue", description="Create an issue."),
            Tool(name="gh__deploy", description="Deploy a branch.", group="deploy"),
            Tool(name="shell", description="Run a command."),
        ],
        engine=engine_name,  # type: ignore[arg-type]
    )


def test_the_map_follows_declare_undeclare_register_unregister(reg: ToolRegistry) -> None:
    _expect(
        reg,
        {
            "gh__list_pull_requests": None,
            "gh__create_issue": None,
            "gh__deploy": "deploy",
            "shell": None,
        },
    )
    assert reg.group_members("gh") == ()

    reg.declare_group("gh", prefix="gh__")
    # A tool's own ``group`` field wins over any prefix.
    _expect(
        reg,
        {
            "gh__list_pull_requests": "gh",
            "gh__create_issue": "gh",
            "gh__deploy": "deploy",
            "shell": None,
        },
    )

    # The longest matching prefix wins, whichever was declared first.
    reg.declare_group("gh-prs", prefix="gh__list_pull")
    reg.declare_group("g", prefix="g")
    _expect(
        reg,
        {
            "gh__list_pull_requests": "gh-prs",
            "gh__create_issue": "gh",
            "gh__deploy": "deploy",
            "shell": None,
        },
    )

    # Of two groups with one prefix, the first declared wins, as it always has.
    reg.declare_group("gh-too", prefix="gh__")
    assert _both_ways(reg, "gh__create_issue") == "gh"

    reg.register(Tool(name="gh__merge", description="Merge a pull request."))
    reg.register(Tool(name="shell_2", description="Run another command.", group="ops"))
    _expect(
        reg,
        {
            "gh__list_pull_requests": "gh-prs",
            "gh__create_issue": "gh",
            "gh__deploy": "deploy",
            "gh__merge": "gh",
            "shell": None,
            "shell_2": "ops",
        },
    )
    assert reg.group("ops").name == "ops"  # implied by a tool's own field

    # Replacing a tool moves it: its own field now names a group, then no longer does.
    reg.register(Tool(name="gh__merge", description="Merge.", group="ops"), replace=True)
    assert _both_ways(reg, "gh__merge") == "ops"
    assert reg.group_members("ops") == ("gh__merge", "shell_2")
    reg.register(Tool(name="gh__merge", description="Merge."), replace=True)
    assert _both_ways(reg, "gh__merge") == "gh"

    reg.undeclare_group("gh-prs")
    assert _both_ways(reg, "gh__list_pull_requests") == "gh"
    reg.undeclare_group("gh")
    # "gh-too" has the same prefix: it takes over; "g" is shorter and still there.
    assert _both_ways(reg, "gh__create_issue") == "gh-too"
    reg.undeclare_group("gh-too")
    assert _both_ways(reg, "gh__create_issue") == "g"
    assert _both_ways(reg, "shell") is None  # "g" is not a prefix of "shell"

    reg.unregister("gh__merge")
    reg.unregister_many(["shell_2"])
    assert _both_ways(reg, "gh__merge") is None
    assert _both_ways(reg, "shell_2") is None
    assert reg.group_members("ops") == ()
    with pytest.raises(KeyError):
        reg.group("ops")  # no tool names it any more
    _expect(
        reg,
        {
            "gh__list_pull_requests": "g",
            "gh__create_issue": "g",
            "gh__deploy": "deploy",
            "shell": None,
        },
    )


def test_a_map_is_a_snapshot_of_one_generation(reg: ToolRegistry) -> None:
    reg.declare_group("gh", prefix="gh__")
    before = reg.group_map()
    reg.register(Tool(name="gh__merge", description="Merge a pull request."))
    assert "gh__merge" not in before
    assert reg.group_map()["gh__merge"] == "gh"
    with pytest.raises(TypeError):
        before["x"] = "y"  # type: ignore[index]


def test_unknown_names_are_in_no_group(reg: ToolRegistry) -> None:
    reg.declare_group("gh", prefix="gh__")
    assert _both_ways(reg, "gh__not_registered") is None
    assert reg.group_members("nope") == ()


def test_one_lookup_a_generation_never_makes_the_map(reg: ToolRegistry) -> None:
    """A host that registers and looks up one tool at a time pays no map a lookup."""
    reg.declare_group("srv", prefix="srv__")
    for i in range(3 * LOOKUPS_BEFORE_MAP):
        reg.register(Tool(name=f"srv__t{i}", description="A server tool."))
        assert reg.group_of(f"srv__t{i}") == "srv"
    assert reg._membership.made is None
    for _ in range(LOOKUPS_BEFORE_MAP + 1):
        reg.group_of("srv__t0")
    made = reg._membership.made
    assert made is not None  # a plan's worth of lookups: the map is made once
    assert made.key == (reg.generation, reg.groups_version)


@given(
    prefixes=st.lists(
        st.text(alphabet="ab_", min_size=0, max_size=5).map(lambda s: s + "__"),
        min_size=1,
        max_size=8,
    ),
    names=st.lists(st.text(alphabet="ab_x", min_size=1, max_size=14), max_size=20),
)
def test_prefixes_ending_in_separators_match_as_the_longest_prefix(
    prefixes: list[str], names: list[str]
) -> None:
    # MCP servers' prefixes all end in "__", and their names are looked up only at the
    # name's "__" (runs of underscores included); the answer is the longest prefix's.
    groups = [ToolGroup(name=f"g{i}", prefix=p) for i, p in enumerate(prefixes)]
    found = Prefixes(1, groups)
    for name in names + [p + "x" for p in prefixes]:
        longest = max((p for p in prefixes if name.startswith(p)), key=len, default=None)
        first = None if longest is None else groups[prefixes.index(longest)].name
        assert found.match(name) == first, (name, prefixes)
    # The whole catalogue's pass gives each name the same group as one lookup each.
    every = names + [p + "x" for p in prefixes]
    assert found.match_all(every) == [found.match(name) for name in every]
