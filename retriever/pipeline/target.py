"""Stage 3, target (phase 1): choose the sections worth reading, each with a specific reason.

Offline, every section is ranked by its fused evidence (``retriever.pipeline.evidence``: its own
BM25F, its document's and its neighbours'; for a many-part question, its best part's too).
The strongest ``settings.max_sections`` (at most ``PER_DOCUMENT`` per file, each part's best
first) are read; none is dropped for scoring below some share of the best, since the
statements decide the final order.  Where the strongest sections leave part of the question's
words uncovered (``Evidence.gap``), phase 1's order is least sure, as for a question asked in other
words than the memory's: up to ``GAP_DEPTH`` times more sections are read, in proportion to the gap,
so that the statements' context and meaning can lift an answer phase 1 ranked below the cut.  Those
further sections are the remaining candidates closest in meaning to the question (``memory.vectors``;
in evidence order where the memory has no vectors): evidence has had its say in the first ones, and a
paraphrase's answer often sits well below them in evidence while its meaning is near.  A file's cap
grows with the reading, in proportion (9 of 21 sections).
Each reason names the query words the section matched and where (heading, title, path or text).
``search_strategy`` and ``estimated_tokens`` follow from what was chosen.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from retriever.memory.index import FloatArray, top_of
from retriever.memory.memory import Memory
from retriever.pipeline.context import Context, Run
from retriever.pipeline.evidence import POOL, Evidence, closeness, evidence
from retriever.pipeline.query import Query, best_coverage, weights
from retriever.pipeline.results import Phase1, Strategy, Target
from retriever.text.markup import truncate
from retriever.text.models import Document, Section

if TYPE_CHECKING:  # the LLM modules load only when a model is configured: see pipeline.context
    from retriever.llm.guided import LLMRun

CANDIDATES = POOL  # ranked before the cut, so ties at the cut are decided deterministically
GAP_DEPTH = 0.5  # share of ``max_sections`` read besides, when the words leave all of the question uncovered
PER_DOCUMENT = 6  # sections read per file (of ``max_sections``), so one long document cannot crowd out the rest


def estimate_tokens(text: str) -> int:
    """Rough LLM tokens of a text (4 characters a token), for budgets and diagnostics."""
    return math.ceil(len(text) / 4)


def _reason(doc: Document, section: Section, fields: dict[str, set[str]], query: Query) -> str:
    terms = query.terms
    # Each field's matched words, in the query's order, once (a question reads 14-21 sections).
    named = {field: list(dict.fromkeys(query.word(t) for t in terms if t in held)) for field, held in fields.items()}
    parts = []
    heading = section.heading_path[-1] if section.heading_path else section.title
    if named["heading"]:
        parts.append(f'heading "{heading}" matches {", ".join(named["heading"])}')
    title_only = [w for w in named["title"] if w not in named["heading"]]  # the title field holds the aliases too
    if title_only:
        parts.append(f'document "{doc.title}" matches {", ".join(title_only)}')
    body_only = [w for w in named["body"] + named["meta"] if w not in named["heading"] + named["title"]]
    if body_only:
        parts.append(f"text mentions {', '.join(dict.fromkeys(body_only))}")
    if not parts and named["path"]:
        parts.append(f"filed under {', '.join(named['path'])}")
    if not parts:  # chosen for its document's or its neighbours' evidence (phase 1 fuses them)
        parts.append("read with the sections around it, which match; its own text holds none of the query's words")
    found = len({t for t in terms if any(t in f for f in fields.values())})
    text = "; ".join(parts)
    return f"{text[:1].upper()}{text[1:]} ({found} of {len(terms)} query terms)."


def _strategy(targets: list[Target]) -> Strategy:
    files = len({t.rel_path for t in targets})
    if not targets:
        return "none"
    if files <= 2 and len(targets) <= 3:
        return "narrow"
    return "broad" if files >= 6 else "moderate"


Hit = tuple[int, float]  # (section id, fused evidence)


def _diverse(
    memory: Memory, hits: Sequence[Hit], limit: int, taken: Sequence[Hit] = (), cap: int = PER_DOCUMENT
) -> list[Hit]:
    """The first ``limit`` of ``hits``, at most ``cap`` per file counting those ``taken`` already, while other
    files' hits remain: the cap makes room for other files, it never leaves a place empty (a memory of one
    long transcript reads as many of its sections as any other memory)."""
    per_file = Counter(memory.state.section_files[sid] for sid, _ in taken)
    chosen: list[Hit] = []
    passed: list[Hit] = []
    for sid, score in hits:
        if len(chosen) >= limit:
            break
        path = memory.state.section_files[sid]
        if per_file[path] < cap:
            per_file[path] += 1
            chosen.append((sid, score))
        else:
            passed.append((sid, score))
    return chosen + passed[: limit - len(chosen)]


def _deeper(
    memory: Memory, found: Evidence, hits: Sequence[Hit], chosen: Sequence[Hit], max_sections: int
) -> list[Hit]:
    """Up to ``GAP_DEPTH`` · ``max_sections`` · gap more of ``hits`` beside ``chosen``: the closest in meaning
    to the question first.  A file's share of what is read stays ``PER_DOCUMENT`` of ``max_sections``, so its
    cap grows with the reading (9 of 21): a long conversation's answer can sit in its 7th-best session."""
    extra = round(GAP_DEPTH * max_sections * found.gap)
    if extra <= 0:
        return []
    have = {sid for sid, _ in chosen}
    rest = [h for h in hits if h[0] not in have]
    cap = round(PER_DOCUMENT * (max_sections + extra) / max(max_sections, 1))
    return _diverse(memory, _by_meaning(memory, found.meaning, rest), extra, chosen, cap)


def _by_meaning(memory: Memory, vector: FloatArray | None, hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` by their cosine with the question's meaning ``vector``, closest first (ties, and a memory
    without vectors, keep evidence order)."""
    if not hits or vector is None:  # no vectors: the table is missing
        return list(hits)
    near = closeness(memory, vector, (sid for sid, _ in hits))
    return sorted(hits, key=lambda h: -near[h[0]])


def choose(memory: Memory, query: Query, max_sections: int, llm: LLMRun | None = None) -> Phase1:
    """Phase 1: sections ranked by fused evidence; with an LLM, the model picks among the candidates."""
    found = evidence(memory, query)
    hits = top_of(found.scores, CANDIDATES)
    if not hits:
        return Phase1("none", 0, (), "No section of the memory contains any of the query's terms.", 0)
    picked = _guided(memory, query, hits, llm) if llm is not None else None
    if picked is not None:
        scores = dict(hits)
        chosen: list[tuple[int, float, str | None]] = [
            (sid, scores[sid], reason) for sid, reason in picked[:max_sections]
        ]
        targets = _targets(memory, query, chosen)
        reasoning = (
            f"The model ({llm.client.model if llm else ''}) chose {len(targets)} of the {len(hits)} sections BM25F "
            f"ranked highest over {memory.sections_count:,} sections, each for the reason given."
        )
    else:
        first = [(sid, float(found.scores[sid])) for sid in found.part_picks]
        ranked = _diverse(memory, first + [h for h in hits if h[0] not in found.part_picks], max_sections)
        ranked += _deeper(memory, found, hits, ranked, max_sections)
        chosen = [(sid, score, None) for sid, score in sorted(ranked, key=lambda h: -h[1])]
        targets = _targets(memory, query, chosen)
        reasoning = _reasoning(memory, targets, len(hits))
    tokens = sum(estimate_tokens(t.section_text) for t in targets)
    return Phase1(_strategy(targets), tokens, tuple(targets), reasoning, memory.sections_count, found.decided)


def _guided(memory: Memory, query: Query, hits: list[tuple[int, float]], llm: LLMRun) -> list[tuple[int, str]] | None:
    from retriever.llm.guided import OutlineEntry, guide_target

    candidates = []
    for number, (sid, score) in enumerate(hits, 1):
        doc, section = memory.section(sid)
        about = f"about: {doc.summary} · " if doc.summary else ""  # the front-matter summary, when there is one
        snippet, _ = truncate(about + " ".join(section.text.split()), 200, marker="…")
        candidates.append(OutlineEntry(f"S{number}", sid, memory.tree_path(doc.rel_path, section), score, snippet))
    return guide_target(llm, query.text, candidates)


def query_fields(memory: Memory, query: Query, section_ids: Sequence[int]) -> dict[int, dict[str, set[str]]]:
    """Per section, per field, the query's terms it holds (alternates' terms included), from the
    index's field masks, cut to what coverage and reasons read (analysing the sections' text again would cost
    as much as they are long)."""
    wanted = {*query.terms, *query.extra}
    wanted.update(t for options in query.alternates.values() for option in options for t in option)
    return memory.index.field_terms(section_ids, wanted)


def _targets(memory: Memory, query: Query, chosen: Sequence[tuple[int, float, str | None]]) -> list[Target]:
    term_weights = weights(query, memory.index)
    section_ids = [sid for sid, _, _ in chosen]
    matched = query_fields(memory, query, section_ids)
    memory.prefetch(section_ids)
    targets = []
    for sid, score, given_reason in chosen:
        doc, section = memory.section(sid)
        fields = matched[sid]
        targets.append(
            Target(
                section_id=sid,
                rel_path=doc.rel_path,
                ordinal=section.ordinal,
                tree_path=memory.tree_path(doc.rel_path, section),
                source_path=memory.source_path(doc.rel_path),
                lines=section.lines,
                score=score,
                coverage=best_coverage(term_weights, set().union(*fields.values()), query),
                reason=given_reason or _reason(doc, section, fields, query),
                section_text=" ".join([*section.heading_path, section.text]),
            )
        )
    return targets


def _reasoning(memory: Memory, targets: list[Target], ranked: int) -> str:
    files = len({t.rel_path for t in targets})
    sections, read = memory.sections_count, len(targets)
    return (
        f"BM25F over {sections:,} section{'s' if sections != 1 else ''} (headings, titles and paths weighted above "
        f"body text), with each section's document and neighbours, ranked {ranked} "
        f"candidate{'s' if ranked != 1 else ''}; the {read} strongest, from {files} document"
        f"{'s' if files != 1 else ''}, were read for facts."
    )


def run(state: Run, ctx: Context) -> Run:
    if state.skipped or ctx.memory is None or not ctx.readiness[0]:
        return dataclasses.replace(state, phase1=Phase1("none", 0, (), "Retrieval was not run.", 0))
    assert state.query is not None
    phase1 = choose(ctx.memory, state.query, ctx.settings.max_sections, ctx.llm)
    return dataclasses.replace(state, phase1=phase1)
