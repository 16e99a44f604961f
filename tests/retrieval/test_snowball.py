"""Stemming from many threads at once gives each word the stem it has alone."""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator

import pytest

from toolsurface.retrieval.analysis.language import LanguageStemmers
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


def test_threads_stem_as_one_thread_does(fast_switching: None) -> None:
    analyzer = backend("pure").analyzer
    languages = LanguageStemmers()

    def stems() -> list[str]:
        out = [analyzer.stem(w.lower()) for w in WORDS["en"] + WORDS["ru"]]
        for lang in ("de", "es", "fr"):
            out += [str(languages.lexicon_word(lang, w.lower())) for w in WORDS[lang]]
        out += languages.fallbacks("latin", "datenbankverbindungen")
        return out

    alone = stems()
    problems: list[str] = []
    start = threading.Barrier(6)

    def work() -> None:
        start.wait()
        try:
            for _ in range(300):
                got = stems()
                if got != alone:
                    problems.append(f"{got} != {alone}")
                    return
        except Exception as exc:  # a clash can also raise (IndexError inside the stemmer)
            problems.append(repr(exc))

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert problems == []
