"""Stage 5: calibrated relevance and the greedy, section-diverse order."""

from __future__ import annotations

import dataclasses
import heapq
from pathlib import Path

import numpy as np
import pytest
from conftest import COMPANY_CONTEXT, TreeFactory
from fixtures import TRAVEL
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.memory import vectors
from retriever.memory.memory import Memory
from retriever.pipeline import evidence, forms, score, succession
from retriever.pipeline.extract import candidates_of
from retriever.pipeline.query import Framing, Query, analyze, weight_sets, weights
from retriever.pipeline.results import Candidate, Scored, Target
from retriever.pipeline.score import (
    DEFAULT,
    ScoreParams,
    _median,
    calibrate,
    rank,
    reach,
    relevance,
    statement_evidences,
    strength,
    with_meaning,
)
from retriever.pipeline.target import choose
from retriever.text import thesaurus


def _scored(section_id: int, relevance: float, text: str) -> Scored:
    target = Target(section_id, "a.md", section_id, "M > A", "m/a.md", (1, 9), 1.0, 1.0, "r")
    return Scored(Candidate(text, target, (section_id, section_id), "sentence"), relevance)


def test_second_fact_of_a_section_yields_to_another_sections_first() -> None:
    ranked = rank([_scored(1, 0.9, "a"), _scored(1, 0.85, "b"), _scored(2, 0.7, "c")], top_k=3, decay=0.7)
    assert [(s.candidate.statement, round(s.relevance, 3)) for s in ranked] == [("a", 0.9), ("c", 0.7), ("b", 0.595)]


def test_duplicate_statements_are_dropped() -> None:
    ranked = rank([_scored(1, 0.9, "Same thing."), _scored(2, 0.8, "same  thing"), _scored(3, 0.5, "Other")], 5, 0.7)
    assert [s.candidate.statement for s in ranked] == ["Same thing.", "Other"]


def test_top_k_bounds_the_result() -> None:
    assert len(rank([_scored(i, 0.5, str(i)) for i in range(20)], top_k=4, decay=0.7)) == 4


def test_a_lower_decay_puts_every_sections_best_fact_first() -> None:
    scored = [_scored(1, 0.9, "a"), _scored(1, 0.8, "b"), _scored(2, 0.35, "c")]
    assert [s.candidate.statement for s in rank(scored, 3, decay=0.5)] == ["a", "b", "c"]
    assert [s.candidate.statement for s in rank(scored, 3, decay=0.25)] == ["a", "c", "b"]


def _lazy_greedy(scored: list[Scored], top_k: int, decay: float) -> list[tuple[str, float]]:
    """The greedy order as one heap of every statement, stale entries re-pushed: the reference ``rank`` keeps."""
    order = sorted(scored, key=lambda s: (s.candidate.target.section_id, -s.own, s.candidate.lines))
    order.sort(key=lambda s: -round(s.relevance, score.TIE_DIGITS))
    cited: dict[int, int] = {}
    seen: set[str] = set()
    chosen: list[tuple[str, float]] = []
    heap = [(-round(s.relevance, score.TIE_DIGITS), i) for i, s in enumerate(order)]
    heapq.heapify(heap)
    while heap and len(chosen) < top_k:
        key, i = heapq.heappop(heap)
        pick = order[i]
        value = pick.relevance * decay ** cited.get(pick.candidate.target.section_id, 0)
        if round(value, score.TIE_DIGITS) != -key:
            heapq.heappush(heap, (-round(value, score.TIE_DIGITS), i))
            continue
        if pick.candidate.statement in seen:
            continue
        seen.add(pick.candidate.statement)
        chosen.append((pick.candidate.statement, value))
        cited[pick.candidate.target.section_id] = cited.get(pick.candidate.target.section_id, 0) + 1
    return chosen


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sampled_from([0.9, 0.8, 0.75, 0.5, 0.45, 0.3]), st.sampled_from("abcdefgh")),
        max_size=30,
    ),
    st.integers(1, 12),
    st.sampled_from([0.25, 0.5, 0.7]),
)
def test_ranking_with_one_queue_per_section_picks_as_one_heap_of_every_statement_does(
    rows: list[tuple[int, float, str]], top_k: int, decay: float
) -> None:
    scored = [_scored(sid, relevance, text) for sid, relevance, text in rows]
    assert [(s.candidate.statement, s.relevance) for s in rank(scored, top_k, decay)] == _lazy_greedy(
        scored, top_k, decay
    )


# evidence and calibration


def test_an_answer_that_does_not_repeat_the_question_ranks_by_the_statement_before_it(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "events.md": "# Events\n\n## Calendar\n\nThe kitchen rota hangs on the wiki page. Lunch is served at noon. "
            "Every team joins the quarterly offsite. It takes place in Lisbon each March.\n"
        }
    )
    facts = [f.statement for f in Retriever(root, Settings.from_env()).retrieve("When is the quarterly offsite?").facts]
    assert facts.index("It takes place in Lisbon each March.") < facts.index("The kitchen rota hangs on the wiki page.")


def test_a_word_found_only_in_the_context_counts_half() -> None:
    weights = {"offsit": 1.0, "lisbon": 1.0}
    query = analyze("offsite lisbon")
    target = Target(1, "a.md", 1, "M > A", "m/a.md", (1, 9), 1.0, 1.0, "r")
    alone = Candidate("It is in Lisbon.", target, (2, 2), "sentence")
    framed = Candidate("It is in Lisbon.", target, (2, 2), "sentence", context="The offsite is yearly.")
    framing = Framing.of([weights], query, ScoreParams().context_weight)
    assert statement_evidences(alone, set(), framing, ScoreParams())[0] == 0.5
    assert statement_evidences(framed, set(), framing, ScoreParams())[0] == 0.75


def test_coverage_counts_less_in_a_long_section_than_in_a_short_one(make_tree: TreeFactory) -> None:
    long_text = " ".join(f"word{i}" for i in range(300))
    root = make_tree({"a.md": "# A\n\n## Short\n\nQuokka facts.\n\n## Long\n\n" + long_text + " quokka.\n"})
    memory = Memory.open(root, Settings.from_env())
    short, long = (Target(sid, "a.md", sid, "A", "a.md", (1, 2), 1.0, 0.5, "r") for sid in (1, 2))
    # Both cover half the question; the short one's miss says more than the long one's.
    assert strength(short, 1.0, memory, ScoreParams()) < strength(long, 1.0, memory, ScoreParams()) < 1.0


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 5), st.floats(0, 1), st.floats(0, 1)),  # section, rank value, evidence
        min_size=1,
        max_size=15,
    )
)
def test_relevance_scores_stay_in_0_1_fall_along_the_ranking_and_start_at_the_first_facts_evidence(
    rows: list[tuple[int, float, float]],
) -> None:
    scored = [
        dataclasses.replace(_scored(section, value, f"statement {i}"), evidence=evidence)
        for i, (section, value, evidence) in enumerate(rows)
    ]
    ordered = rank(scored, top_k=12, decay=0.5)
    ranked = calibrate(ordered)
    scores = [s.relevance for s in ranked]
    assert all(0.0 <= x <= 1.0 for x in scores)
    assert scores == sorted(scores, reverse=True)
    if ordered[0].relevance > 0:
        assert scores[0] == pytest.approx(min(1.0, ranked[0].evidence))


# meaning


def _candidates(memory: Memory, question: str) -> tuple[Query, tuple[Candidate, ...]]:
    query = analyze(question, memory.state.acronyms, memory.index)
    phase1 = choose(memory, query, 10)
    return query, tuple(c for t in phase1.targets for c in candidates_of(memory, t))


def test_meaning_reorders_statements_but_leaves_their_answerability_evidence(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    monkeypatch.setattr(evidence, "MEANING_WEIGHT", 0.0)  # sections read and weighed by words alone
    monkeypatch.setattr(thesaurus, "_table", thesaurus.Thesaurus())  # the question's own words: no paraphrase
    query, candidates = _candidates(memory, "Are my meals paid for when I travel for work?")
    words = relevance(candidates, memory, query, DEFAULT)
    meant = with_meaning(words, memory, query, DEFAULT)

    def best(scored: list[Scored]) -> str:
        return max(scored, key=lambda s: s.relevance).candidate.statement

    assert best(words).startswith("When you travel, book hotels")
    assert best(meant).startswith("Breakfast, lunch and dinner")
    assert [s.evidence for s in meant] == [s.evidence for s in words]
    assert with_meaning(words, memory, query, ScoreParams(meaning_weight=0.0)) == words


def test_meaning_leaves_a_ukrainian_questions_statements_in_their_words_order(make_tree: TreeFactory) -> None:
    # The table is English: a Cyrillic pointer ("See Безперервність роботи…") had sat closest to a Ukrainian question
    # and led "Який бюджет на облаштування домашнього офісу?" over the €600 home-office budget.
    tree = {
        "equipment.md": "# Equipment\n\n## Home office\n\nHome-office budget: €600 on joining.\n\n"
        "## Blackout kit\n\nSee Безперервність роботи під час відключень.\n",
    }
    memory = Memory.open(make_tree(tree), Settings.from_env())
    query, candidates = _candidates(memory, "Який бюджет на облаштування домашнього офісу?")
    words = relevance(candidates, memory, query, DEFAULT)
    assert with_meaning(words, memory, query, DEFAULT, 10) is words


def test_a_question_its_words_cover_keeps_its_statement_order(make_tree: TreeFactory) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    query, candidates = _candidates(memory, "Who issues parking permits at the front desk?")
    words = relevance(candidates, memory, query, DEFAULT)
    assert with_meaning(words, memory, query, DEFAULT) == words


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-1, 1, width=32), min_size=1, max_size=40))
def test_the_median_of_statement_cosines_is_numpys_median(values: list[float]) -> None:
    cosines = np.asarray(values, dtype=np.float32)
    assert _median(cosines) == float(np.median(cosines))


def test_meaning_compares_only_statements_it_can_lift_among_the_best() -> None:
    values = np.array([0.9, 0.1, 0.8, 0.65, 0.0])

    def liftable(pool: int) -> list[int]:
        return evidence.reachable(values, pool, 0.2, with_evidence=False).tolist()

    assert liftable(2) == [0, 2, 3]  # the 2nd best is 0.8: 0.65 + 0.2 reaches it, 0.1 cannot
    assert liftable(5) == [0, 1, 2, 3, 4]  # no more statements than places: all are compared, 0 included
    assert evidence.reachable(values, 5, 0.2).tolist() == [0, 1, 2, 3]  # sections: only those with evidence
    assert reach(12) == 40 and reach(20) == 60  # at least three candidates per fact returned


def test_a_small_reach_keeps_the_best_statement_meaning_chooses(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    monkeypatch.setattr(evidence, "MEANING_WEIGHT", 0.0)
    query, candidates = _candidates(memory, "Are my meals paid for when I travel for work?")
    words = relevance(candidates, memory, query, DEFAULT)
    monkeypatch.setattr(score, "REACH", 1)
    meant = with_meaning(words, memory, query, DEFAULT, top_k=0)
    assert max(meant, key=lambda s: s.relevance).candidate.statement.startswith("Breakfast, lunch and dinner")


def test_a_statement_holding_the_amount_asked_for_outranks_the_topics_introduction(make_tree: TreeFactory) -> None:
    # Both statements hold every question word (the title gives them "lightning talks"); only one says how long.
    text = (
        "# Lightning talks\n\nLightning talks give each speaker a short talk slot in the tech session.\n\n"
        "Each slot will be 10 minutes, with questions after.\n"
    )
    memory = Memory.open(make_tree({"talks.md": text}), Settings.from_env())
    query, candidates = _candidates(memory, "How long is each lightning talk slot?")

    def ranked(params: ScoreParams) -> list[Scored]:
        return rank(relevance(candidates, memory, query, params), top_k=2, decay=1.0)

    untyped, typed = ranked(ScoreParams(typed_bonus=0.0)), ranked(DEFAULT)
    assert [s.candidate.statement[:14] for s in untyped] == ["Lightning talk", "Each slot will"]
    assert [s.candidate.statement[:14] for s in typed] == ["Each slot will", "Lightning talk"]
    assert {s.candidate.statement: s.evidence for s in untyped} == {s.candidate.statement: s.evidence for s in typed}


def test_in_a_section_holding_every_question_word_the_statement_with_the_answer_leads(make_tree: TreeFactory) -> None:
    # Every statement here held the whole question with its heading: all tied at the cap of 1, the typed bonus
    # vanished, and the one repeating the question in its own words ("…during core hours…") led.
    text = (
        "# Remote work\n\n## Core hours\n\nEveryone is reachable during core hours unless on leave.\n\n"
        "10:00–14:00 Lisbon time = 12:00–16:00 Kyiv time.\n"
    )
    memory = Memory.open(make_tree({"remote.md": text}), Settings.from_env())
    query, candidates = _candidates(memory, "What are our core hours?")
    ranked = rank(relevance(candidates, memory, query, DEFAULT), top_k=2, decay=1.0)
    assert [s.candidate.statement[:11] for s in ranked] == ["10:00–14:00", "Everyone is"]
    assert ranked[0].relevance > 1.0  # a rank value, not a score: calibrate makes scores


def test_the_row_whose_range_holds_the_questions_amount_leads(make_tree: TreeFactory) -> None:
    matrix = (
        "# Pricing\n\n## Discount approval matrix\n\n| Discount off list | Who approves |\n|---|---|\n"
        "| up to 10% | Account Executive |\n| 10–20% | Miguel Santos |\n| above 20% | Ana Ferreira |\n"
    )
    root = make_tree({"pricing.md": matrix})
    retriever = Retriever(root, Settings.from_env())
    # No row writes "15" or "25": the words tie, and meaning, filling the gap of the figure, had put "up to 10%" first.
    asked = ("Who approves a 15% discount?", "Who approves a 25% discount?", "Who approves a 5% discount?")
    assert [retriever.retrieve(q).facts[0].statement.split(";")[0] for q in asked] == [
        "Discount off list: 10–20%",
        "Discount off list: above 20%",
        "Discount off list: up to 10%",
    ]


def test_the_row_whose_band_of_seats_holds_the_questions_count_leads(make_tree: TreeFactory) -> None:
    bands = (
        "# Volume discounts\n\n| Seats | Discount |\n|---|---|\n| 1–49 | none |\n| 50–199 | 10% |\n"
        "| 200–999 | 15% |\n| 1,000+ | 20%, negotiated |\n"
    )
    retriever = Retriever(make_tree({"discounts.md": bands}), Settings.from_env())
    # A count has no unit of its own: the column names it.  "60 seats" had led with "1–49", "20 seats" with "1,000+".
    asked = ("60 seats", "1,500 seats", "20 seats", "300 seats")
    assert [retriever.retrieve(f"What discount do we give for {q}?").facts[0].statement for q in asked] == [
        "Seats: 50–199; Discount: 10%",
        "Seats: 1,000+; Discount: 20%, negotiated",
        "Seats: 1–49; Discount: none",
        "Seats: 200–999; Discount: 15%",
    ]


def test_in_a_matrix_of_plans_the_row_label_with_the_column_asked_about_keys_the_row(make_tree: TreeFactory) -> None:
    pricing = (
        "# Pricing\n\n## Plans\n\n| | Starter | Growth |\n|---|---|---|\n| List price / month | €990 | €3,900 |\n"
        "| Seats | 5 | 20 |\n\n## Add-ons\n\n| Add-on | Price / month | Available on |\n|---|---|---|\n"
        "| Extra seat | €60 | Starter, Growth |\n"
        "| Extra 10M events | €180 (Starter), €120 (Growth) | Starter, Growth |\n"
    )
    retriever = Retriever(make_tree({"pricing.md": pricing}), Settings.from_env())
    # The plan names are the matrix's columns: read as a frame every row shares, they had counted half, and the
    # add-on row naming "Growth" in a cell of its price column had led.
    result = retriever.retrieve("What is the price of the Growth plan?")
    assert result.facts[0].statement == "List price / month; Starter: €990; Growth: €3,900"
    assert result.summary.startswith("List price / month — growth €3,900, starter €990.")


def test_a_documents_alias_frames_its_statements_as_its_title_does(make_tree: TreeFactory) -> None:
    pto = "---\ntitle: Leave Policy\naliases: [vacation]\n---\n# Leave Policy\n\n## Allowance\n\n25 days a year.\n"
    memory = Memory.open(make_tree({"pto.md": pto}), Settings.from_env())
    query, candidates = _candidates(memory, "How many vacation days do I get?")
    statement = next(c for c in candidates if "25 days" in c.statement)
    framed = score._heading_terms(memory, statement.target)
    sets = Framing.of(weight_sets(weights(query, memory.index), query), query, DEFAULT.context_weight)

    assert {"vacat", "leav", "polici", "allow"} <= framed
    # the statement holds the question's "vacation" through the alias, as it would through the title
    without = framed - {"vacat"}
    assert statement_evidences(statement, framed, sets, DEFAULT)[0] > statement_evidences(
        statement, without, sets, DEFAULT
    )[0]


_OLD_ENGINE = (
    "---\ntitle: Engine decision 2025\n{link}---\n# Engine decision 2025\n\n"
    "## Decision\n\nThe stream processing engine for ingestion is Kafka Streams, our stream processing engine.\n"
)
_NEW_ENGINE = (
    "---\ntitle: Engine decision 2026\n{link}---\n# Engine decision 2026\n\n## Decision\n\nWe use Flink now.\n"
)


def _engine_facts(
    make_tree: TreeFactory, old_link: str, new_link: str, question: str = "Which stream processing engine do we use?"
) -> list[str]:
    root = make_tree(
        {"old.md": _OLD_ENGINE.format(link=old_link), "new.md": _NEW_ENGINE.format(link=new_link)}
    )
    retrieval = Retriever(root, Settings.from_env()).retrieve(question)
    return [f.rel_path for f in retrieval.facts]


@pytest.mark.parametrize(
    ("old_link", "new_link"),
    [("superseded_by: Engine decision 2026\n", ""), ("status: superseded\n", "supersedes: Engine decision 2025\n")],
)
def test_a_superseded_documents_facts_rank_below_its_successors_best_when_both_are_read(
    make_tree: TreeFactory, old_link: str, new_link: str
) -> None:
    assert _engine_facts(make_tree, "", "")[0] == "old.md"  # unlinked, the old text matches the question better
    facts = _engine_facts(make_tree, old_link, new_link)
    assert facts[0] == "new.md" and "old.md" in facts


@pytest.mark.parametrize(
    ("old_link", "new_link"),
    [("superseded_by: Engine decision 2026\n", ""), ("status: superseded\n", "supersedes: Engine decision 2025\n")],
)
def test_a_question_asking_what_held_before_ranks_the_superseded_record_first(
    make_tree: TreeFactory, old_link: str, new_link: str
) -> None:
    question = "Which engine for ingestion did we use before Flink, originally?"
    assert _engine_facts(make_tree, "", "", question)[0] == "new.md"  # unlinked, "Flink" names the new record
    facts = _engine_facts(make_tree, old_link, new_link, question)
    assert facts[0] == "old.md" and "new.md" in facts


_GLOSSARY = (
    "# Glossary\n\n| Term | Meaning |\n|---|---|\n| ICP | Ideal customer profile score. |\n"
    "| Churn | Revenue lost from accounts that leave. |\n\n"
    "# Revenue terms\n\n| Term | Definition |\n|---|---|\n| MRR | Monthly recurring revenue, after discounts. |\n"
    "| ARR | MRR times twelve. |\n"
)


def test_a_tables_column_names_frame_its_rows_and_the_row_keyed_by_the_term_asked_about_ranks_first(
    make_tree: TreeFactory,
) -> None:
    """Every row of the first table holds "meaning" through its column name: that frames the rows, as a heading
    would, and tells none of them apart; the row whose first cell names MRR is the one about it."""
    root = make_tree({"glossary.md": _GLOSSARY, "finance.md": "# Finance\n\nOur MRR grew in 2026.\n"})
    facts = Retriever(root, Settings.from_env()).retrieve("What does MRR mean?").facts
    assert facts[0].statement.startswith("Term: MRR; Definition: Monthly recurring revenue")


def test_among_a_sections_statements_tied_by_its_headings_the_one_saying_the_question_ranks_first(
    make_tree: TreeFactory,
) -> None:
    """The alias "home office budget" gives every statement of the page the whole question: the tie is
    broken by what each says itself, not by which comes first."""
    page = (
        "---\ntitle: Equipment Policy\naliases: [home office budget]\n---\n# Equipment Policy\n\n"
        "## Peripherals and home office\n\n- Standard kit on request: monitor, keyboard, mouse.\n"
        "- Home-office budget: €600 on joining and €200 per year after that.\n"
    )
    facts = Retriever(make_tree({"equipment.md": page}), Settings.from_env()).retrieve(
        "What is the home office budget?"
    ).facts
    assert facts[0].statement.startswith("Home-office budget: €600")


# definitions


def test_for_what_is_x_a_statement_defining_x_ranks_ahead_of_stronger_ones_using_it(make_tree: TreeFactory) -> None:
    items = "".join(f"- **Term {i}** - Meaning number {i} of a word we use.\n" for i in range(60))
    glossary = f"# Glossary\n\n{items}- **PRA** - The Paperwork Reduction Act of 1980 limits federal surveys.\n"
    research = "# Research\n\n## Surveys\n\nPRA clearance is needed for surveys. The PRA review takes months.\n"
    memory = Memory.open(make_tree({"glossary.md": glossary, "research.md": research}), Settings.from_env())
    query, candidates = _candidates(memory, "What is the PRA?")

    def ranked(asked: Query, params: ScoreParams) -> list[float]:
        words = relevance(candidates, memory, asked, params)
        favoured, form = forms.favoured(asked, candidates, memory)
        return [s.relevance for s in forms.favour(words, favoured, form, params.definition_bonus)]

    def first(params: ScoreParams) -> str:
        values = ranked(query, params)
        return candidates[values.index(max(values))].statement

    assert first(DEFAULT).startswith("PRA - The Paperwork Reduction Act")
    assert not first(dataclasses.replace(DEFAULT, definition_bonus=0.0)).startswith("PRA -")
    other = analyze("Who runs the PRA review?", memory.state.acronyms, memory.index)
    unranked = [s.relevance for s in relevance(candidates, memory, other, DEFAULT)]
    assert ranked(other, DEFAULT) == unranked == ranked(other, dataclasses.replace(DEFAULT, definition_bonus=0.0))


def test_meaning_reads_the_statements_vectors_the_index_stored_and_embeds_only_the_question(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    retriever = Retriever(make_tree(TRAVEL), Settings.from_env())
    retriever.retrieve("warm up the index")
    embedded: list[str] = []
    real = vectors.embed
    monkeypatch.setattr(vectors, "embed", lambda texts: embedded.extend(texts) or real(texts))
    question = "Is my supper covered when I am away on business?"  # words the memory lacks: meaning joins in
    facts = retriever.retrieve(question).facts
    assert facts and embedded == [question]


# front-matter fields


def test_a_records_reason_field_is_a_fact_citing_its_front_matter_line(make_tree: TreeFactory) -> None:
    record = (
        "---\ntitle: Flink for Riverbed\nreason: Flink passed the sessionisation load test at 262,000 events/s.\n---\n"
        "# Flink for Riverbed\n\n## Options considered\n\nKafka Streams and Spark were weighed.\n"
    )
    root = make_tree({"dec.md": record, "team.md": "# Team\n\nWe run Spark jobs nightly.\n"})
    facts = Retriever(root, Settings.from_env()).retrieve("Which load test did Flink pass?").facts
    assert (facts[0].statement, facts[0].lines) == (
        "Reason: Flink passed the sessionisation load test at 262,000 events/s.",
        (3, 3),
    )


def test_a_static_site_pages_description_is_a_fact_though_its_body_starts_at_level_two(make_tree: TreeFactory) -> None:
    page = (
        "---\ntitle: Expenses\ndescription: Receipts are filed in Pleo within five working days of a purchase.\n"
        "---\n\n## Cards\n\nEach teammate gets a Pleo card.\n\n## Limits\n\nThe monthly limit is 500 euros.\n"
    )
    root = make_tree({"expenses.md": page, "travel.md": "# Travel\n\nBook trains through the travel desk.\n"})
    facts = Retriever(root, Settings.from_env()).retrieve("How soon must receipts be filed?").facts
    assert (facts[0].statement, facts[0].lines, facts[0].tree_path) == (
        "Description: Receipts are filed in Pleo within five working days of a purchase.",
        (3, 3),
        "Memory > Expenses > Cards",
    )


def test_a_body_statement_saying_as_much_as_the_summary_ranks_before_it(make_tree: TreeFactory) -> None:
    page = (
        "---\ntitle: Offsite\nsummary: The quarterly offsite takes place in Lisbon.\n---\n"
        "# Offsite\n\nThe quarterly offsite takes place in Lisbon each March.\n"
    )
    retriever = Retriever(make_tree({"offsite.md": page}), Settings.from_env())
    facts = retriever.retrieve("Where is the quarterly offsite?").facts
    assert [f.statement for f in facts[:2]] == [
        "The quarterly offsite takes place in Lisbon each March.",
        "The quarterly offsite takes place in Lisbon.",
    ]


def test_a_field_yields_to_the_body_statement_it_ties_with_at_the_top(make_tree: TreeFactory) -> None:
    page = (
        "---\ntitle: Kyiv team sync\nsummary: Kyiv team sync notes on winter, Q1 2027 hiring and the New Year party.\n"
        "---\n# Kyiv team sync\n\n## Other\n\nThe New Year party of the Kyiv team is on 2026-12-19 in Podil.\n"
    )
    retriever = Retriever(make_tree({"sync.md": page, "x.md": "# X\n\nWe hire in Lisbon.\n"}), Settings.from_env())
    facts = retriever.retrieve("When is the New Year party of the Kyiv team?").facts
    assert facts[0].statement == "The New Year party of the Kyiv team is on 2026-12-19 in Podil."
    assert facts[0].relevance_score == 1.0


def test_a_fact_saying_the_question_and_its_answer_comes_before_a_newer_one_that_doesnt(make_tree: TreeFactory) -> None:
    old = "---\ntitle: Release planning\nupdated: 2025-01-01\n---\n# Release planning\n\n"  # older, but it says it
    new = "---\ntitle: Release 4.4.0 planning\nupdated: 2026-06-01\n---\n# Release 4.4.0 planning\n\n"
    files = {"old.md": f"{old}Release 4.4.0 is planned for 26 January 2027.\n", "new.md": f"{new}See a calendar.\n"}
    facts = Retriever(make_tree(files), Settings.from_env()).retrieve("When is release 4.4.0 planned?").facts
    # Both hold the whole question (the newer by its title); the older also holds a date, as "When" asks.
    assert [f.rel_path for f in facts] == ["old.md", "new.md"]
    assert facts[0].relevance_score == 1.0 > facts[1].relevance_score


def test_among_facts_tied_at_the_top_that_say_as_much_the_newer_comes_first(make_tree: TreeFactory) -> None:
    page = "---\ntitle: Release planning\nupdated: {}\n---\n# Release planning\n\nRelease 4.4.0 is planned for {}.\n"
    files = {"a.md": page.format("2025-01-01", "January"), "b.md": page.format("2026-06-01", "February")}
    facts = Retriever(make_tree(files), Settings.from_env()).retrieve("When is release 4.4.0 planned?").facts
    assert [f.rel_path for f in facts] == ["b.md", "a.md"]


def test_a_field_keeps_field_weight_of_its_rank_value_after_meaning_and_a_body_statement_none_less() -> None:
    target = Target(1, "a.md", 0, "A", "m/a.md", (1, 9), 1.0, 1.0, "")
    field = Scored(Candidate("A summary of the page.", target, (2, 2), "field"), 0.8, evidence=0.7)
    body = Scored(Candidate("A line of the page.", target, (9, 9), "sentence"), 0.75, evidence=0.7)
    out = score.yield_fields([field, body], ScoreParams(field_weight=0.9))
    assert [round(s.relevance, 6) for s in out] == [0.72, 0.75]
    assert [s.evidence for s in out] == [0.7, 0.7]


def test_the_terms_stored_with_statements_score_as_their_texts_analysed(make_tree: TreeFactory) -> None:
    page = (
        "# Travel\n\n## Meals\n\nMeals on work trips are paid at the daily rate.\n\n"
        "- Per diem:\n  - Breakfast is included when the hotel serves it.\n  - Dinner up to 40 EUR.\n\n"
        "| Trip | Meals paid |\n|---|---|\n| Domestic | Lunch and dinner |\n| Abroad | All meals |\n"
    )
    memory = Memory.open(make_tree({"travel.md": page, **TRAVEL}), Settings.from_env())
    query, candidates = _candidates(memory, "Are my meals paid for when I travel for work?")
    analysed = tuple(dataclasses.replace(c, terms=(), context_terms=None) for c in candidates)

    assert sum(bool(c.terms) for c in candidates) >= 5 and sum(bool(c.context_terms) for c in candidates) >= 5
    scored, again = relevance(candidates, memory, query, DEFAULT), relevance(analysed, memory, query, DEFAULT)
    assert [(s.relevance, s.evidence, s.own) for s in scored] == [(s.relevance, s.evidence, s.own) for s in again]


def test_of_two_records_one_decision_replaced_only_the_one_the_question_reaches_takes_its_place(
    make_tree: TreeFactory,
) -> None:
    root = make_tree(
        {
            "new.md": "---\ntitle: Platform 2026\nsupersedes: [Engine 2025, Logging 2025]\n---\n# Platform 2026\n",
            "engine.md": "---\ntitle: Engine 2025\n---\n# Engine 2025\n",
            "logging.md": "---\ntitle: Logging 2025\n---\n# Logging 2025\n",
        }
    )
    memory = Memory.open(root, Settings.from_env())
    best = {"new.md": 0.8, "engine.md": 0.4, "logging.md": 0.15}
    scale = succession.scales(best, memory, earlier=True)
    assert scale["engine.md"] == pytest.approx(0.8 / 0.4) and scale["new.md"] == pytest.approx(0.95)
    assert "logging.md" not in scale
    assert succession.scales(best, memory) == {}  # both already below the successor's best


def test_a_row_whose_cell_and_column_hold_the_question_relates_its_key_to_what_is_asked(tmp_path: Path) -> None:
    """Olena's own row in the people directory is keyed by her name; the rows saying "Reports to: Olena Marchenko"
    are what is asked."""
    facts = Retriever(COMPANY_CONTEXT, Settings(state_dir=tmp_path)).retrieve("Who reports to Olena Marchenko?").facts
    rows = [f.statement for f in facts if f.rel_path == "people/README.md"]
    assert rows and rows[0].startswith("Person: ") and "Reports to: Olena Marchenko" in rows[0]


def test_the_mirror_question_keeps_the_row_keyed_by_who_is_asked_about(tmp_path: Path) -> None:
    retriever = Retriever(COMPANY_CONTEXT, Settings(state_dir=tmp_path))
    facts = retriever.retrieve("Who does Olena Marchenko report to?").facts
    rows = [f.statement for f in facts if f.rel_path == "people/README.md"]
    assert rows and rows[0].startswith("Person: Olena Marchenko;")  # "Reports to: Taras Kovalenko"
