"""Speakers: a question naming a transcript's speaker credits that speaker's turns only."""

from __future__ import annotations

from conftest import TreeFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.pipeline.speakers import MIN_TURNS, Speakers, Turn, named_speakers, opener, silent, turns
from retriever.text.models import Unit

TRANSCRIPT = """# Meeting 7

## Turns 0-3

Grad A: The budget is small.

Grad B: The budget, right.

Grad A: Yes.

Grad B: Fine.

## Turns 4-7

Grad B: The budget is large.

Grad A: Right.

Grad B: Yes.

Grad A: Fine.
"""


def test_a_named_speakers_turn_outranks_another_speakers_turn_on_the_same_topic(make_tree: TreeFactory) -> None:
    root = make_tree({"meeting.md": TRANSCRIPT})
    retriever = Retriever(root, Settings(state_dir=root.parent / "state"))
    facts = retriever.retrieve("What did Grad B say about the budget?").facts
    # Before: Grad A's first turn led (the same words, "grad" and "budget", in the stronger block).
    assert facts[0].speaker == "Grad B" and facts[0].statement.endswith("Grad B: The budget is large.")


def test_a_label_opening_few_statements_is_no_speaker() -> None:
    statements = ["Note: check the dates."] * (MIN_TURNS - 1) + ["The budget is set."]
    assert not named_speakers(map(opener, statements), "What does the note say about the budget?").named


def test_only_labels_the_question_names_as_whole_words_are_speakers() -> None:
    statements = ["Grad B: yes."] * MIN_TURNS + ["Grad A: no."] * MIN_TURNS + ["PhD D: maybe."] * MIN_TURNS
    speakers = named_speakers(map(opener, statements), "What did grad b and the PhD say?")
    assert speakers.named == {"Grad B"}
    assert speakers.terms == {"grad"}
    assert speakers.muted("Grad A") == {"grad"}
    assert speakers.muted("Grad B") == frozenset()


# Another meeting of the series, without a Grad B, that says "budget" more often.
OTHER_MEETING = """# Meeting 8

## Turns 0-5

Grad A: The budget, the budget again.

Grad C: The budget is the budget.

Grad A: Budget budget.

Grad C: The budget once more.

Grad A: Budget.

Grad C: Budget talk.
"""


def test_a_meeting_the_named_speaker_never_spoke_in_ranks_below_one_they_did(make_tree: TreeFactory) -> None:
    root = make_tree({"meeting7.md": TRANSCRIPT, "meeting8.md": OTHER_MEETING})
    retriever = Retriever(root, Settings(state_dir=root.parent / "state"))
    asked = retriever.retrieve("What did Grad B say about the budget?").facts
    unnamed = retriever.retrieve("What was said about the budget?").facts
    assert unnamed[0].rel_path == "meeting8.md"  # the words alone prefer the other meeting
    assert asked[0].rel_path == "meeting7.md" and asked[0].speaker == "Grad B"


def test_silent_documents_are_transcripts_where_no_named_speaker_takes_a_turn() -> None:
    grad_b = Speakers(frozenset({"Grad B"}), frozenset({"grad"}))
    read = [
        *[("m7.md", "Grad A"), ("m7.md", "Grad B"), ("m7.md", None)],  # Grad B speaks
        *[("m8.md", "Grad A")] * 9 + [("m8.md", None)],  # a transcript (9 of 10 turns), no Grad B
        *[("page.md", "Owner")] * 3 + [("page.md", None)] * 7,  # a page with a few "Owner:" lines
    ]
    assert silent(read, grad_b) == {"m8.md"}
    assert silent(read, Speakers()) == frozenset()  # a question that names no one


def _units(*lines: tuple[str, int]) -> list[Unit]:
    return [Unit("sentence", text, (line, line)) for text, line in lines]


def test_the_sentences_after_the_first_of_a_turn_are_its_speakers() -> None:
    units = _units(("Tom: I went to Lisbon.", 5), ("We ate custard tarts.", 5), ("Maya: Nice!", 7), ("Really.", 7))
    assert turns(units) == [Turn("Tom"), Turn("Tom", True), Turn("Maya"), Turn("Maya", True)]


def test_a_paragraph_after_a_blank_line_or_a_list_item_continues_no_turn() -> None:
    units = _units(("Tom: I went to Lisbon.", 5), ("The weather was fine.", 7))
    assert turns(units) == [Turn("Tom"), Turn()]
    item = [Unit("sentence", "Tom: I went.", (5, 5)), Unit("item", "a custard tart", (6, 6))]
    assert turns(item) == [Turn("Tom"), Turn()]


def test_a_turn_written_as_a_long_list_item_keeps_its_speaker_over_its_sentences() -> None:
    items = [
        Unit("item", "Tom: I went to Lisbon.", (3, 3)),
        Unit("item", "We ate custard tarts.", (3, 3)),  # the same item, split into sentences
        Unit("item", "Ana: Lucky you.", (4, 4)),
        Unit("item", "a packing list", (5, 5)),  # the next item: no turn of its own
    ]
    assert turns(items) == [Turn("Tom"), Turn("Tom", True), Turn("Ana"), Turn()]


def test_a_field_label_in_prose_does_not_carry_into_the_next_sentence() -> None:
    """"Owner: Iryna Bondarenko. Last reviewed at the roadmap review." had been shown as "Owner: Last reviewed…"."""
    prose = [
        Unit("sentence", "Owner: Iryna Bondarenko.", (3, 3)),
        Unit("sentence", "Last reviewed at the roadmap review.", (3, 3)),
        Unit("sentence", "The roadmap lists four releases.", (5, 5)),
    ]
    assert turns(prose) == [Turn("Owner"), Turn(), Turn()]


def test_a_continued_turn_is_framed_by_its_speaker(make_tree: TreeFactory) -> None:
    chat = "# Chat\n\n## Session 1\n\n" + "\n\n".join(
        ["Maya: I went to Lisbon last week. We ate a custard tart basically every two hours.", "Tom: Jealous!"] * 2
    )
    root = make_tree({"chat.md": chat})
    facts = Retriever(root, Settings(state_dir=root.parent / "state")).retrieve("How many custard tarts?").facts
    assert facts[0].statement == "Maya: We ate a custard tart basically every two hours."


def test_a_statement_without_a_leading_label_has_none() -> None:
    assert opener("Grad B: Goats eat cans.") == "Grad B"
    assert opener("Industrial Designer: plastic.") == "Industrial Designer"
    assert opener("the budget: small") is None
    assert opener("Time: 10:00") == "Time"


def test_a_role_or_seat_after_the_name_and_a_names_particles_are_part_of_the_label() -> None:
    # Parliamentary transcripts: such turns had no speaker at all.
    anand = "Hon. Anita Anand (Minister of Public Services and Procurement): We are working."
    assert opener(anand) == "Hon. Anita Anand"
    assert opener("Mr. Chris d'Entremont (West Nova, CPC): Thank you.") == "Mr. Chris d'Entremont"
    assert opener("The Chair (Hon. Anthony Rota (NipissingTimiskaming, Lib.)): I call this meeting to order.") == (
        "The Chair"
    )
    assert opener("Ana de la Cruz: hi") == "Ana de la Cruz"
    assert opener("Caroline (" + "x" * 200 + "): hi") is None  # no role runs on that long


def test_a_time_stamp_before_or_after_the_speakers_name_is_part_of_the_label() -> None:
    assert opener("[1:56 pm] Caroline: I went to the support group.") == "Caroline"
    assert opener("(10:32) Grad B: Goats eat cans.") == "Grad B"
    assert opener("Caroline (1:56 pm): I went.") == "Caroline"
    assert opener("Caroline [8 May 2023, 1:56 pm]: I went.") == "Caroline"
    assert opener("[a note that runs on far too long to be a time stamp] Caroline: hi") is None


@given(st.text(max_size=300))
@settings(max_examples=300, deadline=None)
def test_a_label_is_a_prefix_word_run_of_any_statement_or_none(statement: str) -> None:
    label = opener(statement)
    particles = {"de", "da", "das", "di", "do", "dos", "du", "del", "della", "der", "den", "van", "von", "la", "le"}
    words = [] if label is None else [w for w in label.split() if w not in {*particles, "bin", "ibn", "al"}]
    assert label is None or (label in statement and ": " in statement and len(words) <= 4)


@given(st.lists(st.tuples(st.sampled_from(["sentence", "item", "row"]), st.text(max_size=60), st.integers(0, 40))))
@settings(max_examples=200, deadline=None)
def test_every_unit_gets_one_speaker_or_none_and_only_a_label_seen_before_or_its_own(
    raw: list[tuple[str, str, int]],
) -> None:
    units = [Unit(kind, text, (line, line)) for kind, text, line in raw]  # type: ignore[arg-type]
    found = turns(units)
    assert len(found) == len(units)
    for i, turn in enumerate(found):
        assert turn.speaker is None or turn.speaker in {opener(u.text) for u in units[: i + 1]}
        assert not turn.continues or (turn.speaker is not None and turn.speaker == found[i - 1].speaker)


@given(
    st.lists(st.tuples(st.sampled_from(["a.md", "b.md", "c.md"]), st.sampled_from([None, "Grad A", "Grad B"]))),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_a_silent_document_was_read_and_is_a_transcript_where_no_named_speaker_spoke(
    read: list[tuple[str, str | None]], names_grad_b: bool
) -> None:
    speakers = Speakers(frozenset({"Grad B"}), frozenset({"grad"})) if names_grad_b else Speakers()
    found = silent(read, speakers)
    for document in found:
        said = [speaker for d, speaker in read if d == document]
        assert "Grad B" not in said
        assert sum(s is not None for s in said) >= 0.9 * len(said) > 0
    assert names_grad_b or not found


def test_front_matter_fields_do_not_make_a_transcript_a_page(make_tree: TreeFactory) -> None:
    fields = "summary: Finance sync about the quarterly budget and travel cuts.\n"
    fields += "description: Transcript of the finance sync between Carol and Dan.\n"
    turns_said = "".join(f"{('Carol', 'Dan')[i % 2]}: The budget line {i} needs a budget cut.\n\n" for i in range(12))
    other = "---\ntitle: Standup\n---\n# Standup\n\nAlice: The budget for the new laptops is approved.\n\n"
    other += "Bob: Good, I will order them.\n\nAlice: Keep the receipts.\n\nBob: Sure.\n\nAlice: Thanks.\n"
    sync = f"---\ntitle: Finance sync\n{fields}---\n# Finance sync\n\n{turns_said}"
    root = make_tree({"sync.md": sync, "standup.md": other})
    facts = Retriever(root, Settings.from_env()).retrieve("What did Alice say about the budget?").facts
    assert facts[0].statement == "Alice: The budget for the new laptops is approved."


def test_front_matter_fields_are_no_paragraphs_when_turns_are_counted() -> None:
    fields = [Unit("field", f"Summary {i} of the standup notes.", (i + 2, i + 2)) for i in range(3)]
    said = [Unit("sentence", "Alice: The budget is approved.", (10, 10)), Unit("sentence", "It was quick.", (10, 10))]
    said.append(Unit("sentence", "Bob: Good.", (12, 12)))
    assert [(t.speaker, t.continues) for t in turns([*fields, *said])][3:] == [
        ("Alice", False),
        ("Alice", True),
        ("Bob", False),
    ]
