"""Write the Russian word forms of the bundled lexicon's sources into its generated section.

    python scripts/gen_lexicon_forms.py [--check]

The forms are what ``toolsurface.retrieval.morphology.derived_forms`` derives with pymorphy3
for the hand-written entries (cases and numbers of nouns and adjectives; finite forms,
imperatives and the dictionary's other aspect of verbs), each kept only where its index
terms are new. A host's own lexicon gets the same forms when a registry compiles it; the
bundled one carries them precomputed, between the markers at the end of
``data/lexicon.tsv``, so a process does not spend a second deriving them at start. ``--check``
only says whether the section is up to date (the test suite runs it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolsurface.retrieval.analysis.morphology import derived_forms
from toolsurface.retrieval.engine.backend import backend
from toolsurface.retrieval.resources import parse_lexicon

LEXICON = Path(__file__).resolve().parent.parent / "python" / "toolsurface" / "data" / "lexicon.tsv"
BEGIN = "# ==== Generated: Russian word forms (scripts/gen_lexicon_forms.py) ===="
END = "# ==== End of generated word forms ===="
OLD_BEGIN = "# ==== Generated: case forms that stem differently (scripts/gen_lexicon_forms.py) ===="


def hand_written(text: str) -> str:
    """The lexicon's text before its generated section."""
    for marker in (BEGIN, OLD_BEGIN):
        if f"#\n{marker}" in text:
            return text.split(f"#\n{marker}")[0].rstrip("\n") + "\n"
    return text


def render(text: str) -> str:
    """The whole lexicon file: the hand-written part and its freshly derived section."""
    head = hand_written(text)
    forms = derived_forms(parse_lexicon(head), backend("pure").tokens)
    return (
        head
        + f"#\n{BEGIN}\n# Do not edit by hand: rerun the script after changing the entries above.\n"
        + "".join(f"{form}\t{targets}\n" for form, targets in forms)
        + f"{END}\n"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check the section")
    args = parser.parse_args()
    text = LEXICON.read_text(encoding="utf-8")
    new = render(text)
    if args.check:
        if new != text:
            print("the generated section of data/lexicon.tsv is out of date", file=sys.stderr)
            return 1
        return 0
    LEXICON.write_text(new, encoding="utf-8")
    print(f"{new.count(chr(10)) - hand_written(new).count(chr(10)) - 3} generated entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
