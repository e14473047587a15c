"""Tests of ``pipeline.bonuses``: what a statement's form adds to its rank."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.pipeline import bonuses, ranges
from retriever.pipeline.results import Candidate, Scored, Target


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("What changed in Pulse 4.3?", ("4.3",)),
        ("Is v2.10.1 out, and 3.0?", ("2.10.1", "3.0")),
        ("Who approves a 12.5% discount?", ()),  # an amount, not a version
        ("Can I spend €2.5 on it?", ()),
        ("Ask about 4.3 and 4.3 again", ("4.3",)),
        ("Released on 2026-11-10", ()),
    ],
)
def test_versions_are_the_dotted_numbers_a_text_names_not_its_amounts(text: str, found: tuple[str, ...]) -> None:
    assert bonuses.versions(text) == found


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What changed in Pulse 4.3?", ("4.3",)),
        ("What is in release 4.3, and v2.1?", ("4.3", "2.1")),
        ("Коли запланований реліз 4.4.0?", ("4.4.0",)),
        ("Who works 0.5 FTE?", ()),  # an amount, an hour, a date: no version asked (their sections had been halved)
        ("Is the office open at 8.30?", ()),
        ("What happened on 12.03.2025?", ()),
    ],
)
def test_a_question_asks_of_a_version_it_names_by_a_name_a_v_or_the_word(question: str, asked: tuple[str, ...]) -> None:
    assert bonuses.asked_versions(question) == asked


@given(st.text(alphabet="0123456789.v%€ ", max_size=300))
def test_versions_are_few_and_each_a_dotted_number(text: str) -> None:
    found = bonuses.versions(text)
    assert len(found) <= 8
    assert all("." in v and v.replace(".", "").isdigit() for v in found)


_NOTES = (
    "---\ntitle: Pulse Release Notes\naliases: [Pulse 4.3.0, Pulse 4.2.1]\n---\n# Pulse Release Notes\n\n"
    "## 4.3.0 — 2026-11-10\n\n- Insights Copilot closed beta.\n- Report templates in Dutch.\n\n"
    "## 4.2.1 — 2026-10-02\n\n- Patch: a query-planner change in 4.2.0 made dashboards time out.\n"
)


def test_a_changelogs_section_headed_by_the_asked_version_answers_what_changed_in_it(make_tree: TreeFactory) -> None:
    # The aliases give every section "4.3", and 4.2.1's patch says "change": it had led "What changed in Pulse 4.3?".
    retriever = Retriever(make_tree({"notes.md": _NOTES}), Settings.from_env())
    facts = retriever.retrieve("What changed in Pulse 4.3?").facts
    assert facts[0].section_heading == "4.3.0 — 2026-11-10"
    assert retriever.retrieve("What changed in Pulse 4.2.1?").facts[0].section_heading == "4.2.1 — 2026-10-02"


def test_the_key_share_is_the_share_of_the_questions_weight_in_a_rows_first_cell() -> None:
    target = Target(0, "a.md", 0, "M > A", "m/a.md", (1, 9), 1.0, 1.0, "r")
    cells = (("Plan", "Starter"), ("Price", "990"))
    row = Candidate("Plan: Starter; Price: 990", target, (1, 1), "sentence", cells=cells)
    whole = {"starter": 3.0, "price": 1.0}
    assert bonuses.key_share(row, whole) == 0.75
    assert bonuses.key_share(dataclasses.replace(row, cells=()), whole) == 0.0


def test_the_relation_share_needs_both_the_column_and_its_cell() -> None:
    target = Target(0, "a.md", 0, "M > A", "m/a.md", (1, 9), 1.0, 1.0, "r")
    row = Candidate("x", target, (1, 1), "sentence", cells=(("Person", "Dmytro"), ("Reports to", "Olena")))
    assert bonuses._relation_share(row, {"report": 1.0, "olena": 2.0}) == 3.0
    assert bonuses._relation_share(row, {"olena": 2.0}) == 0.0  # the cell alone: a mention, not the relation
    assert bonuses._relation_share(row, {"report": 1.0}) == 0.0
    assert bonuses._relation_share(row, {"olena": 2.0, "report": 1.0}) == 0.0  # "Who does Olena report to?"


def test_a_range_lifts_only_a_statement_that_says_some_of_the_question_itself() -> None:
    target = Target(1, "a.md", 0, "A", "m/a.md", (1, 9), 1.0, 1.0, "")
    rows = [Scored(Candidate(text, target, (i, i), "sentence"), 0.5) for i, text in enumerate(
        ["Client meals: up to €60 a head.", "Coworking: claim up to €200 a month.", "Dinner with a client: €45."]
    )]
    amounts = ranges.asked("Can I expense a €50 client dinner?")
    lifted = bonuses.in_range(rows, amounts, 1.0, [True, False, True])
    assert [s.relevance for s in lifted] == [1.0, 0.5, 0.5]  # the coworking cap holds €50 but says no word asked


@pytest.mark.parametrize(
    ("statement", "speaker", "kind", "nothing"),
    [
        ("Grad B: Okay.", "Grad B", "sentence", True),
        ("Grad B: Yeah, yeah.", "Grad B", "sentence", True),
        ("Right.", "Grad B", "sentence", True),  # a turn's later statement carries no label
        ("Thanks, that's helpful!", None, "sentence", True),
        ("Grad B: We use wood for the casing.", "Grad B", "sentence", False),
        ("Yes, at 10:00 we meet.", "Grad B", "sentence", False),  # a colon inside, no label: read whole
        ("Okay.", None, "field", False),  # a front-matter field is the author's, never filler
        ("Okay, " * 20, None, "sentence", False),  # past 80 characters: not read for it
    ],
)
def test_a_statement_of_only_courtesy_or_assent_says_nothing(
    statement: str, speaker: str | None, kind: str, nothing: bool
) -> None:
    target = Target(0, "m.md", 0, "M > Turns 0-9", "m/m.md", (1, 9), 1.0, 1.0, "r")
    cand = Candidate(statement, target, (1, 1), kind, speaker=speaker)  # type: ignore[arg-type]
    assert bonuses.says_nothing(cand) is nothing


def test_a_statement_that_says_nothing_keeps_the_small_talk_share_of_its_rank() -> None:
    from retriever.pipeline.signals import DEFAULT

    target = Target(0, "m.md", 0, "M > Turns 0-9", "m/m.md", (1, 9), 1.0, 1.0, "r")
    asks = bonuses.Asks.of("What did they decide about the casing?")
    okay = Candidate("Grad B: Okay.", target, (1, 1), "sentence", speaker="Grad B")
    wood = Candidate("Grad B: We use wood for the casing.", target, (2, 2), "sentence", speaker="Grad B")
    assert bonuses.bonus(okay, asks, {"casing": 1.0}, DEFAULT, True) == DEFAULT.small_talk == 0.5
    assert bonuses.bonus(wood, asks, {"casing": 1.0}, DEFAULT, True) == 1.0


@pytest.mark.parametrize("text", ["Good point.", "Of course.", "Fair enough.", "Sounds good!", "Got it, thanks."])
def test_small_talk_phrases_say_nothing_as_the_full_test_says(text: str) -> None:
    from retriever.pipeline import triage

    target = Target(0, "m.md", 0, "M > Turns 0-9", "m/m.md", (1, 1), 1.0, 1.0, "r")
    # The prefilter had read the phrases' words as substance: "Good point." kept its rank (diff review F8).
    assert bonuses.says_nothing(Candidate(text, target, (1, 1), "sentence")) is triage.is_low_information(text) is True
