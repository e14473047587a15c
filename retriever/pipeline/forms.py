"""Questions whose form says what answers them, and the statements that answer that form first.

"What is X?" is answered by a statement defining X (``expected.definers``); "What did we decide about X?" by the
decision section of X's record or meeting (``evidence.decisions``, which chose it before anything was read).  Such
statements can share few of the question's words ("Self-managed Apache Flink 1.20 on EKS…" under "Decision" for
"Which stream processor did we choose?"), where a rejected option's row or a status line ("Decided by: …") shares
many, so the score stage ranks them first (``favour``).

Contracts: ``favoured`` marks the candidates answering the question's form and names the form ("definition",
"decision", or "" for any other question); ``favour`` changes rank values only where one is marked.  Answerability
evidence stays the words' evidence: a definition keeps its own, a decision statement takes its document's best
(the words that matched the question are its record's), so putting it first does not lower the estimate.  Both
run after meaning (``score.with_meaning``), which could otherwise reorder them; the model's paraphrases of a
decision are neither lifted nor spared the others' lowering.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

from retriever.memory.memory import Memory
from retriever.pipeline.expansion import FRAMING_TERMS
from retriever.pipeline.expected import definers
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate, Scored

# A statement answering by its form holds the question even where only its headings name the topic: ``own_first``
# must not put a status line holding just the asking verb ("Decided by: …") before it.
BY_FORM = 1e-3
# A decision's document leads when its best statement ranks at least this share of the best of any document's.
DECISION_LEAD = 0.9


def favoured(
    query: Query, candidates: Sequence[Candidate], memory: Memory | None = None, decided: Collection[int] = ()
) -> tuple[list[bool], str]:
    """The candidates that answer the question's form first, and that form's name: for "What is X?", those that
    define X (``expected.definers``, "definition"); for a question asking what was decided (``Query.deciding``),
    the statements of the ``decided`` sections (``evidence.decisions``), not the model's paraphrases of them
    ("decision"); none ("") for any other question."""
    if query.defining:
        return definers(query, candidates, memory), "definition"
    if query.deciding and decided:
        return [c.kind != "llm" and c.target.section_id in decided for c in candidates], "decision"
    return [False] * len(candidates), ""


def favour(scored: list[Scored], favoured: list[bool], form: str, bonus: float, query: Query) -> list[Scored]:
    """The statements answering the question's form (``favoured``) first; unchanged where none does.

    A definition keeps its rank value and the others keep 1 / (1 + ``bonus``) of theirs.  A decision takes the mean
    of its own rank value and its document's best, and that document's best evidence, as the document matched
    the question and this is its answer; it counts as holding the question (``BY_FORM``).  The other statements
    of its document (the options weighed, the status line) keep 1 / (1 + ``bonus``) of their rank, and so do the
    other documents' where the decision's document leads (``DECISION_LEAD``) and the question has one topic; a
    decision read from a weaker document, or beside another topic ("…, and who leads Riverbed?"), passes them
    only on its own strength: a record that shares the question's words without being what it asks about ("What
    did we decide about Kyiv office rules?" of the Warsaw-office record) must not push the answer down."""
    if not any(favoured):
        return scored
    lower = 1 / (1 + bonus)
    if form != "decision":
        pairs = zip(scored, favoured, strict=True)
        return [s if first else dataclasses.replace(s, relevance=s.relevance * lower) for s, first in pairs]
    best, evidence = document_best(scored), document_best(scored, evidence=True)
    decided = {s.candidate.target.rel_path for s, first in zip(scored, favoured, strict=True) if first}
    leads = max(best[path] for path in decided) >= DECISION_LEAD * max(best.values()) and _topics(query) < 2
    return [
        dataclasses.replace(
            s,
            relevance=(best[s.candidate.target.rel_path] + s.relevance) / 2,
            evidence=max(s.evidence, evidence[s.candidate.target.rel_path]),
            own=max(s.own, BY_FORM),
        )
        if first
        else dataclasses.replace(s, relevance=s.relevance * lower)
        if leads or s.candidate.target.rel_path in decided
        else s
        for s, first in zip(scored, favoured, strict=True)
    ]


def _topics(query: Query) -> int:
    """How many of a question's parts name a topic of their own: words besides its decision and framing words
    ("SOC 2 or ISO 27001 first: what was the decision?" names one)."""
    return sum(1 for part in query.parts if set(part) - query.deciding - FRAMING_TERMS)


def document_best(scored: list[Scored], evidence: bool = False) -> dict[str, float]:
    """Each document's best rank value (or answerability ``evidence``) among ``scored``."""
    best: dict[str, float] = {}
    for s in scored:
        path = s.candidate.target.rel_path
        best[path] = max(best.get(path, 0.0), s.evidence if evidence else s.relevance)
    return best
