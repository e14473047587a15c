"""Stage 7: seed 000's report layout and structuredContent, from the same data."""

from __future__ import annotations

from pathlib import Path

from retriever import Retriever
from retriever.errors import RetrievalTimeout
from retriever.pipeline.report import error_content, error_text, render
from retriever.pipeline.results import Entity, Excerpt, Fact, Phase1, Relationship, Retrieval, Target, Triage


def _fact(statement: str, score: float, heading: str = "Tier 1") -> Fact:
    return Fact(
        statement=statement,
        relevance_score=score,
        source_path="company_context/relationships/client_organizations.md",
        tree_path=f"Company Context > Relationships > Client Organizations > {heading}",
        lines=(12, 12),
        rel_path="relationships/client_organizations.md",
        section_heading=heading,
        source_title="Client Organizations",
        section_id=3,
    )


def _target(tree_path: str) -> Target:
    return Target(
        3, "relationships/client_organizations.md", 3, tree_path, "company_context/x.md", (10, 20), 9.0, 0.9, "r"
    )


TRIAGE = Triage("retrieve", "The query depends on client context.", "Who are our clients?")


def test_report_follows_the_seed_layout_line_by_line() -> None:
    facts = (
        _fact("Tier-1 accounts include a broadcaster.", 0.97),
        _fact("Three accounts drive MRR.", 0.954, "Client Organizations"),
    )
    phase1 = Phase1(
        "moderate",
        420,
        (
            _target("Company Context > Relationships > Client Organizations"),
            _target("Company Context > Financials > Active Accounts MRR"),
        ),
        "Client directories were targeted.",
    )
    retrieval = Retrieval("Enterprise clients span media.", facts, (), (), (), 0.89, "comprehensive")
    assert render("Who are our clients?", TRIAGE, phase1, retrieval).splitlines() == [
        "# Retrieved Company Context",
        "",
        "**Query:** Who are our clients?",
        "",
        "**Summary:** Enterprise clients span media.",
        "",
        "## How This Context Was Found",
        "**Reasoning:** The query depends on client context. Client directories were targeted.",
        "**Sections searched:** Relationships > Client Organizations, Financials > Active Accounts MRR",
        "",
        "## Relevant Facts",
        "",
        "- [97%] **Tier-1 accounts include a broadcaster.** (source: Client Organizations § Tier 1, "
        "company_context/relationships/client_organizations.md:12)",
        "- [95%] **Three accounts drive MRR.** (source: Client Organizations, "
        "company_context/relationships/client_organizations.md:12)",
        "",
        "---",
        "*Retrieved 2 items | Avg relevance: 89% | Coverage: comprehensive*",
    ]


def test_document_excerpts_follow_the_facts_with_path_and_lines() -> None:
    excerpt = Excerpt("company_context/a.md", "Company Context > A > B", (4, 9), "line one\n\nline two", True)
    retrieval = Retrieval("s", (_fact("x", 0.5),), (), (), (excerpt,), 0.5, "partial")
    text = render("q", TRIAGE, Phase1("narrow", 1, (), "r"), retrieval)
    assert "## Documents\n\n### A > B\n`company_context/a.md` lines 4–9\n\n> line one\n>\n> line two\n" in text
    assert text.index("## Documents") > text.index("## Relevant Facts")


def test_skipped_prompt_report_says_no_sections_were_searched() -> None:
    skip = Triage("skip", "Low-information prompt.", None)
    text = render("thanks!", skip, Phase1("none", 0, (), "not run"), Retrieval("Skipped.", (), (), (), (), 0.0, "none"))
    assert "**Reasoning:** Low-information prompt.\n**Sections searched:** none" in text
    assert "_No facts retrieved._" in text
    assert text.endswith("*Retrieved 0 items | Avg relevance: 0% | Coverage: none*")


def test_multiline_statements_and_queries_stay_on_one_line() -> None:
    retrieval = Retrieval("s", (_fact("first\nsecond", 0.5),), (), (), (), 0.5, "partial")
    text = render("line one\nline two", TRIAGE, Phase1("narrow", 1, (), "r"), retrieval)
    assert "**Query:** line one line two" in text
    assert "**first second**" in text


def test_error_content_and_text_carry_the_seed_error_shape() -> None:
    error = RetrievalTimeout("retrieval exceeded its 120 s deadline")
    assert error_content(error) == {
        "status": "error",
        "error_code": "retrieval_timeout",
        "error_message": "retrieval exceeded its 120 s deadline",
    }
    assert (
        error_text(error)
        == "# Retrieval failed\n\n**Error:** `retrieval_timeout`: retrieval exceeded its 120 s deadline"
    )


def test_what_the_facts_documents_name_is_a_short_section_after_the_facts() -> None:
    facts = (_fact("Tier-1 accounts include a broadcaster.", 0.97),)
    relations = (
        Relationship("Client Organizations", "Olena Marchenko", "owner"),
        Relationship("Client Organizations", "Sales Handbook", "related"),
    )
    entities = (Entity("Client Organizations", "organization", {}),)
    retrieval = Retrieval("Clients.", facts, entities, relations, (), 0.97, "comprehensive")
    lines = render("Who are our clients?", TRIAGE, Phase1("focused", 10, (), "r"), retrieval).splitlines()
    start = lines.index("## Entities and Relationships")
    assert lines[start - 2].startswith("- [97%] **Tier-1 accounts include a broadcaster.**")
    assert lines[start + 1 : start + 3] == ["", "- **Client Organizations** (organization): owner Olena Marchenko"]
    assert lines[start + 3 : start + 5] == ["", "---"]


def test_a_who_question_over_the_bundled_memory_says_the_owner_in_the_text_report() -> None:
    root = Path(__file__).resolve().parents[2] / "company_context"
    text = Retriever(root).retrieve("Who owns the Helix EU data residency project?").text
    summary = next(line for line in text.splitlines() if line.startswith("**Summary:**"))
    answer = "Helix EU Data Residency: owner Andriy Lysenko, follow-up owner Hannah Clarke"
    assert summary.startswith(f"**Summary:** {answer}")
    assert "- **Helix EU Data Residency** (project): lead Andriy Lysenko; follow-up owner Hannah Clarke" in text
