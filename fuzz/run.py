#!/usr/bin/env python3
"""Run a fuzz target under atheris for a bounded time, keeping new seeds under tests/.

    python fuzz/run.py catalogue|snapshot [--seconds 60]
    python fuzz/run.py catalogue --merge-into DIR     # minimise the kept seeds into DIR

Needs ``pip install atheris``. Crashes are written to fuzz/crash-*; the corpus directory
(tests/fuzz_seeds/NAME) is both the starting seeds and where atheris adds what it finds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import atheris

# Only the code under test and its validation (pydantic): instrumenting every module imported
# (the standard library, numpy, mcp) took most of a CI fuzz step before a run was made.
with atheris.instrument_imports(include=["toolsurface", "targets", "pydantic"]):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import targets

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    """Parse the command line and fuzz the chosen target until the time is up."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("target", choices=("catalogue", "snapshot"))
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument(
        "--merge-into", help="write a minimised copy of the corpus there, then stop"
    )
    args, rest = parser.parse_known_args()
    corpus = ROOT / "tests" / "fuzz_seeds" / args.target
    corpus.mkdir(parents=True, exist_ok=True)
    fn = targets.catalogue_target if args.target == "catalogue" else targets.snapshot_target
    if args.merge_into:
        atheris.Setup([sys.argv[0], "-merge=1", args.merge_into, str(corpus), *rest], fn)
        atheris.Fuzz()
        return
    argv = [
        sys.argv[0],
        str(corpus),
        f"-max_total_time={args.seconds}",
        "-max_len=4096",
        f"-artifact_prefix={ROOT / 'fuzz'}/crash-",
        "-print_final_stats=1",
        *rest,
    ]
    atheris.Setup(argv, fn)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
