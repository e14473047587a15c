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
each part's strongest sections are read whatever the other parts score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from retriever.memory.index import FloatArray, top_of
from retriever.memory.memory import Memory
from retriever.pipeline.query import PART_CONTEXT, Query

DOCUMENT_WEIGHT = 0.5  # a section's document's evidence, beside its own (1)
NEIGHBOUR_WEIGHT = 0.5  # the evidence of the sections next to it in its document
PART_PICKS = 2  # sections read for each part of a many-part question, whatever else scores


@dataclass(frozen=True)
class Evidence:
    """Fused scores of every section id, and the sections each part of the question needs read."""

    scores: FloatArray
    part_picks: tuple[int, ...] = ()


def evidence(memory: Memory, query: Query) -> Evidence:
    """The fused evidence of every section for ``query`` (dead sections score 0)."""
    terms, boosts = query.terms + query.extra, query.boosts()
    scores = fused(memory, terms, boosts)
    picks: list[int] = []
    for part in query.parts:
        part_scores = fused(memory, terms, part_boosts(boosts, terms, part))
        picks.extend(sid for sid, _ in top_of(part_scores, PART_PICKS) if sid not in picks)
        scores = np.maximum(scores, part_scores)
    return Evidence(scores, tuple(picks))


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
