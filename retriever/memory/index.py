"""The section index: exact BM25F over an inverted index held in flat numpy arrays.

Each section is indexed in five fields (``memory.fields``: document title and aliases, its own
heading, the folder/heading path above it, front-matter text, body).  BM25F combines them before
saturation: ``tf' = Σ_f w_f · tf_f / (1 − b_f + b_f · len_f / avglen_f)`` and a term scores
``idf · tf' · (k1 + 1) / (tf' + k1)`` with ``idf = ln(1 + (N − df + 0.5) / (df + 0.5))``.

Documents are scored too (``document_scores``): plain BM25 over each document's headings and
bodies taken as one text, from the raw counts every posting also keeps, so a section can be
ranked by its own evidence and its document's.

Sections carry meaning vectors too (``memory.vectors``): ``cosines_at`` compares a text's vector with
the sections a query reads, and ``cosine_spread`` gives the mean and spread over all of them without
comparing each, a second, weaker signal for questions asked in other words than the memory's.

The index is a list of immutable segments (CSR: term → sections, pre-combined ``tf'``, and the
sections' vectors) plus an ``alive`` mask, as in Lucene: a changed file tombstones its old sections and adds a small
segment, so one edit costs milliseconds instead of a rebuild.  ``compact()`` folds it all
into one segment again.  A query costs one vectorised pass over its terms' postings.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from retriever.memory import vectors
from retriever.memory.fields import FIELDS, Analyzed

TEXT_FIELDS = (FIELDS.index("heading"), FIELDS.index("body"))  # what a document's own text is made of
DOCUMENT_B = 0.75  # length normalisation of document scores (BM25's usual value)
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class Params:
    """BM25F parameters, per field in ``FIELDS`` order: weight, length normalisation, group.

    Fields of one group are combined before saturation (BM25F); groups saturate apart and
    add up, so a heading that matches the query counts in full even when the body matches
    too.  One group for all fields is plain BM25F; one field per group is per-field BM25.
    """

    k1: float = 1.2
    weights: tuple[float, ...] = (1.0, 1.0, 1.0, 0.5, 1.0)
    b: tuple[float, ...] = (0.0, 0.0, 0.3, 0.0, 0.75)
    groups: tuple[int, ...] = (0, 1, 2, 2, 2)
    group_weights: tuple[float, ...] = (1.0, 1.5, 1.0)


@dataclass(frozen=True)
class Segment:
    """Immutable CSR postings: for term id ``t``, ``indices[indptr[t]:indptr[t+1]]`` are section ids."""

    indptr: IntArray
    indices: npt.NDArray[np.int32]
    values: FloatArray  # (postings, groups): the pre-combined tf' of each field group
    counts: FloatArray  # (postings,): the raw count in the section's heading and body, for document scores
    fields: npt.NDArray[np.uint8]  # (postings,): bit f set when the term occurs in field FIELDS[f] of the section
    # (sections, dims) int8 rows and (sections,) scales: meaning vectors in section-id order (``memory.vectors``);
    # (0, 0) and (0,) for a segment built without texts
    scales: FloatArray = field(default_factory=vectors.no_scales)
    moments: vectors.F64Array = field(default_factory=vectors.no_moments)  # ``vectors.segment_moments``
    vectors: vectors.Int8Array = field(default_factory=vectors.no_rows)  # the last: it shadows the module

    def postings(self, term_id: int) -> tuple[npt.NDArray[np.int32], FloatArray]:
        start, end = self._span(term_id)
        return self.indices[start:end], self.values[start:end]

    def field_postings(self, term_id: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]:
        """Section ids and field bitmasks (bit f: ``FIELDS[f]``) of one term."""
        start, end = self._span(term_id)
        return self.indices[start:end], self.fields[start:end]

    def raw_postings(self, term_id: int) -> tuple[npt.NDArray[np.int32], FloatArray]:
        """Section ids and raw heading + body counts of one term."""
        start, end = self._span(term_id)
        return self.indices[start:end], self.counts[start:end]

    def _span(self, term_id: int) -> tuple[int, int]:
        if term_id + 1 >= len(self.indptr):
            return 0, 0
        return int(self.indptr[term_id]), int(self.indptr[term_id + 1])

    def term_ids(self) -> IntArray:
        """The term id of every posting, aligned with ``indices``."""
        return np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int64), np.diff(self.indptr))


@dataclass
class SectionIndex:
    """Mutable index state: vocabulary, segments, liveness and document frequencies."""

    params: Params = field(default_factory=Params)
    vocab: dict[str, int] = field(default_factory=dict)
    segments: list[Segment] = field(default_factory=list)
    alive: npt.NDArray[np.bool_] = field(default_factory=lambda: np.zeros(0, dtype=bool))
    df: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    avglen: tuple[float, ...] = (1.0,) * len(FIELDS)
    lengths: FloatArray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))  # heading + body terms
    _sorted_terms: list[str] | None = field(default=None, repr=False, compare=False)
    _lengths_cache: tuple[tuple[int, ...], npt.NDArray[np.float64]] | None = field(
        default=None, repr=False, compare=False
    )
    _live: tuple[npt.NDArray[np.bool_], int] | None = field(default=None, repr=False, compare=False)
    # the meaning vectors' moments over live sections, for the alive mask, live count and segment count they had
    _moments: tuple[npt.NDArray[np.bool_], int, int, vectors.Moments | None] | None = field(
        default=None, repr=False, compare=False
    )
    _remembered: vectors.Remembered = field(default_factory=vectors.Remembered, repr=False, compare=False)

    def with_prefix(self, prefix: str, limit: int = 8) -> list[str]:
        """Live vocabulary terms starting with ``prefix`` (most frequent first, at most ``limit``)."""
        if self._sorted_terms is None or len(self._sorted_terms) != len(self.vocab):
            self._sorted_terms = sorted(self.vocab)
        start = bisect.bisect_left(self._sorted_terms, prefix)
        found = list(itertools.takewhile(lambda t: t.startswith(prefix), self._sorted_terms[start : start + 64]))
        live = [t for t in found if self.term_df(t) > 0]
        return sorted(live, key=lambda t: (-self.term_df(t), t))[:limit]

    @property
    def size(self) -> int:
        """Number of section ids ever assigned (dead ones included)."""
        return len(self.alive)

    @property
    def live_count(self) -> int:
        """Live sections; counted once per change of ``alive`` (every idf needs it)."""
        cached = self._live
        if cached is None or cached[0] is not self.alive:
            cached = self._live = (self.alive, int(self.alive.sum()))
        return cached[1]

    def set_avglen(self, analyzed: Sequence[Analyzed]) -> None:
        """Average field lengths, fixed at full builds (a few edits barely move them)."""
        if not analyzed:
            return
        totals = [0] * len(FIELDS)
        for fields_ in analyzed:
            for f, counts in enumerate(fields_):
                totals[f] += sum(counts.values())
        self.avglen = tuple(max(1.0, t / len(analyzed)) for t in totals)

    def append_segment(
        self,
        per_term: IntArray,
        sids: npt.NDArray[np.int32],
        vals: FloatArray,
        raw: FloatArray,
        masks: npt.NDArray[np.uint8],
    ) -> None:
        """Add postings sorted by term id (by section within a term) as a segment; ``per_term[t]`` is
        how many term ``t`` has.  Section ids must be new and contiguous.  The arrays are kept, not copied."""
        per_term = _grow(per_term.astype(np.int64), len(self.vocab))
        indptr = np.zeros(len(per_term) + 1, dtype=np.int64)
        np.cumsum(per_term, out=indptr[1:])
        self.segments.append(Segment(indptr, sids, vals, raw, masks))
        self.df = _grow(self.df, len(self.vocab)) + per_term

    def remove(self, section_ids: Iterable[int]) -> None:
        """Tombstone sections: they stop scoring and stop counting in document frequencies."""
        dead = np.fromiter(section_ids, dtype=np.int32)
        dead = dead[self.alive[dead]] if len(dead) else dead
        if not len(dead):
            return
        self.alive[dead] = False
        self._live = self._moments = None
        for segment in self.segments:
            hit = np.isin(segment.indices, dead)
            if hit.any():
                self.df[: len(segment.indptr) - 1] -= np.bincount(
                    segment.term_ids()[hit], minlength=len(segment.indptr) - 1
                )

    def idf(self, term_id: int) -> float:
        n = max(self.live_count, 1)
        df = float(self.df[term_id]) if term_id < len(self.df) else 0.0
        return math.log(1.0 + (n - df + 0.5) / (df + 0.5))

    def unseen_idf(self) -> float:
        """The idf a term would have if no section contained it (the most informative)."""
        n = max(self.live_count, 1)
        return math.log(1.0 + (n + 0.5) / 0.5)

    def term_df(self, term: str) -> int:
        """Live sections containing ``term``."""
        tid = self.vocab.get(term)
        return 0 if tid is None or tid >= len(self.df) else int(self.df[tid])

    def term_idf(self, term: str) -> float:
        tid = self.vocab.get(term)
        return self.unseen_idf() if self.term_df(term) <= 0 or tid is None else self.idf(tid)

    def scores(self, terms: Iterable[str], boosts: Mapping[str, float] | None = None) -> FloatArray:
        """BM25F score of every section id for the unique ``terms`` (dead sections score 0).

        ``boosts`` multiplies a term's contribution (1.0 when absent).
        """
        out = np.zeros(self.size, dtype=np.float32)
        k1 = self.params.k1
        group_weights = np.asarray(self.params.group_weights, dtype=np.float32)
        for term in dict.fromkeys(terms):
            # A refresh may be adding terms (ids past ``df``) while this query runs: skip them.
            tid = self.vocab.get(term)
            if tid is None or tid >= len(self.df) or self.df[tid] <= 0:
                continue
            idf = self.idf(tid) * (boosts.get(term, 1.0) if boosts else 1.0)
            for segment in self.segments:
                ids, vals = segment.postings(tid)
                if len(ids):
                    out[ids] += idf * ((vals * (k1 + 1.0) / (vals + k1)) @ group_weights)
        out[~self.alive] = 0.0
        return out

    def document_scores(
        self,
        terms: Iterable[str],
        documents: npt.NDArray[np.int32],
        boosts: Mapping[str, float] | None = None,
        b: float = DOCUMENT_B,
    ) -> FloatArray:
        """BM25 of every document, each taken as the text of its live sections' headings and bodies.

        ``documents`` maps section id → document number (0..n-1); the result is indexed by document
        number.  Document frequencies and lengths are counted over documents, so a word every
        document uses weighs little even when few sections use it.
        """
        lengths = self._document_lengths(documents)
        n, present = len(lengths), int(np.count_nonzero(lengths))
        out = np.zeros(n, dtype=np.float32)
        if not present:
            return out
        norm = self.params.k1 * (1.0 - b + b * lengths / (lengths.sum() / present))
        for term in dict.fromkeys(terms):
            tf = self._document_counts(term, documents, n)
            df = int(np.count_nonzero(tf))
            if df:
                idf = math.log(1.0 + (present - df + 0.5) / (df + 0.5))
                idf *= boosts.get(term, 1.0) if boosts else 1.0
                out += (idf * tf * (self.params.k1 + 1.0) / (tf + norm)).astype(np.float32)
        return out

    def _document_lengths(self, documents: npt.NDArray[np.int32]) -> npt.NDArray[np.float64]:
        """Heading + body terms per document number over live sections, kept until the index changes."""
        key = (len(documents), self.size, self.live_count, len(self.segments))
        cached = self._lengths_cache
        if cached is None or cached[0] != key:
            n = int(documents.max()) + 1 if len(documents) else 0
            live = self.alive[: len(documents)]
            lengths = np.bincount(documents[live], weights=self.lengths[: len(documents)][live], minlength=n)
            cached = (key, lengths.astype(np.float64))
            self._lengths_cache = cached
        return cached[1]

    def _document_counts(self, term: str, documents: npt.NDArray[np.int32], n: int) -> npt.NDArray[np.float64]:
        """The raw count of ``term`` per document number, over live sections."""
        tf = np.zeros(n, dtype=np.float64)
        tid = self.vocab.get(term)
        if tid is None or tid >= len(self.df) or self.df[tid] <= 0:
            return tf
        for segment in self.segments:
            ids, raw = segment.raw_postings(tid)
            keep = ids < len(documents)  # sections added after ``documents`` was taken
            ids, raw = ids[keep], raw[keep]
            keep = self.alive[ids]
            tf += np.bincount(documents[ids[keep]], weights=raw[keep], minlength=n)
        return tf

    def field_terms(self, section_ids: Sequence[int], terms: Iterable[str]) -> dict[int, dict[str, set[str]]]:
        """Of ``terms``, those in each field of each section: section id → field name → terms.

        Read from the postings' field masks (fixed at index time), so naming the fields a query
        matched costs a lookup per query term, not an analysis of every section's text.
        """
        wanted = np.zeros(self.size, dtype=bool)  # a mask, not np.isin: that would import numpy.ma (~6 ms)
        wanted[[s for s in section_ids if 0 <= s < self.size]] = True
        out: dict[int, dict[str, set[str]]] = {int(s): {name: set() for name in FIELDS} for s in np.flatnonzero(wanted)}
        for term in dict.fromkeys(terms):
            for ids, masks in self._field_postings(term):
                hit = wanted[ids]
                for sid, mask in zip(ids[hit].tolist(), masks[hit].tolist(), strict=True):
                    if self.alive[sid]:
                        for f, name in enumerate(FIELDS):
                            if mask >> f & 1:
                                out[sid][name].add(term)
        return out

    def in_fields(self, terms: Iterable[str], fields: Iterable[str]) -> npt.NDArray[np.bool_]:
        """A mask over section ids: True for a live section holding one of ``terms`` in one of ``fields``
        (names of ``FIELDS``), from the postings' field masks."""
        bits = sum(1 << FIELDS.index(name) for name in set(fields))
        out = np.zeros(self.size, dtype=bool)
        for term in dict.fromkeys(terms):
            for ids, masks in self._field_postings(term):
                out[ids[(masks & bits) != 0]] = True
        out &= self.alive[: self.size]
        return out

    def _field_postings(self, term: str) -> Iterator[tuple[npt.NDArray[np.int32], npt.NDArray[np.uint8]]]:
        """Each segment's section ids and field masks for ``term``; nothing for a term the index lacks (or is
        adding while this query runs: ids past ``df``)."""
        tid = self.vocab.get(term)
        if tid is None or tid >= len(self.df) or self.df[tid] <= 0:
            return
        for segment in self.segments:
            yield segment.field_postings(tid)

    def meaning(self, texts: Sequence[str], stored: Sequence[bytes] = ()) -> FloatArray:
        """Unit meaning vectors of ``texts`` (``memory.vectors``; the query's and its statements', the
        recent ones remembered: ``vectors.Remembered``); with ``stored`` (one per text), each stored vector
        (a statement's, as the index keeps it: ``vectors.pack``) is read rather than its text embedded."""
        return self._remembered.embed_stored(texts, stored) if stored else self._remembered.embed(texts)

    def cosine_spread(self, query: FloatArray) -> tuple[float, float] | None:
        """The mean and standard deviation of the unit vector ``query``'s cosine over all live sections,
        without comparing it with each (``memory.vectors.moments``, computed once per change of the
        index); None when the index holds no vectors."""
        if not len(query):
            return None
        cached = self._moments
        if cached is None or cached[0] is not self.alive or cached[1:3] != (self.live_count, len(self.segments)):
            found = vectors.moments([(s.vectors, s.scales, s.moments) for s in self.segments], self.alive)
            cached = self._moments = (self.alive, self.live_count, len(self.segments), found)
        found = cached[3]
        return vectors.spread(found, query) if found is not None and found[0].shape == query.shape else None

    def cosines_at(self, query: FloatArray, section_ids: npt.NDArray[np.int64]) -> FloatArray:
        """The cosines of ``query`` with the sections ``section_ids`` (ascending; the index holds vectors)."""
        return vectors.cosines_at([(s.vectors, s.scales) for s in self.segments], section_ids, query)

    def top(self, terms: Sequence[str], k: int, boosts: Mapping[str, float] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best (section id, score) pairs with a positive score, best first."""
        return top_of(self.scores(terms, boosts), k)


def top_of(scores: FloatArray, k: int) -> list[tuple[int, float]]:
    """The ``k`` best (index, score) pairs of ``scores`` with a positive score, best first."""
    k = min(k, int((scores > 0).sum()))
    if k <= 0:
        return []
    # Everything scoring at least the k-th best (ties included), then ties break on the index,
    # so top(k) is always the first k of top(n).
    kth = scores[np.argpartition(-scores, k - 1)[k - 1]]
    candidates = np.nonzero(scores >= kth)[0]
    ranked = candidates[np.lexsort((candidates, -scores[candidates]))][:k]
    return [(int(sid), float(scores[sid])) for sid in ranked]


def _grow(values: IntArray, size: int) -> IntArray:
    if len(values) >= size:
        return values
    return np.concatenate([values, np.zeros(size - len(values), dtype=values.dtype)])
