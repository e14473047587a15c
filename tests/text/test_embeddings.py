"""The packaged word-embedding table: one unit vector per text, weighted by the caller, the same everywhere."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retriever.text import embeddings
from retriever.text.embeddings import Table


def _one(word: str) -> float:
    return 1.0


@pytest.fixture(scope="module")
def packaged() -> Table:
    loaded = embeddings.table()
    assert loaded is not None
    return loaded


def test_the_packaged_table_holds_a_256_dimensional_int8_row_per_wordpiece_token(packaged: Table) -> None:
    assert packaged.vectors.shape == (29_525, 256) and packaged.vectors.dtype == np.int8
    assert len(packaged.wordpiece.vocab) == len(packaged.scales) == 29_525
    assert embeddings.TABLE_PATH.stat().st_size < 16_000_000


def test_every_text_gets_a_unit_row_and_a_text_without_known_words_a_zero_row(packaged: Table) -> None:
    vectors = packaged.embed(["Dining expenses", "meals", "", "👍🏽"], _one)
    assert vectors.shape == (4, 256) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors[:2], axis=1) == pytest.approx([1.0, 1.0], abs=1e-5)
    assert not vectors[2].any() and not vectors[3].any()


def test_related_words_are_closer_than_unrelated_ones(packaged: Table) -> None:
    dining, meals, passwords = packaged.embed(["dining expenses", "meals", "password rotation"], _one)
    assert float(dining @ meals) > 0.45
    assert float(dining @ meals) > float(dining @ passwords) + 0.2


def test_a_word_weighed_zero_leaves_the_vector_as_if_it_were_absent(packaged: Table) -> None:
    weight = {"the": 0.0}.get
    with_the, without = packaged.embed(["the meals", "meals"], lambda w: weight(w, 1.0))
    np.testing.assert_allclose(with_the, without, atol=1e-6)
    counted_twice, once = packaged.embed(["meals meals travel", "meals travel"], _one)
    assert float(counted_twice @ once) < 1.0 - 1e-4  # a repeated word counts twice


def test_texts_are_pooled_alone_whatever_else_is_in_the_batch(packaged: Table) -> None:
    batch = packaged.embed(["sick leave", "x" * 20_000, "parental leave policy"], _one)
    alone = packaged.embed(["parental leave policy"], _one)
    assert batch[2].tolist() == alone[0].tolist()  # bit for bit: a text's sums run in its own order


def test_a_text_longer_than_a_pooling_run_is_the_same_alone_or_after_others(
    packaged: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings, "_ENTRIES", 3)  # runs of three (text, word) entries
    long = "meals travel hotel lodging per diem receipts flights"
    others = ["sick leave", "parental leave policy", "a b c d"]
    alone = packaged.embed([long], _one)[0]
    for before in range(len(others) + 1):
        batch = packaged.embed([*others[:before], long, *others[before:]], _one)
        assert batch[before].tolist() == alone.tolist(), before
    monkeypatch.setattr(embeddings, "_ENTRIES", 8192)
    assert np.allclose(packaged.embed([long], _one)[0], alone, atol=1e-6)  # runs change sums, not meaning


def test_vectors_are_the_same_in_a_fresh_process(packaged: Table) -> None:
    here = packaged.embed(["How do I request time off?"], _one)[0]
    code = (
        "import sys; from retriever.text import embeddings; t = embeddings.table(); "
        "sys.stdout.buffer.write(t.embed(['How do I request time off?'], lambda w: 1.0)[0].tobytes())"
    )
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, check=True).stdout
    assert np.frombuffer(there, dtype=np.float32).tolist() == here.tolist()


def test_a_missing_table_logs_once_and_leaves_no_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(embeddings, "TABLE_PATH", tmp_path / "gone.npz")
    monkeypatch.setattr(embeddings, "_loaded", [])
    with caplog.at_level(logging.WARNING, logger="retriever.text.embeddings"):
        assert embeddings.table() is None
        assert embeddings.table() is None
    assert [r.getMessage() for r in caplog.records if "word embeddings unavailable" in r.getMessage()] == [
        f"word embeddings unavailable ({tmp_path / 'gone.npz'}: [Errno 2] No such file or directory: "
        f"'{tmp_path / 'gone.npz'}'); ranking goes by words alone"
    ]


def test_a_corrupt_table_is_refused_with_its_path(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    np.savez(
        bad, vectors=np.zeros((3, 4), np.int8), scales=np.ones(2, np.float32), vocab=np.frombuffer(b"a\nb\nc", np.uint8)
    )
    with pytest.raises(ValueError, match=r"bad\.npz holds mismatched arrays"):
        Table.load(bad)


def test_the_lexicon_of_split_words_changes_no_vector(packaged: Table) -> None:
    texts = ["Dining expenses while travelling", "meals, hotels and flights", "naïve café déjà vu"]
    fresh = Table(packaged.vectors, packaged.scales, packaged.wordpiece)
    first = fresh.embed(texts, _one)
    again = fresh.embed(texts[::-1], _one)[::-1]  # every word known now, met in another order
    halved = fresh.embed(texts, lambda w: 0.5)  # another weight function: the lexicon starts over
    np.testing.assert_allclose(first, again, atol=1e-6)
    np.testing.assert_array_equal(first, fresh.embed(texts, _one))
    np.testing.assert_allclose(halved, first, atol=1e-6)  # a uniform weight scales, then normalising undoes it


def test_words_past_the_split_budget_are_left_out(packaged: Table, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embeddings, "WORD_CHARS", 9)  # "alpha" and "beta" fit; "gamma" is past the budget
    cut = packaged.embed(["alpha beta gamma alpha"], _one)
    np.testing.assert_allclose(cut, packaged.embed(["alpha beta alpha"], _one), atol=1e-6)
    assert embeddings.bags(["alpha beta gamma"]).words == ("alpha", "beta")
