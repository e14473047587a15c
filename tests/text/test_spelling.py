"""British and American spellings: the table and the analyser reading both as one word."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text import analyzer, spelling


@pytest.mark.parametrize(
    ("british", "american"),
    [
        ("colour", "color"),
        ("organisation", "organization"),
        ("licence", "license"),
        ("behaviours", "behaviors"),
        ("analysed", "analyzed"),
        ("programme", "program"),
        ("centre", "center"),
        ("travelling", "traveling"),
        ("judgement", "judgment"),
    ],
)
def test_a_british_spelling_is_read_as_the_same_term_as_the_american(british: str, american: str) -> None:
    assert analyzer.terms(british) == analyzer.terms(american)
    assert analyzer.terms(british.capitalize()) == analyzer.terms(american)


def test_draught_stays_apart_from_a_draft() -> None:
    assert analyzer.terms("draught") != analyzer.terms("draft")


def test_words_without_a_british_form_are_left_as_they_are() -> None:
    assert spelling.american("policy") == "policy"
    assert spelling.american("color") == "color"


def test_the_shipped_table_holds_pairs_of_different_lowercase_words() -> None:
    text = spelling.TABLE_PATH.read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line and not line.startswith("#")]
    pairs = spelling.parse(text)
    assert len(pairs) == len(rows) > 1_500
    assert all(b != a and b.isalpha() and a.isalpha() and b.islower() for b, a in pairs.items())


def test_malformed_lines_are_passed_over() -> None:
    text = "# a comment\n\ncolour\tcolor\nonly-one-word\ntoo\tmany\twords\nsame\tsame\nCaps\tcaps\ngrey\tgray\n"
    assert spelling.parse(text) == {"colour": "color", "grey": "gray"}


def test_a_missing_table_leaves_every_word_as_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(spelling, "TABLE_PATH", tmp_path / "absent.tsv")
    spelling._pairs.cache_clear()
    try:
        with caplog.at_level(logging.WARNING, logger="retriever.text.spelling"):
            assert spelling.american("colour") == "colour"
        assert "spelling table" in caplog.text
    finally:
        spelling._pairs.cache_clear()


@given(st.text(max_size=200))
def test_any_text_parses_to_pairs_of_words(text: str) -> None:
    assert all(b.isalpha() and a.isalpha() for b, a in spelling.parse(text).items())
