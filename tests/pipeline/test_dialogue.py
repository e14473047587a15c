"""Who tells of whose life in a two-person conversation: reactions, and turns compared by meaning."""

from __future__ import annotations

import pytest
from conftest import TreeFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.memory.memory import Memory
from retriever.pipeline import dialogue
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Fact
from retriever.pipeline.speakers import Speakers


@pytest.fixture(scope="module")
def chat_memory(tmp_path_factory: pytest.TempPathFactory) -> Memory:
    root = tmp_path_factory.mktemp("chat")
    (root / "chat.md").write_text("# Chat\n\n## Session 1\n\nRuth: I go to pottery on Thursdays.\n", encoding="utf-8")
    # Built before the per-test state folder is set: its own state folder, in its own temp folder.
    return Memory.open(root, Settings.from_env(state_dir=tmp_path_factory.mktemp("state")))


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


@settings(max_examples=60, deadline=None)
@given(
    names=st.lists(st.text(min_size=1, max_size=12), min_size=1, max_size=3),
    texts=st.lists(st.text(max_size=80), min_size=1, max_size=4),
    question=st.text(max_size=120),
)
def test_any_names_and_texts_give_one_cosine_per_fact(
    chat_memory: Memory, names: list[str], texts: list[str], question: str
) -> None:
    facts = tuple(_turn(f"{names[i % len(names)]}: {text}", names[i % len(names)]) for i, text in enumerate(texts))
    cosines = dialogue.told(chat_memory, analyze(question or "?"), facts, Speakers(frozenset(names[:1]), frozenset()))
    assert cosines == () or (len(cosines) == len(facts) and all(-1.0001 <= c <= 1.0001 for c in cosines))


def test_front_matter_fields_are_no_statements_of_the_conversation() -> None:
    from retriever.pipeline.results import Candidate, Target

    target = Target(0, "chat.md", 0, "Chat", "m/chat.md", (1, 9), 1.0, 1.0, "")
    turns = [Candidate(f"{who}: line {i}", target, (i, i), "sentence", speaker=who) for i, who in enumerate("ABABAB")]
    fields = [Candidate(f"Summary number {i} of the chat.", target, (1, 1), "field") for i in range(3)]
    fact = Fact("A: line 0", 0.5, "m/chat.md", "Chat", (0, 0), "chat.md", None, "Chat", 0, speaker="A")
    assert dialogue.two_people([*fields, *turns], [fact])


def test_the_spoken_share_is_the_share_of_turns_read_from_the_best_facts_document(make_tree: TreeFactory) -> None:
    meeting = "# Meeting\n\n## Turns 1-3\n\nAnna: The budget is tight.\n\nBen: We cut travel.\n\n(The budget slides.)\n"
    page = "# Budget\n\nThe travel budget is 5,000 euros.\n"
    retriever = Retriever(make_tree({"meeting.md": meeting, "budget.md": page}))
    run = retriever.retrieve("What did Anna say about the budget?").run
    facts = run.retrieval.facts if run.retrieval else ()
    assert facts and facts[0].rel_path == "meeting.md"
    read = [c for c in run.candidates if c.target.rel_path == "meeting.md" and c.kind != "field"]
    assert dialogue.spoken_share(run.candidates, facts) == pytest.approx(sum(bool(c.speaker) for c in read) / len(read))
    assert 0 < dialogue.spoken_share(run.candidates, facts) < 1  # two turns, and a line no one says
    on_page = [f for f in facts if f.rel_path == "budget.md"]
    assert dialogue.spoken_share(run.candidates, on_page) == 0.0
    assert dialogue.spoken_share(run.candidates, ()) == 0.0
