"""What kind of answer a question asks for, and whether a statement holds one."""

from __future__ import annotations

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever
from retriever.pipeline import expected
from retriever.pipeline.expected import KINDS, asked, definers, defines, held, holds, words_of
from retriever.text import analyzer


@pytest.mark.parametrize(
    ("question", "kinds"),
    [
        ("How long is each lightning talk slot?", {"amount"}),
        ("How much can I claim back for a desk?", {"amount"}),
        ("What percentage of the budget goes to travel?", {"amount"}),
        ("When did Lena sign the lease?", {"time"}),
        ("Who approves leave, and when must I ask?", {"time"}),
        ("What time does the all-hands start?", {"time"}),
        ("Скільки днів відпустки я маю?", {"amount"}),
        ("Коли відбувається зустріч команди?", {"time"}),
        ("What did Grad B say when discussing the budget?", set()),
        ("Who owns the billing migration?", set()),
        ("What is the travel policy?", set()),
        ("What are our core working hours?", {"amount"}),
        ("What is the spending limit for a client dinner?", {"amount"}),
        ("What's the maximum number of credit hours I can bank?", {"amount"}),
        ("What is the deadline for expense reports?", {"time"}),
        ("What’s the deadline for expense reports?", {"time"}),  # a typographic apostrophe
        ("What are the main risks of the project?", set()),
    ],
)
def test_a_question_asks_for_the_kinds_its_words_ask_for(question: str, kinds: set[str]) -> None:
    assert asked(question) == kinds


@pytest.mark.parametrize(
    ("statement", "kinds", "expected"),
    [
        ("Each slot will be 10 minutes, with questions after.", {"amount"}, True),
        ("You can claim back up to £200 in total.", {"amount"}, True),
        ("Parental leave lasts sixteen weeks at full pay.", {"amount"}, True),
        ("Lightning Talks are a meeting series within the tech talks.", {"amount"}, False),
        ("We meet every Friday afternoon.", {"time"}, True),
        ("Lena signed the lease on 3 March.", {"time"}, True),
        ("You may claim it back through ERPx.", {"time"}, False),
        ("Зустріч щоп'ятниці о 10:00.", {"time"}, True),
        ("Відпустка триває двадцять чотири дні.", {"amount"}, True),
        ("Each slot will be 10 minutes.", set(), False),
        ("Renewal: 2027-01-14", {"time"}, True),
        ("Standups start at 9:30 or 10am, and reviews are due by the 15th.", {"time"}, True),
        ("The renewal requires SCIM 2.0 and 3 admin seats.", {"time"}, False),  # figures, but no time
        ("The renewal requires SCIM 2.0 and 3 admin seats.", {"amount"}, True),
    ],
)
def test_a_statement_holds_an_answer_of_the_kind_asked(statement: str, kinds: set[str], expected: bool) -> None:
    assert holds(statement, frozenset(kinds)) is expected


def test_a_statement_holds_no_answer_by_the_questions_own_words() -> None:
    said = expected.words_of("What are our core hours?")
    assert not holds("Everyone is reachable during core hours.", frozenset({"amount"}), said)
    assert holds("Everyone is reachable during core hours.", frozenset({"amount"}))
    assert holds("Core hours are 10:00 to 14:00.", frozenset({"amount"}), said)  # a figure says it


def test_every_kind_asked_has_words_that_answer_it() -> None:
    assert {kind.name for kind in KINDS} == {"amount", "time"}
    assert all(kind.words and kind.stems for kind in KINDS)


def test_where_the_question_names_a_unit_a_unit_word_answers_nothing_and_a_figure_or_a_number_does() -> None:
    # "Outside core hours, organise your day as you like." had led "What are our core hours?" over 10:00–14:00.
    said = words_of("What are our core hours?")
    assert not holds("Outside core hours, organise your day as you like.", frozenset({"amount"}), said)
    assert holds("10:00–14:00 Lisbon time.", frozenset({"amount"}), said)
    assert holds("Forty hours a week.", frozenset({"amount"}), said)  # a number word, not a unit
    assert holds("Organise your day as you like.", frozenset({"amount"}), words_of("How long is the notice?"))


def test_a_figure_holds_every_kind_and_a_word_only_its_own() -> None:
    assert held("Doors open at 9:30.") == {"amount", "time"}
    assert held("We meet every Friday.") == {"time"}
    assert held("Зустріч у п’ятницю.") == {"time"}  # a typographic apostrophe, an inflected day
    assert held("Therefore we decided it.") == frozenset()


@given(st.text(max_size=2_000))
def test_any_text_is_read_without_error(text: str) -> None:
    kinds = asked(text)
    assert kinds <= {kind.name for kind in KINDS}
    assert holds(text, kinds) in (True, False)


ROW = (("Term", "Shadow traffic"), ("Meaning", "a rerun"))


@pytest.mark.parametrize(
    ("statement", "cells", "term"),
    [
        ("Term: Shadow traffic; Meaning: a rerun", ROW, "shadow traffic"),
        ("Shadow traffic is the practice of running the new pipeline on real data.", (), "shadow traffic"),
        ("**ADR** - Architecture Decision Record. A written record of choices.", (), "ADR"),
        ("MRR (monthly recurring revenue): contracted monthly subscription value.", (), "MRR"),
        ("NRR is defined as net revenue retention.", (), "NRR"),
        ("Sprint: 2-week development cycle.", (), "sprint"),
        ("Тіньовий трафік — це запуск нового конвеєра на реальних даних.", (), "тіньовий трафік"),
    ],
)
def test_a_statement_opening_with_the_term_alone_defines_it(
    statement: str, cells: tuple[tuple[str, str], ...], term: str
) -> None:
    assert defines(statement, cells, frozenset(analyzer.term_set(term)))


@pytest.mark.parametrize(
    ("statement", "cells"),
    [
        ("Milestone: Shadow traffic: Helix; Date: 2026-11-02", (("Milestone", "Shadow traffic: Helix"),)),
        ("Shadow traffic must run on isolated Kafka — learned the hard way.", ()),
        ("Riverbed build is complete; shadow traffic can start in November.", ()),
        ("Shadow traffic: learn about shadow traffic", ()),  # a link names the term again: not a definition
        ("Shadow traffic is paused until Monday.", ()),  # news: "is" without an article
        ("Shadow traffic - 40% of production this week", ()),  # a figure, not a meaning
        ("Shadow traffic:", ()),  # nothing follows
        ("Shadow traffic: see the Riverbed page.", ()),  # a pointer elsewhere
        ("Shadow traffic: €40k this quarter", ()),
        ("Traffic is light on Fridays.", ()),
    ],
)
def test_a_statement_about_more_than_the_term_or_naming_it_again_does_not_define_it(
    statement: str, cells: tuple[tuple[str, str], ...]
) -> None:
    assert not defines(statement, cells, frozenset(analyzer.term_set("shadow traffic")))
    assert not defines(statement, cells, frozenset())


@given(st.text(max_size=300), st.text(max_size=40))
def test_defines_answers_for_any_statement(statement: str, term: str) -> None:
    assert defines(statement, (), frozenset(analyzer.term_set(term))) in (True, False)


def test_only_a_statements_opening_is_read_for_what_it_defines() -> None:
    # Two unbounded runs of punctuation around the subject made 16,000 "!" take 7 minutes; each is bounded now,
    # and a subject past the opening is not looked for.
    assert not defines("!" * 20_000, (), frozenset({"pra"}))
    assert not defines("(" * 300 + " PRA - the Paperwork Reduction Act.", (), frozenset({"pra"}))
    assert defines("** PRA - the Paperwork Reduction Act.", (), frozenset({"pra"}))


def test_outside_a_glossary_a_colon_labels_rather_than_defines(make_tree: TreeFactory) -> None:
    label, dash = "Riverbed: behind schedule by two weeks.", "Riverbed - the pipeline that replaces Spark batches."
    meaning = "Riverbed: the streaming ingestion project of the data team."
    project = f"# Riverbed\n\n## Status\n\n{label}\n\n{dash}\n"
    glossary = f"# Glossary\n\n## Terms\n\n{meaning}\n"
    retriever = Retriever(make_tree({"riverbed.md": project, "glossary.md": glossary}))
    run = retriever.retrieve("What is Riverbed?").run
    found = definers(run.query, run.candidates, retriever.memory)
    defined = {c.statement for c, d in zip(run.candidates, found, strict=True) if d}
    assert label in {c.statement for c in run.candidates}
    assert defined == {dash, meaning}


def test_a_section_headed_by_what_a_thing_is_not_does_not_define_it(make_tree: TreeFactory) -> None:
    page = (
        "# Overview\n\nIntro.\n\n## Pulse\n\nAn audience analytics platform for content teams.\n\n"
        "## What Pulse is not\n\n- Not a product-analytics tool for funnels.\n- Not a CMS.\n"
    )
    retriever = Retriever(make_tree({"pulse.md": page}))
    run = retriever.retrieve("What is Pulse?").run
    found = definers(run.query, run.candidates, retriever.memory)
    defined = {c.statement for c, d in zip(run.candidates, found, strict=True) if d}
    assert any(c.statement.endswith("Not a product-analytics tool for funnels.") for c in run.candidates)
    assert defined == {"An audience analytics platform for content teams."}


@pytest.mark.parametrize(
    ("heading", "term", "defines_it"),
    [
        ("What Pulse is not", "Pulse", False),
        ("What Pulse doesn't do", "Pulse", False),
        ("Чим Pulse не є", "Pulse", False),
        ("Do Not Disturb mode", "Do Not Disturb mode", True),  # a negation within the name is the name's
        ("Never event", "Never event", True),
        ("Pulse", "Pulse", True),
    ],
)
def test_a_heading_saying_what_a_thing_is_not_heads_no_definition(heading: str, term: str, defines_it: bool) -> None:
    topic = frozenset(analyzer.terms(term))
    assert expected._names_only(heading, "A quiet status that silences alerts.", topic) is defines_it
