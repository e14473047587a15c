"""The file rows one index-cache instance's index was built from: its committed view plus its own pending writes.

Contract: ``FileView(read)`` calls ``read()`` for the committed rows on first use (``reset(rows)``
replaces them, as a cache does when it loads its index); ``row(path)`` and ``rows()`` see the
pending writes too; ``set(path, row)`` records a write (None: the file was forgotten); ``commit()``
folds the pending writes into the view and ``rollback()`` drops them.  Readers see a pending write only once it is
published (``published_row``, ``publish()``): a refresh writes its records before it swaps in the index they
belong to, and a retrieval on the old index must read the versions that index numbers.  Rows another process writes to
the shared cache never enter the view, which is the point (see ``memory.cache``).  Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass

from retriever.text.models import Fingerprint


@dataclass(frozen=True, slots=True)
class FileRow:
    """What the cache knows of one file without unpickling its document."""

    fingerprint: Fingerprint
    skipped: str | None


class FileView:
    """Committed rows (read once, then kept) and this instance's writes since its last commit."""

    def __init__(self, read: Callable[[], dict[str, FileRow]]) -> None:
        self._read = read
        self._committed: dict[str, FileRow] | None = None
        self._pending: dict[str, FileRow | None] = {}
        self._published: dict[str, FileRow | None] = {}  # the pending writes readers see (``publish``)
        self._lock = threading.Lock()

    def reset(self, rows: dict[str, FileRow]) -> None:
        with self._lock:
            self._committed, self._pending, self._published = rows, {}, {}

    def _base(self) -> dict[str, FileRow]:
        committed = self._committed
        if committed is None:
            rows = self._read()  # outside the lock: reading takes the cache's own lock
            with self._lock:
                committed = self._committed = self._committed if self._committed is not None else rows
        return committed

    def row(self, path: str) -> FileRow | None:
        base = self._base()
        with self._lock:
            return self._pending[path] if path in self._pending else base.get(path)

    def published_row(self, path: str) -> FileRow | None:
        """``row(path)`` as readers see it: committed, or written and published."""
        base = self._base()
        with self._lock:
            return self._published[path] if path in self._published else base.get(path)

    def publish(self) -> None:
        """Show readers the pending writes (with the index they belong to swapped in)."""
        with self._lock:
            self._published = dict(self._pending)

    def rows(self) -> dict[str, FileRow]:
        base = self._base()
        with self._lock:
            out = dict(base)
            for path, row in self._pending.items():
                if row is None:
                    out.pop(path, None)
                else:
                    out[path] = row
        return out

    def set(self, path: str, row: FileRow | None) -> None:
        self._base()  # the committed rows are read before the first write, never after it
        with self._lock:
            self._pending[path] = row

    def commit(self) -> None:
        base = self._base()
        with self._lock:
            for path, row in self._pending.items():
                if row is None:
                    base.pop(path, None)
                else:
                    base[path] = row
            self._pending.clear()
            self._published = {}

    def rollback(self) -> None:
        with self._lock:
            self._pending.clear()
            self._published = {}
