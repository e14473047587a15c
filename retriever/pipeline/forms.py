"""Questions whose form says what answers them, and the statements that answer that form first.

"What is X?" is answered by a statement defining X (``expected.definers``); "What did we decide about X?" by the
decision section of X's record or meeting (``evidence.decisions``, which chose it before anything was read).  Such
statements can share few of the question's words ("Self-managed Apache Flink 1.20 on EKS…" under "Decision" for
"Which stream processor did we choose?"), where a rejected option's row or a status line ("Decided by: …") shares
many, so the score stage ranks them first (``favour``): a definition before every other statement, a decision
before its own record's other statements.  "Why did we choose Flink?" is answered by the record's own ``reason:``
(``text.field_statements``, "Reason: Flink passed the load test…"), which comes first within its record as a
decision does.

Contracts: ``favoured`` marks the candidates answering the question's form and names the form ("definition",
"decision", or "" for any other question); ``favour`` changes rank values only where one is marked.  Answerability
evidence stays the words' evidence: a definition keeps its own, a decision statement takes its document's best
(the words that matched the question are its record's), so putting it first does not lower the estimate.  Both
run after meaning (``score.with_meaning``), which could otherwise reorder them; the model's paraphrases of a
decision are not lifted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Mapping, Sequence

from retriever.memory.memory import Memory
from retriever.pipeline.deciding import chosen_words
from retriever.pipeline.expected import definers
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate, Scored
from retriever.pipeline.signals import BY_FORM
from retriever.text.field_statements import key_of
from retriever.text.vocabulary import REASON_FIELDS


def favoured(
    query: Query, candidates: Sequence[Candidate], memory: Memory | None = None, decided: Collection[int] = ()
) -> tuple[list[bool], str]:
    """The candidates that answer the question's form first, and that form's name: for "What is X?", those that
    define X (``expected.definers``, "definition"); for a question asking what was decided (``Query.deciding``),
    the statements of the ``decided`` sections (``evidence.decisions``), not the model's paraphrases of them
    ("decision"); for a question asking why (``Query.why``), the front-matter reason fields ("reason"); none ("")
    for any other question."""
    if query.defining:
        return definers(query, candidates, memory), "definition"
    if query.deciding and decided:
        return [c.kind != "llm" and c.target.section_id in decided for c in candidates], "decision"
    if query.why:
        return [c.kind == "field" and key_of(c.statement) in REASON_FIELDS for c in candidates], "reason"
    return [False] * len(candidates), ""


def asking_words(query: Query, form: str) -> frozenset[str]:
    """The question's words that ask for its form rather than name its topic ("mean" of "What does MRR mean?",
    "decide" of "What did we decide about…?", "choose" of "Why did we choose ClickHouse?"): a statement of that form
    answers them by being one (``answered``)."""
    if form == "definition":
        return frozenset(query.terms) & query.framing
    if form == "decision":
        return query.deciding
    return chosen_words(query.text) if form == "reason" else frozenset()


def answered(
    scored: list[Scored], favoured: list[bool], asking: frozenset[str], weights: Mapping[str, float]
) -> list[Scored]:
    """The statements of the question's form (``favoured``) with the share of the question's weight its ``asking``
    words hold added to their answerability evidence: the exact definition of MRR had been read as half an answer
    to "What does MRR mean?" (it holds no "mean"), the coverage ``none``.  Rank values are left as they are."""
    total = sum(weights.values())
    share = sum(weights.get(t, 0.0) for t in asking) / total if total else 0.0
    if not share or not any(favoured):
        return scored
    return [
        dataclasses.replace(s, evidence=min(1.0, s.evidence + share)) if first else s
        for s, first in zip(scored, favoured, strict=True)
    ]


def favour(scored: list[Scored], favoured: list[bool], form: str, definition_bonus: float) -> list[Scored]:
    """The statements answering the question's form (``favoured``) first; unchanged where none does.

    A definition keeps its rank value and the others keep 1 / (1 + ``definition_bonus``) of theirs.  A decision (and
    a record's reason, for "why…?") is its record's answer, wherever the record ranks: it takes its record's best
    rank value and best answerability evidence, and ``BY_FORM``, so it comes first among its record's facts
    (``own_words.own_first``) before the options weighed and the status line.  No other statement changes and no
    record's best does, so no record's first place rises for holding a decision: one that shares the question's
    words without being what it asks about ("What did we decide about the Kyiv office?" of the Warsaw-office
    record) keeps the place its words give it."""
    if not any(favoured):
        return scored
    pairs = zip(scored, favoured, strict=True)
    if form == "definition":
        lower = 1 / (1 + definition_bonus)
        return [s if first else dataclasses.replace(s, relevance=s.relevance * lower) for s, first in pairs]
    best, evidence = document_best(scored), document_best(scored, evidence=True)
    return [
        dataclasses.replace(
            s,
            relevance=best[s.candidate.target.rel_path],
            evidence=max(s.evidence, evidence[s.candidate.target.rel_path]),
            own=BY_FORM,
        )
        if first
        else s
        for s, first in pairs
    ]


def document_best(scored: list[Scored], evidence: bool = False) -> dict[str, float]:
    """Each document's best rank value (or answerability ``evidence``) among ``scored``."""
    best: dict[str, float] = {}
    for s in scored:
        path = s.candidate.target.rel_path
        best[path] = max(best.get(path, 0.0), s.evidence if evidence else s.relevance)
    return best
