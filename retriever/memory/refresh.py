"""Incremental refresh: bring a memory's index and documents up to date with the files.

Contract: ``Refresher.refresh()`` scans the tree, reuses the cache for every file whose size and
change stamp (``walk.changed_ns``; or, failing that, content hash) are unchanged, reads and parses the
rest (across worker processes when there are many: ``workers``), and brings the index up to date by tombstoning changed
files' sections and indexing their new ones (a full rebuild on the first run, or when the index
is too fragmented).  A first build streams every document into the new index and the cache as it
is parsed, so no document is held until the end.  Files that cannot be read are listed in
``skipped`` with a reason and never stop the rest.  Reading and parsing happen outside the write
lock; retrievals wait only for the swap, and a refresh that finds nothing changed takes no write lock (a
watcher's round never queues retrievals).  ``refresh()`` never raises: a failure keeps the last good
index answering and is named in ``warnings`` (``refresh_error``) until a refresh succeeds;
``refresh_or_raise()`` (the first load) raises instead, but a cache that cannot be written (a full
disk) is dropped for the session: writes rolled back, the index built in memory, a warning given, as
when it cannot be opened (``caches.open_cache``).  Two processes sharing a cache refresh it one after
the other (``locks.cross_process``).  ``progress(phase, done, total)`` hears a long one (``PHASES``).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from retriever.config import Settings
from retriever.errors import RetrieverError
from retriever.memory import caches, locks, records
from retriever.memory.build import NewIndex, SegmentBuilder, empty_state, register, sections_by_file, too_fragmented
from retriever.memory.cache import IndexCache, IndexState
from retriever.memory.documents import Documents
from retriever.memory.fileview import FileRow
from retriever.memory.index import Params, SectionIndex
from retriever.memory.records import Indexable, Parsed, Record, Task
from retriever.text import reader
from retriever.text.models import Document, Skipped

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]  # (phase, done, total)
T = TypeVar("T")
INDEXING = "indexing"  # a new index: files read and parsed
REFRESHING = "refreshing"  # changed files read and parsed
COMPACTING = "compacting"  # documents indexed again into one segment
SAVING = "saving"  # the index written to its cache (0 of 1, then 1 of 1)
READING = "reading"  # files of a git revision parsed (``--at``)
PHASES = (INDEXING, REFRESHING, COMPACTING, SAVING, READING)
_GENERATIONS = itertools.count(1)  # ``Refresher.generation``: unique in the process
_CACHE_CHUNK = 500  # documents read from the cache at once while compacting


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What the last refresh did, for diagnostics and benchmarks.

    ``cache`` says how the index now answering was made: "built" (indexed anew), "updated" (changed
    files indexed into it), "hit" (loaded from the cache as it was) or "disabled" (no cache); a
    refresh that changes nothing keeps the word.
    """

    files: int
    parsed: int
    removed: int  # files deleted since (an edited file counts as parsed only)
    rebuilt: bool
    cache: str


@dataclass(frozen=True, slots=True)
class Changes:
    """What one scan found: new document versions (None: unreadable now), files gone, and their records.

    A first build streams its documents into ``built`` (and its records into the cache) instead
    of ``changed``.
    """

    changed: dict[str, Parsed | None]
    gone: list[str]
    present: set[str]
    skipped: list[Skipped]
    records: list[Record]
    parsed: int  # files parsed
    built: NewIndex | None = None
    blobs: dict[str, str] = field(default_factory=dict)  # a git revision's: rel_path → blob id (``snapshot``)


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
        # Not a bound method: the documents would hold the refresher, and a dropped memory would wait for the cyclic
        # collector with its index (the 10,000-file benchmark's peak RSS rose by ~26 MB).
        self._recover = functools.partial(_recover, root, settings.max_file_bytes, cache)
        self.documents = Documents(cache, recover=self._recover)
        self.rw = locks.ReadWriteLock()  # retrievals read under it; a refresh swaps under its write side
        self._refreshing = threading.Lock()
        self._rows: dict[str, FileRow] = {}  # fingerprints when there is no cache
        self._file_sections = sections_by_file(self.state)
        # A number no other refresher or refresh of this process had (``Memory.version``), taken anew by each refresh
        # that changes documents or the index: a state's id() can come back once the state two refreshes old is freed,
        # and a file of front matter alone changes no section count.
        self.generation = next(_GENERATIONS)

    def file_sections(self, rel_path: str) -> list[int]:
        """The live section ids of a file, in order (none for a path the index does not hold)."""
        return list(self._file_sections.get(rel_path, ()))

    def refresh(self, after: Callable[[], None], progress: Progress | None = None) -> RefreshStats:
        """Refresh, then ``after()`` (under the same locks); never raises (see the module's contract)."""
        try:
            self.refresh_or_raise(after, progress)
        except Exception as exc:  # noqa: BLE001 - top-level handler of a refresh: the last good index keeps serving
            self._failed(exc)
        return self.stats

    def refresh_or_raise(self, after: Callable[[], None], progress: Progress | None = None) -> None:
        """Refresh, then ``after()``; raises what stopped it, except a cache that cannot be written (see the module)."""
        with self._refreshing:
            try:
                with locks.cross_process(self.cache.folder if self.cache else None):
                    try:
                        self.apply(self._scan(progress), progress)
                    except Exception:
                        if self.cache:
                            self.cache.rollback()  # file records written before the failure were never applied
                        raise
                    after()
            except (sqlite3.Error, caches.CacheUnwritable) as exc:  # only the cache speaks SQL: it failed, not the tree
                self._without_cache(exc, progress)
                after()
        self._set_refresh_error(None)

    def _without_cache(self, cause: Exception, progress: Progress | None) -> None:
        """Go on in memory after a cache write failed: the index and its documents built anew without the cache
        and swapped in whole, the cache closed for the rest of the session, and a warning saying so."""
        cache, alone = self.cache, Refresher(self.root, self.settings, self.params, None, self.warnings)
        assert cache is not None  # only a cache raises what brings us here
        self.warnings.append(caches.unavailable(cache.folder, cause))
        with self.rw.writing():  # retrievals wait: the index a failed commit swapped in reads the rolled-back cache
            self.generation = next(_GENERATIONS)
            alone.apply(alone._scan(progress), progress)
            self.cache, self.documents, self.state, self.stats = None, alone.documents, alone.state, alone.stats
            self._file_sections, self._rows, self.skipped = alone._file_sections, alone._rows, alone.skipped
        cache.close()

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
        for path in self.cache.damaged() if self.cache else ():
            rows.pop(path, None)  # read again: the record's fingerprint would keep its damaged bytes
        changed: dict[str, Parsed | None] = {}
        tasks: list[Task] = []
        for entry in entries:
            indexed = entry.rel_path in self.state.catalog
            outcome = records.check(entry, rows.get(entry.rel_path), indexed, self.settings.max_file_bytes)
            if isinstance(outcome, Skipped):
                skipped.append(outcome)
                if indexed:  # was indexed, is unreadable now
                    changed[entry.rel_path] = None
            elif outcome is not None:
                tasks.append(outcome)
        present = {e.rel_path for e in entries}
        gone = sorted({p for p in [*rows, *self.state.catalog] if p not in present})
        # A first build with a cache streams: each document goes to the new index and the cache as it comes.
        built = NewIndex(self.params) if self.cache and not self.state.index.segments else None
        phase = INDEXING if not self.state.index.segments else REFRESHING
        if built is not None and tasks:
            log.info("building the index of %s for the first time (%d files)", self.root, len(tasks))
        with contextlib.closing(self._read(tasks, phase, progress)) as reading:
            found = [self._take(item, changed, skipped, built) for item in reading]
        parsed = sum(r.parsed is not None for r in found) + (built.documents if built else 0)
        return Changes(changed, gone, present, skipped, found, parsed, built)

    def _read(
        self, tasks: list[Task], phase: str, progress: Progress | None
    ) -> Generator[tuple[Task, Record], None, None]:
        """Each task with its record, in order; many at once in worker processes."""
        if not tasks:
            return
        # Imported here: parsing loads markdown-it and YAML, which a refresh that reads nothing never needs.
        from retriever.memory import intake, workers

        read = functools.partial(intake.read, self.root, max_bytes=self.settings.max_file_bytes)
        reading = workers.ordered(read, tasks, workers.jobs(self.settings.index_workers))
        try:
            yield from counted(zip(tasks, reading, strict=True), phase, len(tasks), progress)
        finally:
            reading.close()  # stops the worker processes at once when the refresh fails half-way

    def _take(
        self,
        item: tuple[Task, Record],
        changed: dict[str, Parsed | None],
        skipped: list[Skipped],
        built: NewIndex | None,
    ) -> Record:
        """File one record: a skip reason, a new version, or (streaming) straight into the new index and the cache."""
        task, record = item
        rel_path = task.entry.rel_path
        if record.reason is not None:
            skipped.append(Skipped(rel_path, record.reason))
            if task.indexed:
                changed[rel_path] = None
        elif record.parsed is not None and built is None:
            changed[rel_path] = record.parsed
        if built is None:
            return record
        if record.parsed is not None:
            built.add(record.parsed.indexable)
        self._store_record(record)
        return Record(record.entry, record.sha1, None, record.reason, record.touch)  # the document is not kept

    def apply(self, found: Changes, progress: Progress | None = None) -> None:
        """Bring the index up to date.  The heavy work (tokenising, a full rebuild) happens before
        the write lock; retrievals wait only for the swap, which also swaps in the new documents
        (so a retrieval never pairs a new document with the old index's section numbers)."""
        state = self.state
        deleted = [p for p in found.gone if p in state.catalog]  # an edited file is parsed, not deleted
        removed = [p for p in found.changed if p in state.catalog] + deleted
        dead = [sid for p in removed for sid in self._file_sections.get(p, [])]
        new_docs = [p.indexable for p in found.changed.values() if p is not None]
        rebuilt = found.built is not None or not state.index.segments or too_fragmented(state.index, len(dead))
        if found.built is not None:
            change = functools.partial(self._replace, *found.built.finish())
        elif rebuilt:
            change = functools.partial(self._replace, *self._build(found.changed, found.present, progress))
        else:
            change = functools.partial(self._patch, dead, removed, new_docs, _analyzed(state.index, new_docs))
        self._store(found)
        dirty = rebuilt or bool(removed or new_docs)
        skipped = sorted(found.skipped, key=lambda s: s.rel_path)
        if not (dirty or found.records or found.gone or skipped != self.skipped):
            # Nothing to swap: no write lock, so a watcher's round never queues retrievals behind one that holds
            # its read lock through slow LLM calls (the lock prefers writers: every request had waited for it).
            self._finish(found, deleted, rebuilt, dirty, progress)
            return
        with self.rw.writing():
            if dirty:  # first: a swap that fails part-way has still changed what readers see
                self.generation = next(_GENERATIONS)
            if self.cache:
                self.cache.publish()  # the records stored above, for retrievals on the index swapped in here
            self._keep(found.records, found.gone)
            self.skipped = skipped
            change()
        self._finish(found, deleted, rebuilt, dirty, progress)

    def _replace(self, state: IndexState, sections: dict[str, list[int]]) -> None:
        """A new index in place of the old (under the write lock)."""
        self.state, self._file_sections = state, sections

    def _patch(self, dead: list[int], removed: list[str], new_docs: list[Indexable], builder: SegmentBuilder) -> None:
        """The index less the ``removed`` files' ``dead`` sections, plus the new documents' segment (under the
        write lock)."""
        state = self.state
        state.index.remove(dead)
        for path in removed:
            state.catalog.pop(path, None)
            self._file_sections.pop(path, None)
        if new_docs:
            register(state, self._file_sections, new_docs, builder.finish())

    def _finish(
        self, found: Changes, deleted: list[str], rebuilt: bool, dirty: bool, progress: Progress | None
    ) -> None:
        self._save(dirty, progress)
        self.documents.trim()
        self.stats = RefreshStats(len(found.present), found.parsed, len(deleted), rebuilt, self._word(rebuilt, dirty))

    def _word(self, rebuilt: bool, dirty: bool) -> str:
        if not self.cache:
            return "disabled"
        if rebuilt or dirty:
            return "built" if rebuilt else "updated"
        return self.stats.cache if self.stats.cache != "disabled" else "hit"  # nothing changed: as it was made

    def _store(self, found: Changes) -> None:
        """The refresh's file records into the cache (committed by ``_save``, rolled back on failure)."""
        if not self.cache:
            return
        self.cache.forget(found.gone)
        if found.built is None:  # a streamed build stored each record as it came
            for record in found.records:
                self._store_record(record)

    def _store_record(self, record: Record) -> None:
        if not self.cache:
            return
        if record.touch:
            self.cache.touch(record.entry.rel_path, record.fingerprint)
        else:
            blob = record.parsed.blob if record.parsed else None
            self.cache.put_encoded(record.entry.rel_path, record.fingerprint, blob, record.reason)

    def _keep(self, found: list[Record], gone: list[str]) -> None:
        """The refresh's documents and fingerprints in memory (under the write lock).  With a cache, a
        changed document leaves memory and is read from the cache when next wanted; without one, every
        document stays (nothing else holds them)."""
        for path in gone:
            self._rows.pop(path, None)
        if not self.cache:
            self._rows.update((r.entry.rel_path, FileRow(r.fingerprint, r.reason)) for r in found)
        # A touched file kept its content: its document stays as it is.
        docs = {r.entry.rel_path: _kept(r, self.cache is None) for r in found if r.parsed is not None or not r.touch}
        self.documents.update(docs, gone)

    def _build(
        self, changed: dict[str, Parsed | None], present: set[str], progress: Progress | None
    ) -> tuple[IndexState, dict[str, list[int]]]:
        """A new index of every document as one segment (compaction; or a first build without a cache)."""
        held = self.documents.among(present)
        new = NewIndex(self.params)
        paths = sorted(present)
        compacting = bool(self.state.index.segments)
        if progress and compacting:
            progress(COMPACTING, 0, len(paths))
        for start in range(0, len(paths), _CACHE_CHUNK):
            chunk = paths[start : start + _CACHE_CHUNK]
            wanted = [p for p in chunk if p not in changed and p not in held]
            loaded = self.cache.documents(wanted) if self.cache and wanted else {}
            for path in chunk:
                doc = records.to_compact(path, changed, held, loaded)
                if doc is not None:
                    new.add(doc)
            if progress and compacting:
                progress(COMPACTING, start + len(chunk), len(paths))
        return new.finish()

    def _save(self, dirty: bool, progress: Progress | None) -> None:
        if not self.cache:
            return
        if dirty and progress:
            progress(SAVING, 0, 1)
        caches.save(self.cache, self.state if dirty else None)
        if dirty and progress:
            progress(SAVING, 1, 1)


def counted(items: Iterable[T], phase: str, total: int, progress: Progress | None) -> Iterator[T]:
    """``items``, with ``progress(phase, done, total)`` told before the first and after each one."""
    if progress:
        progress(phase, 0, total)
    for done, item in enumerate(items, 1):
        yield item
        if progress:
            progress(phase, done, total)


def _recover(root: Path, max_bytes: int, cache: IndexCache | None, rel_path: str) -> Document | None:
    """A damaged cache record's document, read again (``intake.reread``)."""
    from retriever.memory import intake  # imported here for the reason ``Refresher._read`` gives

    known = cache.known_sha1(rel_path) if cache else None
    return intake.reread(root, rel_path, known, max_bytes) if known else None


def _kept(record: Record, keep: bool) -> Document | None:
    """The document to hold in memory for a record: only when there is no cache to read it from."""
    return record.parsed.document() if keep and record.parsed is not None else None


def _analyzed(index: SectionIndex, docs: list[Indexable]) -> SegmentBuilder:
    """Documents' postings in a segment builder (not yet visible to queries)."""
    builder = SegmentBuilder(index)
    for doc in docs:
        builder.add_postings(doc.postings, doc.meaning)
    return builder
