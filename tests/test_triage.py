"""Stage 2: low-information prompts are skipped; follow-ups are rewritten from session history."""

from __future__ import annotations

import pytest

from retriever.triage import is_follow_up, is_low_information, rewrite, triage


@pytest.mark.parametrize(
    "prompt",
    [
        "hi",
        "Hello there!",
        "thanks!",
        "ok 👍",
        "👍",
        "ok cool, cheers",
        "got it",
        "???",
        "дякую",
        "привіт!",
        "Thank you so much",
    ],
)
def test_chit_chat_is_low_information(prompt: str) -> None:
    assert is_low_information(prompt)
    assert triage(prompt).decision == "skip"
    assert triage(prompt).rewritten_query is None


@pytest.mark.parametrize(
    "prompt",
    [
        "MRR?",
        "DEC-0054",
        "thanks, and who owns billing?",
        "Who is Olena?",
        "ok, what is the on-call rotation?",
        "Хто відповідає за київський офіс?",
        "olena@brightwave.io",
    ],
)
def test_prompts_with_any_content_word_are_retrieved(prompt: str) -> None:
    assert not is_low_information(prompt)
    result = triage(prompt)
    assert result.decision == "retrieve"
    assert result.rewritten_query == prompt


def test_retrieve_reasoning_names_the_content_words() -> None:
    assert triage("Who owns the billing migration?").reasoning == (
        "The prompt asks about company-specific content (owns, billing, migration); searching the memory."
    )


@pytest.mark.parametrize(
    "prompt", ["and who owns it?", "What about its budget?", "who leads that team?", "а хто за це відповідає?"]
)
def test_short_prompts_leaning_on_context_are_follow_ups(prompt: str) -> None:
    assert is_follow_up(prompt)


@pytest.mark.parametrize("prompt", ["Who owns the billing migration project for Northwind?", "DEC-0054"])
def test_self_contained_prompts_are_not_follow_ups(prompt: str) -> None:
    assert not is_follow_up(prompt)


def test_follow_up_is_rewritten_with_the_most_recent_prior_prompt() -> None:
    history = ["What is our leave policy?", "thanks", "Tell me about the billing migration project"]
    result = triage("and who owns it?", history)
    assert result.decision == "retrieve"
    assert result.rewritten_query == "and who owns it? (context: billing migration project)"
    assert "Follow-up" in result.reasoning


def test_follow_up_without_history_is_left_as_is() -> None:
    assert rewrite("and who owns it?", []) is None
    assert triage("and who owns it?").rewritten_query == "and who owns it?"


def test_only_the_last_three_prior_prompts_are_considered() -> None:
    history = ["billing migration", "hi", "thanks", "ok"]
    assert rewrite("and who owns it?", history) is None
