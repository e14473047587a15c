"""The Ukrainian-English lexicon: its table read as the analyzer reads text, both ways, and its shipped terms."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text import analyzer, lexicon
from retriever.text.lexicon import Lexicon, parse, to_json

TABLE = (
    "# a comment\n"
    "клієнт, клієнти, клієнтів\tclient, customer\n"
    "відпустка, відпустки\tvacation, time off\n"
    "штаб-квартира\theadquarters\n"
    "no tab on this line\n"
)


def test_a_ukrainian_form_stands_for_its_english_words_and_an_english_word_for_the_forms() -> None:
    table = parse(TABLE)
    assert table.bridges("клієн") == (frozenset({"client"}), frozenset({"custom"}))
    assert frozenset({"клієн"}) in table.bridges("client")


def test_an_english_phrase_is_one_alternate_of_all_its_words_and_stands_for_no_ukrainian_word() -> None:
    table = parse(TABLE)
    assert frozenset({"time", "off"}) in table.bridges("відпу")
    assert table.bridges("time") == ()


def test_a_hyphenated_form_stands_only_for_its_whole_compound() -> None:
    table = parse(TABLE)
    assert table.bridges("штаб-квартира") == (frozenset({"headquart"}),)
    assert table.bridges("штаб") == ()


def test_the_shipped_terms_file_is_the_shipped_table_parsed() -> None:
    """Rebuild it with ``python scripts/build_lexicon.py`` after editing the table or the analyzer."""
    source = lexicon.TABLE_PATH.read_bytes()
    assert lexicon.TERMS_PATH.read_text(encoding="utf-8") == to_json(parse(source.decode("utf-8")), source)


def test_a_terms_file_made_from_another_table_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, terms = tmp_path / "t.tsv", tmp_path / "t.json"
    table.write_text(TABLE, encoding="utf-8")
    terms.write_text(to_json(Lexicon({"клієн": (frozenset({"wrong"}),)}), b"another table"), encoding="utf-8")
    monkeypatch.setattr(lexicon, "TABLE_PATH", table)
    monkeypatch.setattr(lexicon, "TERMS_PATH", terms)
    assert lexicon._load().bridges("клієн") == (frozenset({"client"}), frozenset({"custom"}))


def test_a_missing_table_bridges_nothing_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(lexicon, "TABLE_PATH", tmp_path / "missing.tsv")
    with caplog.at_level(logging.WARNING):
        assert lexicon._load() == Lexicon()
    assert "questions are not bridged" in caplog.text


@given(st.text(max_size=400))
def test_any_text_parses_into_a_lexicon(text: str) -> None:
    table = parse(text)
    assert all(isinstance(s, frozenset) for v in table.to_english.values() for s in v)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Хто наші основні enterprise-клієнти і які акаунти мають найвищий recurring revenue?", "uk"),
        ("Who owns the Helix project?", "en"),
        ("Who is Катерина Мельник?", "en"),  # as many words of each: the first says
        ("Що таке shadow traffic?", "uk"),
        ("", "en"),
    ],
)
def test_the_language_to_answer_in_is_the_one_most_of_the_words_are_in(text: str, expected: str) -> None:
    assert lexicon.language(text) == expected


def test_a_stem_two_lines_share_translates_nothing_and_their_forms_still_translate_as_typed() -> None:
    """"відкласти" (postpone) and "відключення" (outage) stem alike: by stem, "delay" pulled every outage page."""
    table = parse("відкласти, відклали\tpostpone\nвідключення, відключень\toutage\n")
    stem = analyzer.terms("відкласти")[0]
    assert stem == analyzer.terms("відключення")[0]
    assert table.bridges(stem) == () and table.bridges("postpon") == ()
    assert table.bridges(stem, "Відклали") == (frozenset({"postpon"}),)
    assert table.bridges(stem, "відключень") == (frozenset({"outag"}),)
