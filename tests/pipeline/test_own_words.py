"""Within a document, facts saying the question in their own words first; a heading naming what is asked counts."""

from __future__ import annotations

from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.pipeline import own_words
from retriever.pipeline.results import Candidate, Scored, Target


def _in_file(rel_path: str, text: str, own: float) -> Scored:
    target = Target(0, rel_path, 0, "M > A", rel_path, (1, 9), 1.0, 1.0, "r")
    return Scored(Candidate(text, target, (1, 1), "sentence"), 0.5, own=own)


def test_a_documents_facts_saying_the_question_come_before_those_only_its_headings_tie_to_it() -> None:
    ranked = [_in_file("a.md", "preamble", 0.0), _in_file("b.md", "other", 0.0), _in_file("a.md", "answer", 0.4)]
    assert [s.candidate.statement for s in own_words.own_first(ranked)] == ["answer", "other", "preamble"]


def _in_section(section_id: int, text: str, own: float) -> Scored:
    target = Target(section_id, "p.md", 0, "M > A", "m/p.md", (1, 9), 1.0, 1.0, "r")
    return Scored(Candidate(text, target, (1, 1), "sentence"), 0.5, own=own)


def test_a_section_whose_heading_holds_as_much_of_the_question_as_any_fact_keeps_its_facts_first() -> None:
    ranked = [_in_section(2, "risk", 0.0), _in_section(1, "milestone", 0.3)]

    def order(headed: dict[int, float] | None) -> list[str]:
        return [s.candidate.statement for s in own_words.own_first(ranked, headed)]

    assert order({2: 0.49}) == ["risk", "milestone"]  # "Risks" holds more of the question than "Riverbed" does
    assert order({2: 0.1}) == ["milestone", "risk"]  # a heading's passing word ("meetings") does not
    assert order(None) == ["milestone", "risk"]


_PROJECT = (
    "---\ntitle: Project Riverbed\n---\n# Project Riverbed\n\nRiverbed is the foundation of Pulse 5.0.\n\n"
    "## Milestones\n\n| Milestone | Date |\n|---|---|\n| All tenants on Riverbed | 2027-02-15 |\n\n"
    "## Risks\n\n- Shadow jobs sharing production Kafka caused an incident. Mitigation: a separate cluster.\n"
    "- The Christmas freeze limits the window after the cutover.\n"
)


def test_a_sections_heading_naming_what_is_asked_makes_its_statements_the_answer(make_tree: TreeFactory) -> None:
    facts = Retriever(make_tree({"riverbed.md": _PROJECT}), Settings.from_env()).retrieve(
        "What are the risks for Project Riverbed?"
    ).facts
    assert facts[0].section_heading == "Risks"


@given(st.lists(st.tuples(st.sampled_from("abc"), st.floats(0, 1)), max_size=12))
def test_ordering_own_words_first_keeps_every_documents_places(facts: list[tuple[str, float]]) -> None:
    ranked = [_in_file(f"{name}.md", str(i), own) for i, (name, own) in enumerate(facts)]
    out = own_words.own_first(ranked)
    assert [s.candidate.target.rel_path for s in out] == [s.candidate.target.rel_path for s in ranked]
    assert sorted(s.candidate.statement for s in out) == sorted(s.candidate.statement for s in ranked)


def test_a_preamble_line_under_a_title_that_is_the_question_does_not_lead_the_row_that_answers_it(
    make_tree: TreeFactory,
) -> None:
    page = (
        "---\ntitle: Revenue Retention 2026\naliases: [net revenue retention]\n"
        "summary: 2026 net revenue retention (118%), gross revenue retention and churn.\n---\n"
        "# Revenue Retention 2026\n\nPeriod: 2026-01-01 to 2026-11-20.\n\n## Summary\n\n| Metric | Value |\n|---|---|\n"
        "| ARR on 2026-01-01 | €1,961,400 |\n| Expansion | +€490,800 ARR |\n| Churn | −€122,400 ARR |\n"
        "| Net revenue retention (NRR) | 118% |\n| Gross revenue retention | 93% |\n| Logo retention | 83.3% |\n"
    )
    other = "# Hiring\n\nWe hire in Lisbon.\n"
    facts = Retriever(make_tree({"retention.md": page, "hiring.md": other}), Settings.from_env()).retrieve(
        "What is our net revenue retention?"
    ).facts
    assert facts[0].statement.startswith("Metric: Net revenue retention (NRR); Value: 118%")


def test_a_top_level_heading_or_words_a_heading_above_holds_give_no_share(make_tree: TreeFactory) -> None:
    q3 = "---\ntitle: Q3 plan\n---\n# Q3 plan\n\nOwner: Dana.\n\n## Risks\n\nCosts may rise.\n\n"
    q3 += "### Risks of hiring\n\nTwo roles may stay open.\n"
    q4 = "---\ntitle: Q4 plan\n---\n# Q4 plan: risks and budget\n\nOwner: Lee.\n"
    retriever = Retriever(make_tree({"q3.md": q3, "q4.md": q4}), Settings.from_env())
    run = retriever.retrieve("What are the risks of the Q3 plan?").run
    ranked = [Scored(c, 0.5) for c in run.candidates]
    read = {retriever.memory.section(c.target.section_id)[1].title for c in run.candidates}
    assert {"Risks", "Risks of hiring", "Q4 plan: risks and budget"} <= read
    shares = own_words.heading_shares(retriever.memory, run.query, ranked)
    titles = {retriever.memory.section(sid)[1].title for sid in shares}
    assert titles == {"Risks"}  # not the page's own top heading, nor a heading whose parent says "risks" already


def test_a_page_of_top_level_sections_reads_their_headings_as_any_other(make_tree: TreeFactory) -> None:
    page = _PROJECT.replace("# Project Riverbed\n\n", "").replace("## ", "# ")  # its sections all level-1
    assert page.count("\n# ") == 2
    facts = Retriever(make_tree({"riverbed.md": page}), Settings.from_env()).retrieve(
        "What are the risks for Project Riverbed?"
    ).facts
    assert facts[0].section_heading == "Risks"
