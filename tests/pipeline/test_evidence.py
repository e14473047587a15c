"""Section evidence at every level: a section's own, its document's and its neighbours', and the parts of a question."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TreeFactory
from fixtures import TRAVEL
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever
from retriever.config import Settings
from retriever.memory.memory import Memory
from retriever.pipeline import evidence as evidence_module
from retriever.pipeline.evidence import evidence, neighbours
from retriever.pipeline.query import analyze
from retriever.pipeline.target import choose

FILLER = "Plain words about the office kitchen, the coffee rota and the printer on the second floor."


def _heading_of(memory: Memory, section_id: int) -> tuple[str, str | None]:
    doc, section = memory.section(section_id)
    return doc.rel_path, section.heading


def test_a_section_inside_a_strongly_matching_document_outranks_an_isolated_chance_match(
    make_tree: TreeFactory,
) -> None:
    # Both "Notes" sections hold the same words (and no title names quokkas); one document is about quokkas.
    root = make_tree(
        {
            "wildlife.md": "# Wildlife\n\n## Habitat\n\nQuokkas live on Rottnest. Quokka colonies nest in scrub.\n\n"
            f"## Diet\n\nQuokkas eat leaves; a quokka climbs for them.\n\n## Notes\n\nA quokka was seen. {FILLER}\n",
            "misc.md": f"# Misc\n\n## Intro\n\n{FILLER}\n\n## Notes\n\nA quokka was seen. {FILLER}\n",
        }
    )
    memory = Memory.open(root, Settings.from_env())
    scores = evidence(memory, analyze("quokka sightings")).scores
    notes = {
        path: sid for sid in range(len(scores)) for path, heading in [_heading_of(memory, sid)] if heading == "Notes"
    }
    assert memory.index.scores(["quokka"])[notes["wildlife.md"]] == pytest.approx(
        memory.index.scores(["quokka"])[notes["misc.md"]]
    )
    assert scores[notes["wildlife.md"]] > scores[notes["misc.md"]]


def test_neighbour_evidence_is_the_mean_of_the_sections_beside_one_in_its_own_document() -> None:
    own = np.array([1.0, 0.0, 0.5, 0.2, 0.8], dtype=np.float32)
    documents = np.array([0, 0, 0, 1, 1], dtype=np.int32)
    # Section 2 ends document 0: its one neighbour is section 1; section 3 starts document 1.
    assert neighbours(own, documents).tolist() == pytest.approx([0.0, 0.75, 0.0, 0.8, 0.2])


def test_dead_sections_have_no_evidence(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "# Quokkas\n\nQuokka facts.\n\n## More\n\nQuokka habitat.\n"})
    memory = Memory.open(root, Settings.from_env())
    memory.index.remove([0])
    scores = evidence(memory, analyze("quokka")).scores
    assert scores[0] == 0.0 and scores[1] > 0.0


def test_each_part_of_a_many_part_question_gets_its_best_sections_read(make_tree: TreeFactory) -> None:
    # The conference sections match most of the question; only the part "how far ahead" finds the deadlines.
    conference = "\n\n".join(
        f"## Conference approval {i}\n\nConference approval for paid conferences." for i in range(6)
    )
    root = make_tree(
        {
            "conferences.md": f"# Conferences\n\n{conference}\n",
            "deadlines.md": "# Deadlines\n\n## Ahead of time\n\nAsk four weeks ahead; far ahead is better.\n",
        }
    )
    memory = Memory.open(root, Settings.from_env())
    query = analyze("How do I get approval for a paid conference, and how far ahead do I need to ask?")
    assert query.parts == (("approv", "pay", "confer"), ("far", "ahead", "ask"))
    found = evidence(memory, query)
    assert [_heading_of(memory, sid)[0] for sid in found.part_picks[-2:]][-1] == "deadlines.md"
    targets = choose(memory, query, max_sections=3).targets
    assert "deadlines.md" in {t.rel_path for t in targets}


# meaning


def _ranked_headings(memory: Memory, scores: np.ndarray) -> list[str | None]:
    order = [int(sid) for sid in np.argsort(-scores, kind="stable") if scores[sid] > 0]
    return [memory.section(sid)[1].heading for sid in order]


def test_a_question_in_other_words_ranks_the_section_that_means_it_first(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    question = analyze("Are my meals paid for when I travel for work?")  # the memory never says "meals"
    assert _ranked_headings(memory, evidence(memory, question).scores) == [
        "Dining expenses",
        "Travel policy",
        "Hotels",
        "Flights",
    ]
    monkeypatch.setattr(evidence_module, "MEANING_WEIGHT", 0.0)  # by words alone: the title, then "travel" twice
    assert _ranked_headings(memory, evidence(memory, question).scores) == [
        "Travel policy",
        "Hotels",
        "Dining expenses",
        "Flights",
    ]


def test_meaning_lets_in_no_section_the_words_did_not_find(make_tree: TreeFactory) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    assert not evidence(memory, analyze("What meals are covered?")).scores.any()


def test_the_gap_is_the_share_of_the_questions_weight_the_strongest_sections_leave_out(
    make_tree: TreeFactory,
) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    assert evidence(memory, analyze("How many parking permits does the front desk issue?")).gap == 0.0
    partly = evidence(memory, analyze("Are parking permits refunded for electric bicycles?")).gap
    assert 0.0 < partly < 1.0
    assert evidence(memory, analyze("xylophone quartet")).gap == 0.0  # nothing found: nothing to read deeper


def test_a_question_its_words_cover_is_ranked_by_words_alone(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(make_tree(TRAVEL), Settings.from_env())
    question = analyze("How many parking permits does the front desk issue?")  # "many" frames; the rest is there
    with_meaning = evidence(memory, question).scores
    monkeypatch.setattr(evidence_module, "MEANING_WEIGHT", 0.0)
    np.testing.assert_array_equal(with_meaning, evidence(memory, question).scores)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0, 2, width=32), min_size=1, max_size=120),
    st.integers(1, 60),
    st.floats(0, 1, width=32),
    st.data(),
)
def test_no_section_left_out_of_reach_could_be_lifted_into_the_pool(
    values: list[float], pool: int, most: float, data: st.DataObject
) -> None:
    scores = np.asarray(values, dtype=np.float32)
    reach = evidence_module.reachable(scores, pool, most)
    lift = np.zeros_like(scores)
    lifts = st.lists(st.floats(0, most, width=32), min_size=len(reach), max_size=len(reach))
    lift[reach] = np.asarray(data.draw(lifts), dtype=np.float32)
    lifted = scores + lift
    best = sorted(range(len(scores)), key=lambda sid: (-lifted[sid], sid))[:pool]
    assert {sid for sid in best if lifted[sid] > 0} <= set(reach.tolist())


def _riverbed_and_glossary(make_tree: TreeFactory) -> Memory:
    project = "# Project Riverbed\n\n" + "".join(
        f"## Week {i}\n\nShadow traffic ran on tenant {i}; shadow traffic latency held. {FILLER}\n\n" for i in range(20)
    )
    terms = "".join(f"| Term {i} | Meaning {i} of the word. |\n" for i in range(40))
    glossary = (
        "---\ntitle: Company Glossary\n---\n# Company Glossary\n\n## Engineering\n\n| Term | Meaning |\n|---|---|\n"
        f"{terms}| Shadow traffic | Running the new pipeline on real data without serving its results. |\n"
    )
    root = make_tree({"riverbed.md": project, "glossary.md": glossary})
    return Memory.open(root, Settings.from_env())


def test_a_question_asking_what_a_thing_is_reads_the_glossary_section_holding_it(make_tree: TreeFactory) -> None:
    memory = _riverbed_and_glossary(make_tree)
    query = analyze("What is shadow traffic?")
    found = evidence(memory, query)

    assert [_heading_of(memory, sid) for sid in found.part_picks] == [("glossary.md", "Engineering")]
    ranked = [sid for sid in np.argsort(-found.scores)[:14].tolist()]
    assert found.part_picks[0] not in ranked  # words alone would not have read it
    assert evidence(memory, analyze("When did shadow traffic start?")).part_picks == ()


@pytest.mark.parametrize(
    "question",
    [
        "What is shadow traffic?",
        "Define shadow traffic.",
        "The meaning of shadow traffic?",
        "What does the shadow traffic mean?",
        "Що таке shadow traffic?",
    ],
)
def test_the_glossary_definition_is_the_first_fact_for_what_is_and_not_for_other_questions(
    make_tree: TreeFactory, question: str
) -> None:
    root = _riverbed_and_glossary(make_tree).root
    retriever = Retriever(root)

    first = retriever.retrieve(question).run.facts[0]
    assert first.statement.startswith("Term: Shadow traffic; Meaning: Running the new pipeline")
    assert retriever.retrieve("How did shadow traffic latency hold?").run.facts[0].statement.startswith("Shadow")


# decisions

_DECISION_RECORD = (
    "---\ntype: decision\nstatus: accepted\nsummary: Apache Flink is the stream processor of Riverbed.\n---\n"
    "# DEC-0052 — Apache Flink for Riverbed Ingestion\n\n"
    "**Status:** accepted · **Decided by:** Taras Kovalenko\n\n"
    "## Decision drivers\n\nThe stream processor must recover from node loss within a minute.\n\n"
    "## Options considered\n\n| Option | Recovery |\n|---|---|\n"
    "| Kafka Streams stream processor, tuned | 4–6 min |\n| Apache Flink 1.20 | ~40 s |\n\n"
    "## Decision\n\nSelf-managed Apache Flink 1.20 on EKS with checkpoints every 30 s.\n"
)


def _decision_memory(make_tree: TreeFactory) -> Memory:
    project = "# Project Riverbed\n\n" + "".join(
        f"## Week {i}\n\nThe Riverbed stream processor ran on tenant {i}. {FILLER}\n\n" for i in range(12)
    )
    root = make_tree({"decisions/dec_0052.md": _DECISION_RECORD, "projects/riverbed.md": project})
    return Memory.open(root, Settings.from_env())


def test_a_question_asking_what_was_decided_reads_the_decision_section_of_the_strongest_record(
    make_tree: TreeFactory,
) -> None:
    memory = _decision_memory(make_tree)

    found = evidence(memory, analyze("Which stream processor did we choose for Riverbed?"))

    assert [_heading_of(memory, sid) for sid in found.part_picks] == [("decisions/dec_0052.md", "Decision")]
    assert evidence(memory, analyze("How does the Riverbed stream processor recover?")).part_picks == ()


@pytest.mark.parametrize(
    "question",
    [
        "Which stream processor did we choose for Riverbed?",
        "What did we decide about the Riverbed stream processor?",
        "Which stream processor was picked for Riverbed?",
        "Який stream processor обрали для Riverbed?",
    ],
)
def test_the_decision_is_the_first_fact_for_a_decision_question_not_an_option_or_the_status_line(
    make_tree: TreeFactory, question: str
) -> None:
    retriever = Retriever(_decision_memory(make_tree).root)

    facts = retriever.retrieve(question).run.facts

    assert facts[0].statement.startswith("Self-managed Apache Flink 1.20 on EKS")
    assert facts[0].tree_path.endswith("> Decision")


@pytest.mark.parametrize(
    "heading",
    ["Decision", "Decisions", "**Decision outcome**", "3. Decision", "Decision (2026-05-01)", "Final decision",
     "Decisions & next steps", "Рішення"],
)
def test_a_decision_heading_numbering_and_brackets_aside_records_a_decision(heading: str) -> None:
    assert evidence_module.decision_heading(heading)


@pytest.mark.parametrize(
    "heading", ["Decision drivers", "Decisions she signed", "Options considered", "Outcome", "Resolution", ""]
)
def test_a_heading_naming_more_or_other_than_the_decision_does_not_record_one(heading: str) -> None:
    assert not evidence_module.decision_heading(heading)


def test_a_decision_question_reads_no_record_named_after_another_topic(make_tree: TreeFactory) -> None:
    # Its context names the billing database; it decided the invoice PDF tool.
    record = (
        "---\ntype: decision\nstatus: accepted\n---\n# DEC-0061 — Invoice PDF generator\n\n"
        "## Context\n\nThe billing database emits an event for each invoice; billing needs a PDF generator that reads "
        "from the billing database.\n\n## Decision\n\nUse Gotenberg, run as a sidecar of the invoice worker.\n"
    )
    billing = "# Billing service\n\n## Architecture\n\nWe chose PostgreSQL 16 over MySQL for the billing database.\n"
    root = make_tree({"decisions/dec_0061.md": record, "projects/billing.md": billing})
    memory = Memory.open(root, Settings.from_env())

    assert evidence(memory, analyze("What did we decide about the billing database?")).decided == ()
    facts = Retriever(root).retrieve("What did we decide about the billing database?").run.facts
    assert not facts[0].statement.startswith("Use Gotenberg")


def test_a_superseded_records_decision_is_not_read_for_a_decision_question(make_tree: TreeFactory) -> None:
    old = _DECISION_RECORD.replace("status: accepted", "status: superseded\nsuperseded_by: DEC-0053")
    root = make_tree({"decisions/dec_0052.md": old})
    memory = Memory.open(root, Settings.from_env())

    assert evidence(memory, analyze("Which stream processor did we choose for Riverbed?")).decided == ()


def test_a_record_titled_in_front_matter_with_top_level_sections_has_its_decision_read(make_tree: TreeFactory) -> None:
    record = (
        "---\ntype: decision\ntitle: DEC-0070 — Billing database\n---\n# Context\n\nThe billing database outgrew "
        "MySQL.\n\n# What we decided\n\nUse PostgreSQL 16 on RDS.\n"
    )
    memory = Memory.open(make_tree({"decisions/dec_0070.md": record}), Settings.from_env())

    decided = evidence(memory, analyze("What did we decide about the billing database?")).decided

    assert [_heading_of(memory, sid) for sid in decided] == [("decisions/dec_0070.md", "What we decided")]


def test_a_persons_decisions_list_is_not_a_decision_section(make_tree: TreeFactory) -> None:
    person = (
        "---\ntype: person\n---\n# Dmytro Shevchenko\n\n## Decisions\n\n- Proposed the Riverbed stream processor.\n"
    )
    memory = Memory.open(make_tree({"people/dmytro.md": person}), Settings.from_env())

    assert evidence(memory, analyze("Which stream processor did we choose for Riverbed?")).decided == ()


def test_of_a_decision_log_only_the_entries_naming_the_topic_are_read(make_tree: TreeFactory) -> None:
    entries = "".join(
        f"## {name}\n\n### Decision\n\nUse {tool}.\n\n"
        for name, tool in (("Logs", "Loki"), ("Cache", "Redis"), ("Payments", "Stripe"), ("Queue", "SQS"))
    )
    log = f"---\ntype: decision\nsummary: Decisions of the Falcon project.\n---\n# Falcon decision log\n\n{entries}"
    memory = Memory.open(make_tree({"decisions/falcon.md": log}), Settings.from_env())

    decided = evidence(memory, analyze("What did we decide about the Falcon cache?")).decided

    assert [memory.section(sid)[1].heading_path[-2:] for sid in decided] == [("Cache", "Decision")]


def test_a_decision_headings_own_words_name_no_topic(make_tree: TreeFactory) -> None:
    sync = "# Weekly sync\n\n## Decisions and action items\n\nBuy a new espresso machine.\n"
    memory = Memory.open(make_tree({"meetings/sync.md": sync}), Settings.from_env())

    assert evidence(memory, analyze("What did we agree on action items?")).decided == ()
