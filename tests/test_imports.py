"""Every module of the package imports on its own, in a fresh interpreter.

A module that works only because the package ``__init__`` happened to import something
first (the old ``dispatch`` <-> ``surface`` circle) fails here: each module is imported alone,
once with the real package and once from a copy whose ``__init__.py`` is empty.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import toolsurface

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


def _import_each(search_path: Path, modules: list[str]) -> dict[str, str]:
    """Import each module in its own interpreter from ``search_path``; failures by module."""
    env = {**os.environ, "PYTHONPATH": str(search_path)}

    def one(module: str) -> tuple[str, str]:
        done = subprocess.run(
            [sys.executable, "-c", f"import {module}"],
            cwd=search_path,  # the working directory comes first on sys.path: keep it ours
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return module, "" if done.returncode == 0 else done.stderr.strip()[-1500:]

    with ThreadPoolExecutor(max_workers=4) as pool:
        return {m: err for m, err in pool.map(one, modules) if err}


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


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600
    }
    assert not long, f"split these modules (issue 19's limit is 600 lines): {long}"
