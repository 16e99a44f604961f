"""List the lexicon entries whose stem other words share: what stem matching fired them on.

    python scripts/audit_lexicon_stems.py [--lexicon FILE] [--words FILE ...] [--limit N]

A lexicon source used to be matched by its words' stems, so an entry fired on every word
that stems alike (``activate -> enable`` on "activities", "actively"). Sources are matched
by lexicon key now (docs/analysis.md §4); this lists, for each entry, the words of the given
texts (default: the bundled demo catalogue's descriptions; pass any catalogue or word list)
that share a source word's stem but not its key: the words the entry no longer fires on. A
reviewer reads the list to see that each is a word of other meaning, and lists a derived word
as a source of its own where it should expand. Words only: no query set is read.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.resources import parse_lexicon, read_data_text

_WORD = re.compile(r"[A-Za-zА-Яа-яЁё]+")


def words_of(path: Path | None) -> set[str]:
    """The letter runs of a file's text (a JSON catalogue's strings included), or the demo's."""
    text = path.read_text(encoding="utf-8") if path else read_data_text("demo_catalogue.json")
    if path is None or path.suffix == ".json":
        text = json.dumps(json.loads(text), ensure_ascii=False)
    return {w.lower() for w in _WORD.findall(text)}


def collisions(entries: list[tuple[str, str]], words: set[str]) -> list[tuple[str, str, list[str]]]:
    """Per entry with any: its source, targets and the words sharing a stem but not a key."""
    analyzer = backend("pure").analyzer
    by_stem: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for w in words:
        stems, keys = analyzer.tokens(w), analyzer.lexicon_keys(w)
        if len(stems) == 1:
            by_stem[stems[0]].add((w, keys[0]))
    out = []
    for source, targets in entries:
        if source.startswith("<"):
            continue
        found: set[str] = set()
        for stem, key in zip(analyzer.tokens(source), analyzer.lexicon_keys(source)):
            found |= {w for w, k in by_stem.get(stem, ()) if k != key}
        if found:
            out.append((source, targets, sorted(found)))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lexicon", type=Path, help="a lexicon file (default: the bundled)")
    parser.add_argument("--words", type=Path, nargs="*", help="catalogues or texts to read")
    parser.add_argument("--limit", type=int, default=8, help="words shown per entry")
    args = parser.parse_args()
    text = (
        args.lexicon.read_text(encoding="utf-8") if args.lexicon else read_data_text("lexicon.tsv")
    )
    words: set[str] = set()
    for path in args.words or [None]:
        words |= words_of(path)
    found = collisions(parse_lexicon(text), words)
    for source, targets, others in found:
        more = f" (+{len(others) - args.limit})" if len(others) > args.limit else ""
        print(f"{source}\t{targets}\t{', '.join(others[: args.limit])}{more}")
    print(f"{len(found)} entries share a stem with other words", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
