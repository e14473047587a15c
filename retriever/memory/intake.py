"""One file of the tree during a refresh: is it unchanged, its new document, or why it is skipped.

Contract: ``check(root, entry, known, indexed, max_bytes, records)`` never raises for a file's
content or for a bug parsing it: every failure becomes a ``Skipped`` with a reason (issue 9:
one bad file never takes the memory down).  What it learns goes into ``records``; the caller
writes them to the cache and to its documents only when the whole refresh commits, so a refresh
that fails half-way leaves both as they were.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from retriever.memory.cache import FileRow
from retriever.text import reader
from retriever.text.models import Document, Fingerprint, Skipped
from retriever.text.parser import ParseError, parse_document

log = logging.getLogger(__name__)

_DETAIL_CHARS = 200  # of an unexpected exception's message in a skip reason


@dataclass(frozen=True, slots=True)
class Record:
    """What a refresh learned of one file: its fingerprint and document, or the reason it is skipped."""

    entry: reader.Entry
    sha1: str
    doc: Document | None
    reason: str | None
    touch: bool = False  # only the size or mtime moved; the bytes are the same

    @property
    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.entry.size, self.entry.mtime_ns, self.sha1)


def check(
    root: Path, entry: reader.Entry, known: FileRow | None, indexed: bool, max_bytes: int, records: list[Record]
) -> Document | Skipped | None:
    """None when the file is unchanged and indexed; else its new document or skip reason."""
    try:
        return _check(root, entry, known, indexed, max_bytes, records)
    except Exception as exc:  # the top-level handler of one file: nothing it holds may stop the tree
        log.debug("unexpected failure indexing %s", entry.rel_path, exc_info=True)
        detail = str(exc)[:_DETAIL_CHARS]
        reason = f"could not be indexed ({type(exc).__name__}{': ' + detail if detail else ''}); please report this"
        log.warning("%s skipped: %s", entry.rel_path, reason)
        records.append(Record(entry, "", None, reason))
        return Skipped(entry.rel_path, reason)


def _check(
    root: Path, entry: reader.Entry, known: FileRow | None, indexed: bool, max_bytes: int, records: list[Record]
) -> Document | Skipped | None:
    fresh = known is not None and (known.fingerprint.size, known.fingerprint.mtime_ns) == (entry.size, entry.mtime_ns)
    if fresh and known is not None and known.skipped:
        return Skipped(entry.rel_path, known.skipped)
    if fresh and indexed:
        return None
    known_sha1 = known.fingerprint.sha1 if known is not None and not known.skipped else None
    try:
        text, sha1 = reader.read_text(root, entry.rel_path, max_bytes)
    except reader.Unreadable as exc:
        records.append(Record(entry, "", None, str(exc)))
        return Skipped(entry.rel_path, str(exc))
    if sha1 == known_sha1 and indexed:
        # Touched, not edited (a checkout, an editor's save without changes): only the mtime moves.
        records.append(Record(entry, sha1, None, None, touch=True))
        return None
    try:
        doc = parse_document(entry.rel_path, text)
    except ParseError as exc:
        records.append(Record(entry, sha1, None, str(exc)))
        return Skipped(entry.rel_path, str(exc))
    records.append(Record(entry, sha1, doc, None))
    return doc
