"""The SQLite store: sessions and the request log in one file under the state folder."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path

from retriever.store import SESSION_PROMPTS, SESSION_TTL, Clock, RequestRecord, StoreUnavailable

_TRIM_EVERY = 50
_SCHEMA = """
CREATE TABLE IF NOT EXISTS prompts (session_id TEXT, at REAL, prompt TEXT);
CREATE INDEX IF NOT EXISTS prompts_by_session ON prompts (session_id, at);
CREATE TABLE IF NOT EXISTS requests (request_id TEXT PRIMARY KEY, received_at REAL, session_id TEXT, record TEXT);
CREATE INDEX IF NOT EXISTS requests_by_time ON requests (received_at);
CREATE INDEX IF NOT EXISTS requests_by_session ON requests (session_id, received_at);
"""


class SQLiteStore:
    """Thread-safe (one connection behind a lock); expiry is applied on read and write."""

    kind = "sqlite"

    def __init__(self, path: Path, log_limit: int = 10_000, clock: Clock = time.time) -> None:
        self.path, self.log_limit, self.clock = path, log_limit, clock
        self._lock = threading.Lock()
        self._logged = 0
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, check_same_thread=False, timeout=10)
            # WAL with NORMAL sync: a commit per request costs microseconds, not an fsync.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreUnavailable(f"cannot open the SQLite store at {path}: {exc}; check RETRIEVER_STATE_DIR") from exc

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
        )

    def prompts(self, session_id: str) -> list[str]:
        rows = self._run(("SELECT at, prompt FROM prompts WHERE session_id = ? ORDER BY at, rowid", (session_id,)))
        if not rows or float(rows[-1][0]) < self.clock() - SESSION_TTL:  # type: ignore[arg-type]
            return []
        return [str(prompt) for _, prompt in rows]

    def log(self, record: RequestRecord) -> None:
        insert = (
            "INSERT OR REPLACE INTO requests (request_id, received_at, session_id, record) VALUES (?, ?, ?, ?)",
            (record.request_id, record.received_at, record.session_id, json.dumps(record.to_dict())),
        )
        trim = (
            "DELETE FROM requests WHERE request_id IN (SELECT request_id FROM requests "
            "ORDER BY received_at DESC LIMIT -1 OFFSET ?)",
            (self.log_limit,),
        )
        self._logged += 1
        # The trim scans the index, so retention is enforced every few inserts (always for small caps).
        if self._logged % _TRIM_EVERY == 0 or self.log_limit < _TRIM_EVERY:
            self._run(insert, trim)
        else:
            self._run(insert)

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None
    ) -> list[RequestRecord]:
        sql = "SELECT record FROM requests WHERE received_at >= ?"
        args: list[object] = [since or 0.0]
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        rows = self._run((sql + " ORDER BY received_at DESC LIMIT ?", (*args, limit)))
        return [RequestRecord.from_dict(json.loads(str(row[0]))) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
