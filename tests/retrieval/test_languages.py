"""Requests in German, Spanish, French, Ukrainian and Chinese (docs/analysis.md §4a).

A request's language is told by its script and function words; it drops its language's
function words and looks its words up in the lexicon's entries of that language, stemmed as
the language stems them; Chinese is read as pairs of ideographs. Both engines must give the
same terms and the same rankings.
"""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from toolsurface.catalogue import demo_catalogue
from toolsurface.registry import ToolRegistry, tool_fields
from toolsurface.retrieval.analysis.function_words import FUNCTION_WORDS
from toolsurface.retrieval.analysis.language import (
    COMPOUND_HEAD_MAX,
    FORM_BARE,
    FORM_EN,
    FORM_ER,
    FORM_OTHER,
    SEPARABLE_PARTICLES,
    UK_ENDINGS,
    LanguageStemmers,
    compound_heads,
    ends_clause,
    es_without_clitic,
    language_of_source,
    reads_as,
    uk_stem,
)
from toolsurface.retrieval.engine.backend import backend as engine_backend
from toolsurface.retrieval.resources import default_lexicon_entries, parse_lexicon, read_data_text

#: A request per language and the English words (as index terms) its lexicon words bring.
EXPANDS = [
    ("erstelle bitte eine neue Datei", {"creat", "file"}),
    ("zeig mir die offenen Tickets", {"show", "issu"}),
    ("elimina la rama del repositorio", {"delet", "branch", "repositori"}),
    ("muéstrame los mensajes del canal", {"show", "messag", "channel"}),
    ("envoie un message sur le canal", {"send", "messag", "channel"}),
    ("supprime la branche", {"delet", "branch"}),
    ("створи нову гілку в репозиторії", {"creat", "branch", "repositori"}),
    ("надішли повідомлення в канал", {"send", "messag", "channel"}),
    ("删除这个文件夹", {"delet", "directori"}),
    ("在GitHub上创建一个新的拉取请求", {"creat", "pull", "request", "github"}),
    # No function word and no letter of its own: its words are tried as English, then as
    # German, Spanish and French.
    ("Kalender anzeigen", {"calendar", "show"}),
    # "in" is German too: with "der" German outvotes English.
    ("Termin in der Woche absagen", {"event", "cancel"}),
    # "in" alone votes for neither: the German words are still tried.
    ("Datei in Archiv umbenennen", {"file", "renam"}),
]


@pytest.fixture(scope="module")
def registry(engine_name: str) -> ToolRegistry:
    return ToolRegistry(demo_catalogue())


@pytest.mark.parametrize(("query", "wanted"), EXPANDS, ids=[q for q, _ in EXPANDS])
def test_a_request_reaches_the_english_words(
    registry: ToolRegistry, query: str, wanted: set[str]
) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert wanted <= terms, sorted(terms)


def test_function_words_of_the_requests_language_are_dropped(registry: ToolRegistry) -> None:
    german = [t for t, _ in registry.query_terms("zeig mir die Dateien von dem Projekt")]
    assert "die" not in german and "dem" not in german
    # English keeps a word German calls a function word: "die" is English too.
    english = [t for t, _ in registry.query_terms("show me the die cut templates")]
    assert "die" in english


@pytest.mark.parametrize(
    "query",
    [
        "erstelle einen Termin im Kalender",
        "crea un evento en el calendario",
        "crée un événement dans le calendrier",
        "створи подію в календарі",
        "在日历中创建一个活动",
    ],
)
def test_a_request_finds_what_its_english_twin_finds(registry: ToolRegistry, query: str) -> None:
    english = registry.search("create an event in the calendar", k=1)
    assert english[0].name in [h.name for h in registry.search(query, k=3)]


#: Words no lexicon lists, read through the head of their compound (German) or their
#: imperative without its pronouns (Spanish), and the English words that brings.
FALLBACKS = [
    ("neuen Kalendereintrag anlegen", {"item", "creat"}),
    ("die Projektliste anzeigen", {"list", "show"}),
    ("alle Teamkanäle auflisten", {"channel", "list"}),
    ("archívalo en la carpeta", {"archiv", "directori"}),
    ("compártelo con el equipo", {"share", "team"}),
]


@pytest.mark.parametrize(("query", "wanted"), FALLBACKS, ids=[q for q, _ in FALLBACKS])
def test_compounds_and_imperatives_with_pronouns_reach_the_english_words(
    registry: ToolRegistry, query: str, wanted: set[str]
) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert wanted <= terms, sorted(terms)


#: German separable verbs: a particle at the end of its clause is joined to the clause's
#: words again, and the verb it makes brings its English words.
SEPARABLE = [
    ("trag den Termin für Freitag ein", {"add"}),
    ("leg bitte einen neuen Ordner an", {"creat"}),
    ("weis das Ticket Anna zu, sie kennt sich aus", {"assign"}),
    ("leit die Mail an Peter weiter.", {"forward"}),
    ("füg Anna zur Gruppe hinzu", {"add"}),
    # A closing bracket or a space of any kind between the particle and the clause's end.
    ("(trag den Termin für Freitag ein)", {"add"}),
    ("trag den Termin für Freitag ein\u00a0", {"add"}),
    ("[leg bitte einen neuen Ordner an]\u202f.", {"creat"}),
    ("trag den Termin ein\u2009}, danke", {"add"}),
    # A bracketed aside inside the clause ends nothing.
    ("leg den Ordner (für Anna) an", {"creat"}),
]


@pytest.mark.parametrize(("query", "wanted"), SEPARABLE, ids=[q for q, _ in SEPARABLE])
def test_a_separable_verb_is_made_whole_again(
    registry: ToolRegistry, query: str, wanted: set[str]
) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert wanted <= terms, sorted(terms)


def test_a_separable_verb_leaves_the_clauses_nouns_their_meaning(registry: ToolRegistry) -> None:
    # "an" + "ordner" is "anordnen" (arrange), "an" + "kunden" "ankündigen" (announce): only
    # the verb's place is joined, and the nouns keep their words.
    folder = {t for t, _ in registry.query_terms("leg bitte einen neuen Ordner an")}
    assert {"creat", "folder"} <= folder and "reorder" not in folder, sorted(folder)
    customers = {t for t, _ in registry.query_terms("zeig mir die Kunden an")}
    assert {"show", "customer"} <= customers and "announc" not in customers, sorted(customers)


def test_a_clause_ends_at_punctuation_past_spaces_and_closing_brackets() -> None:
    for text in ("ein", "ein.", "ein\u00a0", "ein\u3000!", "ein)", "ein) .", "ein\u202f]}?"):
        assert ends_clause(text, 3), repr(text)
    for text in ("ein und", "ein) bitte", "ein (bitte)", "ein\u00a0x"):
        assert not ends_clause(text, 3), repr(text)


@pytest.mark.parametrize(
    "query",
    [
        # A particle that does not end its clause is a preposition or an article.
        "leg die Datei an Peter",
        "weis zu viele Tickets",
        "trag den Termin ein) und schick ihn",
        # Inside quotes it is the message's, not the request's, even ending its clause.
        'schreib "leg es an." in den Kanal',
        # Read as English, a request joins nothing ("anleg" is a German word).
        "show the leg an",
    ],
)
def test_a_particle_mid_clause_or_quoted_joins_nothing(registry: ToolRegistry, query: str) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert not {"creat", "assign"} & terms, sorted(terms)


#: German words that stem as a verb of the lexicon, and what they must and must not bring.
FORMS = [
    # An agent noun is no form of its verb: "Hersteller" (manufacturer) is not
    # "herstellen" (restore), in a German request or a latin one.
    ("zeig mir den Hersteller", set(), {"restor"}),
    ("Hersteller anzeigen", {"show"}, {"restor"}),
    ("die Liste der Hersteller", set(), {"restor"}),
    # The verb itself, separable or not, still is.
    ("stell die Verbindung zur Datenbank wieder her", {"restor"}, set()),
    ("die Verbindung herstellen", {"restor"}, set()),
    ("Backup wiederherstellen", {"restor"}, set()),
    # Other -er words are forms of their words: a plural, an adjective's ending, the
    # imperative of an -ieren or -ern verb, an agent noun the lexicon lists.
    ("die Felder anzeigen", {"field"}, set()),
    ("neuer Ordner", {"new", "folder"}, set()),
    ("aktualisier die Datei", {"updat", "file"}, set()),
    ("erinner mich an den Termin", {"reminder"}, set()),
    ("Prüfer zuweisen", {"reviewer", "assign"}, set()),
    ("fehlgeschlagener Build", {"fail"}, set()),
]


@pytest.mark.parametrize(("query", "wanted", "unwanted"), FORMS, ids=[q for q, _, _ in FORMS])
def test_an_agent_noun_is_no_form_of_its_verb(
    registry: ToolRegistry, query: str, wanted: set[str], unwanted: set[str]
) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert wanted <= terms and not unwanted & terms, sorted(terms)


#: Requests read as German, Spanish or French whose bare word stems as a lexicon source
#: written in another form (a plural, a person of the verb): the word is the language's
#: own there, so it reads as the source (only in a latin request is a bare word possibly
#: English, and none of an inflected source).
BARE_IN_ITS_LANGUAGE = [
    ("muestra la credencial del usuario", {"credenti"}),
    ("zeig das Zugriffsrecht des Benutzers", {"access"}),
    ("donne-moi un conseil sur le code", {"tip"}),
    ("la taille en octet du fichier", {"byte"}),
    ("elle reprend la tâche", {"resum"}),
]


@pytest.mark.parametrize(
    ("query", "wanted"), BARE_IN_ITS_LANGUAGE, ids=[q for q, _ in BARE_IN_ITS_LANGUAGE]
)
def test_a_bare_word_of_the_requests_language_reads_as_a_source_of_any_form(
    registry: ToolRegistry, query: str, wanted: set[str]
) -> None:
    terms = {t for t, _ in registry.query_terms(query)}
    assert wanted <= terms, sorted(terms)


def test_forms_as_the_stemmers_read_them() -> None:
    s = LanguageStemmers()
    forms = {w: s.form("de", w) for w in ("herstellen", "hersteller", "must", "muster")}
    assert forms == {
        "herstellen": FORM_EN,
        "hersteller": FORM_ER,
        "must": FORM_BARE,
        "muster": FORM_ER,
    }
    assert [s.form("es", w) for w in ("record", "recordar", "actual")] == [
        FORM_BARE,
        FORM_OTHER,
        FORM_BARE,
    ]
    # An -er word reads as no infinitive, a bare word as no inflected word but a German
    # infinitive (whose imperative is its stem: "stell … her" is "herstell").
    assert not reads_as(FORM_EN, FORM_ER) and reads_as(FORM_EN | FORM_OTHER, FORM_ER)
    assert not reads_as(FORM_ER | FORM_OTHER, FORM_BARE) and reads_as(FORM_EN, FORM_BARE)


#: Latin requests (no language has a vote) of English words that German, Spanish or French
#: stem as one of their entries: "must" as German "Muster" (pattern), "record" as Spanish
#: "recordar" (remind). Neither is a form of that word, nor is an English function word a
#: foreign one.
ENGLISH_IN_LATIN = ["must record", "record", "must", "record screen", "record call"]


def test_a_latin_requests_english_words_are_no_foreign_words(
    both_backends: tuple[Any, Any],
) -> None:
    tools = demo_catalogue()
    names, fields = [t.name for t in tools], [tool_fields(t) for t in tools]
    entries = default_lexicon_entries()
    untagged = [e for e in entries if language_of_source(e[0]) is None]
    settings = ((3, 1, 2, 1, 0.5, 0.15), (0.5,) * 5 + (0,), 1.2, 0.5)
    for backend in both_backends:
        index = backend.index(names, fields)
        full, english = backend.lexicon(entries), backend.lexicon(untagged)
        for q in ENGLISH_IN_LATIN:
            assert index.query_language(q) == "latin", q
            terms = index.query_terms(q, full, 0.5)
            assert terms == index.query_terms(q, english, 0.5), (q, terms)
            assert index.search(q, 10, *settings, full) == index.search(
                q, 10, *settings, english
            ), q
        # The Spanish word itself still reads as Spanish.
        assert "remind" in {t for t, _ in index.query_terms("recordar", full, 0.5)}


def test_an_english_function_word_is_english_in_a_latin_request(
    both_backends: tuple[Any, Any],
) -> None:
    # "else" stems as Spanish would stem a word "else": only a function word, no form,
    # keeps it from reading as that entry in a latin request; a Spanish request reads it.
    assert "else" in FUNCTION_WORDS
    tools = demo_catalogue()
    names, fields = [t.name for t in tools], [tool_fields(t) for t in tools]
    for backend in both_backends:
        index = backend.index(names, fields)
        lexicon = backend.lexicon([("<es> else", "calendar")])
        latin = {t for t, _ in index.query_terms("else", lexicon, 0.5)}
        spanish = {t for t, _ in index.query_terms("el else del canal", lexicon, 0.5)}
        assert "calendar" not in latin and "calendar" in spanish, (latin, spanish)


#: French words with a diaeresis, which Python's Snowball and rust-stemmers stem apart
#: (``égoïste``: ``égo`` and ``égoïst``) unless given the plain vowel.
DIAERESIS = ["égoïste", "canoë", "noël", "naïf", "maïs", "héroïque", "coïncidence", "aïeul"]


def test_french_words_with_a_diaeresis_read_alike_in_both_engines(
    both_backends: tuple[Any, Any],
) -> None:
    tools = demo_catalogue()
    names, fields = [t.name for t in tools], [tool_fields(t) for t in tools]
    # Two words the diaeresis words stem as in one engine only, before the plain vowel.
    entries = [(f"<fr> {w}", "calendar") for w in DIAERESIS] + [
        ("<fr> égo", "archive"),
        ("<fr> héro", "archive"),
    ]
    found = []
    for backend in both_backends:
        index, lexicon = backend.index(names, fields), backend.lexicon(entries)
        found.append(
            [index.query_terms(f"le {w} et la {w}s du jour", lexicon, 0.5) for w in DIAERESIS]
        )
        for w, terms in zip(DIAERESIS, found[-1], strict=True):
            assert "calendar" in {t for t, _ in terms}, (w, terms)
            assert "archiv" not in {t for t, _ in terms}, (w, terms)
    assert found[0] == found[1]


def test_a_prefixed_verb_is_no_compound(registry: ToolRegistry) -> None:
    # "versuchen" (try) is "ver" + "suchen" (search): a verb prefix, not a compound's part.
    assert "suchen" not in compound_heads("versuchen")
    terms = {t for t, _ in registry.query_terms("wir müssen es versuchen")}
    assert "search" not in terms, sorted(terms)
    # A Spanish word without the accent an attached pronoun puts on its verb keeps its end.
    assert es_without_clitic("pásamelo") == ["pasa", "pasame"]
    assert es_without_clitic("calle") == []


def test_a_long_words_heads_are_its_last_letters_in_both_engines(
    both_backends: tuple[Any, Any],
) -> None:
    """A head has at most COMPOUND_HEAD_MAX letters, so a word a model made thousands of
    letters long is read in time linear in it, and its real head is still found."""
    word = "q" * 5_000 + "kalendereintrag"
    heads = compound_heads(word)
    assert len(heads) == COMPOUND_HEAD_MAX - 3
    assert max(len(h) for h in heads) == COMPOUND_HEAD_MAX
    assert "eintrag" in heads
    found = [
        b.index(
            ["cal__create_event"], [("cal create event", "", "Create a calendar item.", "", "")]
        ).query_terms(f"einen neuen {word} anlegen", b.lexicon(default_lexicon_entries()), 0.5)
        for b in both_backends
    ]
    assert found[0] == found[1]
    assert "item" in {t for t, _ in found[0]}, found[0]


def test_chinese_reads_pairs_of_ideographs(engine_name: str) -> None:
    tokens = engine_backend(engine_name).tokens
    assert tokens("GitHub上的问题") == ["git", "hub", "github", "上的", "的问", "问题"]
    # A lone ideograph is too short to be a term, like a one-letter word.
    assert tokens("问 abc") == ["abc"]


def test_ukrainian_inflections_share_a_stem() -> None:
    groups = [
        ["задача", "задачі", "задачу", "задачами", "задачах", "задач"],
        ["файл", "файли", "файлів", "файлом", "файлі"],
        ["створи", "створіть", "створити"],
        ["повідомлення", "повідомлень", "повідомленням"],
    ]
    for group in groups:
        assert len({uk_stem(w) for w in group}) == 1, group
    assert len(set(UK_ENDINGS)) == len(UK_ENDINGS)


def test_a_source_in_an_unknown_language_is_refused(both_backends: tuple[Any, Any]) -> None:
    for backend in both_backends:
        with pytest.raises(ValueError, match=r"lexicon entry 1 .*unknown language <xx>"):
            backend.lexicon([("pr", "pull request"), ("<xx> datei", "file")])


def test_every_bundled_language_source_has_words(both_backends: tuple[Any, Any]) -> None:
    entries = default_lexicon_entries()
    for lang in ("de", "es", "fr", "uk", "zh"):
        assert any(s.startswith(f"<{lang}> ") for s, _ in entries), lang
    for backend in both_backends:
        assert len(backend.lexicon(entries)) > 0


def _language_words() -> list[str]:
    """Words of the bundled language lexicons and stopwords, to build requests from."""
    words: list[str] = []
    for lang in ("de", "es", "fr", "uk", "zh"):
        for source, _ in parse_lexicon(read_data_text(f"lexicon_{lang}.tsv")):
            words.extend(source.split())
        for line in read_data_text(f"stopwords_{lang}.txt").splitlines():
            if line and not line.startswith("#"):
                words.append(line)
    return words


def test_both_engines_rank_mixed_language_requests_alike(both_backends: tuple[Any, Any]) -> None:
    tools = demo_catalogue()
    names = [t.name for t in tools]
    fields = [tool_fields(t) for t in tools]
    words = [*_language_words(), "pull", "request", "GitHub", "PR", "the", "и", "в", "412"]
    # English words and function words a latin request may hold; German -er words.
    words += [*FUNCTION_WORDS[::5], "record", "actual", "comment", "list", "Hersteller"]
    words += ["Felder", "neuer", "aktualisier", "offener", "Prüfer", "Speicher"]
    rng = random.Random(39)
    queries = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 7))) for _ in range(400)]
    # German compounds of two words, Spanish imperatives with their pronouns.
    german = [w for w in words if w.isalpha() and w.islower()]
    queries += [
        f"die {rng.choice(german)}{rng.choice(german)} {rng.choice(words)}" for _ in range(100)
    ]
    queries += [
        f"el {rng.choice(words)}{rng.choice(('melo', 'le', 'la', 'nos'))}" for _ in range(50)
    ]
    # Particles at a clause's end, before punctuation, white space or a class-I character;
    # and, for each particle, a verb of the German lexicon that starts with it, split.
    particles = sorted(SEPARABLE_PARTICLES)
    ends = ("", ",", " .", "\u200b,", "?", " und", ' "x"', "\u00a0", ")", "\u202f) .", "] x", "}?")
    queries += [
        f"{rng.choice(german)} {rng.choice(words)} {rng.choice(particles)}{rng.choice(ends)}"
        for _ in range(100)
    ]
    sources = [s for s, _ in parse_lexicon(read_data_text("lexicon_de.tsv")) if " " not in s]
    for p in particles:
        verbs = [s[len(p) :] for s in sources if s.startswith(p) and len(s) > len(p) + 3]
        queries += [f"{v} die Datei {p}, bitte" for v in verbs[:3]]
    queries += [q for q, _ in EXPANDS + FALLBACKS + SEPARABLE]
    queries += [q for q, _, _ in FORMS] + ENGLISH_IN_LATIN
    results = []
    for backend in both_backends:
        index = backend.index(names, fields)
        lexicon = backend.lexicon(default_lexicon_entries())
        results.append(
            [
                (
                    index.query_terms(q, lexicon, 0.5),
                    index.search(
                        q, 10, (3, 1, 2, 1, 0.5, 0.15), (0.5,) * 5 + (0,), 1.2, 0.5, lexicon
                    ),
                )
                for q in queries
            ]
        )
    for q, (pt, ph), (nt, nh) in zip(queries, *results):
        assert [t for t, _ in pt] == [t for t, _ in nt], q
        assert all(math.isclose(a, b, rel_tol=1e-9) for (_, a), (_, b) in zip(pt, nt)), q
        assert ph[0] == nh[0] and ph[2] == nh[2], q
        assert all(math.isclose(a, b, rel_tol=1e-9) for a, b in zip(ph[1], nh[1])), q


#: Requests and the language each is read in (the English encoder ranks only ``en`` ones).
READ_AS = [
    ("show me the open pull requests", "en"),
    ("list open PRs", "latin"),
    # A function word English shares with German or Spanish ("in", "a") tells neither.
    ("Datei in Archiv umbenennen", "latin"),
    ("move the file in the archive", "en"),
    ("open a pull request", "latin"),
    ("покажи открытые пулреквесты", "ru"),
    ("створи нову гілку в репозиторії", "uk"),
    ("zeig mir die offenen Tickets", "de"),
    ("muéstrame los mensajes del canal", "es"),
    ("envoie un message sur le canal", "fr"),
    ("删除这个文件夹", "zh"),
]


def test_both_engines_read_a_request_in_the_same_language(both_backends: tuple[Any, Any]) -> None:
    tools = demo_catalogue()
    names, fields = [t.name for t in tools], [tool_fields(t) for t in tools]
    pure, native = (backend.index(names, fields) for backend in both_backends)
    for query, lang in READ_AS:
        assert pure.query_language(query) == native.query_language(query) == lang, query
    for query, _ in EXPANDS + FALLBACKS:
        assert pure.query_language(query) == native.query_language(query), query
