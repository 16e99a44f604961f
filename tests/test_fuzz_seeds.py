"""Replay every kept fuzz seed (tests/fuzz_seeds) through the fuzz targets."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "fuzz"))

from targets import catalogue_target, snapshot_target

SEEDS = Path(__file__).parent / "fuzz_seeds"


@pytest.mark.parametrize("target", ["catalogue", "snapshot"])
def test_seeds(target: str) -> None:
    fn = catalogue_target if target == "catalogue" else snapshot_target
    files = sorted((SEEDS / target).iterdir())
    assert files, f"no seeds for {target}"
    for path in files:
        fn(path.read_bytes())
