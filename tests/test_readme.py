"""The README's and the docs' Python examples run as written, against the bundled catalogue."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Pages whose ```python blocks are complete programs; each block runs on its own.
PAGES = ["README.md", "docs/tools.md"]
_BLOCK = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


def blocks() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = (ROOT / page).read_text(encoding="utf-8")
        for i, match in enumerate(_BLOCK.finditer(text), 1):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{page}:{line} (block {i})", match.group(1)))
    return found


def test_the_pages_have_examples() -> None:
    pages = {where.split(":")[0] for where, _ in blocks()}
    assert pages == set(PAGES)


@pytest.mark.parametrize(("where", "code"), blocks(), ids=[w for w, _ in blocks()])
def test_example_runs_as_written(where: str, code: str, tmp_path: Path) -> None:
    script = tmp_path / "example.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, f"{where} failed:\n{done.stdout}\n{done.stderr}"
