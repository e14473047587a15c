"""The two locks around a memory: readers against a refresh in this process, refreshes across processes.

- ``ReadWriteLock``: many retrievals read at once; a refresh's short swap step writes alone.
- ``cross_process(folder)``: an advisory ``flock`` on ``folder/lock``, so two CLI runs sharing one
  index cache refresh it one after the other (a no-op where ``fcntl`` does not exist).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path


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


@contextlib.contextmanager
def cross_process(folder: Path | None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder/lock`` (nothing when ``folder`` is None)."""
    if folder is None:
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the atomic state file still protects readers
        yield
        return
    with open(folder / "lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
