"""What a refresh learns of each file, and which files it must read to learn it.

Contract: ``check(entry, known, indexed)`` decides from the fingerprint alone (no read): None when
the file is unchanged and indexed, its ``Skipped`` reason when it is unchanged and was skipped,
else the ``Task`` of reading it.  ``intake.read`` carries a task out (in this process or a worker)
and returns a ``Record``: the file's fingerprint and either its ``Parsed`` document, a skip
reason, or ``touch`` (the bytes did not change).  A ``Parsed`` document is what a build consumes
and what crosses processes: its cache encoding and its ``Indexable`` part (postings and outline),
so the caller never needs the document itself unless it keeps documents in memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from retriever.memory import supersession
from retriever.memory.cache import DocInfo, decode_document
from retriever.memory.fields import analyze_document
from retriever.memory.fileview import FileRow
from retriever.memory.postings import Postings, collect
from retriever.memory.vectors import Meaning, document_meaning
from retriever.text import reader
from retriever.text.models import Document, Fingerprint, Skipped


@dataclass(frozen=True, slots=True)
class Task:
    """A file to read, and what the last refresh knew of it."""

    entry: reader.Entry
    known_sha1: str | None  # the content hash last recorded for a readable file; None: new, or skipped before
    indexed: bool  # its sections are in the index now


@dataclass(frozen=True, slots=True)
class Indexable:
    """What the index needs of a document: its sections' postings, outline and meaning."""

    rel_path: str
    postings: Postings
    info: DocInfo
    acronyms: tuple[tuple[str, str], ...]
    meaning: Meaning  # its sections' meaning vectors (``memory.vectors``)


@dataclass(frozen=True, slots=True)
class Parsed:
    """A parsed document as a build consumes it: encoded for the cache, and its indexable part."""

    blob: bytes  # ``cache.encode_document``
    indexable: Indexable

    def document(self) -> Document:
        return decode_document(self.blob)


@dataclass(frozen=True, slots=True)
class Record:
    """What a refresh learned of one file: its fingerprint and document, or the reason it is skipped."""

    entry: reader.Entry
    sha1: str
    parsed: Parsed | None
    reason: str | None
    touch: bool = False  # only the size or mtime moved; the bytes are the same

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.entry.size, self.entry.mtime_ns, self.sha1)


def check(entry: reader.Entry, known: FileRow | None, indexed: bool, max_bytes: int) -> Task | Skipped | None:
    """None when the file is unchanged and indexed; its skip reason when unchanged and skipped; else a task.

    The size limit ``max_bytes`` is applied here, not only when a file is read: a file read under a higher
    limit is skipped once the limit is lowered, and one skipped as too large is read once it is raised
    (an unchanged fingerprint alone would keep either as the cache recorded it)."""
    if entry.size > max_bytes:
        return Skipped(entry.rel_path, reader.too_large(entry.size, max_bytes))
    fresh = known is not None and (known.fingerprint.size, known.fingerprint.mtime_ns) == (entry.size, entry.mtime_ns)
    if fresh and known is not None and known.skipped and not reader.is_too_large(known.skipped):
        return Skipped(entry.rel_path, known.skipped)
    if fresh and indexed:
        return None
    known_sha1 = known.fingerprint.sha1 if known is not None and not known.skipped else None
    return Task(entry, known_sha1, indexed)


def indexable(doc: Document, meaning: Meaning | None = None) -> Indexable:
    """What the index needs of ``doc``; ``meaning``, its sections' (``document_meaning``), when already taken."""
    info = DocInfo(doc.title, doc.doc_type, doc.aliases, len(doc.sections), supersession.written(doc.front_matter))
    meaning = document_meaning(doc) if meaning is None else meaning
    return Indexable(doc.rel_path, collect(analyze_document(doc)), info, doc.acronyms, meaning)


def to_compact(
    path: str, changed: dict[str, Parsed | None], held: dict[str, Document | None], loaded: dict[str, Document]
) -> Indexable | None:
    """A document to compact: its new version, else the one in memory, else the cache's (None: skipped now)."""
    if path in changed:
        parsed = changed[path]
        return parsed.indexable if parsed is not None else None
    doc = held.get(path) or loaded.get(path)
    return indexable(doc) if doc is not None else None
