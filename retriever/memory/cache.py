"""The index-cache store: parsed documents in SQLite, index segments as ``.npy`` files.

Contract: ``IndexCache(folder)`` owns one folder per memory root (under the state folder,
never inside the tree).  It keeps, per file, the fingerprint and either the parsed
``Document`` or the reason the file was skipped; and the index's segments (immutable files,
written once) plus its small mutable parts (vocabulary, liveness, document frequencies,
section table) in a manifest.  A cache that cannot be read is treated as absent: the caller
rebuilds, so a corrupt or old-format cache never stops retrieval.

Shared by processes (a server and a CLI run, or two replicas on one machine): each instance sees
the file rows *its* index was built from (``file_rows``: the rows read with the index, plus its own
writes), not rows another process wrote since, so it notices files that process re-indexed and
re-indexes them too; ``documents`` returns the version of a document this instance indexed, kept in
``superseded`` for ``SUPERSEDED_SECONDS`` after another process replaced or removed it.  A record that
does not decode is left out, logged once with its path, and listed in ``damaged()`` until it is stored
again and committed, so the next refresh reads its file anew (its fingerprint alone would keep the damaged
record).  An open cache holds a shared lock on ``in-use`` (``locks.in_use``) so ``retriever cache prune`` leaves it
alone; ``mark_used`` records the root's path and the time in ``root.json`` for ``cache list``.

Pickle is used for speed, so only the user's own bytes are read: a cache folder another uid owns or
others may write is refused when opened (``NotPrivate``, an ``OSError``: the caller indexes in memory
and says why), and every file is checked again on its opened descriptor (``cachefiles``).  Opening
waits at most ``LOCK_WAIT_SECONDS`` for another process's refresh, then raises ``TimeoutError``
(also an ``OSError``), so a stopped process never hangs a query.  An index whose arrays do not fit
together loads as absent (rebuilt).
"""

from __future__ import annotations

import contextlib
import json
import logging
import pickle
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from retriever.memory import cachefiles, locks
from retriever.memory.cachefiles import atomic_write
from retriever.memory.fileview import FileRow, FileView
from retriever.memory.index import Params, SectionIndex
from retriever.text.models import Document, Fingerprint

log = logging.getLogger(__name__)
FORMAT = 62  # bump when Document, the analyzer, the parser, the index layout, the embeddings or the cache tables change
ROOT_FILE = "root.json"  # which root a cache folder belongs to, and when it was last opened
SUPERSEDED_SECONDS = 3600.0  # how long a replaced document stays readable for processes not yet refreshed
_TIDY_EVERY = 60.0
# How long opening a cache waits for another process's refresh before this run indexes in memory (a
# first build of a large tree can take longer; the other process then still fills the cache).
LOCK_WAIT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class DocInfo:
    """What the tree outline needs of a document, kept beside the index."""

    title: str
    doc_type: str | None
    aliases: tuple[str, ...]
    sections: int
    # The supersession names its front matter writes, (key, name): the whole memory's cycles without every document.
    supersession: tuple[tuple[str, str], ...] = ()


@dataclass
class IndexState:
    """An index plus the section table that maps section ids back to files."""

    index: SectionIndex
    section_files: list[str]  # section id → rel_path
    section_ordinals: list[int]  # section id → ordinal inside its document
    catalog: dict[str, DocInfo] = field(default_factory=dict)  # rel_path → outline info
    acronyms: dict[str, set[str]] = field(default_factory=dict)  # acronym → its expansions, lower-case
    segment_names: list[str] = field(default_factory=list)  # segments already saved, in order
    _numbers: dict[str, int] = field(default_factory=dict, repr=False)  # rel_path → document number
    _documents: npt.NDArray[np.int32] = field(default_factory=lambda: np.zeros(0, dtype=np.int32), repr=False)

    def section_documents(self) -> npt.NDArray[np.int32]:
        """Section id → document number (one number per rel_path), for document-level scores.

        Section ids only grow (a changed file's sections are tombstoned and added anew), so the
        map is extended, never rebuilt; a path indexed again keeps its number.
        """
        known = self._documents
        if len(known) < len(self.section_files):
            fresh = [self._numbers.setdefault(p, len(self._numbers)) for p in self.section_files[len(known) :]]
            self._documents = known = np.concatenate([known, np.asarray(fresh, dtype=np.int32)])
        return known[: len(self.section_files)]


class IndexCache:
    """One memory root's cache folder."""

    def __init__(self, folder: Path, *, lock_wait: float | None = None) -> None:
        """Open (or create) the cache in ``folder``; raises ``OSError`` or ``sqlite3.Error`` when it cannot
        be used (``NotPrivate``: not the user's own; ``TimeoutError``: another process's refresh held it
        past ``lock_wait`` seconds, ``LOCK_WAIT_SECONDS`` unless given), leaving nothing open."""
        self.folder = folder
        # One connection shared by a server's threads: every statement goes through ``_sql``'s lock.
        self._lock = threading.Lock()
        self._files = FileView(self._read_rows)  # the rows this instance's index was built from, and its writes
        self._tidied = 0.0
        self._damaged: set[str] = set()  # paths whose record did not decode, until stored again and committed
        self._mended: set[str] = set()  # paths stored or forgotten since the last commit: no longer damaged then
        self._in_use: IO[str] | None = None
        with contextlib.ExitStack() as failing:
            failing.callback(self._release_lock)  # whatever stops the opening below leaves nothing held
            try:
                # Creates the folder, refusing one not the user's own; `cache prune` skips it while held.
                self._in_use = locks.in_use(folder)
                # Under the refresh lock: a format change empties the tables and drops the index, which a
                # refresh in another process may be writing.
                with locks.cross_process(folder, wait=LOCK_WAIT_SECONDS if lock_wait is None else lock_wait):
                    self._db = cachefiles.open_database(folder, FORMAT)
            except locks.NotPrivate as exc:
                raise locks.NotPrivate(
                    f"{exc}: a cache another user could have written is never read; remove {folder} or set "
                    "RETRIEVER_STATE_DIR to a folder of your own"
                ) from exc
            failing.pop_all()

    def _sql(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            return self._db.execute(sql, args).fetchall()

    def close(self) -> None:
        with self._lock:
            self._db.close()
        self._release_lock()

    def _release_lock(self) -> None:
        """Release the shared ``in-use`` lock (``close`` does, after the database)."""
        if self._in_use is not None:
            self._in_use.close()  # releases the shared lock
            self._in_use = None

    def mark_used(self, root: Path) -> None:
        """Record in ``root.json`` which root this cache belongs to and that it is in use now."""
        data = {"root": str(root), "last_used": time.time(), "format": FORMAT}
        with contextlib.suppress(OSError):  # bookkeeping for `cache list`; never a reason to stop retrieval
            # surrogateescape: a root whose name is not UTF-8 holds lone surrogates, which plain encode() refuses
            text = json.dumps(data, ensure_ascii=False)
            atomic_write(self.folder / ROOT_FILE, text.encode("utf-8", "surrogateescape"))

    # -- files ---------------------------------------------------------------------------

    def file_rows(self) -> dict[str, FileRow]:
        """The rows this instance's index was built from, with its own writes since (see the module's
        contract): rows another process wrote later are not here, so its changes are found again."""
        return self._files.rows()

    def _read_rows(self) -> dict[str, FileRow]:
        rows = self._sql("SELECT rel_path, size, mtime_ns, sha1, skipped FROM files")
        return {r[0]: FileRow(Fingerprint(r[1], r[2], r[3]), r[4]) for r in rows}

    def publish(self) -> None:
        """Let reads (``documents``) see the file records written since the last commit: called as the index they
        belong to is swapped in, so a retrieval on the index before reads the versions it numbers."""
        self._files.publish()

    def known_sha1(self, rel_path: str) -> str | None:
        """The content hash of the version this instance knows (None: it knows no document there)."""
        row = self._files.published_row(rel_path)
        return row.fingerprint.sha1 if row is not None and not row.skipped else None

    def documents(self, rel_paths: Iterable[str]) -> dict[str, Document]:
        """Unpickled documents for the given paths, in the version this instance indexed (missing or
        unreadable ones left out)."""
        wanted = {path: sha1 for path in rel_paths if (sha1 := self.known_sha1(path)) is not None}
        blobs = self._current(wanted)
        blobs.update(self._superseded({p: s for p, s in wanted.items() if p not in blobs}))
        out: dict[str, Document] = {}
        for rel_path, blob in blobs.items():
            try:
                out[rel_path] = decode_document(blob)
            except Exception as exc:  # noqa: BLE001 - whatever damaged bytes raise: the file is read again instead
                self._mark_damaged(rel_path, exc)
        return out

    def damaged(self) -> frozenset[str]:
        """Paths whose record did not decode since it was last stored and committed (a refresh reads their files
        again)."""
        with self._lock:
            return frozenset(self._damaged)

    def _mark_damaged(self, rel_path: str, exc: Exception) -> None:
        with self._lock:
            first = rel_path not in self._damaged
            self._damaged.add(rel_path)
        if first:  # once a path: the record is read again each time the document is asked for
            name = type(exc).__name__
            log.warning("the index cache's record of %r is damaged (%s); the file is read again", rel_path[:300], name)
            self._flag_stale(rel_path)

    def _flag_stale(self, rel_path: str) -> None:
        """Best effort (``cachefiles.flag_stale``): another process's next refresh (a CLI run's, at load) reads the
        file again, as this one's does.  Not while a refresh of this process writes: its commit holds its own."""
        sha1 = self.known_sha1(rel_path)
        with self._lock:
            if sha1 is not None and not self._db.in_transaction:
                cachefiles.flag_stale(self._db, rel_path, sha1)

    def _current(self, wanted: dict[str, str]) -> dict[str, bytes]:
        """Records whose version is the one wanted (path → sha1)."""
        paths, out = list(wanted), {}
        for start in range(0, len(paths), 500):
            chunk = paths[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT rel_path, sha1, record FROM files WHERE record IS NOT NULL AND rel_path IN ({marks})"
            out.update({path: blob for path, sha1, blob in self._sql(query, chunk) if sha1 == wanted[path]})
        return out

    def _superseded(self, wanted: dict[str, str]) -> dict[str, bytes]:
        """Versions another process replaced or removed since this instance indexed them."""
        out = {}
        for rel_path, sha1 in wanted.items():
            rows = self._sql("SELECT record FROM superseded WHERE rel_path = ? AND sha1 = ?", (rel_path, sha1))
            if rows:
                out[rel_path] = rows[0][0]
        return out

    def put(self, rel_path: str, fingerprint: Fingerprint, doc: Document | None, skipped: str | None) -> None:
        self.put_encoded(rel_path, fingerprint, encode_document(doc) if doc is not None else None, skipped)

    def put_encoded(self, rel_path: str, fingerprint: Fingerprint, blob: bytes | None, skipped: str | None) -> None:
        """``put`` with the document already encoded (``encode_document``, maybe in a worker process)."""
        self._supersede(rel_path, fingerprint.sha1)
        self._sql(
            "INSERT OR REPLACE INTO files (rel_path, size, mtime_ns, sha1, skipped, record) VALUES (?,?,?,?,?,?)",
            (rel_path, fingerprint.size, fingerprint.mtime_ns, fingerprint.sha1, skipped, blob),
        )
        self._files.set(rel_path, FileRow(fingerprint, skipped))
        with self._lock:
            self._mended.add(rel_path)

    def _supersede(self, rel_path: str, sha1: str | None) -> None:
        """Keep the version about to be replaced (or removed) for processes whose index still has it."""
        self._sql(
            "INSERT OR REPLACE INTO superseded (rel_path, sha1, record, at) SELECT rel_path, sha1, record, ?"
            " FROM files WHERE rel_path = ? AND record IS NOT NULL AND sha1 IS NOT ?",
            (time.time(), rel_path, sha1),
        )

    def touch(self, rel_path: str, fingerprint: Fingerprint) -> None:
        """Record a new size/mtime for a file whose bytes did not change."""
        self._sql(
            "UPDATE files SET size = ?, mtime_ns = ? WHERE rel_path = ?",
            (fingerprint.size, fingerprint.mtime_ns, rel_path),
        )
        row = self._files.row(rel_path)
        if row is not None:
            kept = Fingerprint(fingerprint.size, fingerprint.mtime_ns, row.fingerprint.sha1)
            self._files.set(rel_path, FileRow(kept, row.skipped))

    def forget(self, rel_paths: Iterable[str]) -> None:
        for path in rel_paths:
            self._supersede(path, None)
            self._sql("DELETE FROM files WHERE rel_path = ?", (path,))
            self._files.set(path, None)
            with self._lock:
                self._mended.add(path)  # a file gone is no longer read again, once that lands

    def commit(self) -> None:
        with self._lock:
            self._db.commit()
            self._damaged -= self._mended
            self._mended.clear()
        self._files.commit()
        self._tidy()

    def rollback(self) -> None:
        """Drop the file records written since the last commit (a refresh that failed half-way)."""
        with self._lock:
            self._db.rollback()
            self._mended.clear()  # a damaged record stored again and rolled back is as damaged as before
        self._files.rollback()

    def _tidy(self) -> None:
        """Forget superseded versions no process should still need (at most once a minute)."""
        now = time.time()
        if now - self._tidied < _TIDY_EVERY:
            return
        self._tidied = now
        with self._lock:
            self._db.execute("DELETE FROM superseded WHERE at < ?", (now - SUPERSEDED_SECONDS,))
            self._db.commit()

    # -- index ---------------------------------------------------------------------------

    def load_index(self, params: Params) -> IndexState | None:
        """The saved index, or None when absent, unreadable or built with other parameters.

        Read with the file rows it was saved with, under the cross-process lock every refresh holds,
        so this instance's view of the files matches the index it loaded.
        """
        with locks.cross_process(self.folder):
            self._files.reset(self._read_rows())
            return self._read_index(params)

    def _read_index(self, params: Params) -> IndexState | None:
        base = self.folder / "index"
        if not (base / "state.pkl").exists():  # none saved yet: built anew, as expected
            return None
        try:
            saved = cachefiles.read_pickle(base / "state.pkl")
            if saved["format"] != FORMAT or saved["params"] != _params_json(params):
                return None
            segments = [cachefiles.load_segment(base, name) for name in saved["segments"]]
            # A shortened segment file still reads as an array: checked here, or every query would fail on it.
            cachefiles.check_index(saved, segments, len(params.group_weights))
        except Exception as exc:  # noqa: BLE001 - corrupt bytes can make unpickling raise anything; rebuild instead
            log.warning("the saved index at %s is unreadable (%s); building it anew", base, type(exc).__name__)
            return None
        index = SectionIndex(
            params=params,
            vocab=saved["vocab"],
            segments=segments,
            alive=saved["alive"],
            df=saved["df"],
            avglen=tuple(saved["avglen"]),
            lengths=saved["lengths"],
        )
        return IndexState(
            index,
            saved["section_files"],
            saved["section_ordinals"],
            saved["catalog"],
            saved["acronyms"],
            list(saved["segments"]),
        )

    def save_index(self, state: IndexState) -> None:
        """Write the index: new segments as files of their own, the rest in one atomic state file."""
        base = self.folder / "index"
        base.mkdir(mode=0o700, exist_ok=True)
        kept = list(state.segment_names)
        names = [*kept, *cachefiles.save_segments(base, state.index.segments[len(kept) :])]
        saved = {
            "format": FORMAT,
            "params": _params_json(state.index.params),
            "avglen": list(state.index.avglen),
            "segments": names,
            "vocab": state.index.vocab,
            "alive": state.index.alive,
            "df": state.index.df,
            "lengths": state.index.lengths,
            "section_files": state.section_files,
            "section_ordinals": state.section_ordinals,
            "catalog": state.catalog,
            "acronyms": state.acronyms,
        }
        atomic_write(base / "state.pkl", pickle.dumps(saved, protocol=pickle.HIGHEST_PROTOCOL))
        state.segment_names = names
        keep = set(names)
        for path in base.glob("*.npy"):
            if path.name.split(".")[0] not in keep:
                path.unlink(missing_ok=True)

    # -- git history, by commit ---------------------------------------------------------------------

    def load_history(self, head: str) -> Any:
        """The git history saved for commit ``head``, or None (``cachefiles.read_kept``)."""
        return cachefiles.read_kept(self.folder, "history", head, "git history")

    def save_history(self, head: str, history: Any) -> None:
        """Keep one history: the one for the current commit."""
        cachefiles.write_kept(self.folder, "history", head, history, kept=1)


def encode_document(doc: Document) -> bytes:
    """A document as the cache stores it."""
    return pickle.dumps(doc, protocol=pickle.HIGHEST_PROTOCOL)


def decode_document(blob: bytes) -> Document:
    """The document ``encode_document`` stored (raises whatever corrupt bytes make unpickling raise)."""
    doc = pickle.loads(blob)
    if not isinstance(doc, Document):
        raise TypeError(f"a cache record holds {type(doc).__name__}, not a Document")
    return doc


def _params_json(params: Params) -> dict[str, Any]:
    fields = ("weights", "b", "groups", "group_weights")
    return {"k1": params.k1, **{name: list(getattr(params, name)) for name in fields}}
