"""Stage 5, score: relevance in 0..1 that means the same across questions.

A statement's relevance is built from shares of the query's idf weight (so a question whose
rare words the memory lacks scores low whatever the ranking) and from its section's BM25F
strength relative to the best section (so the ranking follows phase 1):

    relevance = a · coverage(statement ∪ its headings) + b · coverage(statement alone)
              + c · coverage(section) · section strength

Facts are then chosen greedily: each further fact from a section already cited counts
``SAME_SECTION_DECAY`` less, so the first places go to different sections, and duplicate
statements are dropped.
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from dataclasses import dataclass

from retriever import analyzer
from retriever.context import Context, Run
from retriever.memory import Memory
from retriever.query import Query, coverage, weights
from retriever.results import Candidate, Fact, Target, When


@dataclass(frozen=True, slots=True)
class ScoreParams:
    with_headings: float = 0.30
    statement: float = 0.20
    section: float = 0.50
    same_section_decay: float = 0.50
    many_part_decay: float = 0.25  # a many-part question wants breadth: one fact per section first
    long_statement: int = 30  # terms; longer statements match query words by chance more often
    length_penalty: float = 0.3


DEFAULT = ScoreParams()
LLM_BLEND = 0.4  # weight of the model's relevance for the facts it extracted
SUPERSEDED_FACTOR = 0.7  # relevance kept by facts of superseded documents
TIE_DIGITS = 3  # relevances equal to this many digits are a tie, which recency breaks
_PUNCT = re.compile(r"[\W_]+")


def _dedup_key(text: str) -> str:
    return _PUNCT.sub(" ", analyzer.normalize(text)).strip()


@dataclass(frozen=True, slots=True)
class _Scored:
    candidate: Candidate
    relevance: float
    valid_at: str = ""  # the document's last change, for "among equals, the newer wins"


def _heading_terms(memory: Memory, target: Target) -> set[str]:
    doc, section = memory.section(target.section_id)
    return set(analyzer.term_set(" ".join([doc.title, *section.heading_path])))


def relevance(candidates: tuple[Candidate, ...], memory: Memory, query: Query, params: ScoreParams) -> list[_Scored]:
    """Every candidate with its relevance in 0..1."""
    term_weights = weights(query, memory.index)
    best = max((c.target.score for c in candidates), default=1.0) or 1.0
    headings: dict[int, set[str]] = {}
    when: dict[int, When] = {}
    out = []
    for cand in candidates:
        terms = analyzer.cached_terms(cand.statement)
        own = set(terms)
        if cand.target.section_id not in headings:
            headings[cand.target.section_id] = _heading_terms(memory, cand.target)
        framed = own | headings[cand.target.section_id]
        density = min(1.0, params.long_statement / max(len(terms), 1)) ** params.length_penalty
        score = (
            params.with_headings * coverage(term_weights, framed, query) * density
            + params.statement * coverage(term_weights, own, query) * density
            + params.section * cand.target.coverage * (cand.target.score / best)
        )
        if cand.llm_relevance is not None:  # one scale: our calibrated score, tempered by the model's own
            score = (1 - LLM_BLEND) * score + LLM_BLEND * cand.llm_relevance
        sid = cand.target.section_id
        if sid not in when:
            when[sid] = memory.when(memory.section(sid)[0])
        if when[sid].superseded:  # a superseded document ranks below its successor
            score *= SUPERSEDED_FACTOR
        out.append(_Scored(cand, min(1.0, max(0.0, score)), when[sid].valid_at or ""))
    return out


def rank(scored: list[_Scored], top_k: int, decay: float) -> list[_Scored]:
    """Greedy order: best first, later facts of an already-cited section discounted, duplicates dropped."""
    # Newest first among equals: a stable sort by date, then by relevance; ``max`` keeps the first of a tie.
    remaining = sorted(scored, key=lambda s: (s.candidate.target.section_id, s.candidate.lines))
    remaining.sort(key=lambda s: s.valid_at, reverse=True)
    remaining.sort(key=lambda s: -round(s.relevance, TIE_DIGITS))
    cited: Counter[int] = Counter()
    seen: set[str] = set()
    chosen: list[_Scored] = []
    while remaining and len(chosen) < top_k:
        pick = max(
            remaining, key=lambda s: round(s.relevance * decay ** cited[s.candidate.target.section_id], TIE_DIGITS)
        )
        remaining.remove(pick)
        key = _dedup_key(pick.candidate.statement)
        if key in seen:
            continue
        seen.add(key)
        sid = pick.candidate.target.section_id
        chosen.append(_Scored(pick.candidate, pick.relevance * decay ** cited[sid], pick.valid_at))
        cited[sid] += 1
    return chosen


def to_fact(memory: Memory, scored: _Scored) -> Fact:
    cand = scored.candidate
    doc, section = memory.section(cand.target.section_id)
    return Fact(
        statement=cand.statement,
        relevance_score=round(scored.relevance, 4),
        source_path=memory.source_path(doc.rel_path),
        tree_path=cand.target.tree_path,
        lines=cand.lines,
        rel_path=doc.rel_path,
        section_heading=section.heading,
        source_title=doc.title,
        section_id=cand.target.section_id,
        when=memory.when(doc),
    )


def run(state: Run, ctx: Context, params: ScoreParams | None = None) -> Run:
    if ctx.memory is None or not state.candidates:
        return state
    params = params or DEFAULT
    assert state.query is not None
    scored = relevance(state.candidates, ctx.memory, state.query, params)
    ctx.check_deadline()
    decay = params.many_part_decay if state.query.many_part else params.same_section_decay
    ranked = rank(scored, ctx.settings.top_k, decay)
    return dataclasses.replace(state, facts=tuple(to_fact(ctx.memory, s) for s in ranked))
