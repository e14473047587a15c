"""Who tells of whose life in a two-person conversation: reactions, and turns compared by meaning."""

from __future__ import annotations

import pytest
from conftest import TreeFactory

from retriever import Retriever
from retriever.pipeline import dialogue
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Fact
from retriever.pipeline.speakers import Speakers


def _turn(statement: str, speaker: str) -> Fact:
    return Fact(statement, 0.5, "m/chat.md", "Chat > Session 1", (1, 1), "chat.md", None, "Chat", 0, speaker=speaker)


@pytest.mark.parametrize(
    ("statement", "speaker", "reacts"),
    [
        ("Session 3 — 15 April 2023, 4:05 pm: Owen: Lisbon!", "Owen", True),
        ("Marta: A piano!", "Marta", True),
        ("Owen: How was Lisbon?", "Owen", True),
        ("Diego: I own a food truck!", "Diego", False),
        ("Nadia: Priya and I have booked Lisbon.", "Nadia", False),
    ],
)
def test_a_question_or_a_bare_exclamation_is_a_reaction_not_a_claim(statement: str, speaker: str, reacts: bool) -> None:
    assert dialogue.reacts(statement, speaker) is reacts


def test_a_turn_is_compared_in_meaning_without_the_names_of_who_speaks(make_tree: TreeFactory) -> None:
    memory = Retriever(make_tree({"chat.md": "# Chat\n\n## Session 1\n\nRuth: I go to pottery on Thursdays.\n"})).memory
    query = analyze("What did Ruth make at her pottery class?")
    facts = tuple(_turn(f"{who}: The bowl cracked in the kiln.", who) for who in ("Ruth", "Kwame"))
    named = Speakers(frozenset({"Ruth"}), frozenset({"ruth"}))

    ruth, kwame = dialogue.told(memory, query, facts, named)
    assert ruth == pytest.approx(kwame) and ruth > 0.0
