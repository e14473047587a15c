"""BERT's uncased WordPiece in pure Python: the same words and piece ids as Hugging Face's tokenizer."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.embeddings import table
from retriever.text.wordpiece import _SPACE_CHARS, WordPiece, _exact_words, _non_ascii_tokens, words

# Piece ids from Hugging Face tokenizers 0.22 (BertNormalizer lowercase, BertPreTokenizer, WordPiece) with the
# packaged vocabulary, [UNK] (id 1) left out: the retriever drops unknown words.
KNOWN = [
    ("embeddings", [6864, 7273, 3670, 1018]),  # em ##bed ##ding ##s
    ("Dining expenses", [6762, 10730]),
    ("accrue", [15225, 5823, 1066]),  # acc ##ru ##e
    ("Café naïve RÉSUMÉ", [6671, 14746, 12749]),  # accents stripped, lower-cased
    (
        "DEC-0054, v4.2.1 olena@brightwave.io",
        [10706, 14, 3005, 26012, 13, 61, 1552, 15, 19, 15, 18, 14592, 1535, 33, 3411, 15538, 15, 21837],
    ),
    ("使用API接口", [16931, 791]),  # each ideograph a word; three are not in the vocabulary
    ("Хто відповідає?", [203, 21922, 13153, 185, 28763, 28745, 28749, 18262, 28763, 28745, 9263, 28762, 32]),
    ("don't", [1126, 8, 59]),
    ("tab\tnew\nline\x00nul\u200bzero", [20631, 1050, 16520, 4316, 5293, 1083]),  # NUL and ZWSP join "linenulzero"
    ("👍🏽 ok", [6932]),
    ("x" * 101, []),  # longer than 100 characters: unknown
    ("\u00a0non\u2003breaking", [1515, 3914]),  # Unicode spaces separate words
    ("snake_case", [6491, 38, 1556]),
]


@pytest.fixture(scope="module")
def wordpiece() -> WordPiece:
    loaded = table()
    assert loaded is not None, "the packaged embedding table should load"
    return loaded.wordpiece


@pytest.mark.parametrize(("text", "ids"), KNOWN, ids=[text[:20] for text, _ in KNOWN])
def test_known_texts_get_the_reference_tokenizers_piece_ids(wordpiece: WordPiece, text: str, ids: list[int]) -> None:
    assert wordpiece.encode(text) == ids


def test_punctuation_splits_words_and_accents_are_stripped() -> None:
    assert words("Résumé: the CEO's plan (v2)!") == ["resume", ":", "the", "ceo", "'", "s", "plan", "(", "v2", ")", "!"]


def test_a_word_no_piece_covers_is_unknown_and_pieces_are_remembered(wordpiece: WordPiece) -> None:
    assert wordpiece.pieces("👍") == ()
    assert wordpiece.pieces("embeddings") is wordpiece.pieces("embeddings")  # cached, not split again


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=60))
def test_the_ascii_path_gives_the_same_words_as_the_character_rules(text: str) -> None:
    assert words(text) == _exact_words(text)


_MIXED = st.characters(codec="utf-8") | st.sampled_from(" \t\n\x0b\x0c\u00a0\u2003\u3000é’—日")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=_MIXED, max_size=80))
def test_mixed_text_gives_the_same_words_as_the_character_rules(text: str) -> None:
    assert words(text) == _exact_words(text)


# The pattern that found the non-ASCII tokens before: the reference ``_non_ascii_tokens`` must agree with.
_SPACES = " \t\n\r\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_OLD_NON_ASCII_TOKEN = re.compile(f"[^{_SPACES}]*[^\\x00-\\x7f{_SPACES}][^{_SPACES}]*")
_SPACY = st.sampled_from(
    [*"ab1-'. \t\n\r\x00\x01", "\u00a0", "\u2003", "\u3000", "é", "日", "’", "\u200b", "\U0001f44d"]
)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=_SPACY, max_size=40))
def test_non_ascii_tokens_are_the_spans_the_old_pattern_found(text: str) -> None:
    assert list(_non_ascii_tokens(text)) == [m.span() for m in _OLD_NON_ASCII_TOKEN.finditer(text)]


def test_the_space_characters_are_the_space_class() -> None:
    spaces = {chr(cp) for cp in range(0x3001) if re.fullmatch(f"[{_SPACES}]", chr(cp))}
    assert spaces == _SPACE_CHARS


def test_a_long_ascii_run_after_a_non_ascii_word_is_read_in_linear_time() -> None:
    # The old pattern retried every start of the run: 40,000 letters took 8.6 s, so these would take minutes.
    run = "a" * 200_000
    assert words(f"Café {run} naïve {run}") == ["cafe", run, "naive", run]
    assert words(f"{run}é {run}") == [f"{run}e", run]
