"""forms: which statements answer a question's form (a definition, a decision) first, and how they are ranked."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import COMPANY_CONTEXT

from retriever import Retriever, Settings
from retriever.pipeline.forms import BY_FORM, favour, favoured
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Candidate, CandidateKind, Scored, Target


def _scored(
    rel_path: str, section_id: int, relevance: float, evidence: float, kind: CandidateKind = "sentence"
) -> Scored:
    target = Target(section_id, rel_path, 0, rel_path, rel_path, (1, 1), 1.0, 1.0, "")
    return Scored(Candidate(f"statement {section_id}", target, (1, 1), kind), relevance, evidence=evidence)


def test_a_decision_takes_its_records_best_rank_and_evidence_and_nothing_else_moves() -> None:
    scored = [_scored("dec.md", 1, 0.8, 0.9), _scored("dec.md", 2, 0.2, 0.1), _scored("other.md", 3, 0.6, 0.7)]

    out = favour(scored, [False, True, False], "decision", 1.0)

    assert [s.relevance for s in out] == [0.8, 0.8, 0.6]
    assert [s.evidence for s in out] == [0.9, 0.9, 0.7]
    assert [s.own for s in out] == [0.0, BY_FORM, 0.0]


def test_a_definition_keeps_its_value_and_evidence_and_the_others_lose_half() -> None:
    scored = [_scored("glossary.md", 1, 0.4, 0.5), _scored("page.md", 2, 0.9, 0.9)]

    out = favour(scored, [True, False], "definition", 1.0)

    assert [(s.relevance, s.evidence, s.own) for s in out] == [(0.4, 0.5, 0.0), (0.45, 0.9, 0.0)]


def test_only_the_decided_sections_own_statements_answer_a_decision_question() -> None:
    query = analyze("What did we decide about the free tier?")
    rows = (_scored("a.md", 1, 0, 0), _scored("a.md", 1, 0, 0, "llm"), _scored("b.md", 2, 0, 0))
    candidates = [s.candidate for s in rows]

    assert favoured(query, candidates, None, {1}) == ([True, False, False], "decision")
    assert favoured(query, candidates, None, ()) == ([False, False, False], "")
    assert favoured(analyze("Who leads Riverbed?"), candidates, None, {1}) == ([False, False, False], "")


def test_a_why_question_favours_a_records_own_reason_field_only() -> None:
    target = Target(1, "dec.md", 0, "dec.md", "dec.md", (1, 1), 1.0, 1.0, "")
    candidates = [
        Candidate("Reason: it was cheaper.", target, (3, 3), "field"),
        Candidate("Description: the move to the new office.", target, (4, 4), "field"),
        Candidate("Reason: a sentence in the body.", target, (9, 9), "sentence"),
    ]
    assert favoured(analyze("Why did we move?"), candidates) == ([True, False, False], "reason")
    assert favoured(analyze("What did we move?"), candidates)[0] == [False, False, False]


def test_nothing_changes_where_no_statement_answers_the_form() -> None:
    scored = [_scored("a.md", 1, 0.3, 0.3)]
    assert favour(scored, [False], "decision", 1.0) is scored


@pytest.mark.parametrize(
    ("question", "first"),
    [
        ("What is Pulse?", "Pulse shows content teams what their audience"),
        ("Which stream processor did we choose for Riverbed?", "Self-managed Apache Flink 1.20 on EKS"),
        ("Why did we choose Flink for Riverbed?", "Reason: Flink passed the 250,000 events/s load test"),
        ("Чому відхилили ідею офісу у Варшаві?", "Reason: A third office would cost ~€140,000 a year"),
        ("What did we decide about the analytical store?", "Move to self-managed ClickHouse"),
        ("Which LLM provider did we pick for the Insights Copilot?", "Use Mistral Large through La Plateforme"),
    ],
)
def test_the_bundled_memory_answers_definition_and_decision_questions_first(
    question: str, first: str, tmp_path: Path
) -> None:
    retriever = Retriever(COMPANY_CONTEXT, Settings(state_dir=tmp_path))

    assert retriever.retrieve(question).run.facts[0].statement.startswith(first)


@pytest.mark.parametrize(
    "question",
    [
        "What did we decide about the office coffee machine?",
        "What did we decide about Kyiv office rules?",
        "What was the decision on Copilot pricing?",
        "What did we decide about meeting notes templates?",
        "What did we decide about the Riverbed go/no-go date?",
    ],
)
def test_another_records_decision_does_not_answer_a_question_it_only_shares_words_with(
    question: str, tmp_path: Path
) -> None:
    first = Retriever(COMPANY_CONTEXT, Settings(state_dir=tmp_path)).retrieve(question).run.facts[0]

    assert not first.tree_path.endswith(("> Decision", "> Decisions", "> Рішення"))


@pytest.mark.parametrize(
    ("question", "form", "asking"),
    [
        ("What does MRR mean?", "definition", {"mean"}),
        ("What did we decide about the free tier?", "decision", {"decid"}),
        ("Why did we choose ClickHouse?", "reason", {"choos"}),
        ("Who owns billing?", "", set()),
    ],
)
def test_the_words_asking_for_a_form_are_its_verbs_not_its_topic(question: str, form: str, asking: set[str]) -> None:
    from retriever.pipeline.forms import asking_words

    assert asking_words(analyze(question), form) == asking


def test_a_statement_of_the_asked_form_counts_the_asking_words_as_answered() -> None:
    from retriever.pipeline.forms import answered

    scored = [_scored("glossary.md", 1, 0.4, 0.57), _scored("page.md", 2, 0.9, 0.6)]
    out = answered(scored, [True, False], frozenset({"mean"}), {"mrr": 1.42, "mean": 1.07})
    # "MRR (monthly recurring revenue): contracted monthly value…" holds no "mean": it had been half an answer.
    assert [round(s.evidence, 3) for s in out] == [1.0, 0.6] and [s.relevance for s in out] == [0.4, 0.9]


def test_the_definition_of_mrr_is_a_whole_answer_to_what_mrr_means() -> None:
    retriever = Retriever(COMPANY_CONTEXT, Settings.from_env())
    first = retriever.retrieve("What does MRR mean?").facts[0]
    assert first.statement.startswith("Term: MRR (monthly recurring revenue); Definition:")
    assert first.relevance_score == 1.0  # it had been 0.57: "mean" counted as a topic word it lacked
