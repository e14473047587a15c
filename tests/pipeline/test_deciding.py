"""deciding: which questions ask what was decided, and by which words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.pipeline.deciding import DECIDING_CHARS, asks_earlier, asks_why, decision_words
from retriever.text import analyzer


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("What did the on-call team decide about paging?", {"decid"}),
        ("What did Miguel's team decide about Northwind?", {"decid"}),
        ("Who leads Riverbed, and what did we decide about the free tier?", {"decid"}),
        ("Any decision on pricing yet?", {"decis"}),
        ("What were the key decisions at the Q4 kickoff?", {"decis"}),
        ("Яке рішення ухвалили щодо офісу?", {"рішен", "ухвал"}),
        ("What decisions were made at the Q4 kickoff?", {"decis"}),
    ],
)
def test_a_decision_word_in_a_frame_that_says_a_choice_was_made_is_read(text: str, words: set[str]) -> None:
    assert decision_words(text) == words


@pytest.mark.parametrize(
    "text",
    [
        "What was the agreed SLA for Tier 1?",
        "What was the approved travel budget?",
        "Which engineers have picked up the tickets?",
        "Quick question: why did we choose Flink?",
        "For Riverbed, who chose Flink?",
        "Які рішення ще не ухвалені?",
        "Де зберігаються рішення?",
        "Як ми приймаємо рішення?",
        "Що таке рішення DEC-0052?",
        "Why, in the end, did we choose Flink?",
        "How did we decide on Flink?",
        "What was the reason we chose Flink?",
    ],
)
def test_a_decision_word_naming_a_thing_or_in_a_clause_asking_who_or_why_is_not(text: str) -> None:
    assert decision_words(text) == frozenset()


@given(st.text(max_size=600))
def test_any_text_asks_a_decision_or_not_and_only_its_opening_is_read(text: str) -> None:
    words = decision_words(text)
    assert words <= frozenset(analyzer.terms(text[:DECIDING_CHARS]))
    assert decision_words(" " * DECIDING_CHARS + text) == frozenset()


@pytest.mark.parametrize(
    "text",
    [
        "Why did we choose Flink for Riverbed?",
        "Quick one: why was the Warsaw office rejected?",
        "What was the reason for raising the Starter price?",
        "What were the main reasons behind the free-tier decision?",
        "How come we dropped Redshift?",
        "Чому відхилили ідею офісу у Варшаві?",
        "Яка причина відмови від безкоштовного тарифу?",
    ],
)
def test_a_question_asking_for_a_reason_asks_why(text: str) -> None:
    assert asks_why(text)


@pytest.mark.parametrize(
    "text",
    [
        "What did we decide about the free tier?",
        "Who owns the reason field of a decision record?",
        "What is a reasonable laptop budget?",
        "Where is the Whyte Street office?",
    ],
)
def test_a_question_not_asking_for_a_reason_does_not(text: str) -> None:
    assert not asks_why(text)


def test_why_is_read_in_the_opening_only() -> None:
    assert not asks_why("x" * DECIDING_CHARS + " why?")


@pytest.mark.parametrize(
    "text",
    [
        "Which engine was originally chosen for Riverbed ingestion before Flink?",
        "What was the previous decision on hosting?",
        "What did we use initially?",
        "Which tool did we use at first?",
        "Що обрали спочатку для Riverbed?",
    ],
)
def test_a_question_about_what_held_before_asks_earlier(text: str) -> None:
    assert asks_earlier(text)


@pytest.mark.parametrize(
    "text",
    [
        "Which engine do we use for Riverbed?",
        "What replaced Kafka Streams?",
        "What must I do before my first day?",
        "Which engine do we use now for Riverbed instead of the previous Kafka Streams design?",
        "What did we decide for Riverbed ingestion after the earlier load test failed?",
        "Why did we replace the original Kafka Streams plan for Riverbed with Flink?",
        "Is the Flink decision for Riverbed final, or will we go back to the former plan?",
    ],
)
def test_a_question_about_what_holds_now_or_what_replaced_it_does_not(text: str) -> None:
    assert not asks_earlier(text)
