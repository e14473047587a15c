"""The words by which a question asks: a collective subject, the verb of change, the adjective after "how"."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.pipeline.asking import asking_terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("What did the team say about recording conventions?", {"team"}),
        ("What changed in Pulse 4.3?", {"chang"}),
        ("How long are backups kept, and how often are they tested?", {"long", "often"}),
        # the same words naming a topic
        ("Which team owns billing?", set()),
        ("Why did the query-planner change land in 4.2.1?", set()),
        ("What is the long-term plan for the office?", set()),
    ],
)
def test_a_word_asks_by_its_place_in_the_question(text: str, terms: set[str]) -> None:
    assert asking_terms(text) == terms


@given(st.text(max_size=300))
def test_any_text_gives_terms_of_its_own(text: str) -> None:
    assert isinstance(asking_terms(text), frozenset)
