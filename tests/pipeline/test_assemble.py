"""Stage 6: coverage labels, entities and relationships from front matter, cut excerpts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import TreeFactory
from fixtures import ACME
from llm_server import Reply, answer, serve_for, stage_of

from retriever import Retriever, Settings
from retriever.memory.provenance import When
from retriever.pipeline import confidence
from retriever.pipeline.assemble import MAX_STATEMENT_CHARS, _whole_relations, summarize
from retriever.pipeline.results import Fact, Relationship


def test_coverage_label_is_read_off_the_answerability_estimate(make_tree: TreeFactory) -> None:
    result = Retriever(make_tree(ACME)).retrieve("How many sick days do employees earn?")
    retrieval, diagnostics = result.structured["retrieval"], result.structured["diagnostics"]
    assert 0.0 <= diagnostics["answerability"] <= 1.0
    assert retrieval["coverage_assessment"] == confidence.coverage(diagnostics["answerability"], True)


def test_summary_leads_with_the_strongest_statements_then_says_how_well_and_where() -> None:
    facts = (
        Fact("Billing is owned by Olena", 0.9, "m/a.md", "M > A", (1, 1), "a.md", None, "Billing", 0),
        Fact("Due 2026-12-15.", 0.7, "m/b.md", "M > B", (1, 1), "b.md", None, "Plan", 1),
    )
    assert summarize(facts, "comprehensive") == (
        "Billing is owned by Olena. Due 2026-12-15. (The memory covers this well; sources: Billing, Plan.)"
    )
    assert summarize((), "none") == "The memory holds nothing that matches this query."


def test_the_summary_passes_over_facts_of_superseded_documents_where_others_were_found() -> None:
    old = When(superseded=True)
    facts = (
        Fact("Use Kafka Streams.", 0.9, "m/a.md", "M > A", (1, 1), "a.md", None, "DEC-1", 0, old),
        Fact("Superseded by DEC-2.", 0.8, "m/a.md", "M > A", (2, 2), "a.md", None, "DEC-1", 0, old),
        Fact("Use Flink.", 0.7, "m/b.md", "M > B", (1, 1), "b.md", None, "DEC-2", 1),
    )
    assert summarize(facts, "partial").startswith("Use Flink. (The memory covers this in part")
    assert summarize(facts[:2], "partial").startswith("Use Kafka Streams. Superseded by DEC-2.")  # all there is


def test_the_summary_passes_over_a_fact_that_only_echoes_the_question() -> None:
    facts = (
        Fact("Decided at Q1 Planning.", 0.9, "m/a.md", "M > A", (1, 1), "a.md", None, "DEC-58", 0),
        Fact("Hire six engineers in Q1.", 0.7, "m/b.md", "M > B", (1, 1), "b.md", None, "Plan", 1),
    )
    assert summarize(facts, "partial", "What was decided at the Q1 planning?").startswith("Hire six engineers")
    assert summarize(facts[:1], "partial", "What was decided at the Q1 planning?").startswith("Decided at")


def test_the_summary_leads_with_a_nearly_as_good_fact_in_the_questions_language() -> None:
    ukrainian = Fact("Передайте чергування другому черговому.", 0.77, "m/a.md", "M > A", (1, 1), "a.md", None, "Б", 0)
    english = Fact("Night shifts page SEV-1 incidents only.", 0.69, "m/b.md", "M > B", (1, 1), "b.md", None, "Rota", 1)
    weak = Fact("On-call pays a weekly stipend.", 0.50, "m/c.md", "M > C", (1, 1), "c.md", None, "Pay", 2)
    question = "What is our on-call policy?"
    assert summarize((ukrainian, english), "partial", question).startswith("Night shifts page SEV-1 incidents only.")
    assert summarize((ukrainian, weak), "partial", question).startswith("Передайте чергування")  # far weaker
    better = Fact("Night shifts page SEV-1 incidents only.", 0.80, "m/b.md", "M > B", (1, 1), "b.md", None, "Rota", 1)
    assert summarize((better, ukrainian), "partial", "Яка політика чергувань?").startswith("Передайте")


def test_a_weak_summary_says_so_before_the_closest_matches() -> None:
    facts = (Fact("Lunch is at noon", 0.2, "m/a.md", "M > A", (1, 1), "a.md", None, "Office", 0),)
    assert summarize(facts, "limited") == (
        "The memory has only loosely related material (sources: Office). Lunch is at noon."
    )


def test_a_question_whose_words_only_ask_is_told_it_names_no_topic_before_the_closest_matches() -> None:
    facts = (Fact("Post an update every Friday", 0.9, "m/a.md", "M > A", (1, 1), "a.md", None, "Updates", 0),)
    assert summarize(facts, "limited", "any updates?") == (
        'The question names no topic ("updates"): say what it is about. The closest matches (sources: Updates): '
        "Post an update every Friday."
    )


def test_a_who_question_summary_leads_with_what_the_best_document_names() -> None:
    facts = (Fact("Moving invoices to Stripe", 0.9, "m/b.md", "M > B", (1, 1), "b.md", None, "Billing Migration", 0),)
    relations = (
        Relationship("Billing Migration", "Olena Marchenko", "lead"),
        Relationship("Billing Migration", "Taras Kovalenko", "owner"),
        Relationship("Billing Migration", "Finance Handbook", "related"),
    )
    assert summarize(facts, "partial", "Who owns the billing migration?", relations) == (
        "Billing Migration: owner Taras Kovalenko, lead Olena Marchenko. Moving invoices to Stripe. "
        "(The memory covers this in part; sources: Billing Migration.)"
    )


def test_relation_fields_become_edges_and_unresolved_names_are_kept(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            **ACME,
            "projects/side.md": "---\ntype: project\ntitle: Side Quest\nowner: Nobody Known\n---\n"
            "# Side Quest\n\nSide quest notes about the billing retries.\n",
        }
    )
    retrieval = Retriever(root).retrieve("side quest billing retries").structured["retrieval"]
    edges = {(r["source"], r["target"], r["type"]) for r in retrieval["relationships"]}
    assert ("Side Quest", "Nobody Known", "owner") in edges


def test_relationships_keep_each_relation_whole_within_the_limit() -> None:
    edges = (
        Relationship("Team", "Miguel", "lead"),
        *(Relationship("Team", name, "members") for name in ("Miguel", "João", "Hannah")),
        Relationship("Plan", "Rui", "owner"),
    )
    assert _whole_relations(edges, 3) == (edges[0], edges[4])  # the members whole or not at all
    assert _whole_relations(edges[1:4], 2) == edges[1:3]  # a first relation longer than the limit is cut


def test_a_link_repeating_a_front_matter_edge_is_left_out_and_a_teams_members_are_all_given(
    make_tree: TreeFactory,
) -> None:
    team = (
        "---\ntype: team\ntitle: Revenue Team\nlead: Ana Lima\nmembers: [Ana Lima, Rui Costa, Eva Dias]\n---\n"
        "# Revenue Team\n\nThe revenue team sells Pulse; [Ana](../people/ana.md) leads it.\n"
    )
    people = {
        f"people/{slug}.md": f"---\ntype: person\ntitle: {name}\n---\n# {name}\n\nWorks in revenue.\n"
        for slug, name in (("ana", "Ana Lima"), ("rui", "Rui Costa"), ("eva", "Eva Dias"))
    }
    retrieval = Retriever(make_tree({"teams/revenue.md": team, **people})).retrieve("Who sells Pulse?")
    edges = {(r["source"], r["target"], r["type"]) for r in retrieval.structured["retrieval"]["relationships"]}
    assert {("Revenue Team", n, "members") for n in ("Ana Lima", "Rui Costa", "Eva Dias")} <= edges
    assert ("Revenue Team", "Ana Lima", "links_to") not in edges  # "lead" and "members" relate them already


def test_links_to_a_person_or_organization_become_links_to_edges_and_links_between_documents_do_not(
    make_tree: TreeFactory,
) -> None:
    root = make_tree(
        {
            **ACME,
            "notes/handover.md": (
                "# Handover\n\nThe billing handover is in [the project](../projects/billing_migration.md), "
                "with [Olena](../people/olena_marchenko.md).\n"
            ),
        }
    )
    retrieval = Retriever(root).retrieve("billing handover").structured["retrieval"]
    edges = {(r["source"], r["target"], r["type"]) for r in retrieval["relationships"]}
    assert ("Handover", "Olena Marchenko", "links_to") in edges
    assert ("Handover", "Billing Migration", "links_to") not in edges


def test_entities_are_people_and_organizations_and_tags_and_types_name_no_relation(make_tree: TreeFactory) -> None:
    """Seed 000: ``entities`` are "people and organizations tied to the query"; a tag that is another document's
    name ("Platform Team") relates nothing."""
    root = make_tree(
        {
            **ACME,
            "projects/side.md": "---\ntype: project\ntitle: Side Quest\nowner: Olena Marchenko\n"
            "tags: [Platform Team]\n---\n# Side Quest\n\nSide quest notes about the billing retries.\n",
        }
    )
    retrieval = Retriever(root).retrieve("side quest billing retries").structured["retrieval"]
    assert {e["type"] for e in retrieval["entities"]} <= {"person", "team", "organization"}
    assert "Olena Marchenko" in {e["label"] for e in retrieval["entities"]}
    edges = {(r["source"], r["target"], r["type"]) for r in retrieval["relationships"]}
    assert ("Side Quest", "Olena Marchenko", "owner") in edges
    assert not any(kind == "tags" for _, _, kind in edges)


def test_long_excerpts_are_cut_with_a_visible_marker(make_tree: TreeFactory) -> None:
    long_text = " ".join(f"Invoice rule {i} applies to exported batches." for i in range(60))
    root = make_tree({"rules.md": f"# Invoice rules\n\n{long_text}\n"})
    documents = Retriever(root).retrieve("invoice rules exported batches").structured["retrieval"]["documents"]
    assert documents[0]["truncated"] is True
    assert documents[0]["excerpt"].endswith(" … [truncated]")
    assert len(documents[0]["excerpt"]) <= 700 + len(" … [truncated]")
    assert documents[0]["lines"] == [1, 3]


def test_an_excerpt_opens_with_the_front_matter_field_it_cites_and_its_lines(make_tree: TreeFactory) -> None:
    record = (
        "---\ntitle: Warsaw office\nreason: A third office would cost 140,000 euros a year for six people.\n---\n"
        "# Warsaw office\n\nStatus: rejected.\n"
    )
    retrieval = Retriever(make_tree({"dec.md": record})).retrieve("Why was the Warsaw office rejected?").structured
    first = retrieval["retrieval"]["documents"][0]
    reason = "Reason: A third office would cost 140,000 euros a year for six people."
    assert first["excerpt"] == f"{reason}\nStatus: rejected."
    assert first["lines"] == [3, 7]


def _inventing_rewriter(request: dict[str, Any]) -> Reply:
    """A model whose rewritten query carries a claim, and whose summary repeats it."""
    stage = stage_of(request)
    if stage == "TriageAnswer":
        return answer(
            {
                "decision": "retrieve",
                "reasoning": "A follow-up.",
                # mostly the prompt's and the session's words, as a rewrite must be to stand in (``guide_triage``)
                "rewritten_query": "Who runs the billing migration, Zed Quill?",
            }
        )
    if stage == "SummaryAnswer":
        return answer({"summary": "Zed Quill was appointed interim chief executive of the billing migration."})
    if stage == "TargetAnswer":
        return answer({"sections": []})
    return answer({"facts": []})


def test_a_summary_may_not_take_words_from_the_models_rewritten_query(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    for server in serve_for(monkeypatch):
        server.script = _inventing_rewriter
        settings = Settings.from_env(llm_model="test-model", llm_max_calls=4)
        result = Retriever(make_tree(ACME), settings).retrieve("and who runs it?", history=["the billing migration"])
        assert result.structured["triage"]["rewritten_query"].endswith("Zed Quill?")
        assert "Zed Quill" not in result.structured["retrieval"]["context_summary"]
        fallbacks = result.structured["diagnostics"]["llm"]["fallbacks"]
        assert any(f["stage"] == "summary" and "words the facts do not" in f["reason"] for f in fallbacks)
        assert "summary" not in result.structured["diagnostics"]["llm"]["stages_guided"]


def test_a_huge_one_line_statement_is_shown_cut_at_a_word_boundary(make_tree: TreeFactory) -> None:
    line = "Zebra rollout notes: " + " ".join(f"step{i} done" for i in range(40_000))  # ~440 KB, one line
    result = Retriever(make_tree({"notes.md": f"# Zebra rollout\n\n{line}\n"})).retrieve("zebra rollout notes")
    statement = result.structured["retrieval"]["facts"][0]["statement"]
    assert statement.startswith("Zebra rollout notes: step0 done")
    assert statement.endswith(" …") and len(statement) <= MAX_STATEMENT_CHARS + 2
    assert statement[:-2].split()[-1] in {"done", *(f"step{i}" for i in range(40_000))}
    assert len(json.dumps(result.structured)) < 20_000


def test_a_ukrainian_question_is_told_how_well_the_memory_covers_it_in_ukrainian() -> None:
    facts = (Fact("Lunch is at noon", 0.9, "m/a.md", "M > A", (1, 1), "a.md", None, "Office", 0),)
    assert summarize(facts, "partial", "Коли обід в офісі?") == (
        "Lunch is at noon. (Пам'ять охоплює це частково; джерела: Office.)"
    )
    assert summarize((), "none", "Коли обід?") == "У пам'яті немає нічого, що відповідає цьому запиту."


def test_a_people_field_written_as_one_text_with_commas_names_each_person(make_tree: TreeFactory) -> None:
    # The author review: "attendees: A, B" (one text to YAML) had been one made-up entity, its people linked to none.
    files = {
        "people/priya.md": "---\ntitle: Priya Shah\ntype: person\n---\n# Priya Shah\n\nData engineer.\n",
        "people/tom.md": "---\ntitle: Tom Becker\ntype: person\n---\n# Tom Becker\n\nAnalyst.\n",
        "meetings/weekly.md": (
            "---\ntitle: Data Weekly 2026-02-17\ntype: meeting\nattendees: Priya Shah, Tom Becker\n---\n"
            "# Data Weekly 2026-02-17\n\n## Notes\n\nWe agreed to move the warehouse load to 06:00.\n"
        ),
    }
    retriever = Retriever(make_tree(files), Settings.from_env())
    result = retriever.retrieve("Who attended the Data Weekly on 2026-02-17?")
    attendees = {r.target for r in result.retrieval.relationships if r.type == "attendees"}
    assert attendees == {"Priya Shah", "Tom Becker"}


def test_a_relation_written_as_a_path_from_its_own_file_names_that_document(make_tree: TreeFactory) -> None:
    files = {
        "people/priya.md": "---\ntitle: Priya Shah\ntype: person\n---\n# Priya Shah\n\nData engineer.\n",
        "projects/warehouse.md": (
            "---\ntitle: Warehouse Consolidation\ntype: project\nlead: ../people/priya.md\n---\n"
            "# Warehouse Consolidation\n\nWe move every dashboard to BigQuery by June.\n"
        ),
    }
    result = Retriever(make_tree(files), Settings.from_env()).retrieve("Who leads the Warehouse Consolidation?")
    assert ("Warehouse Consolidation", "Priya Shah", "lead") in {
        (r.source, r.target, r.type) for r in result.retrieval.relationships
    }


def test_a_relation_written_as_a_wiki_link_names_the_document_it_links(make_tree: TreeFactory) -> None:
    # Obsidian writes a link in a property as "[[Name]]": with an alias or a heading it had named no document.
    files = {
        "People/Ana Costa.md": "---\ntype: person\n---\n# Ana Costa\n\nPayments lead.\n",
        "People/Laura Chen.md": "---\ntype: person\n---\n# Laura Chen\n\nSales lead.\n",
        "Projects/Project Atlas.md": (
            '---\ntype: project\nowner: "[[People/Ana Costa#Contact|Ana]]"\nsponsor: ["[[Laura Chen|Laura]]"]\n---\n'
            "# Project Atlas\n\nProject Atlas moves invoicing to the billing API.\n"
        ),
    }
    result = Retriever(make_tree(files), Settings.from_env()).retrieve("Who owns Project Atlas?")
    edges = {(r.source, r.target, r.type) for r in result.retrieval.relationships}
    assert {("Project Atlas", "Ana Costa", "owner"), ("Project Atlas", "Laura Chen", "sponsor")} <= edges
    assert {e.label for e in result.retrieval.entities} >= {"Ana Costa", "Laura Chen"}
