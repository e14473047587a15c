"""Index segments from documents: a new index taken one document at a time, or the segment of changed ones.

Contract: ``NewIndex(params)`` takes ``Indexable`` documents in rel_path order and registers each
one's sections as it comes, keeping only their postings, in flat arrays (never the documents: a
10,000-file build stays small); ``finish()`` writes the one segment, average field lengths fixed
first, and returns the state with each file's section ids.  ``register`` records documents in a
state once ``SegmentBuilder.finish`` has given their sections ids (an incremental refresh does
that under the write lock).  ``SegmentBuilder`` writes one segment from sections' postings and meaning
vectors (postings weighed once every section is in; vectors appended as they come);
``add_sections(index, analyzed, texts)`` is the one-call form for sections analysed here.
"""

from __future__ import annotations

import dataclasses
from array import array
from collections.abc import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from retriever.memory import vectors
from retriever.memory.cache import IndexState
from retriever.memory.fields import FIELDS, Analyzed
from retriever.memory.index import TEXT_FIELDS, FloatArray, IntArray, Params, SectionIndex
from retriever.memory.postings import Postings, collect
from retriever.memory.records import Indexable
from retriever.memory.vectors import Meaning
from retriever.text import analyzer

_SLICE = 1 << 18  # postings weighed at once when a segment is written (temporaries of a few MB)
_NARROW = 65_535  # the largest count a posting's field keeps in its uint16; larger ones are kept aside, exact


def empty_state(params: Params) -> IndexState:
    return IndexState(SectionIndex(params=params), [], [])


class NewIndex:
    """A whole index built from scratch, one document at a time (see the module's contract)."""

    def __init__(self, params: Params) -> None:
        self.state = empty_state(params)
        self.sections: dict[str, list[int]] = {}  # rel_path → its section ids
        self._builder = SegmentBuilder(self.state.index)

    @property
    def documents(self) -> int:
        return len(self.sections)

    def add(self, doc: Indexable) -> None:
        """Index ``doc`` after the documents added before it (rel_path order gives the serial build's ids)."""
        first = self._builder.sections
        self._builder.add_postings(doc.postings, doc.meaning)
        register(self.state, self.sections, [doc], range(first, self._builder.sections))

    def finish(self) -> tuple[IndexState, dict[str, list[int]]]:
        """The index state (its one segment written) and the section ids of every file."""
        ids = self._builder.finish(fix_avglen=True)
        assert ids == range(len(self.state.section_files)), "a new index numbers sections from 0, as registered"
        return self.state, self.sections


def register(state: IndexState, sections: dict[str, list[int]], docs: Iterable[Indexable], ids: Iterable[int]) -> None:
    """Record which section ids belong to which document, and the documents' outline info."""
    next_id = iter(ids)
    for doc in docs:
        sids = [next(next_id) for _ in range(doc.info.sections)]
        state.section_files.extend([doc.rel_path] * len(sids))
        state.section_ordinals.extend(range(len(sids)))
        state.catalog[doc.rel_path] = doc.info
        for acronym, expansion in doc.acronyms:
            state.acronyms.setdefault(analyzer.normalize(acronym), set()).add(expansion.casefold())
        sections[doc.rel_path] = sids


def add_sections(index: SectionIndex, analyzed: Sequence[Analyzed], texts: Sequence[str] | None = None) -> range:
    """Index sections (with their ``texts``, for meaning vectors) as one new segment; returns their ids."""
    builder = SegmentBuilder(index)
    for number, fields_ in enumerate(analyzed):
        builder.add(fields_, texts[number] if texts is not None else None)
    return builder.finish()


class SegmentBuilder:
    """Collects sections' postings in flat arrays, then writes one segment.

    One posting per (term, section) holds that term's count in each field; arrays instead of
    ``Counter`` objects keep a 10,000-file build's memory small.  Counts are whole numbers, held as
    uint16 (half of float32's memory: 48 MB at 10,000 files); the rare posting with a count above
    65,535 keeps its exact float32 counts aside (``_wide``), so the segment is the same either way.
    tf' (weights, length normalisation, field groups) is computed vectorised once every section is
    in, so a full build can fix the average field lengths first.  Sections added with their text
    (or their ``Meaning``) get meaning vectors; a segment with any section added without has none.
    """

    def __init__(self, index: SectionIndex) -> None:
        self.index = index
        self.tids, self.rows, self.counts, self.lengths = array("i"), array("i"), array("H"), array("f")
        self._wide: dict[int, bytes] = {}  # posting → its float32 counts, where one exceeds ``_NARROW``
        self.sections = 0
        self._vectors, self._scales = bytearray(), bytearray()  # meaning, while every section brings one
        self.meant, self.dims = 0, -1

    def add(self, fields_: Analyzed, text: str | None = None) -> None:
        """Add one section (with its text, for its meaning vector)."""
        self.add_postings(collect([fields_]), vectors.meaning_of([text]) if text is not None else None)

    def add_postings(self, postings: Postings, meaning: Meaning | None = None) -> None:
        """Add a document's sections (with their meaning vectors): its new terms join
        the vocabulary in the order it first used them."""
        self._add_meaning(postings.sections, meaning)
        vocab, terms = self.index.vocab, postings.terms
        ids = np.fromiter((vocab.setdefault(term, len(vocab)) for term in terms), dtype=np.int32, count=len(terms))
        self._add_counts(np.frombuffer(postings.counts, dtype=np.float32))
        self.tids.frombytes(ids[np.frombuffer(postings.tids, dtype=np.int32)].tobytes())
        self.rows.frombytes((np.frombuffer(postings.rows, dtype=np.int32) + np.int32(self.sections)).tobytes())
        self.lengths.frombytes(postings.lengths)
        self.sections += postings.sections

    def _add_counts(self, counts: FloatArray) -> None:
        """A document's postings' counts (float32, ``FIELDS`` per posting) as uint16, the wide ones kept aside."""
        if counts.size and counts.max() > _NARROW:
            first, wide = len(self.rows), counts.reshape(-1, len(FIELDS))
            for posting in np.flatnonzero((wide > _NARROW).any(axis=1)):
                self._wide[first + int(posting)] = wide[posting].tobytes()
        self.counts.frombytes(np.minimum(counts, np.float32(_NARROW)).astype(np.uint16).tobytes())

    def _widened(self, counts: npt.NDArray[np.uint16], postings: IntArray) -> FloatArray:
        """The float32 counts of ``postings`` (rows of ``counts``), wide ones restored exactly."""
        out: FloatArray = counts[postings].astype(np.float32)
        if self._wide:
            keys = np.fromiter(self._wide, dtype=np.int64, count=len(self._wide))
            for at in np.flatnonzero(np.isin(postings, keys)):
                out[at] = np.frombuffer(self._wide[int(postings[at])], dtype=np.float32)
        return out

    def _add_meaning(self, sections: int, meaning: Meaning | None) -> None:
        """Keep the vectors of the sections being added, while every section so far came with one."""
        if (
            self.meant != self.sections
            or meaning is None
            or meaning.sections != sections
            or self.dims not in (-1, meaning.dims)
        ):
            self.meant = -1  # a section without a vector, or of another width: the segment has none
            return
        self.dims = meaning.dims
        self._vectors += meaning.rows
        self._scales += meaning.scales
        self.meant += sections

    def finish(self, fix_avglen: bool = False) -> range:
        """Write the segment (first fixing average field lengths, for a full build).

        Postings are put in term order first, weighed a slice at a time, and the builder's arrays let
        go as soon as they are used up: 10,000 files (4.8M postings, ~150 MB of arrays) peak ~110 MB above.
        """
        index = self.index
        lengths = np.frombuffer(self.lengths, dtype=np.float32).reshape(self.sections, len(FIELDS))
        if fix_avglen and self.sections:
            index.avglen = tuple(max(1.0, float(x)) for x in lengths.mean(axis=0))
        tids = np.frombuffer(self.tids, dtype=np.int32)
        order = np.argsort(tids, kind="stable")  # by term; within a term by section, as sections came in
        per_term = np.bincount(tids, minlength=len(index.vocab))
        rows = np.frombuffer(self.rows, dtype=np.int32)[order]
        del tids
        self.tids, self.rows = array("i"), array("i")
        values, raw, masks = self._weighed(order, rows, lengths)
        first = index.size
        rows += np.int32(first)
        index.append_segment(per_term, rows, values, raw, masks)
        index.alive = np.concatenate([index.alive, np.ones(self.sections, dtype=bool)])
        index._live = None
        index.lengths = np.concatenate([index.lengths, lengths[:, TEXT_FIELDS].sum(axis=1, dtype=np.float32)])
        if self.sections and self.meant == self.sections:
            meant, scales = vectors.arrays(Meaning(bytes(self._vectors), bytes(self._scales), self.dims, self.meant))
            sums = vectors.segment_moments(meant, scales)
            index.segments[-1] = dataclasses.replace(index.segments[-1], vectors=meant, scales=scales, moments=sums)
        return range(first, first + self.sections)

    def _weighed(
        self, order: IntArray, rows: npt.NDArray[np.int32], lengths: FloatArray
    ) -> tuple[FloatArray, FloatArray, npt.NDArray[np.uint8]]:
        """tf' per field group, the raw heading + body count and the field bitmask of every posting, in
        ``order``; computed a slice of postings at a time (small temporaries), then the counts let go."""
        counts = np.frombuffer(self.counts, dtype=np.uint16).reshape(len(rows), len(FIELDS))
        values = np.zeros((len(rows), len(self.index.params.group_weights)), dtype=np.float32)
        masks, raw = np.zeros(len(rows), dtype=np.uint8), np.zeros(len(rows), dtype=np.float32)
        for start in range(0, len(rows), _SLICE):
            part = slice(start, start + _SLICE)
            self._weigh(self._widened(counts, order[part]), lengths[rows[part]], values[part], masks[part], raw[part])
        del counts
        self.counts, self._wide = array("H"), {}
        return values, raw, masks

    def _weigh(
        self, counts: FloatArray, lengths: FloatArray, values: FloatArray, masks: npt.NDArray[np.uint8], raw: FloatArray
    ) -> None:
        """One slice of postings: ``counts`` and their sections' ``lengths`` per field in, the rest out."""
        params, avglen = self.index.params, self.index.avglen
        for f in range(len(FIELDS)):
            b, avg = np.float32(params.b[f]), np.float32(avglen[f])
            tf = counts[:, f]
            masks |= (tf > 0).view(np.uint8) << np.uint8(f)
            if f in TEXT_FIELDS:
                raw += tf  # the raw heading + body count, for document scores
            norm = np.float32(1.0) - b + b * lengths[:, f] / avg
            values[:, params.groups[f]] += np.float32(params.weights[f]) * tf / norm


# An index is compacted (built anew as one segment) past this many segments or this share of dead sections.
_COMPACT_DEAD_SHARE, _COMPACT_SEGMENTS = 0.3, 8


def sections_by_file(state: IndexState) -> dict[str, list[int]]:
    """Live section ids per file, from a loaded index."""
    out: dict[str, list[int]] = {}
    for sid in state.index.alive.nonzero()[0].tolist():
        out.setdefault(state.section_files[sid], []).append(sid)
    return out


def too_fragmented(index: SectionIndex, newly_dead: int) -> bool:
    """Whether an index that is to lose ``newly_dead`` more sections should be compacted into one segment: too many
    segments, or too large a share of dead sections."""
    dead = index.size - index.live_count + newly_dead
    return len(index.segments) >= _COMPACT_SEGMENTS or dead > _COMPACT_DEAD_SHARE * max(index.size, 1)
