"""Section evidence at every level of the tree: a section's own, its document's and its neighbours'.

Every live section gets one fused score, each level relative to its best, so no level's units
dominate another's:

    evidence = own BM25F / best own
             + DOCUMENT_WEIGHT · its document's BM25 / best document
             + NEIGHBOUR_WEIGHT · mean BM25F of the sections just before and after it / best own

A section inside a strongly matching document, or amid matching sections (a discussion runs on
across blocks of a transcript; an answer sits under the heading after the one that names the
topic), outranks an isolated chance match.

A many-part question ("…, and how far ahead must I ask?") is also searched part by part, each
part in the context of the whole question (its own words in full, the others at
``query.PART_CONTEXT``); a section's evidence is its best over the whole question and its parts, and
each part's strongest sections are read whatever the other parts score.  Each part's search weighs all
the question's terms, so a question is searched for its first ``question_parts.MAX_PARTS`` parts only.

Meaning fills the gap words leave.  When even the best-matching sections hold only part of the
idf weight of the question's topic words (``gap`` = 1 − the best coverage among the
``GAP_SECTIONS`` strongest; framing words such as "many" left out), the question is likely asked
in other words than the memory's ("meals" for "dining expenses"), so each section with evidence
also gets

    MEANING_WEIGHT · gap · z⁺(cos) / max z⁺,   z = (cos − mean) / std over live sections

from the cosine of its meaning vector with the question's (``memory.vectors``); the mean and spread
come from the memory's moments (no comparison with every section), and only the sections meaning
could lift into the ``POOL`` best are compared, their best z⁺ taking the full weight.  A question the
memory's words cover fully is ranked by words alone.  Meaning re-ranks the sections words found
(in the section, its document or its neighbours); it lets no other section in, so a question that
shares no word with the memory still gets none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from retriever.memory.fields import FIELDS, meta_text, title_text
from retriever.memory.index import FloatArray, top_of
from retriever.memory.memory import Memory
from retriever.pipeline import succession
from retriever.pipeline.query import PART_CONTEXT, Query, best_coverage, framing_boosts, present_terms, weights
from retriever.pipeline.signals import DECISION_TITLE_SHARE, DOCUMENT_WEIGHT, MEANING_WEIGHT, NEIGHBOUR_WEIGHT
from retriever.text import analyzer

PART_PICKS = 2  # sections read for each part of a many-part question, whatever else scores
POOL = 50  # sections ranked for reading (``target.CANDIDATES``): meaning goes only to those it can lift into them
GAP_SECTIONS = 5  # the strongest sections whose coverage says how much of the question words leave out
DEFINITION_PICKS = 1  # glossary sections read for "What is X?", whatever else scores
# What a memory calls the documents that define its words, in their titles, headings, paths or front matter.
DEFINING_FIELDS = ("title", "heading", "path", "meta")  # not the body: "see the glossary" defines nothing
DEFINITION_TERMS = tuple(analyzer.term_set("glossary glossaries definitions terminology acronyms глосарій словник"))
# The headings of sections that record what was decided: a decision record's "Decision", a meeting's "Decisions".
# Whole headings, numbering and brackets aside ("3. Decision", "Decision (2026-05-01)"): "Decision drivers" and
# "Decisions she signed" are not the outcome; nor are "Outcome" (an experiment's) or "Resolution" (an incident's).
DECISION_HEADINGS = frozenset(
    "decision|decisions|decision outcome|decisions made|key decisions|final decision|final decisions|what we decided|"
    "decision and rationale|decisions and next steps|decisions next steps|decisions and action items|"
    "decisions and actions|agreed|agreements|рішення|ухвалені рішення|прийняті рішення|домовленості".split("|")
)
DECISION_TERMS = tuple(analyzer.term_set("decision decisions decided agreed agreements рішення домовленості"))
DECISION_SCAN = POOL  # the strongest sections whose documents may hold the decision a question asks about
DECISION_SECTIONS = 20  # of one document's sections under a decision word, the strongest looked at (a long log)
PREDECESSORS = 3  # records a decision supersedes whose decisions an "originally…" question reads, named after it
_NUMBERING = re.compile(r"^\W*\d+(?:\.\d+)*[.)]?\s+|\([^)]*\)|\[[^\]]*\]")


@dataclass(frozen=True)
class Evidence:
    """Fused scores of every section id, and the sections each part of the question needs read."""

    scores: FloatArray
    part_picks: tuple[int, ...] = ()
    gap: float = 0.0  # the share of the question's topic words' weight the strongest sections leave uncovered
    meaning: FloatArray | None = None  # the question's vector, where a gap asked for it and the index has vectors
    decided: tuple[int, ...] = ()  # the decision sections a decision question reads (``decisions``)


def evidence(memory: Memory, query: Query) -> Evidence:
    """The fused evidence of every section for ``query`` (dead sections score 0)."""
    terms, boosts = query.terms + query.extra, query.boosts()
    scores = fused(memory, terms, boosts)
    picks: list[int] = []
    for part in query.parts:
        part_scores = fused(memory, terms, part_boosts(boosts, terms, part))
        picks.extend(sid for sid, _ in top_of(part_scores, PART_PICKS) if sid not in picks)
        scores = np.maximum(scores, part_scores)
    picks.extend(sid for sid in definitions(memory, query, scores) if sid not in picks)
    decided = decisions(memory, query, scores)
    picks.extend(sid for sid in decided if sid not in picks)
    strongest = [sid for sid, _ in top_of(scores, GAP_SECTIONS)]
    gap = coverage_gap(memory, query, strongest) if strongest else 0.0
    vector = question_vector(memory, query) if gap > 0 and len(scores) and scores.max() > 0 else None
    return Evidence(with_meaning(memory, scores, gap, vector), tuple(picks), gap, vector, decided)


def definitions(memory: Memory, query: Query, scores: FloatArray) -> list[int]:
    """For a question asking what a thing is (``Query.defining``), the ``DEFINITION_PICKS`` strongest sections of
    the memory's glossaries (``DEFINITION_TERMS`` in a title, heading, path or front matter) that hold all the
    words of X, read whatever else scores: a glossary's long table ranks below the pages that use the
    term ("What is shadow traffic?" had read 14 sections of the project running it, not the one defining it)."""
    if not query.defining:
        return []
    held = glossaries(memory)[: len(scores)]
    for term in query.defining:  # holds it in any field: a postings lookup, no BM25 pass
        held &= memory.index.in_fields([term], FIELDS)[: len(scores)]
    return [sid for sid, _ in top_of(np.where(held, scores, 0.0), DEFINITION_PICKS)]


def decisions(memory: Memory, query: Query, scores: FloatArray) -> tuple[int, ...]:
    """For a question asking what was decided (``Query.deciding``), the decision sections (``decision_section``) of
    the first document, in the order of the ``DECISION_SCAN`` strongest sections, that has one named after the
    question's topic (``_named_after``), read whatever else scores: a decision record's
    options table and status line ("Decided by: …") share the question's words, its "Decision" section, which
    says what was chosen, often does not ("Self-managed Apache Flink 1.20 on EKS…").  Of a log of many decisions,
    the entries named after the topic.  () when no document is such."""
    if not query.deciding:
        return ()
    documents = memory.state.section_documents()[: len(scores)]
    order = list(dict.fromkeys(int(documents[sid]) for sid, _ in top_of(scores, DECISION_SCAN)))
    held = memory.index.in_fields(DECISION_TERMS, ("heading",))[: len(scores)] & np.isin(documents, order)
    by_document: dict[int, list[int]] = {}
    for sid in sorted(np.flatnonzero(held).tolist(), key=lambda sid: -scores[sid]):  # the strongest first
        by_document.setdefault(int(documents[sid]), []).append(sid)
    topic = {t: w for t, w in weights(query, memory.index).items() if t not in query.deciding}
    for number in (d for d in order if d in by_document):
        named = [sid for sid in by_document[number][:DECISION_SECTIONS] if _named_after(memory, sid, topic, query)]
        found = [sid for sid in named if decision_section(memory, sid)]
        if found:
            return _earlier(memory, _entries(memory, found, topic, query), topic, query)
    return ()


def _earlier(memory: Memory, found: tuple[int, ...], topic: Mapping[str, float], query: Query) -> tuple[int, ...]:
    """``found``, after the decision sections of the records its document supersedes when the question asks what
    held before (``Query.earlier``: "Which engine was originally chosen for Riverbed before Flink?" is named after
    the record that replaced the one it asks about): of the first ``PREDECESSORS`` it names, those named after the
    question's ``topic`` too (``_named_after``), so a record that replaced several reads only the one asked about."""
    if not query.earlier:
        return found
    olds = succession.predecessors(memory.state.section_files[found[0]], memory)[:PREDECESSORS]
    before = [
        sid
        for old in olds
        for sid in memory.sections_of(old)[:DECISION_SECTIONS]
        if decision_section(memory, sid, superseded=True) and _named_after(memory, sid, topic, query)
    ]
    return (*before, *(sid for sid in found if sid not in before))


def _entries(memory: Memory, found: list[int], topic: Mapping[str, float], query: Query) -> tuple[int, ...]:
    """Of one document's decision sections (strongest first), those under a heading of their own that names one of
    the question's ``topic`` words, where any is ("## Cache" > "### Decision" of a log whose title names the
    project): each entry of a log records a different decision.  All of them where none is."""
    if len(found) == 1:
        return tuple(found)
    named = [sid for sid in found if present_terms(topic, _parents(memory, sid), query)]
    return tuple(named or found)


def _parents(memory: Memory, section_id: int) -> frozenset[str]:
    """The terms of a section's headings between its document's title and its own."""
    return analyzer.term_set(" ".join(memory.section(section_id)[1].heading_path[1:-1]))


def decision_section(memory: Memory, section_id: int, *, superseded: bool = False) -> bool:
    """Whether a section records a decision: headed by one of ``DECISION_HEADINGS`` below its document's title (a
    page titled "Decisions" is an index of them), in a document that is not a person's page (whose "Decisions"
    lists the records they signed) and, unless ``superseded``, not superseded."""
    doc, section = memory.section(section_id)
    if section.heading is None or section.title == doc.title or not decision_heading(section.title):
        return False
    return doc.front_matter.get("type") != "person" and (superseded or not memory.when(doc).superseded)


def decision_heading(heading: str) -> bool:
    """Whether ``heading``, numbering, brackets and dates aside, is one of ``DECISION_HEADINGS``."""
    words = analyzer.raw_words(_NUMBERING.sub(" ", heading.lower().replace("&", " and ")))
    return " ".join(w for w in words if not w.replace("-", "").isdigit()) in DECISION_HEADINGS


def _named_after(memory: Memory, section_id: int, topic: Mapping[str, float], query: Query) -> bool:
    """Whether a section's document title, aliases and front matter (its summary, tags…) and its own headings hold
    ``DECISION_TITLE_SHARE`` of the question's ``topic`` weight: a record is named after what it decided, an entry
    of a decision log ("## Cache" > "### Decision") after its own.  Not the decision heading itself: "Decisions
    and action items" names no topic."""
    total = sum(topic.values())
    doc, section = memory.section(section_id)
    # The document's part once per document (the analyser's cache), however many of its sections are asked about.
    own = analyzer.term_set(f"{title_text(doc)} {meta_text(doc)}")
    named = present_terms(topic, own | analyzer.term_set(" ".join(section.heading_path[:-1])), query)
    return total > 0 and sum(w for t, w in topic.items() if t in named) >= DECISION_TITLE_SHARE * total


def glossaries(memory: Memory) -> npt.NDArray[np.bool_]:
    """A mask over section ids: the sections of the memory's glossaries (``DEFINITION_TERMS`` in a title, heading,
    path or front matter)."""
    return memory.index.in_fields(DEFINITION_TERMS, DEFINING_FIELDS)


def question_vector(memory: Memory, query: Query) -> FloatArray | None:
    """The question's meaning vector; None where the index holds no vectors (the table is missing) or the
    question is not in English, the table's language (its pieces of Cyrillic words sit close to any Cyrillic
    text, whatever it says)."""
    if query.language != "en":
        return None
    vector = memory.index.meaning([query.text])[0]
    return vector if memory.index.cosine_spread(vector) is not None else None


def closeness(memory: Memory, vector: FloatArray, section_ids: Iterable[int]) -> dict[int, float]:
    """The cosine of the question's ``vector`` with each of ``section_ids``, by id (any order: the index
    reads them ascending)."""
    ids = np.array(sorted(set(section_ids)), dtype=np.int64)
    return dict(zip(ids.tolist(), memory.index.cosines_at(vector, ids).tolist(), strict=True))


def coverage_gap(memory: Memory, query: Query, section_ids: Sequence[int]) -> float:
    """1 − the best ``query.best_coverage`` of the question's topic words (framing words such as "many"
    left out: a memory without them does not speak of the topic in other words) among ``section_ids``."""
    wanted = {*query.terms, *query.extra}
    wanted.update(t for options in query.alternates.values() for option in options for t in option)
    fields = memory.index.field_terms(section_ids, wanted)
    framing = framing_boosts(query)
    term_weights = {t: w for t, w in weights(query, memory.index).items() if t not in framing}
    covered = (best_coverage(term_weights, set().union(*fields[sid].values()), query) for sid in section_ids)
    return 1.0 - max(covered, default=0.0)


def with_meaning(
    memory: Memory, scores: FloatArray, gap: float, vector: FloatArray | None, pool: int = POOL
) -> FloatArray:
    """``scores`` plus meaning (the question's ``vector``), in proportion to the coverage ``gap`` (see the
    module docstring), for the sections that can reach the ``pool`` best with it."""
    if vector is None or gap <= 0 or not len(scores) or scores.max() <= 0:
        return scores
    reach = reachable(scores, pool, MEANING_WEIGHT * gap)
    spread = memory.index.cosine_spread(vector)
    if spread is None or spread[1] <= 0:
        return scores
    z = np.maximum(memory.index.cosines_at(vector, reach) - np.float32(spread[0]), 0.0) / np.float32(spread[1])
    if not len(z) or z.max() <= 0:
        return scores
    out: FloatArray = scores.copy()
    out[reach] += np.float32(MEANING_WEIGHT * gap / z.max()) * z
    return out


def reachable(
    scores: npt.NDArray[np.floating], pool: int, most: float, with_evidence: bool = True
) -> npt.NDArray[np.int64]:
    """Indices (ascending) of the values that ``most`` more could lift into the ``pool`` best: the others
    end below at least ``pool`` values whatever is added to them, so comparing their meaning is wasted.
    With ``with_evidence``, only values above 0 count at all (a section no word found stays out)."""
    found = np.flatnonzero(scores > 0) if with_evidence else np.arange(len(scores))
    if len(found) > pool:
        floor = np.partition(scores[found], len(found) - pool)[len(found) - pool] - scores.dtype.type(most)
        found = found[scores[found] >= floor]
    return found


def part_boosts(boosts: Mapping[str, float], terms: Sequence[str], part: Sequence[str]) -> dict[str, float]:
    """Term multipliers for searching one part: its own words in full, the question's others muted."""
    return {t: boosts.get(t, 1.0) * (1.0 if t in part else PART_CONTEXT) for t in terms}


def fused(memory: Memory, terms: Sequence[str], boosts: Mapping[str, float]) -> FloatArray:
    """Own, document and neighbour evidence of every section, fused (see the module docstring)."""
    index = memory.index
    own = index.scores(terms, boosts)
    if not len(own) or own.max() <= 0:
        return own
    documents = memory.state.section_documents()
    if len(documents) != len(own):  # never while the index and section table are in step (read lock)
        return own
    own /= own.max()
    out: FloatArray = own + np.float32(NEIGHBOUR_WEIGHT) * neighbours(own, documents)
    docs = index.document_scores(terms, documents, boosts)
    if docs.max() > 0:
        out += np.float32(DOCUMENT_WEIGHT) * docs[documents] / docs.max()
    out[~index.alive[: len(out)]] = 0.0
    return out


def neighbours(own: FloatArray, documents: npt.NDArray[np.int32]) -> FloatArray:
    """The mean score of the sections just before and after each one in its document (the one
    there is, at either end of a document)."""
    same = documents[1:] == documents[:-1]
    out = np.zeros_like(own)
    np.multiply(own[:-1], same, out=out[1:])
    out[:-1] += own[1:] * same
    count = np.zeros_like(own)
    count[1:] += same
    count[:-1] += same
    out /= np.maximum(count, np.float32(1.0), out=count)
    return out
