"""Two leading facts from different documents that give different figures for one thing: the summary says so."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from conftest import TreeFactory

from retriever import Retriever
from retriever.config import Settings
from retriever.memory.provenance import When
from retriever.pipeline.disagreement import dated_rivals, note
from retriever.pipeline.results import Fact


def _fact(statement: str, rel_path: str, title: str, valid_at: str | None = None) -> Fact:
    when = When(valid_at=valid_at)
    return Fact(statement, 0.9, f"m/{rel_path}", f"M > {title}", (1, 1), rel_path, None, title, 0, when)


OLD = _fact("Each employee has a learning budget of $750 per year.", "archive/b.md", "Benefits 2023", "2023-02-01")
NEW = _fact("The learning budget is $1,200 per person per year.", "hr/b.md", "Benefits", "2026-05-10T09:00:00+00:00")


def test_two_documents_giving_different_amounts_for_one_thing_are_said_to_differ_with_their_dates() -> None:
    assert note(OLD, NEW) == (
        "The sources differ: $750 (Benefits 2023, 2023-02-01) against $1,200 (Benefits, 2026-05-10)."
    )
    assert note(OLD, NEW, "uk").startswith("Джерела розходяться: $750")


def test_the_same_document_the_same_amount_or_another_subject_is_no_disagreement() -> None:
    same_doc = _fact("The learning budget is $1,200 per person per year.", "archive/b.md", "Benefits 2023")
    same_amount = _fact("Learning budget: $750 a year for each employee.", "hr/b.md", "Benefits")
    other_subject = _fact("Desks cost $1,200 to replace.", "hr/desks.md", "Desks")
    other_unit = _fact("The learning budget covers 3 days per year.", "hr/b.md", "Benefits")
    assert [note(OLD, f) for f in (same_doc, same_amount, other_subject, other_unit)] == ["", "", "", ""]


def test_the_summary_of_a_question_two_pages_answer_differently_says_the_sources_differ(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "archive/benefits_2023.md": "---\nupdated: 2023-02-01\n---\n# Benefits 2023\n\n## Learning budget\n\n"
            "Each employee has a learning budget of $750 per year.\n",
            "hr/benefits.md": "---\nupdated: 2026-05-10\n---\n# Benefits\n\n## Learning budget\n\n"
            "The learning budget is $1,200 per person per year.\n",
        }
    )
    summary = Retriever(Path(root), Settings.from_env()).retrieve("What is the learning budget?").summary
    assert "The sources differ: $" in summary and "2023-02-01" in summary and "2026-05-10" in summary


def _benefits(make_tree: TreeFactory, old_date: str = "2023-02-01", new_date: str = "2026-05-10") -> Path:
    dated = {"old": f"---\nupdated: {old_date}\n---\n" if old_date else "", "new": f"---\nupdated: {new_date}\n---\n"}
    return Path(
        make_tree(
            {
                "archive/benefits_2023.md": dated["old"] + "# Benefits 2023\n\n## Learning budget\n\n"
                "Each employee has a learning budget of $750 per year.\n",
                "hr/benefits.md": dated["new"] + "# Benefits\n\n## Learning budget\n\n"
                "The learning budget is $1,200 per person per year, for courses, books and conferences.\n",
            }
        )
    )


def test_of_two_dated_pages_giving_different_figures_the_newer_leads_and_coverage_is_partial(
    make_tree: TreeFactory,
) -> None:
    # The older, shorter sentence had led by 0.04 of rank: length alone decided which figure a reader saw first.
    result = Retriever(_benefits(make_tree), Settings.from_env()).retrieve("What is the learning budget?")
    assert [f.rel_path for f in result.facts] == ["hr/benefits.md", "archive/benefits_2023.md"]
    assert result.facts[0].relevance_score > result.facts[1].relevance_score
    assert "The sources differ: $1,200 (Benefits, 2026-05-10) against $750" in result.summary
    assert result.coverage == "partial"


def test_a_question_asking_what_held_before_leads_with_the_older_figure(make_tree: TreeFactory) -> None:
    retriever = Retriever(_benefits(make_tree, old_date="2023-02-01"), Settings.from_env())
    facts = retriever.retrieve("What was the learning budget originally?").facts
    assert [f.rel_path for f in facts] == ["archive/benefits_2023.md", "hr/benefits.md"]


def test_an_undated_page_or_pages_of_one_date_keep_the_order_their_words_give(make_tree: TreeFactory) -> None:
    for old_date in ("", "2026-05-10"):
        facts = Retriever(_benefits(make_tree, old_date=old_date), Settings.from_env()).retrieve(
            "What is the learning budget?"
        ).facts
        assert [f.rel_path for f in facts] == ["archive/benefits_2023.md", "hr/benefits.md"], old_date


def test_a_row_giving_several_values_of_the_unit_gives_no_one_figure_to_differ_from() -> None:
    # The bundled pricing row and the roadmap's "up to 60 months" had been said to differ (13 against 60 months).
    row = _fact(
        "Raw data retention — starter 13 months, growth 25 months, enterprise 25 months (up to 60 on request).",
        "product/pricing.md",
        "Pricing and Plans",
    )
    roadmap = _fact("Custom raw-data retention up to 60 months (self-serve for Enterprise).", "roadmap.md", "Roadmap")
    assert note(row, roadmap) == ""


@pytest.mark.parametrize(
    ("first", "second"),
    [
        # two things, named apart
        ("The first response time for P1 incidents is 1 hour.", "The first response time for P2 incidents is 4 hours."),
        ("The Sales team's learning budget is $750.", "The Engineering team's learning budget is $1,500."),
        # what was spent is no budget: the words before the figures share nothing
        ("The learning budget is $1,200 per person per year.", "We spent $300 of the learning budget per person."),
    ],
)
def test_figures_for_two_things_or_a_spend_against_a_budget_are_no_disagreement(first: str, second: str) -> None:
    assert note(_fact(first, "a.md", "A", "2024-03-01"), _fact(second, "b.md", "B", "2026-02-01")) == ""


@pytest.mark.parametrize(
    "newer",
    [
        "From January 2026, the learning budget is $1,200 per person per year.",  # a name on one side only
        "As of Q1 2026 the learning budget is $1,200 per year, approved by Finance.",
    ],
)
def test_a_policy_update_naming_when_or_who_still_differs_from_the_figure_it_replaces(newer: str) -> None:
    assert note(OLD, _fact(newer, "hr/b.md", "Benefits", "2026-05-10")).startswith("The sources differ: $750")


def test_a_fact_far_below_the_first_is_no_rival_and_caps_no_coverage() -> None:
    weak = dataclasses.replace(NEW, relevance_score=0.28)
    assert note(OLD, weak) == "" and not dated_rivals(OLD, weak) and dated_rivals(OLD, NEW)
