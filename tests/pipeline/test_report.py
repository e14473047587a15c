"""Stage 7: seed 000's report layout and structuredContent, from the same data."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TreeFactory
from fixtures import ACME
from llm_server import Reply, answer, outline_ids, section_blocks, serve_for, stage_of

from retriever import Retriever, Settings
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
    assert "## Documents\n\n### A > B\n`company_context/a.md` lines 4–9\n\n> line one\n>\n> line two\n\n---\n" in text
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


def test_control_characters_and_direction_overrides_in_a_prompt_are_escaped_in_the_query_line() -> None:
    retrieval = Retrieval("s", (), (), (), (), 0.0, "none")
    text = render("who owns \u202ehelix\x00?", TRIAGE, Phase1("narrow", 1, (), "r"), retrieval)
    assert "**Query:** who owns \\u202ehelix\\x00?" in text
    assert "\u202e" not in text and "\x00" not in text


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
    assert "- **Helix EU Data Residency**: lead Andriy Lysenko; follow-up owner Hannah Clarke" in text


def test_a_fact_in_the_models_wording_is_marked_beside_its_source() -> None:
    written = dataclasses.replace(_fact("Tier-1 accounts include one broadcaster.", 0.9), model_written=True)
    retrieval = Retrieval("Clients.", (written, _fact("Three accounts drive MRR.", 0.8)), (), (), (), 0.85, "partial")
    facts = [line for line in render("Who?", TRIAGE, Phase1("none", 0, (), ""), retrieval).splitlines() if "**" in line]
    assert facts[-2].endswith("client_organizations.md:12; model's wording)")
    assert facts[-1].endswith("client_organizations.md:12)")


def _paraphrasing(request: dict[str, Any]) -> Reply:
    """A model that restates the billing migration's progress in its own words, and one line verbatim."""
    stage = stage_of(request)
    if stage == "ExtractAnswer":
        key = next(k for k, text in section_blocks(request).items() if "60%" in text)
        facts = [
            {"statement": "The migration of billing is 60% complete.", "source": key, "relevance": 0.95},
            {
                "statement": "The billing migration is 60% complete and due on 2026-12-15.",
                "source": key,
                "relevance": 0.9,
            },
        ]
        return answer({"facts": facts})
    if stage == "TargetAnswer":
        ids = outline_ids(request)
        return answer(
            {"sections": [{"id": i, "relevance_reason": "billing"} for i, p in ids.items() if "Billing" in p]}
        )
    return Reply(status=500)


def test_the_report_says_which_facts_the_model_wrote(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    for server in serve_for(monkeypatch):
        server.script = _paraphrasing
        result = Retriever(make_tree(ACME), Settings.from_env(llm_model="test-model")).retrieve(
            "How far along is the billing migration?"
        )
        lines = result.text.splitlines()
        marked = [line for line in lines if line.endswith("; model's wording)")]
        assert len(marked) == 1 and "The migration of billing is 60% complete." in marked[0]
        assert any("**The billing migration is 60% complete and due on 2026-12-15.**" in line for line in lines)
        assert "1 of " in result.text and "facts are in the model's wording" in result.text
        assert result.structured["diagnostics"]["llm"]["model_written_facts"] == 1
        assert [f["statement"] for f in result.structured["retrieval"]["facts"]].count(
            "The migration of billing is 60% complete."
        ) == 1


def test_the_token_estimate_is_the_whole_results_and_entities_carry_no_list_fields(make_tree: TreeFactory) -> None:
    page = (
        "---\ntitle: Platform Team\ntype: team\nlead: Olena\nmembers: [Olena, Taras, Hannah]\ntags: [sre, infra]\n"
        "aliases: [a, b, c, d, e, f, g, h]\n---\n# Platform Team\n\nThe platform team runs CI and the databases.\n"
    )
    result = Retriever(make_tree({"teams/platform.md": page}), Settings.from_env()).retrieve("Who runs CI?")
    content = result.structured
    whole = len(result.text) + len(json.dumps(content, ensure_ascii=False, separators=(",", ":")))
    assert abs(content["diagnostics"]["estimated_tokens"] - whole / 4) <= 2  # ~4 characters a token, both blocks
    (team,) = content["retrieval"]["entities"]
    assert team["properties"]["lead"] == "Olena" and len(team["properties"]["aliases"]) == 6
    assert "members" not in team["properties"] and "tags" not in team["properties"]  # edges and bookkeeping
