"""A document's sections as postings: flat arrays that cross processes cheaply (see ``Postings``).

Contract: ``collect(sections)`` turns analysed sections (per field, in ``fields.FIELDS`` order,
their term counts) into ``Postings`` with term ids local to the document; the segment builder
(``index.SegmentBuilder.add_postings``) maps them into its vocabulary.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from retriever.memory.fields import Analyzed


@dataclass(frozen=True, slots=True)
class Postings:
    """Sections' per-field term counts as flat arrays, with term ids local to ``terms`` (first seen first).

    One posting per (term, section) holds that term's count in each field.  It is what a segment
    is written from, in a form that crosses processes cheaply: a parse worker sends one per
    document, and ``SegmentBuilder.add_postings`` maps its terms into the vocabulary in the order
    they were first seen, so documents added one by one give the ids, postings and lengths that
    adding their sections one by one gives (a parallel build is the serial build).
    """

    terms: tuple[str, ...]
    tids: bytes  # int32 per posting: its term, as an index into ``terms``
    rows: bytes  # int32 per posting: its section, 0 for the first
    counts: bytes  # float32, one per field per posting: the term's count in each field
    lengths: bytes  # float32, one per field per section: each field's length in terms
    sections: int


def collect(sections: Iterable[Analyzed]) -> Postings:
    """The postings of consecutive sections (a document's, from ``fields.analyze_document``)."""
    local: dict[str, int] = {}
    tids, rows, counts, lengths = array("i"), array("i"), array("f"), array("f")
    row = -1
    for row, fields_ in enumerate(sections):
        width, zeros = len(fields_), array("f", [0.0] * len(fields_))
        seen: dict[str, int] = {}
        for f, field_counts in enumerate(fields_):
            for term, tf in field_counts.items():
                pos = seen.get(term)
                if pos is None:
                    pos = seen[term] = len(tids)
                    tids.append(local.setdefault(term, len(local)))
                    rows.append(row)
                    counts.extend(zeros)
                counts[pos * width + f] += tf
            lengths.append(sum(field_counts.values()))
    return Postings(tuple(local), tids.tobytes(), rows.tobytes(), counts.tobytes(), lengths.tobytes(), row + 1)
