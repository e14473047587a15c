"""Index segments from documents: a new index taken one document at a time, or the segment of changed ones.

Contract: ``NewIndex(params)`` takes ``Indexable`` documents in rel_path order and registers each
one's sections as it comes, keeping only their postings, in flat arrays (never the documents: a
10,000-file build stays small); ``finish()`` writes the one segment, average field lengths fixed
first, and returns the state with each file's section ids.  ``register`` records documents in a
state once ``SegmentBuilder.finish`` has given their sections ids (an incremental refresh does
that under the write lock).
"""

from __future__ import annotations

from collections.abc import Iterable

from retriever.memory.cache import IndexState
from retriever.memory.index import Params, SectionIndex, SegmentBuilder
from retriever.memory.records import Indexable
from retriever.text import analyzer


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
        self._builder.add_postings(doc.postings)
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
