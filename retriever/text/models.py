"""Plain data shared by the stages: frozen dataclasses, no behaviour beyond small derivations.

Line numbers are 1-based file lines (front matter included) and ranges are inclusive.
"""

from __future__ import annotations

import logging
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

log = logging.getLogger(__name__)

Lines = tuple[int, int]
# "field": a front-matter prose field, a summary or a reason (``text.field_statements``)
UnitKind = Literal["sentence", "item", "row", "field"]
LEAD_IN_GAP = 2  # lines from a lead-in's last line to the first line of the list or code block it introduces
LABEL_WORDS = 3  # of a label that leads in a list by standing alone above it ("**New**", "Open questions")


def _by_fields(self: Any) -> tuple[type, tuple[Any, ...]]:
    """Pickle as (class, field values in order): a slotted dataclass's default state calls
    ``dataclasses.fields`` for every object unpickled, which was half the cost of reading a document
    from the index cache on a question's first touch.  Records pickled the old way still load."""
    return type(self), tuple(getattr(self, name) for name in self.__slots__)


@dataclass(frozen=True, slots=True)
class Unit:
    """A candidate statement: a sentence, a list item, a table row rendered as text, or a front-matter field."""

    kind: UnitKind
    text: str
    lines: Lines
    context: str = ""  # the parent list item, for nested items
    cells: tuple[tuple[str, str], ...] = ()  # a table row's (column, value) pairs
    # The lists it sits in, outermost first, each by its number in the document (() outside lists), and
    # whether it opens its item (the item's first paragraph, or that paragraph's first sentence): what a
    # lead-in ("Three accounts drive most of our MRR:") introduces is the items of one list.
    lists: tuple[int, ...] = ()
    opens: bool = False
    # A lead-in's code block ("To update the repo, run:" then ``helm repo update``): its first line, cut, and
    # the block's last line; "" and 0 for any other statement.
    code: str = ""
    code_end: int = 0
    # The meaning vector of the statement as it is scored (``text.framing``), packed (``memory.vectors.pack``: int8
    # row and float32 scale), taken beside its section's when the file is indexed: a question's first reading of a
    # statement then embeds nothing.  b"": none taken (stop words alone, no embedding table).
    vector: bytes = field(default=b"", compare=False, repr=False)
    # Its text's terms (``analyzer.terms``), taken when the file is indexed: a question's first reading of a section
    # then analyses none of its statements.  (): none taken (or none there); the text is analysed when read.
    terms: tuple[str, ...] = field(default=(), compare=False, repr=False)

    __reduce__ = _by_fields

    @property
    def leads_in(self) -> bool:
        """A sentence or item ending in a colon: it says that what follows (a list, a command) is the answer; or a
        label of at most ``LABEL_WORDS`` words standing alone, without a sentence's stop ("**New**", "Fixed", "Pros"
        above a list): shown alone, "4.0.0 — 2026-03-03: Changed" had been a fact.  A front-matter field never
        does: what follows it in the file is the body, not its answer."""
        text = self.text.rstrip()
        colon = self.kind in ("sentence", "item") and text.endswith(":")
        return colon or (self.kind == "sentence" and 0 < len(text.split()) <= LABEL_WORDS and text[-1:].isalnum())

    def introduces(self, first_line: int) -> bool:
        """Whether a lead-in's block starting at ``first_line`` is what it introduces: the block starts on the
        next line or after one blank line (``LEAD_IN_GAP``); past other text it introduces that text."""
        return self.leads_in and 0 < first_line - self.lines[1] <= LEAD_IN_GAP


@dataclass(frozen=True, slots=True)
class Section:
    """Text under one heading, up to the next heading of any level (or the preamble)."""

    ordinal: int
    heading: str | None  # the heading as written (inline markdown kept); None for the preamble
    title: str  # the heading as plain text; the document title for the preamble
    level: int  # 1-6; 0 for the preamble
    heading_path: tuple[str, ...]  # plain-text headings from the outermost, this one last
    lines: Lines
    text: str  # plain text of the body, for indexing and excerpts
    units: tuple[Unit, ...]  # read through ``_units``: a section read from a pickle unpacks them when first read

    def __reduce__(self) -> tuple[type, tuple[Any, ...]]:
        """Pickled as ``_by_fields``, its statements packed into one pickle of their own (``_units``)."""
        packed = _UNITS.__get__(self, Section)
        if type(packed) is not PackedUnits:
            packed = PackedUnits(pickle.dumps(packed, protocol=pickle.HIGHEST_PROTOCOL))
        return Section, (*(getattr(self, name) for name in self.__slots__[:-1]), packed)


class PackedUnits(bytes):
    """A section's statements pickled on their own (``Section.__reduce__``).  Its own type, not bytes: a process
    of a version before it cannot unpickle a record holding one, and skips the record, where plain bytes would
    have read as a section whose statements are bytes."""


# A section's statements are most of a document's objects, and a question reads a third of the sections of the
# documents it reads (Sourcegraph handbook: 3,789 of 12,188 statements); unpickled whole, they were most of a
# question's first reading of a document, and garbage the collector then walked.  So a pickled section keeps them
# as the bytes of their own pickle in the ``units`` slot, and the ``units`` attribute unpacks them when first read
# (two threads reading at once unpack the same tuple twice, and keep one).  ``units`` must stay the last field
# (``__reduce__`` packs the last slot): the constructor, the comparisons and ``dataclasses.replace`` all see the
# tuple.
_UNITS = Section.__dict__["units"]
assert Section.__slots__[-1] == "units", "Section.__reduce__ packs the last slot: keep units the last field"


def _units(section: Section) -> tuple[Unit, ...]:
    """The section's statements, unpacked when first read.  Packed bytes that do not unpickle to statements (a
    damaged cache record: the document around them had unpickled) read as none, with a warning: a question must
    not fail on them, and the file's next change re-reads it."""
    value = _UNITS.__get__(section, Section)
    if type(value) is PackedUnits:
        try:
            value = pickle.loads(value)
        except Exception:  # noqa: BLE001 - damaged bytes raise whatever unpickling meets; they are dropped
            value = None
        if type(value) is not tuple or not all(type(unit) is Unit for unit in value):
            log.warning("the statements of section %r are damaged in the index cache; it is read without them",
                        section.title[:80])
            value = ()
        _UNITS.__set__(section, value)
    return value  # type: ignore[no-any-return]


setattr(Section, "units", property(_units, _UNITS.__set__))  # noqa: B010 - mypy would refuse the assignment


@dataclass(frozen=True, slots=True)
class Document:
    """One parsed markdown file."""

    rel_path: str  # posix path relative to the memory root
    title: str
    doc_type: str | None
    aliases: tuple[str, ...]
    summary: str | None
    front_matter: Mapping[str, Any]  # JSON-safe values (dates as ISO strings)
    links: tuple[str, ...]  # link targets resolved to rel_paths inside the tree
    sections: tuple[Section, ...]
    line_count: int = 0
    acronyms: tuple[tuple[str, str], ...] = ()  # (acronym, expansion) pairs the document defines

    __reduce__ = _by_fields


@dataclass(frozen=True, slots=True)
class Skipped:
    """A file left out of the memory, with the reason a user can act on."""

    rel_path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What tells a changed file from an unchanged one."""

    size: int
    mtime_ns: int
    sha1: str
