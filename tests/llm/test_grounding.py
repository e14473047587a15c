"""Grounding a model's fact in the one source statement it restates (``retriever.llm.grounding``)."""

from __future__ import annotations

import pytest

from retriever.llm.grounding import grounded, grounded_numbers

LEADERSHIP = (
    "Acme Leadership\n"
    "Alice Wong is the CTO of Acme and runs the platform and data engineering teams.\n"
    "Bob Stone is the CEO of Acme.\n"
    "Revenue for 2025 was 100 million euros, up from 80 million.\n"
    "Northwind was not renewed in March; the contract ended on 2026-03-31.\n"
)


def test_a_fact_that_swaps_a_role_from_another_statement_is_not_grounded() -> None:
    assert not grounded("Alice Wong is the CEO of Acme.", LEADERSHIP)
    assert grounded("Alice Wong is the CTO of Acme.", LEADERSHIP)


def test_a_number_is_matched_as_a_whole_number_not_as_part_of_a_longer_one() -> None:
    assert not grounded("Revenue for 2025 was 10 million euros.", LEADERSHIP)
    assert grounded("Revenue for 2025 was 100 million euros.", LEADERSHIP)
    assert not grounded_numbers("It costs 10.", "It costs 100.")
    assert grounded_numbers("It costs 1000 euros.", "It costs 1,000 euros.")
    assert grounded_numbers("Growth was 2.50%.", "Growth was 2.5%.")


def test_a_fact_that_drops_or_adds_the_sources_negation_is_not_grounded() -> None:
    assert not grounded("Northwind was renewed in March.", LEADERSHIP)
    assert grounded("Northwind was not renewed in March.", LEADERSHIP)
    assert not grounded("Bob Stone is not the CEO of Acme.", LEADERSHIP)


def test_a_fact_must_be_grounded_in_one_statement_not_in_words_gathered_across_the_section() -> None:
    assert not grounded("Bob Stone runs the data engineering teams.", LEADERSHIP)


@pytest.mark.parametrize(
    "fact",
    [
        "Alice Wong, Acme's CTO, runs the platform and data engineering teams.",
        "The CEO of Acme is Bob Stone.",
        "In 2025 revenue was 100 million euros.",
        "The Northwind contract was not renewed and ended on 2026-03-31.",
        "Northwind wasn't renewed in March.",
    ],
)
def test_honest_paraphrases_of_one_statement_stay_grounded(fact: str) -> None:
    assert grounded(fact, LEADERSHIP)


def test_a_wrapped_paragraph_and_a_list_under_a_lead_in_are_read_as_statements() -> None:
    section = "Owners:\n- Olena Marchenko, billing\n\nThe billing migration is 60% complete\nand due on 2026-12-15."
    assert grounded("The billing migration is 60% complete and due on 2026-12-15.", section)
    assert grounded("The owners include Olena Marchenko for billing.", section)
    assert not grounded("The billing migration is 6% complete.", section)
