"""Reading and parsing one file of the tree: the work a refresh spreads over processes.

Contract: ``read(root, task, max_bytes)`` and ``read_snapshot((rel_path, data))`` never raise for
a file's content or for a bug parsing or analysing it: every failure becomes a ``Record`` with a
reason (issue 9: one bad file never takes the memory down).  They touch nothing but the file: the
caller writes records to the cache and to its documents, and only when the whole refresh commits,
so a refresh that fails half-way leaves both as they were.  Both are plain module-level functions
of picklable arguments, so ``workers.ordered`` can run them in worker processes.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from retriever.memory.cache import decode_document, encode_document
from retriever.memory.records import Parsed, Record, Task, indexable
from retriever.memory.vectors import document_vectors
from retriever.text import analyzer, reader
from retriever.text.models import Document, Section
from retriever.text.parser import ParseError, parse_document

log = logging.getLogger(__name__)

_DETAIL_CHARS = 200  # of an unexpected exception's message in a skip reason


def prepare(doc: Document) -> Parsed:
    """A parsed document in the form a build consumes (see ``records.Parsed``), its statements' vectors and terms
    taken (``with_statement_data``)."""
    meaning, packed = document_vectors(doc)  # one embedding pass for its sections and its statements
    doc = with_statement_data(doc, packed)
    return Parsed(encode_document(doc), indexable(doc, meaning))


def with_statement_data(doc: Document, packed: list[list[bytes]]) -> Document:
    """``doc`` with each statement's vector (``packed``: ``vectors.document_vectors``) and terms (``analyzer.terms``)
    in it (``Unit.vector``, ``Unit.terms``), both set in one copy of the statement."""
    sections = tuple(_section_data(s, rows) for s, rows in zip(doc.sections, packed, strict=True))
    return dataclasses.replace(doc, sections=sections)


def _section_data(section: Section, packed: list[bytes]) -> Section:
    units = tuple(
        dataclasses.replace(unit, vector=vector, terms=tuple(analyzer.terms(unit.text)))
        for unit, vector in zip(section.units, packed, strict=True)
    )
    return dataclasses.replace(section, units=units)


def read(root: Path, task: Task, max_bytes: int) -> Record:
    """Read, hash, parse and analyse one file on disk."""
    try:
        return _read(root, task, max_bytes)
    except Exception as exc:  # noqa: BLE001 - the top-level handler of one file: nothing it holds may stop the tree
        return _failed(task.entry, exc)


def _read(root: Path, task: Task, max_bytes: int) -> Record:
    entry = task.entry
    try:
        text, sha1 = reader.read_text(root, entry.rel_path, max_bytes, entry)  # only the file the walk vetted
    except reader.Unreadable as exc:
        return Record(entry, "", None, str(exc))
    if sha1 == task.known_sha1 and task.indexed:
        # Touched, not edited (a checkout, an editor's save without changes): only the mtime moves.
        return Record(entry, sha1, None, None, touch=True)
    try:
        doc = parse_document(entry.rel_path, text)
    except ParseError as exc:
        return Record(entry, sha1, None, str(exc))
    return Record(entry, sha1, prepare(doc), None)


def reread(root: Path, rel_path: str, known_sha1: str, max_bytes: int) -> Document | None:
    """The document of a file whose cache record is damaged, parsed again while its bytes are the version
    indexed (SHA-1 ``known_sha1``); None when they changed or it cannot be read (the next refresh reads it)."""
    try:
        entry = reader.vet(root, rel_path)
    except reader.Unreadable:
        return None
    record = read(root, Task(entry, None, False), max_bytes)
    return record.parsed.document() if record.sha1 == known_sha1 and record.parsed is not None else None


def read_snapshot(item: tuple[str, bytes, bytes | None]) -> Record:
    """Decode, parse and analyse one file read from git objects (``--at``): its path, its bytes and a cache record
    of the same bytes parsed before (``cache.encode_document``), if any, whose parse is kept; a record that does not
    decode is let go, and the bytes parsed."""
    rel_path, data, record = item
    entry = reader.Entry(rel_path, len(data), 0)
    try:
        if record is not None and (cached := _decoded(record)) is not None:  # its sections' meaning taken again
            return Record(entry, "", Parsed(record, indexable(cached)), None)
        return Record(entry, "", prepare(parse_document(rel_path, reader.decode(data)[0])), None)
    except (reader.Unreadable, ParseError) as exc:
        return Record(entry, "", None, str(exc))
    except Exception as exc:  # noqa: BLE001 - the top-level handler of one file, as in ``read``
        return _failed(entry, exc)


def _decoded(record: bytes) -> Document | None:
    try:
        return decode_document(record)
    except Exception:  # damaged bytes can make unpickling raise anything: the file is parsed instead
        log.debug("a cached record did not decode; its file is parsed", exc_info=True)
        return None


def _failed(entry: reader.Entry, exc: Exception) -> Record:
    log.debug("unexpected failure indexing %s", entry.rel_path, exc_info=True)
    detail = str(exc)[:_DETAIL_CHARS]
    reason = f"could not be indexed ({type(exc).__name__}{': ' + detail if detail else ''}); please report this"
    log.warning("%s skipped: %s", entry.rel_path, reason)
    return Record(entry, "", None, reason)
