"""Stemming from many threads at once gives each word the stem it has alone."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest
from snowballstemmer.german_stemmer import GermanStemmer  # type: ignore[import-untyped]

from toolsurface.retrieval.analysis.language import LanguageStemmers
from toolsurface.retrieval.analysis.snowball import STEM_MEMO_CHARS, ThreadStemmer
from toolsurface.retrieval.engine.backend import backend

WORDS = {
    "en": ["reviewers", "listing", "repositories", "containers", "scheduled", "deployments"],
    "ru": ["репозиториев", "открытые", "пулреквесты", "сообщения", "контейнеров"],
    "de": ["Datenbankverbindungen", "Benutzerkonten", "Rechnungen", "Zeitplänen"],
    "es": ["muéstrame", "envíale", "repositorios", "mensajes", "programadas"],
    "fr": ["dépôts", "messages", "planifiées", "conteneurs"],
}


@pytest.fixture
def fast_switching() -> Iterator[None]:
    """Threads switched as often as the interpreter can, so a shared stemmer would clash."""
    saved = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(saved)


def _tail(n: int) -> str:
    """A letter tail no other (thread, round) shares, so every word is new to the memo."""
    out = ""
    while True:
        n, r = divmod(n, 26)
        out += chr(ord("a") + r)
        if n == 0:
            return out


def test_threads_stem_as_one_thread_does(fast_switching: None) -> None:
    # The words are new in every round: a stem found before comes from the shared memo and
    # would not exercise the per-thread stemmers this test is about.
    analyzer = backend("pure").analyzer
    languages = LanguageStemmers()

    def stems(tail: str) -> list[str]:
        out = [analyzer.stem(w.lower() + tail) for w in WORDS["en"]]
        out += [analyzer.stem(w.lower()) for w in WORDS["ru"]]
        for lang in ("de", "es", "fr"):
            out += [str(languages.lexicon_word(lang, w.lower() + tail)) for w in WORDS[lang]]
        return out

    got: dict[str, list[str]] = {}
    problems: list[str] = []
    start = threading.Barrier(6)

    def work(thread: int) -> None:
        start.wait()
        try:
            for i in range(100):
                tail = _tail(thread * 1000 + i)
                got[tail] = stems(tail)
        except Exception as exc:  # a clash can also raise (IndexError inside the stemmer)
            problems.append(repr(exc))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
    assert len(got) == 600
    # Each against stemmers of this test's own: fresh instances, no memo, one thread.
    alone_analyzer = backend("pure").analyzer
    alone = LanguageStemmers()
    for tail, stemmed in got.items():
        expected = [alone_analyzer.stem(w.lower() + tail) for w in WORDS["en"]]
        expected += [alone_analyzer.stem(w.lower()) for w in WORDS["ru"]]
        for lang in ("de", "es", "fr"):
            expected += [str(alone.lexicon_word(lang, w.lower() + tail)) for w in WORDS[lang]]
        assert stemmed == expected, tail


def test_the_stem_memo_is_bounded_and_changes_no_stem() -> None:
    # A request of many made-up or long words cannot grow the memo past its bound, and a
    # word stems alike before and after the memo starts over.
    stemmer = ThreadStemmer(GermanStemmer)
    reference = GermanStemmer()
    words = [f"datenbank{_tail(n)}verbindungen" for n in range(2000)] + ["x" * 5000] * 3
    for word in words:
        assert stemmer.stem_word(word) == reference.stemWord(word)
    total = STEM_MEMO_CHARS + 10_000
    long_words = [_tail(n) * (total // 2000 // len(_tail(n)) + 1) for n in range(2000)]
    for word in long_words:
        stemmer.stem_word(word)
    assert stemmer.memo_chars() <= STEM_MEMO_CHARS
    assert stemmer.stem_word(words[0]) == reference.stemWord(words[0])
