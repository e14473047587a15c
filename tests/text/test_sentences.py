"""Sentences and a paragraph's statements: abbreviations and export gaps respected, property blocks a line each."""

from __future__ import annotations

from retriever.text.sentences import split_sentences, statement_pieces


def test_sentences_split_on_terminal_punctuation_with_their_offsets() -> None:
    text = "We ship weekly. Reviews happen on Friday! Is that ok? Yes."
    assert split_sentences(text) == [
        (0, "We ship weekly."),
        (16, "Reviews happen on Friday!"),
        (42, "Is that ok?"),
        (54, "Yes."),
    ]
    for offset, sentence in split_sentences(text):
        assert text[offset:].startswith(sentence)


def test_abbreviations_like_eg_and_ie_do_not_end_a_sentence() -> None:
    assert split_sentences("Use tools, e.g. Jira and Linear. Then report.") == [
        (0, "Use tools, e.g. Jira and Linear."),
        (33, "Then report."),
    ]
    assert split_sentences("That is, i.e. Linear, the tool. Next one.") == [
        (0, "That is, i.e. Linear, the tool."),
        (32, "Next one."),
    ]


def test_an_abbreviation_after_a_bracket_or_quote_does_not_end_a_sentence() -> None:
    assert split_sentences("A buyer (e.g. Ana Ferreira for Helix) pairs up. Next.") == [
        (0, "A buyer (e.g. Ana Ferreira for Helix) pairs up."),
        (48, "Next."),
    ]
    assert split_sentences("See «Fig. 3» there. Done.") == [(0, "See «Fig. 3» there."), (20, "Done.")]


def test_ukrainian_abbreviations_such_as_street_do_not_end_a_sentence() -> None:
    assert split_sentences("Офіс на Подолі, вул. Верхній Вал, 72. Приходьте.") == [
        (0, "Офіс на Подолі, вул. Верхній Вал, 72."),
        (38, "Приходьте."),
    ]
    assert split_sentences("Є знижки, напр. Квитки в театр. Далі.")[0] == (0, "Є знижки, напр. Квитки в театр.")


def test_us_and_titles_like_dr_do_not_end_a_sentence() -> None:
    assert split_sentences("The U.S. Office opened. It is big.") == [(0, "The U.S. Office opened."), (24, "It is big.")]
    assert split_sentences("Mr. Brown met Dr. Who. They talked.") == [
        (0, "Mr. Brown met Dr. Who."),
        (23, "They talked."),
    ]


def test_a_title_before_a_speakers_name_does_not_split_the_turn() -> None:
    # A transcript's label: the turn had split into "Hon." and the rest, and "Hon." stood between question and answer.
    turn = (
        "Right Hon. Justin Trudeau: Our priority is clear. Hon. Anita Anand (Minister): We are working. Rev. Ames: Yes."
    )
    assert [s for _, s in split_sentences(turn)] == [
        "Right Hon. Justin Trudeau: Our priority is clear.",
        "Hon. Anita Anand (Minister): We are working.",
        "Rev. Ames: Yes.",
    ]
    assert [s for _, s in split_sentences("Prof. Lee and Sen. Ward met Lt. Col. Hart. Done.")] == [
        "Prof. Lee and Sen. Ward met Lt. Col. Hart.",
        "Done.",
    ]


def test_initials_do_not_end_a_sentence() -> None:
    assert split_sentences("Contact J. Smith about it. He knows.") == [
        (0, "Contact J. Smith about it."),
        (27, "He knows."),
    ]


def test_offsets_count_newlines_and_cyrillic_capitals_start_sentences() -> None:
    assert split_sentences("First line.\nSecond line here.") == [(0, "First line."), (12, "Second line here.")]
    assert split_sentences("Версія готова. Клієнти задоволені.") == [(0, "Версія готова."), (15, "Клієнти задоволені.")]


def test_text_without_terminal_punctuation_is_one_sentence_and_empty_text_none() -> None:
    assert split_sentences("No terminal punctuation") == [(0, "No terminal punctuation")]
    assert split_sentences("") == []


def test_a_closing_quote_stays_with_its_sentence() -> None:
    # Suspected bug: the boundary match starts at the closing quote/paren, so the first
    # sentence is cut before it ('He said "Stop.' and '(See the appendix.').
    assert split_sentences('He said "Stop." Then left.') == [(0, 'He said "Stop."'), (16, "Then left.")]
    assert split_sentences("(See the appendix.) Then go.") == [(0, "(See the appendix.)"), (20, "Then go.")]


def test_an_export_gap_after_a_stop_parts_sentences() -> None:
    text = "Releases go out at 14:00&nbsp;CET.&nbsp;A release needs two approvals.<br/><BR>Hotfixes skip it."
    assert [s for _, s in split_sentences(text)] == [
        "Releases go out at 14:00&nbsp;CET.",
        "A release needs two approvals.",
        "Hotfixes skip it.",
    ]


def test_a_block_of_key_value_lines_is_a_statement_a_line() -> None:
    text = "Owner: Ana Costa\nTier: 1\nOn-call: payments-oncall"
    assert list(statement_pieces(text)) == [(0, "Owner: Ana Costa"), (17, "Tier: 1"), (25, "On-call: payments-oncall")]


def test_a_paragraph_with_one_line_that_is_no_property_is_split_into_sentences() -> None:
    text = "Owner: Ana Costa\nShe took it over in May. Ask her first."
    assert [s for _, s in statement_pieces(text)] == ["Owner: Ana Costa\nShe took it over in May.", "Ask her first."]
    assert list(statement_pieces("Owner: Ana Costa")) == [(0, "Owner: Ana Costa")]  # one line: as before


def test_a_property_line_of_several_sentences_is_split_into_them() -> None:
    text = "Q: Is there one answer?\nA: There is not. We recommend a review."
    assert list(statement_pieces(text)) == [
        (0, "Q: Is there one answer?"),
        (24, "A: There is not."),
        (41, "We recommend a review."),
    ]
