"""Every module of the package imports on its own, in a fresh interpreter.

A module that works only because the package ``__init__`` happened to import something
first (the old ``dispatch`` <-> ``surface`` circle) fails here: each module is imported alone,
once with the real package and once from a copy whose ``__init__.py`` is empty. The layering
of those imports is ``test_layers.py``'s.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import toolsurface

#: Engine-agnostic (tests/conftest.py): run by the native suite where the core is built.
pytestmark = pytest.mark.engine_agnostic

PACKAGE = Path(toolsurface.__file__).resolve().parent


def _modules(root: Path) -> list[str]:
    out = []
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append(".".join(parts))
    return out


MODULES = _modules(PACKAGE)


# Run in one fresh interpreter per tree: before each module, every module of the package is
# forgotten (all but the compiled core, which CPython cannot load twice), so each import starts
# from nothing of ours while the third-party libraries stay loaded. That checks what a fresh
# interpreter per module would, at a small fraction of the time.
_IMPORT_EACH = """
import importlib, json, sys, traceback
failed = {}
for module in json.loads(sys.argv[1]):
    for name in [n for n in sys.modules if n.split(".")[0] == "toolsurface"]:
        if name != "toolsurface._native":
            del sys.modules[name]
    try:
        importlib.import_module(module)
    except BaseException:
        failed[module] = traceback.format_exc()[-1500:]
print(json.dumps(failed))
"""


def _import_each(search_path: Path, modules: list[str]) -> dict[str, str]:
    """Import each module from ``search_path`` with none of the package loaded; failures."""
    env = {**os.environ, "PYTHONPATH": str(search_path)}
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EACH, json.dumps(modules)],
        cwd=search_path,  # the working directory comes first on sys.path: keep it ours
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    return failed


@pytest.fixture(scope="module")
def blank_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the package whose ``__init__.py`` is empty (native module included)."""
    root = tmp_path_factory.mktemp("blank")
    shutil.copytree(PACKAGE, root / "toolsurface", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "toolsurface" / "__init__.py").write_text("", encoding="utf-8")
    return root


def test_the_package_has_the_modules_this_test_walks() -> None:
    assert "toolsurface.admission.admit" in MODULES
    assert "toolsurface.surface.surface" in MODULES
    assert len(MODULES) > 20


def test_every_module_imports_alone() -> None:
    failed = _import_each(PACKAGE.parent, MODULES)
    assert not failed, "\n\n".join(f"{m}:\n{e}" for m, e in failed.items())


def test_every_module_imports_alone_with_an_empty_package_init(blank_copy: Path) -> None:
    failed = _import_each(blank_copy, MODULES)
    assert not failed, "\n\n".join(f"{m}:\n{e}" for m, e in failed.items())


def test_a_module_that_needs_the_package_init_fails_here(tmp_path: Path) -> None:
    # The check must be able to fail: a module that leans on a name its package's __init__
    # imported first is reported, with the error that a host would see.
    pkg = tmp_path / "toolsurface"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "leans.py").write_text("import toolsurface\nX = toolsurface.helper\n", encoding="utf-8")
    (pkg / "fine.py").write_text("X = 1\n", encoding="utf-8")
    failed = _import_each(tmp_path, ["toolsurface.fine", "toolsurface.leans"])
    assert list(failed) == ["toolsurface.leans"]
    assert "has no attribute 'helper'" in failed["toolsurface.leans"]
