"""Stage 5: calibrated relevance and the greedy, section-diverse order."""

from __future__ import annotations

from retriever.results import Candidate, Target
from retriever.score import _Scored, rank


def _scored(section_id: int, relevance: float, text: str) -> _Scored:
    target = Target(section_id, "a.md", section_id, "M > A", "m/a.md", (1, 9), 1.0, 1.0, "r")
    return _Scored(Candidate(text, target, (section_id, section_id), "sentence"), relevance)


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
