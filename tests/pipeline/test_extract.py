"""Stage 4: statements from targeted sections, with their context (their framing: ``tests/text/test_framing``)."""

from __future__ import annotations

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.memory.memory import Memory
from retriever.pipeline import extract
from retriever.pipeline.extract import LONG_SECTION, candidates_of, context_of, listed, read_units, word_starts
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Target
from retriever.text import analyzer
from retriever.text.models import Unit


def test_a_statement_carries_the_statements_before_and_after_it_and_its_parent_item() -> None:
    units = (
        Unit("sentence", "The offsite is planned by the events team.", (3, 3)),
        Unit("item", "It takes place in Lisbon.", (5, 5), context="Quarterly offsite:"),
        Unit("sentence", "Bring a laptop.", (7, 7)),
    )
    assert context_of(units, 1) == "Quarterly offsite:\nThe offsite is planned by the events team.\nBring a laptop."
    assert context_of(units, 0) == "It takes place in Lisbon."
    assert context_of(units, 2) == "It takes place in Lisbon."
    assert context_of(units[:1], 0) == ""


def test_the_speakers_a_question_names_are_read_off_the_candidates_once_for_scoring_and_answerability(
    make_tree: TreeFactory,
) -> None:
    turns = ["Tom: I made a wonky bowl at pottery.", "Maya: I started life drawing.", "Tom: The glaze ran."] * 2
    chat = "# Chat\n\n## Session 1 — 8 May 2023\n\n" + "\n\n".join(turns)
    retriever = Retriever(make_tree({"chat.md": chat}))

    assert retriever.retrieve("What did Tom make at pottery?").run.speakers.named == {"Tom"}
    assert not retriever.retrieve("What was made at pottery?").run.speakers.named


def _item(text: str, line: int, lists: tuple[int, ...] = (1,), opens: bool = True, context: str = "") -> Unit:
    return Unit("item", text, (line, line), context=context, lists=lists, opens=opens)


def test_a_lead_in_is_shown_with_the_first_sentence_of_each_item_it_introduces() -> None:
    units = (
        Unit("sentence", "Three accounts drive most of our MRR:", (3, 3)),
        _item("Helix Health — €42,000 MRR. Renewal 2027-03-31.", 5),
        Unit("item", "Lumen Education — €36,500 MRR.", (6, 7), lists=(1,), opens=True),
        Unit("sentence", "Concentration risk is high.", (9, 9)),
    )
    assert listed(units, 0) == ("Helix Health — €42,000 MRR; Lumen Education — €36,500 MRR.", 7)
    assert listed(units, 1) is None  # not a lead-in
    assert listed(units, 3) is None


def test_a_label_standing_alone_above_a_list_leads_it_in_and_a_short_sentence_does_not(make_tree: TreeFactory) -> None:
    notes = "# Notes\n\n## 4.3.0\n\n**New**\n- Copilot beta.\n- Dutch templates.\n\nThat is all.\n- A stray item.\n"
    memory = Memory.open(make_tree({"notes.md": notes}), Settings.from_env())
    units = memory.document("notes.md").sections[1].units
    assert [u.text for u in units][:1] == ["New"] and units[0].leads_in
    assert listed(units, 0) == ("Copilot beta; Dutch templates.", 7)
    assert not units[3].leads_in and listed(units, 3) is None  # a sentence's stop: it says something of its own
    shown = Retriever(memory.root, Settings.from_env()).retrieve("What is new in 4.3.0 notes?").facts
    assert "4.3.0: New: Copilot beta; Dutch templates." in [f.statement for f in shown]  # "…: New" alone had been one


def test_a_lead_in_lists_at_most_five_items_and_counts_the_rest() -> None:
    items = tuple(_item(f"Item {n}", n + 2) for n in range(1, 9))
    text, last = listed((Unit("sentence", "You can claim:", (1, 1)), *items), 0) or ("", 0)
    assert text == "Item 1; Item 2; Item 3; Item 4; Item 5; and 3 more."
    assert last == 7


def test_a_lead_in_passes_over_its_items_children_and_second_paragraphs_to_the_next_items() -> None:
    units = (
        Unit("sentence", "Escalation contacts:", (1, 1)),
        _item("Alice Smith", 3),
        _item("renewal due in March", 4, lists=(1, 2), context="Alice Smith"),
        _item("She is on call on weekdays.", 6, opens=False),
        _item("Bob Jones", 7),
    )
    assert listed(units, 0) == ("Alice Smith; Bob Jones.", 7)


def test_an_item_lead_in_lists_its_own_children_not_the_next_top_level_items() -> None:
    units = (
        _item("Fringe benefits (per month):", 3),
        _item("Internet: $50", 4, lists=(1, 2), context="Fringe benefits (per month):"),
        _item("Phone: $40", 5, lists=(1, 2), context="Fringe benefits (per month):"),
        _item("Holidays are paid.", 6),
    )
    assert listed(units, 0) == ("Internet: $50; Phone: $40.", 5)


def test_a_list_after_the_one_a_lead_in_introduces_is_not_its_list() -> None:
    units = (
        Unit("sentence", "Our cloud vendors are:", (1, 1)),
        _item("Hetzner", 2),
        _item("Backup regions:", 4, lists=(2,)),
        _item("eu-west-1", 5, lists=(2, 3), context="Backup regions:"),
    )
    assert listed(units, 0) == ("Hetzner.", 2)
    assert listed(units, 2) == ("eu-west-1.", 5)


def test_a_lead_in_with_no_list_right_after_it_stands_alone() -> None:
    units = (Unit("sentence", "The rule is:", (1, 1)), Unit("sentence", "Ask first.", (3, 3)), _item("x", 4))
    assert listed(units, 0) is None
    assert listed((Unit("row", "Note:", (1, 1)), _item("x", 2)), 0) is None
    assert listed((Unit("sentence", "Steps:", (1, 1)), _item("more of an item", 2, opens=False)), 0) is None


def test_a_fact_that_introduces_a_list_says_the_list_and_cites_its_lines(make_tree: TreeFactory) -> None:
    page = "# Accounts\n\nThree accounts drive most of our recurring revenue:\n\n- Helix Health\n- Lumen Education\n"
    facts = Retriever(make_tree({"accounts.md": page})).retrieve("Which accounts drive recurring revenue?").facts
    assert facts[0].statement == "Three accounts drive most of our recurring revenue: Helix Health; Lumen Education."
    assert facts[0].lines == (3, 6)


def test_a_lead_in_in_a_quote_lists_the_quotes_list_not_the_one_after_it(make_tree: TreeFactory) -> None:
    page = "# Vendors\n\n> Our cloud vendors are:\n> - Hetzner\n> - Scaleway\n\n- Backup regions:\n  - eu-west-1\n"
    facts = Retriever(make_tree({"vendors.md": page})).retrieve("Which cloud vendors do we use?").facts
    assert facts[0].statement == "Our cloud vendors are: Hetzner; Scaleway."


def test_a_lead_in_followed_by_a_code_block_shows_the_command_not_the_list_after_it(make_tree: TreeFactory) -> None:
    page = "# Deploy\n\nTo deploy the billing service, run:\n\n```\nmake deploy\n```\n\n- Check the dashboard.\n"
    facts = Retriever(make_tree({"deploy.md": page})).retrieve("How do I deploy the billing service?").facts
    assert facts[0].statement == "To deploy the billing service, run: `make deploy`"
    assert facts[0].lines == (3, 7)


def test_a_table_inside_an_item_does_not_end_the_list(make_tree: TreeFactory) -> None:
    page = (
        "# Plans\n\nOur three pricing plans are:\n\n- Starter costs 10 dollars.\n\n"
        "  | seats | price |\n  |---|---|\n  | 1 | 10 |\n\n- Team costs 50 dollars.\n- Enterprise is negotiated.\n"
    )
    facts = Retriever(make_tree({"plans.md": page})).retrieve("Which pricing plans are there?").facts
    assert facts[0].statement == (
        "Our three pricing plans are: Starter costs 10 dollars; Team costs 50 dollars; Enterprise is negotiated."
    )


def _lines(n: int, special: dict[int, str]) -> tuple[Unit, ...]:
    return tuple(Unit("sentence", special.get(i, f"Entry {i} of the build log."), (i + 1, i + 1)) for i in range(n))


def test_a_section_up_to_long_section_statements_is_read_whole() -> None:
    units = _lines(LONG_SECTION, {})
    assert list(read_units(units, analyze("parking permit"))) == list(range(LONG_SECTION))


def test_a_longer_section_reads_the_statements_holding_most_of_the_question_words_in_order() -> None:
    special = {900: "Parking permits are issued by facilities.", 10: "The permit desk opens at nine.", 5: "Parking."}
    picked = read_units(_lines(LONG_SECTION * 3, special), analyze("How do I get a parking permit?"))

    assert len(picked) == LONG_SECTION
    assert list(picked) == sorted(picked)
    assert {5, 10, 900} <= set(picked)
    assert picked[:3] == [0, 1, 2]  # the rest, earliest first


def test_word_starts_are_the_first_letters_of_the_questions_terms_and_words() -> None:
    assert word_starts(analyze("What is our travel policy?")) == {"trave", "polic"}
    assert word_starts(analyze("???")) == frozenset()


def test_a_statement_holding_more_of_the_question_word_beginnings_is_read_first() -> None:
    # Every statement says "go"; only the last also says "Google": it holds two of the question's beginnings
    # ("go", "googl"), each looked for at its own length, so it is read though 399 earlier ones hold one.
    units = _lines(LONG_SECTION * 2, {i: f"Go now, entry {i}." for i in range(LONG_SECTION * 2)})
    units = (*units[:-1], Unit("sentence", "Go to Google Docs.", (LONG_SECTION * 2, LONG_SECTION * 2)))
    picked = read_units(units, analyze("go google"))
    assert len(units) - 1 in picked
    assert picked[:3] == [0, 1, 2]


@given(st.text(max_size=200))
def test_word_starts_are_short_lower_case_beginnings_for_any_question(text: str) -> None:
    starts = word_starts(analyze(text))
    assert all(0 < len(s) <= 5 and s == s.lower() for s in starts)


def test_a_question_of_a_long_logged_section_finds_its_answer_among_the_statements_read(
    make_tree: TreeFactory,
) -> None:
    lines = [f"- Entry {i}: deploy finished." for i in range(LONG_SECTION * 3)]
    lines[1000] = "- Entry 1000: the parking permit desk moved to the second floor."
    retriever = Retriever(make_tree({"log.md": "# Build log\n\n" + "\n".join(lines) + "\n"}))

    result = retriever.retrieve("Where is the parking permit desk?")

    assert len(result.run.candidates) == LONG_SECTION
    assert "second floor" in result.run.facts[0].statement


def _target(memory: Memory, rel_path: str, ordinal: int = 1) -> Target:
    """A target for the live section ``ordinal`` of ``rel_path``."""
    live = (int(sid) for sid in memory.index.alive.nonzero()[0])
    sid = next(s for s in live if memory.section(s)[0].rel_path == rel_path and memory.section(s)[1].ordinal == ordinal)
    return Target(sid, rel_path, ordinal, "", rel_path, (1, 1), 1.0, 1.0, "")


def test_a_sections_statements_are_prepared_once_and_every_question_reads_the_same(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = make_tree({"a.md": "# A\n\n## Leave\n\nStaff take 25 days.\n\n- Carry-over:\n  - Five days.\n"})
    memory = Memory.open(tree, Settings.from_env())
    target = _target(memory, "a.md")
    first = list(candidates_of(memory, target, analyze("leave")))
    made: list[int] = []
    monkeypatch.setattr(extract, "context_of", lambda units, i: made.append(i) or "")

    again = list(candidates_of(memory, target, analyze("carry over")))

    assert again == first and not made  # read from what the first question prepared
    statements = ["Leave: Staff take 25 days.", "Leave: Carry-over:", "Carry-over: Five days."]
    assert [c.statement for c in first] == statements


def test_an_edited_sections_statements_are_prepared_afresh(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "# A\n\n## Leave\n\nStaff take 25 days.\n"})
    memory = Memory.open(root, Settings.from_env())
    assert [c.statement for c in candidates_of(memory, _target(memory, "a.md"))] == ["Leave: Staff take 25 days."]

    (root / "a.md").write_text("# A\n\n## Leave\n\nStaff take 130 days.\n", encoding="utf-8")  # a new size
    memory.refresh()

    assert [c.statement for c in candidates_of(memory, _target(memory, "a.md"))] == ["Leave: Staff take 130 days."]


def test_a_long_section_prepares_only_the_statements_questions_read(make_tree: TreeFactory) -> None:
    lines = [f"- Entry {i}: deploy finished." for i in range(LONG_SECTION * 3)]
    lines[1000] = "- Entry 1000: the parking permit desk moved."
    memory = Memory.open(make_tree({"log.md": "# Build log\n\n" + "\n".join(lines) + "\n"}), Settings.from_env())
    target = _target(memory, "log.md", 0)

    read = list(candidates_of(memory, target, analyze("parking permit desk")))
    section = memory.section(target.section_id)[1]
    prepared = extract._prepared(section)

    assert len(read) == LONG_SECTION and any("parking permit" in c.statement for c in read)
    assert sum(f is not extract._UNREAD for f in prepared.fields) == LONG_SECTION


def test_a_candidate_carries_the_stored_terms_of_its_statement_and_context_as_analysing_them_reads(
    make_tree: TreeFactory,
) -> None:
    page = (
        "# A\n\n## Leave\n\nStaff take twenty five days of paid leave every year.\n\n"
        "- Carry-over rules:\n  - Five days.\n  - Approved by managers before March.\n"
    )
    memory = Memory.open(make_tree({"a.md": page}), Settings.from_env())

    found = list(candidates_of(memory, _target(memory, "a.md")))

    by_text = {c.statement: c for c in found}
    assert by_text["Staff take twenty five days of paid leave every year."].terms[:2] == ("staff", "take")
    assert by_text["Carry-over rules: Five days."].terms == ()  # framed: the framed text is analysed when scored
    # the second child's context: its parent item (not its neighbour) and the child before it
    assert {"rule", "carri"} <= (by_text["Carry-over rules: Approved by managers before March."].context_terms or {""})
    for c in found:
        assert c.terms in ((), tuple(analyzer.terms(c.statement)))
        assert c.context_terms == frozenset(t for part in c.context.split("\n") for t in analyzer.terms(part))


def test_the_prepared_sections_kept_hold_at_most_the_statement_budget_the_least_recent_let_go(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    pages = {f"p{n}.md": f"# P{n}\n\n## Part\n\n" + "".join(f"- Item {n}-{i} of the list.\n" for i in range(10))
             for n in range(4)}
    memory = Memory.open(make_tree(pages), Settings.from_env())
    monkeypatch.setattr(extract, "_STATEMENTS", 25)
    monkeypatch.setattr(extract, "_by_section", type(extract._by_section)())
    monkeypatch.setattr(extract, "_held", 0)
    sections = [memory.section(_target(memory, f"p{n}.md").section_id)[1] for n in range(4)]

    for section in sections:
        extract._prepared(section)

    kept = [p.section for p in extract._by_section.values()]
    assert kept == sections[2:] and extract._held == 20  # two of ten statements fit in 25
    assert extract._prepared(sections[3]) is extract._by_section[id(sections[3])]  # a kept one is read back
