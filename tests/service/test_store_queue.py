"""A stalled store never holds up a call: queued writes, reads with a deadline, a circuit breaker."""

from __future__ import annotations

import signal
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from conftest import redis_process, wait_until

from retriever.service.stores.base import RequestRecord, StoreUnavailable
from retriever.service.stores.queue import QueuedStore
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore

SCOPE = "0123456789abcdef"  # a memory's scope, as ``service.memory_scope`` makes them


def _record(number: int, session: str = "s1") -> RequestRecord:
    return RequestRecord(f"req-{number}", 1_796_000_000.0 + number, session, "retrieve_memory", "http", "ok", 1.0)


@contextmanager
def _timed(limit: float) -> Iterator[None]:
    """The block answers without waiting on the stuck worker.  Which path answered is told by the error's
    message (a read timeout, the cool-down, the worker's silence); ``limit`` is what that path takes on an idle
    machine, and the bound is ten times it and at least 2 s: it only catches a call that waited on the worker
    (which never answers while the test holds it), never a loaded CI machine (0.05 s had failed one run in six)."""
    began = time.monotonic()
    yield
    elapsed = time.monotonic() - began
    bound = max(2.0, 10 * limit)
    assert elapsed < bound, f"took {elapsed:.3f} s, over {bound} s"


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Another connection holds SQLite's write lock (BEGIN EXCLUSIVE) until the block ends."""
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.fixture
def sqlite_path(tmp_path: Path) -> Path:
    return tmp_path / "s.sqlite"


def test_a_read_sees_the_writes_queued_before_it(sqlite_path: Path) -> None:
    store = QueuedStore(SQLiteStore(sqlite_path))
    try:
        for prompt in ["one", "two", "three"]:
            assert store.add_prompt("s1", prompt) is True
        store.log(_record(1), scope=SCOPE)

        assert store.prompts("s1") == ["one", "two", "three"]
        assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-1"]
        assert store.status().healthy
    finally:
        store.close()


def test_a_stopped_redis_costs_one_read_its_timeout_then_reads_skip_it_until_it_answers(tmp_path: Path) -> None:
    with redis_process(tmp_path) as (process, url):
        store = QueuedStore(RedisStore(url, timeout=1.0), read_timeout=0.2, cooldown=0.5)
        try:
            store.add_prompt("s1", "before")
            assert store.prompts("s1") == ["before"]
            process.send_signal(signal.SIGSTOP)
            try:
                with _timed(0.5), pytest.raises(StoreUnavailable, match="did not answer within 200 ms"):
                    store.prompts("s1")
                with _timed(0.05), pytest.raises(StoreUnavailable, match=r"skipped for 0\.[0-9] s after a failure"):
                    store.prompts("s1")
                with _timed(0.05):
                    assert store.add_prompt("s1", "while stopped") is True
                assert not store.status().healthy
            finally:
                process.send_signal(signal.SIGCONT)

            assert wait_until(lambda: _answers(store), timeout=10)
            store.add_prompt("s1", "after")
            assert store.flush(5)
            assert store.prompts("s1")[-1] == "after"
            assert store.status().healthy and store.status().failures >= 1
        finally:
            store.close()


def _answers(store: QueuedStore) -> bool:
    try:
        store.prompts("s1")
    except StoreUnavailable:
        return False
    return True


def test_a_locked_sqlite_store_fills_the_queue_then_drops_writes_and_counts_them(sqlite_path: Path) -> None:
    store = QueuedStore(SQLiteStore(sqlite_path), queue_limit=3, read_timeout=0.1)
    try:
        with _locked(sqlite_path):
            assert store.log(_record(0), scope=SCOPE) is True
            # Wait until the worker has taken it (it now waits for the lock): otherwise when it does so, while
            # the rest are logged, decides which of them still find room (a race the test must not run).
            assert wait_until(lambda: store.status().pending == 0, timeout=10)
            with _timed(0.5):
                queued = [True] + [store.log(_record(number), scope=SCOPE) for number in range(1, 10)]
            # One write is in the worker (waiting for the lock), three wait in the queue, the rest are dropped.
            assert queued == [True] * 4 + [False] * 6
            assert store.status().dropped == queued.count(False)
            with _timed(0.4), pytest.raises(StoreUnavailable):
                store.prompts("s1")
        assert store.flush(10)
        assert len(store.requests(scope=SCOPE, limit=100)) == queued.count(True)
    finally:
        store.close()


def test_close_writes_everything_still_queued(sqlite_path: Path) -> None:
    store = QueuedStore(SQLiteStore(sqlite_path))
    for number in range(300):
        store.log(_record(number), scope=SCOPE)
    store.close()

    reopened = SQLiteStore(sqlite_path)
    try:
        assert len(reopened.requests(scope=SCOPE, limit=1000)) == 300
    finally:
        reopened.close()


def test_close_gives_up_after_its_timeout_while_the_store_is_stuck_counting_only_the_writes_left(
    sqlite_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = QueuedStore(SQLiteStore(sqlite_path))
    with _locked(sqlite_path):
        store.log(_record(1), scope=SCOPE)  # the worker takes it and waits for the lock
        store.log(_record(2), scope=SCOPE)
        with _timed(1.0):
            store.close(timeout=0.3)
    # Not the flush's marker nor the worker's stop, which had been counted as writes ("3 queued writes").
    assert "did not drain within 0.3 s; 1 queued writes are lost" in caplog.text


class _Held(SQLiteStore):
    """A store whose first write waits for ``first`` and every later one for ``rest``."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.first, self.rest, self.calls = threading.Event(), threading.Event(), 0

    def add_prompt(self, session_id: str, prompt: str) -> None:
        self.calls += 1
        (self.first if self.calls == 1 else self.rest).wait(10)


def test_a_flush_waiting_for_room_in_a_full_queue_keeps_to_one_timeout(sqlite_path: Path) -> None:
    inner = _Held(sqlite_path)
    store = QueuedStore(inner, queue_limit=1)
    try:
        store.add_prompt("s1", "one")  # the worker takes it and waits
        wait_until(lambda: inner.calls == 1)
        store.add_prompt("s1", "two")  # the queue is full
        threading.Timer(1.0, inner.first.set).start()  # room comes at 1 s; the second write then waits again
        began = time.monotonic()
        assert not store.flush(1.5)
        # 1.5 s in all (the bound leaves 0.8 s for a loaded machine): the wait for room had come on top (2.5 s).
        assert time.monotonic() - began < 2.3
    finally:
        inner.first.set()
        inner.rest.set()
        store.close()


class _Broken(SQLiteStore):
    def prompts(self, session_id: str) -> list[str]:
        raise RuntimeError("a bug in a store")


def test_an_unexpected_store_error_surfaces_as_store_unavailable(sqlite_path: Path) -> None:
    store = QueuedStore(_Broken(sqlite_path))
    try:
        with pytest.raises(StoreUnavailable, match="the sqlite store failed: RuntimeError: a bug in a store"):
            store.prompts("s1")
        assert store.status().last_error == "the sqlite store failed: RuntimeError: a bug in a store"
        store.log(_record(1), scope=SCOPE)  # the worker survived
        assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-1"]
    finally:
        store.close()


def test_a_read_fails_at_once_while_the_worker_is_stuck_past_the_read_timeout(sqlite_path: Path) -> None:
    store = QueuedStore(SQLiteStore(sqlite_path), read_timeout=0.1, cooldown=0)  # no cool-down: only this rule
    try:
        with _locked(sqlite_path):
            store.log(_record(1), scope=SCOPE)  # the worker waits for the lock
            with _timed(0.4), pytest.raises(StoreUnavailable, match="did not answer within 100 ms"):
                store.prompts("s1")
            with _timed(0.05), pytest.raises(StoreUnavailable, match=r"has not answered for \d+ ms"):
                store.prompts("s1")
        assert store.flush(10) and store.prompts("s1") == []
    finally:
        store.close()


class _WriteFails(SQLiteStore):
    def log(self, record: RequestRecord, *, scope: str) -> None:
        raise StoreUnavailable("the sqlite store failed: disk I/O error")


def test_a_write_the_store_fails_counts_as_dropped(sqlite_path: Path) -> None:
    store = QueuedStore(_WriteFails(sqlite_path))
    try:
        assert store.log(_record(1), scope=SCOPE) is True  # queued: the store fails it later
        assert store.log(_record(2), scope=SCOPE) is True
        assert store.flush(10)
        status = store.status()
        assert (status.healthy, status.dropped, status.pending) == (False, 2, 0)
    finally:
        store.close()
