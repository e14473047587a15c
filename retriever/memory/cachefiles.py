"""The index cache's files as ``cache.IndexCache`` reads and writes them: only its own, and whole.

Contract: every cache file read (the database and its -wal and -shm, the index state and segments,
a git history) is opened first and its descriptor checked (``locks.open_private``): a file another
uid owns, or others may write, is never read, since unpickling runs what the bytes say.  Every file
written is created 0600 whatever the umask, so it passes that check when read again.

``open_database(folder)`` opens ``records.sqlite`` with its tables (``prepare``); a file that is not
a database (or whose pages are corrupt) is moved aside once, as ``records.sqlite.corrupt``, with a
warning, and a new one started; a second failure is raised, never looped on.  ``check_index`` says
whether a loaded index's arrays fit together (a shortened segment file reads as a valid array), so
the caller rebuilds instead of failing every query.
"""

from __future__ import annotations

import contextlib
import logging
import os
import pickle
import sqlite3
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from retriever.memory import locks
from retriever.memory.index import Segment

log = logging.getLogger(__name__)

PARTS = ("indptr", "indices", "values", "counts", "fields", "vectors", "scales", "moments")  # a .npy each
DATABASE = "records.sqlite"
CORRUPT = ".corrupt"  # the suffix a database that is not one is moved aside with
_NOT_A_DATABASE = {sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT}
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def read_pickle(path: Path) -> Any:
    """Unpickle ``path`` once it passes ``locks.open_private`` (raises ``NotPrivate`` or what opening or
    unpickling raises)."""
    with os.fdopen(locks.open_private(path), "rb") as handle:
        return pickle.load(handle)


def read_kept(folder: Path, kind: str, commit: str, what: str) -> Any:
    """What ``write_kept`` kept in ``folder`` of ``kind`` ("history", "at") for ``commit``, or None: a missing file,
    or one that cannot be read (with a warning naming ``what`` it held), is worked out from git again."""
    try:
        return read_pickle(folder / f"{kind}-{commit}.pkl")
    except FileNotFoundError:
        return None
    except Exception as exc:  # noqa: BLE001 - corrupt bytes can make unpickling raise anything
        log.warning("the saved %s in %s is unreadable (%s); read from git again", what, folder, type(exc).__name__)
        return None


def write_kept(folder: Path, kind: str, commit: str, value: Any, kept: int) -> None:
    """``value`` kept in ``folder`` for ``commit``, with at most ``kept`` - 1 others of its ``kind``, the most
    recently written (written first, then the others pruned: a failed write leaves the last ones)."""
    atomic_write(folder / f"{kind}-{commit}.pkl", pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
    for old in _kept_files(folder, kind)[kept:]:
        old.unlink(missing_ok=True)


def kept_commits(folder: Path, kind: str) -> list[str]:
    """The commits ``write_kept`` keeps in ``folder`` for ``kind``, the most recently written first."""
    return [path.name[len(kind) + 1 : -len(".pkl")] for path in _kept_files(folder, kind)]


def _kept_files(folder: Path, kind: str) -> list[Path]:
    return sorted(folder.glob(f"{kind}-*.pkl"), key=_written, reverse=True)


def parsed_records(folder: Path, format_: int, wanted: dict[str, str]) -> dict[str, bytes]:
    """The cache records of ``wanted`` files (rel_path → SHA-1 of its bytes) that the working tree's index cache in
    ``folder`` holds parsed at that very version, read-only; {} where there is no such cache, it is of another
    format, or it cannot be read (the caller parses instead).  The files are checked as every cache file is."""
    path = folder / DATABASE
    try:
        _check_files(path)
        db = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    except (OSError, sqlite3.Error):
        return {}
    try:
        row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if row is None or str(row[0]) != str(format_):
            return {}
        known = db.execute("SELECT rel_path, sha1 FROM files WHERE record IS NOT NULL").fetchall()
        same = [rel for rel, sha1 in known if wanted.get(rel) == sha1]
        out: dict[str, bytes] = {}
        for start in range(0, len(same), 500):
            chunk = same[start : start + 500]
            query = f"SELECT rel_path, sha1, record FROM files WHERE rel_path IN ({','.join('?' * len(chunk))})"
            out.update({rel: bytes(record) for rel, sha1, record in db.execute(query, chunk) if wanted[rel] == sha1})
        return out
    except sqlite3.Error:
        return {}
    finally:
        db.close()


def _written(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except OSError:  # pruned meanwhile by another process
        return -1


def load_segment(base: Path, name: str) -> Segment:
    """The segment ``name`` from its ``.npy`` files, each checked as ``read_pickle`` checks (no pickles in them)."""
    parts = {}
    for part in PARTS:
        with os.fdopen(locks.open_private(base / f"{name}.{part}.npy"), "rb") as handle:
            parts[part] = np.load(handle, allow_pickle=False)
    return Segment(**parts)


def _create(path: Path) -> int:
    """A new file at ``path``, 0600 whatever the umask, for writing (one left over by a crashed run goes)."""
    path.unlink(missing_ok=True)
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)


def atomic_write(path: Path, data: bytes) -> None:
    """``data`` as ``path``, in one step: readers see the old file or the new one, never half of it."""
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    with os.fdopen(_create(tmp), "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def save_array(path: Path, array: npt.NDArray[Any]) -> None:
    """``array`` as a new ``.npy`` file, private (segment files are written once, under a fresh name)."""
    with os.fdopen(_create(path), "wb") as handle:
        np.save(handle, array, allow_pickle=False)


def save_segments(base: Path, segments: Sequence[Segment]) -> list[str]:
    """Each segment as new files under a fresh name (one a part of ``PARTS``); their names, in order. A failure (a full
    disk) removes the files this call wrote, then raises: a failed save leaves no partial files filling the disk."""
    names: list[str] = []
    try:
        for segment in segments:
            names.append(uuid.uuid4().hex[:12])
            for part in PARTS:
                save_array(base / f"{names[-1]}.{part}.npy", getattr(segment, part))
    except OSError:
        for name in names:
            for part in PARTS:
                (base / f"{name}.{part}.npy").unlink(missing_ok=True)
        raise
    return names


# -- the database ------------------------------------------------------------------------------


def prepare(db: sqlite3.Connection, format_: int) -> bool:
    """Create or check the tables; True when they were emptied (another ``format_``: the index goes too)."""
    db.execute("PRAGMA journal_mode=WAL")
    db.execute(
        "CREATE TABLE IF NOT EXISTS files (rel_path TEXT PRIMARY KEY, size INTEGER, mtime_ns INTEGER,"
        " sha1 TEXT, skipped TEXT, record BLOB)"
    )
    db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    db.execute(
        "CREATE TABLE IF NOT EXISTS superseded (rel_path TEXT, sha1 TEXT, record BLOB, at REAL,"
        " PRIMARY KEY (rel_path, sha1))"
    )
    row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
    emptied = row is None or str(row[0]) != str(format_)
    if row is not None and emptied:  # an upgrade or a rollback: "building the index for the first time" misled
        message = "the index cache was written by another version (format %s; this one reads %d); it is rebuilt"
        log.warning(message, str(row[0])[:20], format_)
    if emptied:
        db.execute("DELETE FROM files")
        db.execute("DELETE FROM superseded")
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", ("format", str(format_)))
    db.commit()
    return emptied


def open_database(folder: Path, format_: int) -> sqlite3.Connection:
    """``folder``'s database, prepared (``prepare``; the index files go when its tables were emptied); one
    that is not a database is moved aside and a new one made (see the module's contract)."""
    path = folder / DATABASE
    try:
        return _open(path, format_)
    except sqlite3.DatabaseError as exc:
        # Locked, read-only, a full disk: not corruption (an error raised outside SQLite carries no code).
        if getattr(exc, "sqlite_errorcode", 0) & 0xFF not in _NOT_A_DATABASE:
            raise
        problem = str(exc)
    aside = path.with_name(DATABASE + CORRUPT)
    os.replace(path, aside)
    for suffix in ("-wal", "-shm"):  # they belong to the bad file: a new database must not replay them
        path.with_name(DATABASE + suffix).unlink(missing_ok=True)
    log.warning(
        "index cache %s was not a usable database (%s); moved it to %s and started a new one", path, problem, aside
    )
    return _open(path, format_)  # a new file that fails too raises: no second move


def _open(path: Path, format_: int) -> sqlite3.Connection:
    """Connect to ``path`` once it, its -wal and its -shm pass ``locks.open_private``, and prepare it."""
    if not path.exists():
        os.close(_create(path))  # SQLite would make it 0644 (or 0664 under umask 002): others could write it
    checked = _check_files(path)
    # A database that reads but cannot be written (made read-only or immutable) would fail at the first
    # refresh's write: refused here instead. Asked of the file system, not by writing: a write would wait
    # on another process's.
    if not os.access(path, os.W_OK):
        raise PermissionError(f"{path} cannot be written")
    db = sqlite3.connect(path, check_same_thread=False)
    with contextlib.ExitStack() as failing:
        failing.callback(db.close)  # whatever stops the checks below leaves no connection behind
        emptied = prepare(db, format_)
        now = os.stat(path)
        if (now.st_dev, now.st_ino) != (checked.st_dev, checked.st_ino):  # swapped between the check and SQLite
            raise locks.NotPrivate(f"{path} was replaced while it was opened")
        if emptied:
            drop_index(path.parent)
        failing.pop_all()
    return db


STALE = "damaged"  # the content hash ``flag_stale`` gives a row: no SHA-1 is
_BUSY_MS = 5_000  # SQLite's wait for another process's write (the connection's default), put back after a flag


def flag_stale(db: sqlite3.Connection, rel_path: str, sha1: str) -> None:
    """Best effort: give the committed row of ``rel_path`` (while it holds ``sha1``) a fingerprint no file has and a
    hash no content has, so any process's next refresh reads the file again; nothing when another process holds
    the database (no question waits on it).  The caller holds the connection's lock, with no transaction open."""
    try:
        db.execute("PRAGMA busy_timeout = 0")
        db.execute("UPDATE files SET size = -1, sha1 = ? WHERE rel_path = ? AND sha1 = ?", (STALE, rel_path, sha1))
        db.commit()
    except sqlite3.Error:
        db.rollback()
    finally:
        db.execute(f"PRAGMA busy_timeout = {_BUSY_MS}")


def drop_index(folder: Path) -> None:
    """Remove the index files in ``folder`` (its state file first: without it the segments are never read)."""
    (folder / "index" / "state.pkl").unlink(missing_ok=True)
    for path in (folder / "index").glob("*.npy"):
        path.unlink(missing_ok=True)


def _check_files(path: Path) -> os.stat_result:
    """``fstat`` of the database at ``path`` after checking it and any -wal and -shm beside it."""
    for suffix in ("-wal", "-shm"):
        try:
            os.close(locks.open_private(path.with_name(path.name + suffix)))
        except FileNotFoundError:
            continue
    descriptor = locks.open_private(path)
    try:
        return os.fstat(descriptor)
    finally:
        os.close(descriptor)


# -- a loaded index, checked -------------------------------------------------------------------


def check_index(saved: dict[str, Any], segments: Sequence[Segment], groups: int) -> None:
    """Raise ``ValueError`` naming the first array that does not fit the others: the section table, the
    liveness and lengths against the section count, each segment against its ``indptr``."""
    sections = len(saved["alive"])
    for name in ("section_files", "section_ordinals", "lengths"):
        if len(saved[name]) != sections:
            raise ValueError(f"the index's {name} has {len(saved[name])} entries for {sections} sections")
    terms = len(saved["df"])
    widths = set()
    for name, segment in zip(saved["segments"], segments, strict=True):
        _check_segment(name, segment, sections, groups, terms)
        if len(segment.vectors):
            widths.add(segment.vectors.shape[1])
    rows = [len(segment.vectors) for segment in segments]
    if len(widths) > 1 or sum(rows) > sections or (all(rows) and sum(rows) != sections):
        raise ValueError(
            f"the index's meaning vectors ({sum(rows)} rows, widths {sorted(widths)}) do not fit "
            f"its {sections} sections"
        )


def _check_segment(name: str, segment: Segment, sections: int, groups: int, terms: int) -> None:
    """Raise ``ValueError`` when ``segment``'s arrays do not fit its ``indptr`` or point past ``sections``."""
    indptr = segment.indptr
    if indptr.ndim != 1 or indptr.dtype.kind not in "iu" or not 1 <= len(indptr) <= terms + 1:
        raise ValueError(f"segment {name}: indptr of shape {indptr.shape} is no table of {terms} terms")
    if indptr[0] != 0 or bool(np.any(np.diff(indptr) < 0)):
        raise ValueError(f"segment {name}: indptr does not start at 0 and grow")
    postings = int(indptr[-1])
    wanted = {"indices": (postings,), "values": (postings, groups), "counts": (postings,), "fields": (postings,)}
    for part, shape in wanted.items():
        if (found := getattr(segment, part).shape) != shape:
            raise ValueError(f"segment {name}: {part} has shape {found}, its indptr says {shape}")
    indices = segment.indices
    if indices.dtype.kind not in "iu" or (postings and not (int(indices.min()) >= 0 and int(indices.max()) < sections)):
        raise ValueError(f"segment {name}: indices point outside the {sections} sections")
    if segment.vectors.ndim != 2 or segment.scales.shape != (len(segment.vectors),):
        raise ValueError(f"segment {name}: {segment.vectors.shape} vectors with {segment.scales.shape} scales")
