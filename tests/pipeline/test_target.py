"""Stage 3 (phase 1): which sections are read, why, and what strategy that makes."""

from __future__ import annotations

import pytest
from conftest import TreeFactory
from fixtures import ACME

from retriever.config import Settings
from retriever.memory.index import top_of
from retriever.memory.memory import Memory
from retriever.pipeline.evidence import evidence
from retriever.pipeline.query import analyze
from retriever.pipeline.target import GAP_DEPTH, PER_DOCUMENT, choose, estimate_tokens
from retriever.text import embeddings


@pytest.fixture
def memory(make_tree: TreeFactory) -> Memory:
    return Memory.open(make_tree(ACME), Settings.from_env())


def _short(tree_path: str) -> str:
    return " > ".join(tree_path.split(" > ")[1:])


def test_sections_are_ranked_with_the_heading_match_first(memory: Memory) -> None:
    phase1 = choose(memory, analyze("How much paid leave do employees get?"), 10)
    assert [_short(t.tree_path) for t in phase1.targets] == [
        "Policies > Leave Policy > Parental leave",
        "Policies > Leave Policy > Sick leave",
        "Policies > Leave Policy",
    ]


def test_reason_names_the_matched_words_and_where(memory: Memory) -> None:
    target = choose(memory, analyze("Who owns the billing migration?"), 10).targets[0]
    assert _short(target.tree_path) == "Projects > Billing Migration"
    assert target.reason == ('Heading "Billing Migration" matches billing, migration (2 of 3 query terms).')


def test_every_section_read_says_why_even_one_whose_own_text_holds_no_query_word(make_tree: TreeFactory) -> None:
    """Sections read for a neighbour's evidence had the reason " (0 of 3 query terms)." and nothing else."""
    page = (
        "# Handbook\n\nGeneral notes.\n\n## Invoices\n\nInvoice exports run nightly for billing.\n\n"
        "## Closing\n\nThen the ledger closes.\n"
    )
    tree = make_tree({"handbook.md": page, "other.md": "# Other\n\nLunch at noon.\n"})
    memory = Memory.open(tree, Settings.from_env())
    reasons = {_short(t.tree_path): t.reason for t in choose(memory, analyze("billing invoice exports"), 10).targets}
    assert reasons["Handbook > Closing"] == (
        "Read with the sections around it, which match; its own text holds none of the query's words "
        "(0 of 3 query terms)."
    )
    assert reasons["Handbook > Invoices"].startswith('Heading "Invoices" matches invoice')


def test_another_files_match_is_read_before_a_long_documents_seventh_section(make_tree: TreeFactory) -> None:
    body = "\n".join(f"## Invoice step {i}\n\nInvoice step {i} exports invoices.\n" for i in range(8))
    memory = Memory.open(
        make_tree(
            {
                "a.md": f"# Invoices\n\n{body}",
                "b.md": "# Invoice exports\n\nEach invoice step exports invoices weekly.\n",
            }
        ),
        Settings.from_env(),
    )
    read = [t.rel_path for t in choose(memory, analyze("invoice step exports"), 7).targets]
    assert sorted(read) == ["a.md"] * 6 + ["b.md"]  # not a.md's 7th section, which scores higher
    everything = [t.rel_path for t in choose(memory, analyze("invoice step exports"), 10).targets]
    assert sorted(everything) == ["a.md"] * 9 + ["b.md"]  # then a.md's others fill the places left


def test_no_matching_term_means_no_targets_and_strategy_none(memory: Memory) -> None:
    phase1 = choose(memory, analyze("xylophone quartet"), 10)
    assert (phase1.targets, phase1.search_strategy, phase1.estimated_tokens) == ((), "none", 0)


def test_strategy_and_tokens_follow_from_what_was_chosen(memory: Memory) -> None:
    narrow = choose(memory, analyze("DEC-0054 Stripe invoices decision"), 1)
    assert narrow.search_strategy == "narrow"
    _, section = memory.section(narrow.targets[0].section_id)
    assert narrow.estimated_tokens == estimate_tokens(" ".join([*section.heading_path, section.text]))
    broad = choose(memory, analyze("Olena Platform billing leave Northwind Stripe Taras invoices team"), 10)
    assert broad.search_strategy == "broad"


def test_a_weak_match_is_still_read_and_ranks_below_the_strong_one(make_tree: TreeFactory) -> None:
    # No share-of-the-best cut: the statements, not a threshold, decide what a weak section is worth.
    root = make_tree(
        {"a.md": "# Quokka habitat\n\nQuokka quokka habitat on Rottnest.\n", "b.md": "# Misc\n\nA habitat.\n"}
    )
    memory = Memory.open(root, Settings.from_env())
    targets = choose(memory, analyze("quokka habitat"), 10).targets
    assert [t.rel_path for t in targets] == ["a.md", "b.md"]
    assert targets[0].score > 3 * targets[1].score


def _steps(trip: bool = False) -> dict[str, str]:
    """30 files that match "invoice step exports"; with ``trip``, a travel page that says "invoice" once, in its
    text only (far down in evidence for "invoice for my airplane journey", first in meaning)."""
    files = {f"step{i}.md": f"# Invoice step {i}\n\nInvoice step {i} exports invoices.\n" for i in range(30)}
    if trip:
        files["trip.md"] = "# Flights\n\nBook flights, hotels and airport taxis for the trip; keep the invoice.\n"
    return files


def test_a_question_its_words_only_partly_cover_reads_up_to_half_as_many_sections_again(
    make_tree: TreeFactory,
) -> None:
    # Phase 1's order is least sure where the words leave part of the question out: read deeper there.
    memory = Memory.open(make_tree(_steps()), Settings.from_env())
    covered = choose(memory, analyze("invoice step exports"), 10)
    partly = choose(memory, analyze("invoice step exports to the quokka ledger"), 10)
    gap = evidence(memory, analyze("invoice step exports to the quokka ledger")).gap
    assert len(covered.targets) == 10
    assert 0.0 < gap < 1.0
    assert len(partly.targets) == 10 + round(GAP_DEPTH * 10 * gap) > 10


def test_the_further_sections_a_partly_covered_question_reads_are_the_closest_in_meaning(
    make_tree: TreeFactory,
) -> None:
    # Evidence chose the first ten; the rest of the gap's reading goes by meaning, so the trip page is read
    # for "airplane journey" before more invoice steps.
    memory = Memory.open(make_tree(_steps(trip=True)), Settings.from_env())
    question = analyze("invoice for my airplane journey")
    found = evidence(memory, question)
    by_evidence = [memory.section(sid)[0].rel_path for sid, _ in top_of(found.scores, 50)]
    read = [t.rel_path for t in choose(memory, question, 10).targets]
    assert 0.0 < found.gap < 1.0
    assert by_evidence.index("trip.md") >= len(read)  # evidence alone would not read it
    assert "trip.md" in read
    assert len(read) == 10 + round(GAP_DEPTH * 10 * found.gap)


def test_without_the_embedding_table_the_further_sections_follow_evidence(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings, "_loaded", [None])  # the table could not be read: words alone
    memory = Memory.open(make_tree(_steps(trip=True)), Settings.from_env())
    question = analyze("invoice for my airplane journey")
    found = evidence(memory, question)
    read = [t.section_id for t in choose(memory, question, 10).targets]
    assert sorted(read) == sorted(sid for sid, _ in top_of(found.scores, len(read)))
    assert len(read) > 10


def _long_document(notes: int) -> dict[str, str]:
    """A document of 30 sections that match "invoice step exports" (a chat's sessions, a transcript's
    blocks), beside ``notes`` one-section files that say "invoice" once."""
    steps = "".join(f"## Invoice step {i}\n\nInvoice step {i} exports invoices.\n\n" for i in range(30))
    files = {f"note{i}.md": f"# Note {i}\n\nKeep the invoice for the trip.\n" for i in range(notes)}
    return {"long.md": f"# Steps\n\n{steps}", **files}


def test_a_files_cap_makes_room_for_other_files_and_grows_with_the_reading(make_tree: TreeFactory) -> None:
    memory = Memory.open(make_tree(_long_document(notes=20)), Settings.from_env())
    covered = [t.rel_path for t in choose(memory, analyze("invoice step exports"), 10).targets]
    question = analyze("invoice for my airplane journey")
    extra = round(GAP_DEPTH * 10 * evidence(memory, question).gap)
    partly = [t.rel_path for t in choose(memory, question, 10).targets]
    assert (covered.count("long.md"), len(covered)) == (PER_DOCUMENT, 10) == (6, 10)
    assert (partly.count("long.md"), len(partly)) == (round(PER_DOCUMENT * (10 + extra) / 10), 10 + extra) == (9, 15)


def test_a_memory_of_one_long_document_reads_as_many_sections_as_any_other(make_tree: TreeFactory) -> None:
    # The cap makes room for other files; with none to make room for, it leaves no place empty.
    memory = Memory.open(make_tree(_long_document(notes=0)), Settings.from_env())
    assert len(choose(memory, analyze("invoice step exports"), 10).targets) == 10
    assert len(choose(memory, analyze("invoice for my airplane journey"), 10).targets) == 15
