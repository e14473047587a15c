"""Incremental refresh: bring a memory's index and documents up to date with the files.

Contract: ``Refresher.refresh()`` scans the tree, reuses the cache for every file whose size and
mtime (or, failing that, content hash) are unchanged, parses the rest, and brings the index up to
date by tombstoning changed files' sections and indexing their new ones (a full rebuild on the
first run, or when the index is too fragmented).  Files that cannot be read are listed in
``skipped`` with a reason and never stop the rest.  Reading and parsing happen outside the write
lock; retrievals wait only for the swap.  ``refresh()`` never raises: a failure keeps the last good
index answering and is named in ``warnings`` (``refresh_error``) until a refresh succeeds;
``refresh_or_raise()`` (the first load) raises instead.  Two processes sharing a cache refresh it
one after the other (``locks.cross_process``).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from retriever.config import Settings, index_cache_dir
from retriever.errors import RetrieverError
from retriever.memory import gitinfo, intake, locks
from retriever.memory.cache import DocInfo, FileRow, IndexCache, IndexState
from retriever.memory.documents import Documents
from retriever.memory.fields import analyze_document
from retriever.memory.index import Params, SectionIndex, SegmentBuilder
from retriever.memory.vectors import document_texts
from retriever.text import analyzer, reader
from retriever.text.models import Document, Skipped
from retriever.text.parser import ParseError, parse_document

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
_COMPACT_DEAD_SHARE = 0.3
_COMPACT_SEGMENTS = 8


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What the last refresh did, for diagnostics and benchmarks."""

    files: int
    parsed: int
    removed: int
    rebuilt: bool
    cache: str  # "hit", "updated", "built" or "disabled"


@dataclass(frozen=True, slots=True)
class Changes:
    """What one scan found: new document versions (None: unreadable now), files gone, and their records."""

    changed: dict[str, Document | None]
    gone: list[str]
    present: set[str]
    skipped: list[Skipped]
    records: list[intake.Record]


class Refresher:
    """The writer behind a ``Memory``: owns its index state, skipped files, documents and cache."""

    def __init__(
        self, root: Path, settings: Settings, params: Params, cache: IndexCache | None, warnings: list[str]
    ) -> None:
        self.root, self.settings, self.params, self.cache = root, settings, params, cache
        self.state = (cache.load_index(params) if cache else None) or empty_state(params)
        self.skipped: list[Skipped] = []
        self.warnings = warnings  # the memory's warnings, shared with its provenance
        self.stats = RefreshStats(0, 0, 0, False, "disabled")
        self.refresh_error: str | None = None  # why the last refresh failed (also in ``warnings``)
        self.documents = Documents(cache)
        self.rw = locks.ReadWriteLock()  # retrievals read under it; a refresh swaps under its write side
        self._refreshing = threading.Lock()
        self._rows: dict[str, FileRow] = {}  # fingerprints when there is no cache
        self._file_sections = _sections_by_file(self.state)

    def refresh(self, after: Callable[[], None], progress: Progress | None = None) -> RefreshStats:
        """Refresh, then ``after()`` (under the same locks); never raises (see the module's contract)."""
        try:
            self.refresh_or_raise(after, progress)
        except Exception as exc:  # noqa: BLE001 - top-level handler of a refresh: the last good index keeps serving
            self._failed(exc)
        return self.stats

    def refresh_or_raise(self, after: Callable[[], None], progress: Progress | None = None) -> None:
        with self._refreshing, locks.cross_process(self.cache.folder if self.cache else None):
            try:
                self.apply(self._scan(progress))
            except Exception:
                if self.cache:
                    self.cache.rollback()  # file records written before the failure were never applied
                raise
            after()
        self._set_refresh_error(None)

    def _failed(self, exc: Exception) -> None:
        problem = exc.message if isinstance(exc, RetrieverError) else f"{type(exc).__name__}: {exc}"
        warning = f"the last refresh failed ({problem[:300]}); answers come from the index before it"
        if warning != self.refresh_error:  # logged once per problem, not at every round of a watcher
            log.warning("refreshing %s failed: %s", self.root, problem[:300])
            log.debug("refresh failure", exc_info=exc)
        self._set_refresh_error(warning)

    def _set_refresh_error(self, warning: str | None) -> None:
        if self.refresh_error is not None and self.refresh_error in self.warnings:
            self.warnings.remove(self.refresh_error)
        self.refresh_error = warning
        if warning is not None:
            self.warnings.append(warning)

    def _scan(self, progress: Progress | None) -> Changes:
        """Every file checked against its fingerprint; changed ones read and parsed."""
        entries, skipped = reader.scan(self.root, self.settings.max_files)
        rows = self.cache.file_rows() if self.cache else self._rows
        changed: dict[str, Document | None] = {}
        records: list[intake.Record] = []
        for number, entry in enumerate(entries, 1):
            indexed = entry.rel_path in self.state.catalog
            known = rows.get(entry.rel_path)
            outcome = intake.check(self.root, entry, known, indexed, self.settings.max_file_bytes, records)
            if isinstance(outcome, Skipped):
                skipped.append(outcome)
                if indexed:  # was indexed, is unreadable now
                    changed[entry.rel_path] = None
            elif outcome is not None:
                changed[entry.rel_path] = outcome
            if progress:
                progress(number, len(entries))
        present = {e.rel_path for e in entries}
        gone = sorted({p for p in [*rows, *self.state.catalog] if p not in present})
        return Changes(changed, gone, present, skipped, records)

    def apply(self, found: Changes) -> None:
        """Bring the index up to date.  The heavy work (tokenising, a full rebuild) happens before
        the write lock; retrievals wait only for the swap, which also swaps in the new documents
        (so a retrieval never pairs a new document with the old index's section numbers)."""
        state = self.state
        removed = [p for p in [*found.changed, *found.gone] if p in state.catalog]
        dead = [sid for p in removed for sid in self._file_sections.get(p, [])]
        new_docs = [d for d in found.changed.values() if d is not None]
        rebuilt = not state.index.segments or _too_fragmented(state.index, len(dead))
        if rebuilt:
            fresh, sections = self._build(found.changed, found.present)
        else:
            builder = _analyzed(state.index, new_docs)
        self._store(found.records, found.gone)
        with self.rw.writing():
            self._keep(found.records, found.gone)
            self.skipped = sorted(found.skipped, key=lambda s: s.rel_path)
            if rebuilt:
                self.state, self._file_sections = fresh, sections
            else:
                state.index.remove(dead)
                for path in removed:
                    state.catalog.pop(path, None)
                    self._file_sections.pop(path, None)
                if new_docs:
                    _register(state, self._file_sections, new_docs, builder.finish())
        dirty = rebuilt or bool(removed or new_docs)
        self._save(dirty)
        self.documents.trim()
        word = "disabled" if not self.cache else "built" if rebuilt else "updated" if dirty else "hit"
        parsed = sum(d is not None for d in found.changed.values())
        self.stats = RefreshStats(len(found.present), parsed, len(removed), rebuilt, word)

    def _store(self, records: list[intake.Record], gone: list[str]) -> None:
        """The refresh's file records into the cache (committed by ``_save``, rolled back on failure)."""
        if not self.cache:
            return
        self.cache.forget(gone)
        for record in records:
            if record.touch:
                self.cache.touch(record.entry.rel_path, record.fingerprint)
            else:
                self.cache.put(record.entry.rel_path, record.fingerprint, record.doc, record.reason)

    def _keep(self, records: list[intake.Record], gone: list[str]) -> None:
        """The refresh's documents and fingerprints in memory (under the write lock)."""
        for path in gone:
            self._rows.pop(path, None)
        if not self.cache:
            self._rows.update((r.entry.rel_path, FileRow(r.fingerprint, r.reason)) for r in records)
        # A touched file kept its content: its document stays as it is.
        self.documents.update({r.entry.rel_path: r.doc for r in records if r.doc is not None or not r.touch}, gone)

    def _build(self, changed: dict[str, Document | None], present: set[str]) -> tuple[IndexState, dict[str, list[int]]]:
        """A new index of every document as one segment (first run, or compaction)."""
        docs = self.documents.among(present)
        docs.update(changed)  # new versions, and None for files skipped now
        missing = [p for p in present if p not in docs]
        if self.cache and missing:  # documents parsed by an earlier run
            docs.update(self.cache.documents(missing))
        ordered = [d for p, d in sorted(docs.items()) if d is not None and p in present]
        state, sections = empty_state(self.params), dict[str, list[int]]()
        _register(state, sections, ordered, _analyzed(state.index, ordered).finish(fix_avglen=True))
        return state, sections

    def _save(self, dirty: bool) -> None:
        if not self.cache:
            return
        if dirty:
            try:
                self.cache.save_index(self.state)
            except OSError as exc:
                self.warnings.append(f"index cache not saved ({exc.strerror}); next start re-indexes")
        self.cache.commit()


def snapshot_changes(snapshot: gitinfo.GitSnapshot, max_bytes: int) -> Changes:
    """Every document of a git snapshot as one refresh's changes; unreadable files skipped, as on disk."""
    wanted, skipped = [], []
    for rel_path, (_, size) in sorted(snapshot.files().items()):
        if not reader.is_memory_file(rel_path):
            continue
        try:
            reader.check_size(size, max_bytes)
            wanted.append(rel_path)
        except reader.Unreadable as exc:
            skipped.append(Skipped(rel_path, str(exc)))
    docs: dict[str, Document | None] = {}
    for rel_path, data in snapshot.read(wanted).items():
        try:
            docs[rel_path] = parse_document(rel_path, reader.decode(data)[0])
        except (reader.Unreadable, ParseError) as exc:
            skipped.append(Skipped(rel_path, str(exc)))
        except Exception as exc:  # noqa: BLE001 - the top-level handler of one file, as in intake.check
            skipped.append(Skipped(rel_path, f"could not be indexed ({type(exc).__name__}); please report this"))
    return Changes(docs, [], set(docs), skipped, [])


def open_cache(settings: Settings, root: Path) -> tuple[IndexCache | None, list[str]]:
    """The index cache of ``root`` (None, with a warning, when it is unusable or inside the tree)."""
    folder = index_cache_dir(settings, root)
    try:
        if folder.resolve().is_relative_to(root.resolve()):
            return None, [f"state folder {folder} is inside the memory tree; index cache disabled"]
        return IndexCache(folder), []
    except (OSError, sqlite3.Error) as exc:
        log.warning("index cache unavailable at %s: %s", folder, exc)
        return None, [f"index cache unavailable at {folder} ({exc}); indexing in memory"]


def empty_state(params: Params) -> IndexState:
    return IndexState(SectionIndex(params=params), [], [])


def _analyzed(index: SectionIndex, docs: list[Document]) -> SegmentBuilder:
    """Documents tokenised into a segment builder (not yet visible to queries)."""
    builder = SegmentBuilder(index)
    for doc in docs:
        for fields_, text in zip(analyze_document(doc), document_texts(doc), strict=True):
            builder.add(fields_, text)
    return builder


def _register(state: IndexState, sections: dict[str, list[int]], docs: list[Document], ids: range) -> None:
    """Record which section ids belong to which document, and the documents' outline info."""
    next_id = iter(ids)
    for doc in docs:
        sids = [next(next_id) for _ in doc.sections]
        state.section_files.extend([doc.rel_path] * len(sids))
        state.section_ordinals.extend(range(len(sids)))
        state.catalog[doc.rel_path] = DocInfo(doc.title, doc.doc_type, doc.aliases, len(sids))
        for acronym, expansion in doc.acronyms:
            state.acronyms.setdefault(analyzer.normalize(acronym), set()).add(expansion.casefold())
        sections[doc.rel_path] = sids


def _sections_by_file(state: IndexState) -> dict[str, list[int]]:
    """Live section ids per file, from a loaded index."""
    out: dict[str, list[int]] = {}
    for sid in state.index.alive.nonzero()[0].tolist():
        out.setdefault(state.section_files[sid], []).append(sid)
    return out


def _too_fragmented(index: SectionIndex, newly_dead: int) -> bool:
    dead = index.size - index.live_count + newly_dead
    return len(index.segments) >= _COMPACT_SEGMENTS or dead > _COMPACT_DEAD_SHARE * max(index.size, 1)
