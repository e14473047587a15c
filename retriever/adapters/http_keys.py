"""The keys a running server accepts: those it started with, re-read from the keys file when it changes.

Contract: ``KeysInForce.current()`` returns the keys in force. Where ``RETRIEVER_API_KEYS`` names a keys file, the
file is looked at at most every ``every`` seconds (at once after ``request_check``, which SIGHUP calls): a new
modification time, size or inode re-reads every key setting; keys that read cleanly replace the old ones and the
log says how many there are now, while a file that cannot be used (a bad line, removed, unreadable, or holding no
key, which ``load_api_keys`` refuses: it would open the server to anyone) leaves the previous keys in force and the
log says why, once per change.  A file written less than ``SETTLE_SECONDS`` ago is read on a later look: one read
while an editor wrote it in place could hold a cut line.
A removed key had worked until a restart.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from retriever.errors import ConfigError
from retriever.service.access import ApiKeys

log = logging.getLogger(__name__)
EVERY_SECONDS = 1.0
SETTLE_SECONDS = 1.0  # a changed keys file is read once it has not been written for this long
Signature = tuple[int, int, int] | None


class KeysInForce:
    """The server's keys, kept in step with its keys file (see the module docstring)."""

    def __init__(
        self,
        keys: ApiKeys,
        path: Path | None = None,
        reload: Callable[[], ApiKeys] | None = None,
        every: float = EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._keys, self._path, self._reload, self._every, self._clock = keys, path, reload, every, clock
        self._seen = _signature(path) if path is not None else None
        self._checked = clock()

    def current(self) -> ApiKeys:
        if self._path is not None and self._reload is not None and self._clock() - self._checked >= self._every:
            self._checked = self._clock()
            self._look(self._path, self._reload)
        return self._keys

    def request_check(self) -> None:
        """Look at the file on the next request, whatever the interval (SIGHUP)."""
        self._checked = -float("inf")

    def _look(self, path: Path, reload: Callable[[], ApiKeys]) -> None:
        seen = _signature(path)
        if seen == self._seen or _settling(path):
            return
        self._seen = seen
        try:
            keys = reload()
        except ConfigError as exc:
            log.warning("keys file %s changed but cannot be used (%s); the previous keys stay in force", path, exc)
            return
        self._keys = keys
        log.warning("keys file %s re-read: %d key(s) in force", path, len(keys.entries))


def _settling(path: Path, quiet: float = SETTLE_SECONDS) -> bool:
    """Whether the file was written less than ``quiet`` seconds ago: a file read while an editor writes it in place
    may hold a cut line ("bob" as "b"); it is read once it has been still that long (a file renamed into place keeps
    the time it was written, so it too is read a second after)."""
    try:
        return time.time() - os.stat(path).st_mtime < quiet
    except OSError:
        return False


def _signature(path: Path) -> Signature:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size, found.st_ino
