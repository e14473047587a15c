"""Tests of ``text.transliteration``: Ukrainian names in Latin letters."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text.transliteration import MAX_CHARS, latin


@pytest.mark.parametrize(
    ("word", "spellings"),
    [
        ("Олена", ("olena",)),
        ("Марченко", ("marchenko",)),
        ("Андрій", ("andrii", "andriy")),  # official, then the common "y"
        ("Київ", ("kyiv", "kyyiv")),
        ("Юлія", ("yuliia", "yuliya")),  # a first "ю" is "yu" in both
        ("Згорани", ("zghorany",)),  # "зг" is "zgh" in both, so it is not read as "ж"
        ("Щербина", ("shcherbyna",)),
        ("Мар'яна", ("mariana", "maryana")),  # the apostrophe is dropped
    ],
)
def test_a_ukrainian_word_is_spelt_officially_then_commonly(word: str, spellings: tuple[str, ...]) -> None:
    assert latin(word) == spellings


@pytest.mark.parametrize("word", ["Olena", "Москва-сіті", "ёж", "2026", ""])
def test_a_word_with_any_letter_but_ukrainian_ones_has_no_spelling(word: str) -> None:
    assert latin(word) == ()


@given(st.text(alphabet="абвгґдеєжзиіїйклмнопрстуфхцчшщьюя'ЖQ-1", max_size=200))
def test_spellings_are_at_most_two_plain_latin_words_of_a_bounded_length(word: str) -> None:
    spellings = latin(word)
    assert len(spellings) <= 2
    assert all(s.isascii() and s.isalpha() and len(s) <= 4 * MAX_CHARS for s in spellings)
