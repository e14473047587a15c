"""The loaded memory: the tree's documents, the section index, and their refresh.

Contract: ``Memory.open(root, settings)`` scans the tree, reuses the cache for every file
whose size and mtime (or, failing that, content hash) are unchanged, parses the rest, and
brings the index up to date by tombstoning changed files' sections and indexing their new
ones.  ``refresh()`` does the same later (the server calls it; a query never waits for a
full rebuild unless there was no usable cache).  Files that cannot be read are listed in
``skipped`` with a reason and never stop the rest.  A refresh that fails as a whole keeps the
last good index answering and names the failure in ``warnings`` (``refresh_error``) until a
refresh succeeds; only the first load, in ``open``, raises.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from retriever.config import Settings, index_cache_dir
from retriever.errors import MemoryNotFound, RetrieverError
from retriever.memory import gitinfo, intake
from retriever.memory.cache import DocInfo, FileRow, IndexCache, IndexState
from retriever.memory.index import Params, SectionIndex, SegmentBuilder, analyze_document
from retriever.pipeline.results import When
from retriever.text import analyzer, reader
from retriever.text.markup import humanize
from retriever.text.models import Document, Section, Skipped
from retriever.text.parser import INDEX_NAMES, ParseError, parse_document

log = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
_COMPACT_DEAD_SHARE = 0.3
_COMPACT_SEGMENTS = 8
_DOCUMENTS_IN_MEMORY = 2048  # parsed documents kept after a refresh when the cache holds them all


class ReadWriteLock:
    """Many readers or one writer; a waiting writer holds back new readers so it is not starved."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._cond:
            while self._writing or self._waiting:
                self._cond.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            while self._writing or self._readers:
                self._cond.wait()
            self._waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()


@dataclass(frozen=True, slots=True)
class RefreshStats:
    """What the last refresh did, for diagnostics and benchmarks."""

    files: int
    parsed: int
    removed: int
    rebuilt: bool
    cache: str  # "hit", "updated", "built" or "disabled"


@dataclass
class Memory:
    """A memory tree ready for retrieval."""

    root: Path
    settings: Settings
    params: Params
    state: IndexState
    cache: IndexCache | None
    skipped: list[Skipped] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    stats: RefreshStats = RefreshStats(0, 0, 0, False, "disabled")
    _docs: dict[str, Document] = field(default_factory=dict)
    _rows: dict[str, FileRow] = field(default_factory=dict)  # fingerprints when there is no cache
    _file_sections: dict[str, list[int]] = field(default_factory=dict)
    # Retrievals read under ``_rw``; a refresh parses outside it and applies under its write side.
    _rw: ReadWriteLock = field(default_factory=ReadWriteLock, repr=False)
    _refreshing: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _docs_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    # Git: the repository holding the tree (None outside one), its history, files with uncommitted edits.
    revision: gitinfo.Revision | None = None  # set when the tree is read as it was at a revision
    _repo: Path | None = None
    _history: gitinfo.History | None = None
    _dirty: frozenset[str] = frozenset()
    _names: tuple[tuple[int, int, int], dict[str, str]] | None = field(default=None, repr=False)
    refresh_error: str | None = None  # why the last refresh failed (also in ``warnings``); None after a success

    # -- opening and refreshing ------------------------------------------------------------

    @classmethod
    def open(
        cls, root: Path, settings: Settings, params: Params | None = None, progress: Progress | None = None
    ) -> Memory:
        """Load the tree at ``root``, from the cache where it is still valid."""
        if not root.is_dir():
            raise MemoryNotFound(f"memory root {str(root)!r} is not a folder; pass --root DIR or set RETRIEVER_ROOT")
        params = params or Params()
        cache, warnings = _open_cache(settings, root)
        state = (cache.load_index(params) if cache else None) or _empty_state(params)
        memory = cls(root.resolve(), settings, params, state, cache, warnings=warnings)
        memory._file_sections = _sections_by_file(state)
        memory._repo = gitinfo.find_repo(memory.root)
        try:
            memory._refresh_or_raise(progress)  # nothing to keep serving yet: the caller hears why
        except Exception:
            if cache:
                cache.close()  # a watcher retries every round: leave no connection behind
            raise
        return memory

    @classmethod
    def at_revision(cls, root: Path, settings: Settings, rev: str, params: Params | None = None) -> Memory:
        """The tree as it was at a commit, tag or date, read from git objects (the working tree is not touched)."""
        repo = gitinfo.find_repo(root) if root.is_dir() else None
        if repo is None:
            raise gitinfo.GitError(f"{str(root)!r} is not inside a git repository; --at needs one")
        revision = gitinfo.resolve(repo, rev)
        prefix = gitinfo.prefix_of(repo, root)
        memory = cls(
            root.resolve(),
            settings,
            params or Params(),
            _empty_state(params or Params()),
            None,
            revision=revision,
            _repo=repo,
        )
        snapshot = gitinfo.GitSnapshot(repo, prefix, revision.commit)
        docs, skipped = _snapshot_documents(snapshot, settings.max_file_bytes)
        memory._docs = {path: doc for path, doc in docs.items() if doc is not None}  # no cache: all stay in memory
        memory._apply(dict(docs), [], set(docs), skipped, [])
        memory._history = gitinfo.history(repo, prefix, revision.commit)
        return memory

    @property
    def root_name(self) -> str:
        return self.root.name

    def refresh(self, progress: Progress | None = None) -> RefreshStats:
        """Bring documents and index up to date with the files on disk.

        Safe while other threads retrieve: files are read and parsed first, and only the
        short step that swaps sections in the index waits for running retrievals.  Never raises:
        a failure keeps the last good index answering and is named in ``warnings``.
        """
        if self.revision is not None:
            return self.stats  # a past revision does not change
        try:
            self._refresh_or_raise(progress)
        except Exception as exc:  # noqa: BLE001 - top-level handler of a refresh: the last good index keeps serving
            self._refresh_failed(exc)
        return self.stats

    def _refresh_or_raise(self, progress: Progress | None) -> None:
        with self._refreshing, self._lock():
            try:
                self._refresh(progress)
            except Exception:
                if self.cache:
                    self.cache.rollback()  # file records written before the failure were never applied
                raise
            self._update_provenance()
        self._set_refresh_error(None)

    def _refresh_failed(self, exc: Exception) -> None:
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

    def _update_provenance(self) -> None:
        """Git history (re-read only when HEAD moved) and the files edited since the last commit."""
        if self._repo is None:
            return
        try:
            prefix = gitinfo.prefix_of(self._repo, self.root)
            current = gitinfo.head(self._repo) or ""
            if self._history is None or self._history.head != current:
                self._history = self._load_history(current, prefix)
            self._dirty = gitinfo.dirty(self._repo, prefix)
        except gitinfo.GitError as exc:
            self._repo = None
            self.warnings.append(f"git provenance unavailable: {exc.message}")

    @property
    def version(self) -> tuple[int, int, int]:
        """Changes whenever a refresh changes the documents or the index (for caches keyed on the tree)."""
        return (id(self.state), self.index.size, self.index.live_count)

    def resolve(self, name: str) -> str | None:
        """The document a name refers to (title, alias, relative path or file stem; case-insensitive)."""
        names = self._names
        if names is None or names[0] != self.version:  # rebuilt only after a refresh changed documents
            names = self._names = (self.version, _name_index(self.state.catalog))
        key = name.strip().casefold().removeprefix("./")
        return names[1].get(key) or names[1].get(key.removesuffix(".md"))

    def when(self, doc: Document) -> When:
        """The document's dates and author: git's first and last commit, else its front-matter dates."""
        meta = doc.front_matter
        superseded = bool(meta.get("superseded_by")) or str(meta.get("status", "")).casefold() == "superseded"
        found = self.provenance(doc.rel_path)
        if found is not None and found.valid_at is not None:
            return When(found.created_at, found.valid_at, found.author, found.uncommitted, superseded)
        created = meta.get("created") or meta.get("date")
        valid = meta.get("updated") or meta.get("date") or meta.get("created")
        return When(
            str(created) if created else None,
            str(valid) if valid else None,
            None,
            bool(found and found.uncommitted),
            superseded,
        )

    def _load_history(self, head: str, prefix: str) -> gitinfo.History:
        """The history for ``head``: from the cache when this commit was read before, else one ``git log``."""
        cached = self.cache.load_history(head) if self.cache and head else None
        if isinstance(cached, gitinfo.History) and cached.head == head:
            return cached
        found = gitinfo.history(self._repo, prefix) if self._repo else gitinfo.History("", {}, {})
        if self.cache and head:
            try:
                self.cache.save_history(head, found)
            except OSError as exc:
                self.warnings.append(f"git history not cached ({exc.strerror})")
        return found

    def provenance(self, rel_path: str) -> gitinfo.Provenance | None:
        """First and last commit of a file, its author and uncommitted state; None outside git."""
        if self._history is None:
            return None
        return self._history.provenance(rel_path, self._dirty)

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold while retrieving, so a refresh never changes the index mid-query."""
        return self._rw.reading()

    def _refresh(self, progress: Progress | None) -> None:
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
                if entry.rel_path in self.state.catalog:  # was indexed, is unreadable now
                    changed[entry.rel_path] = None
            elif outcome is not None:
                changed[entry.rel_path] = outcome
            if progress:
                progress(number, len(entries))
        present = {e.rel_path for e in entries}
        gone = sorted({p for p in [*rows, *self.state.catalog] if p not in present})
        self._apply(changed, gone, present, skipped, records)

    def _apply(
        self,
        changed: dict[str, Document | None],
        gone: list[str],
        present: set[str],
        skipped: list[Skipped],
        records: list[intake.Record],
    ) -> None:
        """Bring the index up to date.  The heavy work (tokenising, a full rebuild) happens before
        the write lock; retrievals wait only for the swap, which also swaps in the new documents
        (so a retrieval never pairs a new document with the old index's section numbers)."""
        state = self.state
        removed = [p for p in [*changed, *gone] if p in state.catalog]
        dead = [sid for p in removed for sid in self._sections_of(p)]
        new_docs = [d for d in changed.values() if d is not None]
        rebuilt = not state.index.segments or _too_fragmented(state.index, len(dead))
        if rebuilt:
            fresh, sections = self._build(changed, present)
        else:
            builder = _analyzed(state.index, new_docs)
        self._store(records, gone)
        with self._rw.writing():
            self._keep(records, gone)
            self.skipped = sorted(skipped, key=lambda s: s.rel_path)
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
        self._trim_documents()
        word = "disabled" if not self.cache else "built" if rebuilt else "updated" if dirty else "hit"
        parsed = sum(d is not None for d in changed.values())
        self.stats = RefreshStats(len(present), parsed, len(removed), rebuilt, word)

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
        with self._docs_lock:
            for path in gone:
                self._rows.pop(path, None)
                self._docs.pop(path, None)
            for record in records:
                path = record.entry.rel_path
                if not self.cache:
                    self._rows[path] = FileRow(record.fingerprint, record.reason)
                if record.doc is not None:
                    self._docs[path] = record.doc
                elif not record.touch:
                    self._docs.pop(path, None)

    def _build(self, changed: dict[str, Document | None], present: set[str]) -> tuple[IndexState, dict[str, list[int]]]:
        """A new index of every document as one segment (first run, or compaction)."""
        with self._docs_lock:
            docs: dict[str, Document | None] = {p: d for p, d in self._docs.items() if p in present}
        docs.update(changed)  # new versions, and None for files skipped now
        missing = [p for p in present if p not in docs]
        if self.cache and missing:  # documents parsed by an earlier run
            docs.update(self.cache.documents(missing))
        ordered = [d for p, d in sorted(docs.items()) if d is not None and p in present]
        state, sections = _empty_state(self.params), dict[str, list[int]]()
        _register(state, sections, ordered, _analyzed(state.index, ordered).finish(fix_avglen=True))
        return state, sections

    def _sections_of(self, rel_path: str) -> list[int]:
        return self._file_sections.get(rel_path, [])

    def _trim_documents(self) -> None:
        """Keep only the most recently used documents in memory; the cache serves the rest."""
        with self._docs_lock:
            excess = len(self._docs) - _DOCUMENTS_IN_MEMORY
            if self.cache and excess > 0:
                for path in list(itertools.islice(self._docs, excess)):
                    self._docs.pop(path, None)

    def _save(self, dirty: bool) -> None:
        if not self.cache:
            return
        if dirty:
            try:
                self.cache.save_index(self.state)
            except OSError as exc:
                self.warnings.append(f"index cache not saved ({exc.strerror}); next start re-indexes")
        self.cache.commit()

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        """Serialise refreshes of one cache between processes (two CLI runs at once)."""
        if not self.cache:
            yield
            return
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; the atomic state file still protects readers
            yield
            return
        with open(self.cache.folder / "lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- reading ------------------------------------------------------------------------------

    @property
    def index(self) -> SectionIndex:
        return self.state.index

    def document(self, rel_path: str) -> Document:
        with self._docs_lock:
            doc = self._docs.pop(rel_path, None)
            if doc is not None:
                self._docs[rel_path] = doc  # most recently used last
        if doc is None and self.cache:
            doc = self.cache.documents([rel_path]).get(rel_path)
            if doc is not None:
                with self._docs_lock:
                    self._docs[rel_path] = doc
                self._trim_documents()
        if doc is None:
            raise KeyError(rel_path)
        return doc

    def section(self, section_id: int) -> tuple[Document, Section]:
        doc = self.document(self.state.section_files[section_id])
        return doc, doc.sections[self.state.section_ordinals[section_id]]

    def source_path(self, rel_path: str) -> str:
        """The path as the seed shows it: the root folder's name first."""
        return f"{self.root_name}/{rel_path}"

    def tree_path(self, rel_path: str, section: Section | None = None) -> str:
        """``Company Context > Relationships > Client Organizations > Tier 1``."""
        parts = [humanize(self.root_name), *self.folder_titles(rel_path)]
        info = self.state.catalog.get(rel_path)
        if rel_path.rsplit("/", 1)[-1].lower() not in INDEX_NAMES or "/" not in rel_path:
            parts.append(info.title if info else humanize(rel_path.rsplit("/", 1)[-1]))
        if section is not None:
            parts.extend(section.heading_path)
        return " > ".join(parts)

    def folder_titles(self, rel_path: str) -> list[str]:
        """Folder names as titles; a folder's README titles that README, not the folder."""
        return [humanize(folder) for folder in rel_path.split("/")[:-1]]

    @property
    def documents_count(self) -> int:
        return len(self.state.catalog)

    @property
    def sections_count(self) -> int:
        return self.state.index.live_count

    def readiness(self) -> tuple[bool, str]:
        """(memory_ready, readiness_state): ``empty`` < ``ready_sparse`` < ``ready_rich``."""
        if self.sections_count == 0:
            return False, "empty"
        if self.documents_count < 5 or self.sections_count < 20:
            return True, "ready_sparse"
        return True, "ready_rich"


def _analyzed(index: SectionIndex, docs: list[Document]) -> SegmentBuilder:
    """Documents tokenised into a segment builder (not yet visible to queries)."""
    builder = SegmentBuilder(index)
    for doc in docs:
        for fields_ in analyze_document(doc):
            builder.add(fields_)
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


def _name_index(catalog: dict[str, DocInfo]) -> dict[str, str]:
    """Casefolded title, alias, path and file stem → rel_path (the first document keeps a shared name)."""
    names: dict[str, str] = {}
    for path, info in catalog.items():
        for name in (info.title, *info.aliases):
            names.setdefault(name.casefold(), path)
        names.setdefault(path.casefold(), path)
        names.setdefault(path.rsplit("/", 1)[-1].removesuffix(".md").casefold(), path)
    return names


def _sections_by_file(state: IndexState) -> dict[str, list[int]]:
    """Live section ids per file, from a loaded index."""
    out: dict[str, list[int]] = {}
    for sid in state.index.alive.nonzero()[0].tolist():
        out.setdefault(state.section_files[sid], []).append(sid)
    return out


def _snapshot_documents(
    snapshot: gitinfo.GitSnapshot, max_bytes: int
) -> tuple[dict[str, Document | None], list[Skipped]]:
    """Documents of a git snapshot; unreadable files skipped with a reason, as on disk."""
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
    return docs, skipped


def _empty_state(params: Params) -> IndexState:
    return IndexState(SectionIndex(params=params), [], [])


def _too_fragmented(index: SectionIndex, newly_dead: int) -> bool:
    dead = index.size - index.live_count + newly_dead
    return len(index.segments) >= _COMPACT_SEGMENTS or dead > _COMPACT_DEAD_SHARE * max(index.size, 1)


def _open_cache(settings: Settings, root: Path) -> tuple[IndexCache | None, list[str]]:
    folder = index_cache_dir(settings, root)
    try:
        if folder.resolve().is_relative_to(root.resolve()):
            return None, [f"state folder {folder} is inside the memory tree; index cache disabled"]
        return IndexCache(folder), []
    except (OSError, sqlite3.Error) as exc:
        log.warning("index cache unavailable at %s: %s", folder, exc)
        return None, [f"index cache unavailable at {folder} ({exc}); indexing in memory"]
