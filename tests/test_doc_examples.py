"""The runnable examples in the docstrings of the public entry points.

Every module of the package is searched for ``>>>`` examples and each one is run; the main
entry points must have one. The examples use tiny in-line tool lists, so they give the same
output on both engines (CI runs the suite on each).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import toolsurface

PACKAGE = Path(toolsurface.__file__).resolve().parent
#: Entry points that must carry an example: (module, qualified name).
REQUIRED = [
    ("toolsurface.registry.registry", "ToolRegistry.search"),
    ("toolsurface.registry.registry", "ToolRegistry.declare_group"),
    ("toolsurface.registry.registry", "ToolRegistry.mentioned_groups"),
    ("toolsurface.registry.registry", "ToolRegistry.learn"),
    ("toolsurface.evaluation", "declare_server_groups"),
    ("toolsurface.surface.surface", "ToolSurface.plan"),
    ("toolsurface.surface.surface", "ToolSurface.tool_search"),
    ("toolsurface.surface.surface", "ToolSurface.admit"),
    ("toolsurface.surface.surface", "ToolSurface.snapshot"),
    ("toolsurface.surface.surface", "ToolSurface.restore"),
    ("toolsurface.surface.usage", "UsageWindow"),
]


def _module_names() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


def _tests(module_name: str) -> list[doctest.DocTest]:
    module = importlib.import_module(module_name)
    found = doctest.DocTestFinder(exclude_empty=True).find(module, module_name)
    # A name re-exported from another module is found there, not twice.
    return [t for t in found if t.examples and t.name.startswith(module_name + ".")]


ALL = {name: _tests(name) for name in _module_names()}


@pytest.mark.parametrize(("module", "qualname"), REQUIRED)
def test_the_entry_point_has_an_example(module: str, qualname: str) -> None:
    names = {t.name for t in ALL[module]}
    assert f"{module}.{qualname}" in names, f"{module}.{qualname} has no >>> example"


@pytest.mark.parametrize("test", [t for tests in ALL.values() for t in tests], ids=lambda t: t.name)
def test_the_example_runs(test: doctest.DocTest) -> None:
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


def test_examples_were_found() -> None:
    assert sum(len(t) for t in ALL.values()) >= len(REQUIRED)
