"""Stage 5, score: rank statements by evidence at every level, then calibrate to 0..1.

Ranking.  A statement's rank value adds its own evidence to its section's strength:

    rank(u)     = (strength(s) + statement_share · e(u)) / (1 + statement_share)
    strength(s) = evidence(s) / best evidence · ((1 − ρ) + ρ · coverage(s)),  ρ = 1 / (1 + len(s) / coverage_length)
    e(u)        = (coverage(u ∪ headings) + context_weight · what its context adds) · density(u)

``evidence`` is phase 1's fused score (the section's own BM25F, its document's and its
neighbours'); ``coverage`` is the share of the query's idf weight present (``query.coverage``;
for a many-part question, of its best-covered part).  Coverage counts by how long the text is:
a short section that holds every query word is strong evidence, while a long transcript block
holds most words by chance, so there the section's BM25F evidence decides.  A statement's
context is what frames it (the statement before and after, a list item's parent), so an answer
that does not repeat the question's words ("They meet on Fridays.") still ranks.  Facts are
chosen greedily: each further fact from a section already cited counts ``same_section_decay``
less, so the first places go to different sections, and duplicate statements are dropped.
A question naming a speaker of the statements' turns ("What did Grad B say …") counts that
label's words only for the turns that speaker opens (``speakers``), and the statements of a transcript
where that speaker takes no turn keep ``silent_speaker`` of their rank (``speakers.silent``).  A
question that asks for an amount or a time ("How long is each slot?") ranks the statements that hold
one ``typed_bonus`` higher (``expected``): the answer, not the introduction that only names the topic; one
naming an amount ("a 15% discount"), the statements whose range holds it ``range_bonus`` higher ("10–20%":
``ranges``); these and a table row keyed by the question's words are ``bonuses``.  They change the order only;
the answerability evidence stays the words'.

Meaning.  Where the read sections leave part of the weight of the question's topic words uncovered
(``gap`` = 1 − their best coverage, as ``evidence.coverage_gap`` counts it), a statement's cosine
with the question (``memory.vectors``), scaled among the candidates so the median statement gets 0
and the closest 1, joins its rank value (only candidates it could lift among the ``reach(top_k)`` best are
compared: the others cannot reach the facts returned, and a chat's question reads ~800 turns):

    rank'(u) = (rank(u) + meaning_weight · gap · m(u)) / (1 + meaning_weight · gap)

It changes the order only: the answerability evidence stays the words', so a question the memory does not answer
does not score higher for sounding like it.  Among equal rank values, own words, then recency, decide (``rank``).

Calibration.  ``relevance_score`` is the question's answerability times the fact's rank value
relative to the first fact's:  ``A · rank(u) / rank(first)``, with
``A = ½ · coverage(first fact's section) + ½ · e(first fact)``.  So scores fall along the
ranking, the first fact's score says how much of the question the memory covers (words the
memory never uses weigh most, so a question it cannot answer scores low), and a score means the same across questions.
"""

from __future__ import annotations

import dataclasses
import heapq
import re
from collections import Counter
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from retriever.memory.fields import title_text
from retriever.memory.memory import Memory
from retriever.memory.provenance import When, credible
from retriever.pipeline import bonuses, disagreement, forms, own_words, ranges, succession
from retriever.pipeline.context import Context, Run
from retriever.pipeline.evidence import coverage_gap, reachable
from retriever.pipeline.query import Framing, Query, weight_sets, weights
from retriever.pipeline.results import Candidate, Fact, Scored, Target
from retriever.pipeline.signals import BY_FORM, DEFAULT, LLM_BLEND, SUPERSEDED_FACTOR, ScoreParams
from retriever.pipeline.speakers import Speakers, named_speakers, silent
from retriever.text import analyzer

REACH = 40  # statements at least that meaning may reorder (``reach``)
TIE_DIGITS = 3  # relevances (and own-word shares) equal to this many digits tie: own words, then recency, break it
_PUNCT = re.compile(r"[\W_]+")


@lru_cache(maxsize=100_000)  # a statement's key is the same for every question that ranks it
def _dedup_key(text: str) -> str:
    return _PUNCT.sub(" ", analyzer.normalize(text)).strip()


def _heading_terms(memory: Memory, target: Target) -> set[str]:
    """The terms of what frames a statement: its document's title and aliases (the index's title field: an
    alias names what the document is about, as its title does) and its section's headings."""
    doc, section = memory.section(target.section_id)
    return set(analyzer.term_set(" ".join([title_text(doc), *section.heading_path])))


def statement_evidences(
    cand: Candidate,
    headings: set[str],
    framing: Framing,
    params: ScoreParams,
    muted: frozenset[str] = frozenset(),
) -> tuple[float, float]:
    """e(u), the query weight a statement covers with its headings, its context's words at ``context_weight``,
    and the same without its headings (what its own words and context cover: the tie-break within a section),
    from one reading of the statement and its context.  ``framing``: the question's ``weight_sets``, made ready
    (``Framing.of``).  ``muted`` terms (another speaker's label: ``speakers``) count for neither."""
    terms = cand.terms or analyzer.cached_terms(cand.statement)
    density = float(min(1.0, params.long_statement / max(len(terms), 1)) ** params.length_penalty)
    if cand.context_terms is not None:
        context = cand.context_terms
    else:
        context = _context_terms(cand.context) if cand.context else frozenset()
    said = set(terms) - muted if muted else set(terms)
    if cand.cells:  # a table's column names stand in every row: they frame it, as context does
        header = _header_terms(cand.cells)
        said -= header - analyzer.term_set(" ".join(value for _, value in cand.cells))
        context = context | header
    if muted:
        context, headings = context - muted, headings - muted
    framed, own = framing.coverages(said, headings, context)
    return framed * density, own * density


def _header_terms(cells: tuple[tuple[str, str], ...]) -> frozenset[str]:
    return analyzer.term_set(" ".join(column for column, _ in cells))


@lru_cache(maxsize=20_000)  # most candidates carry their context's terms (``Candidate.context_terms``)
def _context_terms(context: str) -> frozenset[str]:
    """The terms of a statement's context, part by part (``extract.context_of`` joins its parent item and
    neighbours with newlines, which no term spans): each part is a statement of its own, so its terms are
    already cached, where the joined text would be analysed afresh for every statement.  Memoised, as the
    parts are: a statement's context is the same for every question."""
    return frozenset().union(*map(analyzer.term_set, context.split("\n")))


def relevance(
    candidates: tuple[Candidate, ...],
    memory: Memory,
    query: Query,
    params: ScoreParams,
    speakers: Speakers | None = None,
) -> list[Scored]:
    """Every candidate with its rank value (at least 0; not capped at 1, where the best section's statements had
    all tied and the form bonuses vanished) and its answerability evidence; ``speakers`` are the ones
    the question names (``Run.speakers``; read off the candidates when not given)."""
    whole = weights(query, memory.index)
    framing = Framing.of(weight_sets(whole, query), query, params.context_weight)
    best = max((c.target.score for c in candidates), default=1.0) or 1.0
    if speakers is None:
        speakers = named_speakers((c.speaker for c in candidates), query.text)
    # A front-matter field is no turn and no statement of a transcript's: a summary must not make one a page.
    unheard = silent(((c.target.rel_path, c.speaker) for c in candidates if c.kind != "field"), speakers)
    asks = bonuses.Asks.of(query.text)
    headings: dict[int, set[str]] = {}
    when: dict[int, When] = {}
    out: list[Scored] = []
    for cand in candidates:
        sid = cand.target.section_id
        if sid not in headings:
            headings[sid] = _heading_terms(memory, cand.target)
            when[sid] = memory.when(memory.section(sid)[0])
        muted = speakers.muted(cand.speaker)
        e, own = statement_evidences(cand, headings[sid], framing, params, muted)
        share = params.statement_share
        value = (strength(cand.target, best, memory, params) + share * e) / (1 + share)
        value *= bonuses.bonus(cand, asks, whole, params, not query.defining)
        value *= params.silent_speaker if cand.target.rel_path in unheard else 1
        evidence = 0.5 * cand.target.coverage + 0.5 * e
        if cand.llm_relevance is not None:  # one scale: ours, tempered by the model's own relevance
            value = (1 - LLM_BLEND) * value + LLM_BLEND * cand.llm_relevance
            evidence = (1 - LLM_BLEND) * evidence + LLM_BLEND * cand.llm_relevance
        if when[sid].superseded:  # a superseded document ranks, and scores, below its successor
            value, evidence = value * SUPERSEDED_FACTOR, evidence * SUPERSEDED_FACTOR
        out.append(Scored(cand, max(0.0, value), credible(when[sid].valid_at), evidence, own))
    return out


def _median(values: npt.NDArray[np.float32]) -> float:
    """``np.median`` of a non-empty array, without the ``numpy.ma`` import (~6 ms) np.median makes."""
    low, high = (len(values) - 1) // 2, len(values) // 2
    part = np.partition(values, [low, high])
    return float((part[low] + part[high]) / np.float32(2))


def with_meaning(
    scored: list[Scored], memory: Memory, query: Query, params: ScoreParams, top_k: int = 0
) -> list[Scored]:
    """Rank values with the statements' meaning joined in proportion to the coverage gap (module docstring),
    compared only for the statements it can lift among the ``reach(top_k)`` best."""
    if query.language != "en":  # the table is English: Cyrillic pieces sit close to any Cyrillic text (``evidence``)
        return scored
    read = list(dict.fromkeys(s.candidate.target.section_id for s in scored))
    weight = params.meaning_weight * coverage_gap(memory, query, read) if read else 0.0
    if weight <= 0 or len(scored) < 2:
        return scored
    # A chat question reads ~800 turns; ~300 of them can still move.
    values = np.array([s.relevance for s in scored], dtype=np.float64)
    at = reachable(values, reach(top_k), weight, with_evidence=False).tolist()
    texts = [query.text, *(scored[i].candidate.statement for i in at)]
    vectors = memory.index.meaning(texts, [b"", *(scored[i].candidate.vector for i in at)])
    if not vectors.shape[1] or not vectors[0].any():
        return scored
    cos = np.einsum("ij,j->i", vectors[1:], vectors[0])  # one thread, the same sums everywhere (memory.vectors)
    low, high = _median(cos), float(cos.max())
    if high <= low:
        return scored
    closeness = dict(zip(at, np.clip((cos - low) / (high - low), 0.0, 1.0).tolist(), strict=True))
    # The constructor, not dataclasses.replace: a chat's question scores ~800 statements (replace is ~3x slower).
    # ``own`` is left at 0, so ``own_words.own_first`` keeps meaning's order: carried over, QMSum section hit@5
    # 0.656 → 0.660 but long chats' multi-section recall 0.667 → 0.633 (a turn close in meaning, in none of the words,
    # fell back).
    return [
        Scored(s.candidate, (s.relevance + weight * closeness.get(i, 0.0)) / (1 + weight), s.valid_at, s.evidence, 0.0)
        for i, s in enumerate(scored)
    ]


def yield_fields(scored: list[Scored], params: ScoreParams) -> list[Scored]:
    """A front-matter field's rank value (its words' and its meaning's: a summary sits close in meaning to any
    question on its document) times ``field_weight``, after both, where a cap at 1 would make it
    tie with the body statement it should yield to.  Its answerability evidence is left as it is."""
    return [
        dataclasses.replace(s, relevance=s.relevance * params.field_weight) if s.candidate.kind == "field" else s
        for s in scored
    ]


def below_successors(scored: list[Scored], memory: Memory, earlier: bool = False) -> list[Scored]:
    """The statements, a superseded document's scaled below its successor's best when that successor was read
    too (``succession.scales``): "Which engine do we use?" must not answer with the decision that was replaced.
    For a question asking what held before (``earlier``), the successor's below the superseded one's."""
    scale = succession.scales(forms.document_best(scored), memory, earlier=earlier)
    if not scale:
        return scored
    return [
        dataclasses.replace(s, relevance=s.relevance * scale[s.candidate.target.rel_path])
        if s.candidate.target.rel_path in scale
        else s
        for s in scored
    ]


def reach(top_k: int) -> int:
    """How many of the best statements meaning may reorder: enough that the facts returned come from
    them even after the greedy order discounts a section's further facts (``rank``)."""
    return max(REACH, 3 * top_k)


def strength(target: Target, best: float, memory: Memory, params: ScoreParams) -> float:
    """The section's evidence relative to the best, tempered by its coverage as far as its length makes that telling."""
    lengths = memory.index.lengths
    length = float(lengths[target.section_id]) if target.section_id < len(lengths) else 0.0
    rho = 1.0 / (1.0 + length / params.coverage_length)
    return target.score / best * (1 - rho + rho * target.coverage)


def calibrate(ranked: list[Scored]) -> list[Scored]:
    """Rank values → relevance scores: the first fact's evidence, scaled along the ranking."""
    if not ranked:
        return ranked
    first = ranked[0]
    top = min(1.0, first.evidence) if first.relevance > 0 else 0.0
    out, ceiling = [], top
    for s in ranked:  # near-ties (broken by recency) may come in either order: scores never rise
        # A ratio, not a scale factor: 0.5 / 5e-324 would overflow to infinity.
        ratio = s.relevance / first.relevance if first.relevance > 0 else 0.0
        ceiling = min(ceiling, top * ratio)
        out.append(_rescored(s, ceiling))
    return out


def _rescored(s: Scored, relevance: float) -> Scored:
    """``s`` with another rank value: the constructor, a third of ``dataclasses.replace``'s cost."""
    return Scored(s.candidate, relevance, s.valid_at, s.evidence, s.own)


def _place(s: Scored) -> tuple[int, float, tuple[int, int]]:
    return s.candidate.target.section_id, -s.own, s.candidate.lines


def rank(scored: list[Scored], top_k: int, decay: float) -> list[Scored]:
    """Greedy order: best first, later facts of an already-cited section discounted, duplicates dropped."""
    # Among equals (often in a small tree): a body statement before a front-matter field (``yield_fields``)
    # unless the field answers the question's form (``BY_FORM``); then more of the question in its own words;
    # then the newest; a tie across documents keeps their order.  Stable sorts, the last key first in rank.
    order = sorted(scored, key=_place)
    order.sort(key=lambda s: s.valid_at, reverse=True)
    order.sort(key=lambda s: (s.candidate.kind == "field" and s.own < BY_FORM, -round(s.own, TIE_DIGITS)))
    order.sort(key=lambda s: -round(s.relevance, TIE_DIGITS))
    # One queue per section, in ``order``: citing a section discounts all its statements alike, so their
    # order never changes and only each section's head competes.  (One heap of every statement re-pushed a
    # cited section's statements one by one: 48,000 statements of one section took ~3 s.)
    queues: dict[int, list[int]] = {}
    for i, s in enumerate(order):
        queues.setdefault(s.candidate.target.section_id, []).append(i)
    heads = {sid: 0 for sid in queues}
    heap = [(-round(order[q[0]].relevance, TIE_DIGITS), q[0], sid) for sid, q in queues.items()]
    heapq.heapify(heap)
    cited: Counter[int] = Counter()
    seen: set[str] = set()
    chosen: list[Scored] = []
    while heap and len(chosen) < top_k:
        _, i, sid = heapq.heappop(heap)
        pick, factor = order[i], decay ** cited[sid]
        dedup = _dedup_key(pick.candidate.statement)
        if dedup not in seen:
            seen.add(dedup)
            chosen.append(_rescored(pick, pick.relevance * factor))
            cited[sid] += 1
            factor *= decay
        heads[sid] += 1
        if heads[sid] < len(queues[sid]):
            nxt = queues[sid][heads[sid]]
            heapq.heappush(heap, (-round(order[nxt].relevance * factor, TIE_DIGITS), nxt, sid))
    return chosen


def to_fact(memory: Memory, scored: Scored) -> Fact:
    cand = scored.candidate
    doc, section = memory.section(cand.target.section_id)
    return Fact(
        statement=cand.shown or cand.statement,
        relevance_score=round(scored.relevance, 4),
        source_path=memory.source_path(doc.rel_path),
        tree_path=cand.target.tree_path,
        lines=cand.lines,
        rel_path=doc.rel_path,
        section_heading=section.heading,
        source_title=doc.title,
        section_id=cand.target.section_id,
        when=memory.when(doc),
        cells=cand.cells,
        speaker=cand.speaker,
        field=cand.kind == "field",
    )


def run(state: Run, ctx: Context, params: ScoreParams | None = None) -> Run:
    if ctx.memory is None or not state.candidates:
        return state
    params = params or DEFAULT
    assert state.query is not None
    words = relevance(state.candidates, ctx.memory, state.query, params, state.speakers)
    scored = yield_fields(with_meaning(words, ctx.memory, state.query, params, ctx.settings.top_k), params)
    said = [w.own > 0 for w in words]  # meaning keeps the order of the list, not the own words' shares
    scored = bonuses.in_range(scored, ranges.asked(state.query.text), params.range_bonus, said)
    # After meaning, which would reorder a decision below the options it weighed (a Ukrainian question's gap).
    decided = state.phase1.decided if state.phase1 else ()
    favoured, form = forms.favoured(state.query, state.candidates, ctx.memory, decided)
    scored = forms.favour(scored, favoured, form, params.definition_bonus)
    asking = forms.asking_words(state.query, form)
    if asking:
        scored = forms.answered(scored, favoured, asking, weights(state.query, ctx.memory.index))
    scored = below_successors(scored, ctx.memory, state.query.earlier)
    scored = disagreement.newer_first(scored, state.query.earlier)
    ctx.check_deadline()
    decay = params.many_part_decay if state.query.many_part else params.same_section_decay
    ranked = rank(scored, ctx.settings.top_k, decay)
    ranked = calibrate(own_words.own_first(ranked, own_words.heading_shares(ctx.memory, state.query, ranked)))
    return dataclasses.replace(state, facts=tuple(to_fact(ctx.memory, s) for s in ranked))
