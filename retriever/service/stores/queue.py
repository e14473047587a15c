"""A store that never holds up a call: writes through a bounded background queue, reads with a
deadline and a circuit breaker.

The HTTP adapter runs ``call_tool`` on its event loop, so one store call that hangs (Redis under
SIGSTOP, an exclusive SQLite lock held by another process) would stall every client.  Contract:

- ``add_prompt`` and ``log`` return at once (True when queued); one worker thread applies queued calls in
  order. When ``queue_limit`` calls are already waiting, a write is dropped, counted and False comes back; a
  write the store fails is counted as dropped too (it is not retried). A queued record is encoded when the
  worker stores it: callers must not mutate what they logged.
- ``prompts`` waits at most ``read_timeout`` seconds.  It runs on the same worker, after every
  write queued before it, so a session reads its own prompts.  A failure or a timeout opens the
  breaker: for ``cooldown`` seconds ``prompts`` raises ``StoreUnavailable`` at once, without
  touching the store (``StoreSkipped``); any store call that succeeds closes it again.  A read
  also fails at once when the worker has been stuck in one store call for over ``read_timeout``
  (a stalled store costs one wait, not one per cool-down).
- ``requests`` (the request log, which someone asked to see) waits at most ``log_read_timeout``
  seconds and ignores the breaker.
- Every failure surfaces as ``StoreUnavailable``; ``status()`` says whether the store is failing,
  how many calls wait and how many writes were dropped.
- ``flush(timeout)`` waits for queued calls; ``close(timeout)`` flushes, then closes the store
  unless the worker is still stuck in it (a daemon thread, it cannot keep the process alive).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import partial
from typing import Any

from retriever.service.stores.base import RequestRecord, Store, StoreUnavailable

log = logging.getLogger(__name__)

READ_TIMEOUT = 0.25  # seconds a call waits for session history
LOG_READ_TIMEOUT = 5.0  # seconds a request-log read waits
QUEUE_LIMIT = 1000  # queued calls; a log record holds a full response (tens of kB), so this bounds memory too
COOLDOWN = 5.0  # seconds reads skip a store that failed
CLOSE_TIMEOUT = 5.0


class StoreSkipped(StoreUnavailable):
    """The breaker is open: the store was not asked (callers need not log this again)."""


@dataclass(frozen=True, slots=True)
class StoreStatus:
    """What diagnostics say about the store: a failing store is a warning, not an outage."""

    kind: str
    healthy: bool  # the last store call succeeded
    pending: int  # calls waiting in the queue
    dropped: int  # writes dropped because the queue was full
    failures: int  # failed or timed-out store calls since start
    last_error: str | None


@dataclass(frozen=True, slots=True)
class _Task:
    run: Callable[[], Any]
    future: Future[Any] | None = None  # reads wait on it; writes do not
    calls_store: bool = True  # False for flush's marker, whose success says nothing about the store


def _left(end: float) -> float:
    """Seconds from now until ``end`` (``time.monotonic()``), never below 0."""
    return max(0.0, end - time.monotonic())


class QueuedStore:
    """Wraps any ``Store``; meets the same protocol (see the module's contract)."""

    def __init__(
        self,
        store: Store,
        *,
        read_timeout: float = READ_TIMEOUT,
        log_read_timeout: float = LOG_READ_TIMEOUT,
        queue_limit: int = QUEUE_LIMIT,
        cooldown: float = COOLDOWN,
    ) -> None:
        self.inner, self.kind = store, store.kind
        self.read_timeout, self.log_read_timeout, self.cooldown = read_timeout, log_read_timeout, cooldown
        self._tasks: queue.Queue[_Task | None] = queue.Queue(maxsize=queue_limit)
        self._state = threading.Lock()
        self._failed_at: float | None = None
        self._last_error: str | None = None
        self._dropped = self._failures = 0
        self._busy_since: float | None = None  # when the worker's current store call began
        self._worker = threading.Thread(target=self._work, name=f"{store.kind}-store", daemon=True)
        self._worker.start()

    # -- the Store protocol ----------------------------------------------------------------------

    def add_prompt(self, session_id: str, prompt: str) -> bool:
        return self._write(partial(self.inner.add_prompt, session_id, prompt))

    def log(self, record: RequestRecord, *, scope: str) -> bool:
        return self._write(partial(self.inner.log, record, scope=scope))

    def prompts(self, session_id: str) -> list[str]:
        self._check_breaker()
        result: list[str] = self._read(partial(self.inner.prompts, session_id), self.read_timeout, trip=True)
        return result

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None, *, scope: str
    ) -> list[RequestRecord]:
        run = partial(self.inner.requests, limit, session_id, since, scope=scope)
        result: list[RequestRecord] = self._read(run, self.log_read_timeout, trip=False)
        return result

    def close(self, timeout: float = CLOSE_TIMEOUT) -> None:
        """Flush, stop the worker and close the store, within ``timeout`` seconds in all."""
        end = time.monotonic() + timeout
        drained = self.flush(timeout)
        with contextlib.suppress(queue.Full):  # the worker is stuck: a daemon thread, it dies with the process
            self._tasks.put(None, timeout=_left(end))
        self._worker.join(_left(end))
        if drained and not self._worker.is_alive():
            self.inner.close()
        else:
            lost = self._writes()
            log.warning("the %s store did not drain within %.1f s; %d queued writes are lost", self.kind, timeout, lost)

    # -- beyond the protocol -----------------------------------------------------------------------

    def flush(self, timeout: float = CLOSE_TIMEOUT) -> bool:
        """Wait until every call queued so far has run; False when that takes more than ``timeout`` seconds (the
        wait for room in a full queue counts: one deadline for both)."""
        end = time.monotonic() + timeout
        done = threading.Event()
        try:
            self._tasks.put(_Task(done.set, calls_store=False), timeout=timeout)
        except queue.Full:
            return False
        return done.wait(_left(end))

    def _writes(self) -> int:
        """The writes still queued: not a read (it has a caller waiting), a flush's marker, nor the worker's stop."""
        with self._tasks.mutex:
            return sum(1 for task in self._tasks.queue if task is not None and task.calls_store and task.future is None)

    def status(self) -> StoreStatus:
        with self._state:
            return StoreStatus(
                self.kind, self._failed_at is None, self._tasks.qsize(), self._dropped, self._failures, self._last_error
            )

    # -- inside ------------------------------------------------------------------------------------

    def _write(self, run: Callable[[], Any]) -> bool:
        try:
            self._tasks.put_nowait(_Task(run))
        except queue.Full:
            with self._state:
                self._dropped += 1
                dropped = self._dropped
            if dropped == 1 or dropped % 100 == 0:  # a stalled store drops many; the log says so once in a while
                log.warning("the %s store's write queue is full; %d writes dropped so far", self.kind, dropped)
            return False
        return True

    def _read(self, run: Callable[[], Any], timeout: float, *, trip: bool) -> Any:
        future: Future[Any] = Future()
        began = time.monotonic()
        try:
            self._tasks.put(_Task(run, future), timeout=timeout)
            return future.result(max(0.0, timeout - (time.monotonic() - began)))
        except (queue.Full, FutureTimeout):
            future.cancel()  # still queued: the worker will skip it
            message = f"the {self.kind} store did not answer within {timeout * 1000:.0f} ms"
            if trip:
                self._trip(message)
            raise StoreUnavailable(message) from None

    def _check_breaker(self) -> None:
        with self._state:
            failed_at, error = self._failed_at, self._last_error
        now = time.monotonic()
        if failed_at is not None and (age := now - failed_at) < self.cooldown:
            raise StoreSkipped(f"skipped for {self.cooldown - age:.1f} s after a failure: {error}")
        busy_since = self._busy_since  # one read of an attribute the worker sets: no lock needed
        if busy_since is not None and (busy := now - busy_since) > self.read_timeout:
            message = f"the {self.kind} store has not answered for {busy * 1000:.0f} ms"
            self._trip(message)  # no read would get through before its deadline: do not wait for one
            raise StoreUnavailable(message)

    def _trip(self, message: str) -> None:
        with self._state:
            first = self._failed_at is None
            self._failed_at, self._last_error = time.monotonic(), message
            self._failures += 1
        if first:
            log.warning("the %s store is failing; calls go on without it: %s", self.kind, message)

    def _recover(self) -> None:
        if self._failed_at is None:  # the common case, without taking the lock
            return
        with self._state:
            self._failed_at, dropped = None, self._dropped
        log.warning("the %s store answers again; %d writes dropped so far", self.kind, dropped)

    def _work(self) -> None:
        while (task := self._next()) is not None:
            if task.future is not None and not task.future.set_running_or_notify_cancel():
                continue  # its caller stopped waiting
            self._busy_since = time.monotonic() if task.calls_store else None
            try:
                result = task.run()
            except StoreUnavailable as exc:
                self._fail(task, exc)
                continue
            except Exception as exc:  # top-level handler of the worker thread: it must never die
                log.exception("the %s store raised %s", self.kind, type(exc).__name__)
                self._fail(task, StoreUnavailable(f"the {self.kind} store failed: {type(exc).__name__}: {exc}"[:500]))
                continue
            if task.calls_store:
                self._recover()
            if task.future is not None:
                task.future.set_result(result)

    def _next(self) -> _Task | None:
        self._busy_since = None  # idle: waiting for work, not for the store
        return self._tasks.get()

    def _fail(self, task: _Task, error: StoreUnavailable) -> None:
        if task.future is not None:
            task.future.set_exception(error)
        elif task.calls_store:  # a write: lost (the warning had said "not logged yet … 0 dropped" while Redis was down)
            with self._state:
                self._dropped += 1
        self._trip(error.message)
