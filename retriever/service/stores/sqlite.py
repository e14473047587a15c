"""The SQLite store: sessions and the request log in one file under the state folder.

Retention: a session is forgotten ``SESSION_TTL`` after its last prompt, and at most
``session_limit`` sessions are kept (the least recently used go first); the request log keeps
the newest ``log_limit`` records of each scope (memory), none older than ``REQUEST_TTL``.  Rows
are filed under their scope (a column); rows of a store written before scopes have none, so no
read lists them, and the TTL purge removes them.  Both are enforced every few
writes (``purge`` does it at once), so the file stays bounded however many clients come and go.
The store holds every prompt and response, so only its owner may read it: folders the store creates
are 0700, the file and SQLite's -wal and -shm beside it 0600 (an older store is made so when opened);
folders that already exist keep their mode when they are the user's own and others cannot write them.
A store whose folder, file, -wal or -shm another uid owns, whose folder others may write, or whose
files others could still read after the chmod, is refused (``StoreUnavailable`` naming it and the
fix): someone else could read the prompts, or have planted the file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sqlite3
import stat
import threading
import time
from pathlib import Path

from retriever.memory.locks import NotPrivate, check_private, private_folder
from retriever.service.stores.base import (
    REQUEST_TTL,
    SESSION_PROMPTS,
    SESSION_TTL,
    Clock,
    RequestRecord,
    StoreUnavailable,
    encode_record,
    read_records,
)
from retriever.text.regular import open_nonblocking
from retriever.text.safe import clean_text

log = logging.getLogger(__name__)

_TRIM_EVERY = 50
SESSION_LIMIT = 10_000
_SCHEMA = """
CREATE TABLE IF NOT EXISTS prompts (session_id TEXT, at REAL, prompt TEXT);
CREATE INDEX IF NOT EXISTS prompts_by_session ON prompts (session_id, at);
CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, last_at REAL);
CREATE INDEX IF NOT EXISTS sessions_by_time ON sessions (last_at);
CREATE TABLE IF NOT EXISTS requests (
    request_id TEXT PRIMARY KEY, received_at REAL, session_id TEXT, record TEXT, scope TEXT
);
CREATE INDEX IF NOT EXISTS requests_by_time ON requests (received_at);
"""
# After ``_SCHEMA`` and the ``scope`` column's migration: a memory's log, and a session's requests in it.
_SCOPE_INDEXES = """
DROP INDEX IF EXISTS requests_by_session;
CREATE INDEX IF NOT EXISTS requests_by_scope ON requests (scope, received_at);
CREATE INDEX IF NOT EXISTS requests_by_scope_session ON requests (scope, session_id, received_at);
"""
# Sessions past their TTL, and those beyond the newest ``session_limit``.
_DOOMED = (
    "SELECT session_id FROM sessions WHERE last_at < ? UNION "
    "SELECT session_id FROM (SELECT session_id FROM sessions ORDER BY last_at DESC LIMIT -1 OFFSET ?)"
)


def _private_file(path: Path) -> None:
    """Create the store's file 0600 before SQLite opens it (SQLite would make it 0644 under umask 022)."""
    with contextlib.suppress(FileExistsError):
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def _make_private(path: Path) -> None:
    """Make the store and its -wal and -shm files 0600 where others could read them; raise ``NotPrivate``
    when one belongs to another uid or others can still read or write it (a chmod that did not take).
    Checked on the opened descriptor, so a file swapped in after the check is not the one judged."""
    if not hasattr(os, "getuid"):  # Windows: no uids or mode bits to check
        return
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            descriptor = open_nonblocking(file, follow=False)  # a symlink in the store's place is refused
        except FileNotFoundError:
            continue
        try:
            info = os.fstat(descriptor)
            if info.st_uid == os.getuid() and info.st_mode & 0o077:  # an older store's 0644: ours to tighten
                with contextlib.suppress(OSError):  # one that did not take is refused just below
                    os.fchmod(descriptor, 0o600)
                info = os.fstat(descriptor)
            check_private(info, file, unreadable=True)
        finally:
            os.close(descriptor)


def _check_siblings(path: Path) -> None:
    """Raise ``NotPrivate`` unless the -wal and -shm SQLite made are the user's own and 0600 (SQLite gives
    them the store's mode, which ``_make_private`` set).  Checked by path, never opened: closing any
    descriptor of a file drops every POSIX lock this process holds on it, SQLite's included, and another
    process closing the store then took itself for the last, checkpointed and deleted the -wal and -shm
    under this one (its later writes were lost, then "database disk image is malformed").  The folder is
    0700 and the user's own, so nobody else can swap the files between this check and SQLite's use."""
    for file in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        try:
            info = os.lstat(file)
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(info.st_mode):
            raise NotPrivate(f"{file} is not a regular file")
        check_private(info, file, unreadable=True)


def _connect(path: Path) -> sqlite3.Connection:
    """The store's connection, in WAL mode, once its folder and files pass the checks (see the module)."""
    private_folder(path.parent)
    _private_file(path)
    _make_private(path)  # before SQLite reads a file someone else put there (and before it holds any lock)
    db = sqlite3.connect(path, check_same_thread=False, timeout=10)
    with contextlib.ExitStack() as failing:
        failing.callback(db.close)  # a store refused below leaves no connection behind
        # WAL with NORMAL sync: a commit per request costs microseconds, not an fsync.
        db.execute("PRAGMA journal_mode=WAL")
        _check_siblings(path)
        failing.pop_all()
    return db


def unreadable(path: Path) -> str | None:
    """Why the store at ``path`` (an existing file) cannot be read, or None; opened read-only, so checking
    changes nothing (``retriever status``)."""
    try:
        with contextlib.closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1)) as db:
            db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except (OSError, ValueError, sqlite3.Error) as exc:
        return f"the SQLite store at {path} cannot be read ({exc}); move it aside and a new one is made"
    return None


class SQLiteStore:
    """Thread-safe (one connection behind a lock); expiry is applied on read and write."""

    kind = "sqlite"

    def __init__(
        self, path: Path, log_limit: int = 10_000, clock: Clock = time.time, *, session_limit: int = SESSION_LIMIT
    ) -> None:
        self.path, self.log_limit, self.clock, self.session_limit = path, log_limit, clock, session_limit
        self._lock = threading.Lock()
        self._logged = self._prompted = 0
        try:
            self._db = _connect(path)
        except NotPrivate as exc:
            raise StoreUnavailable(
                f"refusing the SQLite store at {path}: {exc}; it holds every prompt and response, so it must be "
                "yours and readable by you only: remove it (or fix its owner and mode), or set RETRIEVER_STATE_DIR "
                "to a folder of your own"
            ) from exc
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the SQLite store at {path}: {exc}; check RETRIEVER_STATE_DIR") from exc
        try:
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
            _add_scope_column(self._db)
            self._db.executescript(_SCOPE_INDEXES)
        except sqlite3.Error as exc:
            self._db.close()
            raise StoreUnavailable(f"cannot open the SQLite store at {path}: {exc}; check RETRIEVER_STATE_DIR") from exc
        self._tidy()

    def _tidy(self) -> None:
        """Index sessions of a store written before the sessions table, and purge; a busy store waits."""
        try:
            if not self._run(("SELECT 1 FROM sessions LIMIT 1", ())):
                backfill = "INSERT OR IGNORE INTO sessions SELECT session_id, max(at) FROM prompts GROUP BY session_id"
                self._run((backfill, ()))
            self.purge()
        except StoreUnavailable as exc:  # another process holds the lock: the next purge will do it
            log.warning("%s", exc.message)

    def _run(self, *statements: tuple[str, tuple[object, ...]]) -> list[tuple[object, ...]]:
        """Run statements in one transaction; the last one's rows come back."""
        try:
            with self._lock, self._db:
                rows: list[tuple[object, ...]] = []
                for sql, args in statements:
                    rows = self._db.execute(sql, args).fetchall()
                return rows
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite store at {self.path} failed: {exc}") from exc

    def add_prompt(self, session_id: str, prompt: str) -> None:
        now = self.clock()
        self._run(
            # An expired session starts afresh, as a Redis key past its TTL would.
            ("DELETE FROM prompts WHERE session_id = ? AND at < ?", (session_id, now - SESSION_TTL)),
            ("INSERT INTO prompts (session_id, at, prompt) VALUES (?, ?, ?)", (session_id, now, prompt)),
            (  # keep the newest five
                "DELETE FROM prompts WHERE session_id = ? AND rowid NOT IN "
                "(SELECT rowid FROM prompts WHERE session_id = ? ORDER BY at DESC, rowid DESC LIMIT ?)",
                (session_id, session_id, SESSION_PROMPTS),
            ),
            (
                "INSERT INTO sessions (session_id, last_at) VALUES (?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET last_at = excluded.last_at",
                (session_id, now),
            ),
        )
        self._prompted += 1
        if self._prompted % _TRIM_EVERY == 0 or self.session_limit < _TRIM_EVERY:
            self.purge()

    def purge(self) -> None:
        """Forget expired sessions, sessions beyond ``session_limit`` and requests past ``REQUEST_TTL``."""
        now = self.clock()
        doomed = (now - SESSION_TTL, self.session_limit)
        self._run(
            (f"DELETE FROM prompts WHERE session_id IN ({_DOOMED})", doomed),
            (f"DELETE FROM sessions WHERE session_id IN ({_DOOMED})", doomed),
            ("DELETE FROM requests WHERE received_at < ?", (now - REQUEST_TTL,)),
        )

    def prompts(self, session_id: str) -> list[str]:
        rows = self._run(("SELECT at, prompt FROM prompts WHERE session_id = ? ORDER BY at, rowid", (session_id,)))
        if not rows or float(rows[-1][0]) < self.clock() - SESSION_TTL:  # type: ignore[arg-type]
            return []
        return [str(prompt) for _, prompt in rows]

    def sessions_count(self) -> int:
        """How many sessions the store holds (what ``session_limit`` caps)."""
        (count,) = self._run(("SELECT count(*) FROM sessions", ()))[0]
        return count if isinstance(count, int) else 0

    def log(self, record: RequestRecord, *, scope: str) -> None:
        """File ``record`` under ``scope``; past ``log_limit`` rows of that scope the oldest go (0: none is kept, so
        none is written: an operator's way to keep no prompts and answers)."""
        if not self.log_limit:
            return
        insert = (
            "INSERT OR REPLACE INTO requests (request_id, received_at, session_id, record, scope) "
            "VALUES (?, ?, ?, ?, ?)",
            (record.request_id, record.received_at, record.session_id, encode_record(record), scope),
        )
        trim = (
            "DELETE FROM requests WHERE request_id IN (SELECT request_id FROM requests WHERE scope = ? "
            "ORDER BY received_at DESC LIMIT -1 OFFSET ?) OR received_at < ?",
            (scope, self.log_limit, self.clock() - REQUEST_TTL),
        )
        self._logged += 1
        # The trim scans the index, so retention is enforced every few inserts (always for small caps).
        if self._logged % _TRIM_EVERY == 0 or self.log_limit < _TRIM_EVERY:
            self._run(insert, trim)
        else:
            self._run(insert)

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None, *, scope: str
    ) -> list[RequestRecord]:
        """The newest records filed under ``scope`` (rows without one are never listed)."""
        sql = "SELECT record FROM requests WHERE scope = ? AND received_at >= ?"
        args: list[object] = [scope, since or 0.0]
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(clean_text(session_id))  # a lone surrogate cannot be bound, nor match
        try:
            with self._lock:  # rows are decoded one at a time: one read holds at most READ_BYTES of them
                cursor = self._db.execute(sql + " ORDER BY received_at DESC LIMIT ?", (*args, limit))
                return read_records(str(row[0]) for row in cursor)
        except sqlite3.Error as exc:
            raise StoreUnavailable(f"SQLite store at {self.path} failed: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _add_scope_column(db: sqlite3.Connection) -> None:
    """Give a requests table made before scopes its ``scope`` column (its rows keep NULL: no scope)."""
    columns = {str(row[1]) for row in db.execute("PRAGMA table_info(requests)")}
    if "scope" not in columns:
        try:
            db.execute("ALTER TABLE requests ADD COLUMN scope TEXT")
        except sqlite3.OperationalError as exc:  # another process opening the same old store added it first
            if "duplicate column" not in str(exc):
                raise
