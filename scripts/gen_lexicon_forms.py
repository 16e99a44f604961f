"""Add the inflected forms of the lexicon's Russian nouns that Snowball stems differently.

    pip install pymorphy3 pymorphy3-dicts-ru   # a tool of this script only, not a dependency
    python scripts/gen_lexicon_forms.py [--check]

The lexicon lists a Russian word in its dictionary form and relies on stemming for the
rest, but Snowball Russian does not give every case form of a word one stem, least of all
for the loanwords operators type: "графана" stems to "графа", "графане" and "графану" to
"графан". For every one-word Cyrillic source that pymorphy3 reads as a noun in its
dictionary form (a guessed paradigm for words it does not know, verbs aside), this script takes the
noun's case forms, and each form whose stem is new (four letters or more, no key and no
stopword already) becomes an entry with the same targets. The entries are written between
the markers of the generated section at the end of ``data/lexicon.tsv``, replacing what was
there; ``--check`` only says whether the section is up to date.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pymorphy3  # type: ignore[import-not-found]

from toolsurface.retrieval.analysis import Analyzer, CharTable
from toolsurface.retrieval.resources import char_table_text, parse_lexicon, stopwords

LEXICON = Path(__file__).resolve().parent.parent / "python" / "toolsurface" / "data" / "lexicon.tsv"
BEGIN = "# ==== Generated: case forms that stem differently (scripts/gen_lexicon_forms.py) ===="
END = "# ==== End of generated case forms ===="
MIN_STEM = 4
#: A source of this shape is a verb, whatever paradigm pymorphy3 guesses for it.
INFINITIVE_ENDINGS = ("ть", "ться", "ти", "чь")


def is_cyrillic_word(text: str) -> bool:
    return bool(text) and all("а" <= c <= "я" or c == "ё" for c in text.lower())


def noun_forms(morph: pymorphy3.MorphAnalyzer, word: str) -> list[str]:
    """Case forms of ``word`` read as a noun in its dictionary form, or none."""
    folded = word.lower().replace("ё", "е")
    if folded.endswith(INFINITIVE_ENDINGS):
        return []
    for parse in morph.parse(word.lower()):
        if parse.tag.POS != "NOUN" or parse.normal_form.replace("ё", "е") != folded:
            continue
        return [form.word for form in parse.lexeme]
    return []


def generate(text: str) -> list[tuple[str, str]]:
    """The generated entries for the hand-written part of the lexicon ``text``."""
    analyzer = Analyzer(CharTable.parse(char_table_text()), stopwords())
    entries = parse_lexicon(text)
    keys = {tuple(analyzer.tokens(source)) for source, _ in entries}
    stops = analyzer.stopwords
    morph = pymorphy3.MorphAnalyzer()
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for source, target in entries:
        if not is_cyrillic_word(source):
            continue
        for form in noun_forms(morph, source):
            folded = analyzer.fold(form)
            stem = analyzer.stem(folded)
            if (
                len(stem) < MIN_STEM
                or folded in stops
                or (stem,) in keys
                or stem in seen
                or analyzer.tokens(form) != [stem]
            ):
                continue
            seen.add(stem)
            out.append((form, target))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check the section")
    args = parser.parse_args()
    text = LEXICON.read_text(encoding="utf-8")
    head = text.split(f"#\n{BEGIN}")[0].rstrip("\n") + "\n"
    generated = generate(head)
    section = (
        f"#\n{BEGIN}\n# Do not edit by hand: rerun the script after changing the entries above.\n"
        + "".join(f"{source}\t{target}\n" for source, target in generated)
        + f"{END}\n"
    )
    new = head + section
    if args.check:
        if new != text:
            print("the generated section of data/lexicon.tsv is out of date", file=sys.stderr)
            return 1
        return 0
    LEXICON.write_text(new, encoding="utf-8")
    print(f"{len(generated)} generated entries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
