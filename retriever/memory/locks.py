"""The two locks around a memory: readers against a refresh in this process, refreshes across processes.

- ``ReadWriteLock``: many retrievals read at once; a refresh's short swap step writes alone.
- ``cross_process(folder)``: an advisory ``flock`` on ``folder/lock``, so two CLI runs sharing one
  index cache refresh it one after the other (a no-op where ``fcntl`` does not exist).
- ``in_use(folder)``: a shared ``flock`` on ``folder/in-use`` held while a cache is open;
  ``unused(folder)`` takes it exclusively without waiting, so ``retriever cache prune`` removes only
  caches no process has open (and none can open one while it is being removed).
- ``private_folder(folder)``: create a folder and its missing parents readable by their owner only
  (a cache holds the memory's text, the store every prompt and response); folders that exist keep
  their mode.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

IN_USE = "in-use"
_OPEN_ATTEMPTS = 5


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


def private_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700, whatever the umask; a folder that exists keeps its
    mode, whoever made it (a user's shared folder is theirs to set)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:  # another process made it meanwhile: its mode is its own
            continue
        made.chmod(0o700)  # whatever the umask took away


def in_use(folder: Path) -> IO[str] | None:
    """Create ``folder`` and hold a shared lock on its ``in-use`` file until the returned handle is closed
    (None where ``fcntl`` does not exist).  A folder removed while we waited for the lock (a prune) is
    made again."""
    try:
        import fcntl
    except ImportError:  # Windows: prune cannot tell a cache in use
        private_folder(folder)
        return None
    for _ in range(_OPEN_ATTEMPTS):
        private_folder(folder)
        try:
            handle = open(folder / IN_USE, "a")  # noqa: SIM115 - held open until the cache closes
        except FileNotFoundError:
            continue  # removed between mkdir and open
        fcntl.flock(handle, fcntl.LOCK_SH)
        if _same_file(handle, folder / IN_USE):
            return handle
        handle.close()  # a prune removed the folder while we waited: start again
    raise OSError(f"cache folder {folder} keeps being removed while it is opened")


def _same_file(handle: IO[str], path: Path) -> bool:
    try:
        there = os.stat(path)
    except FileNotFoundError:
        return False
    here = os.fstat(handle.fileno())
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


@contextlib.contextmanager
def unused(folder: Path, *, look_only: bool = False) -> Iterator[bool]:
    """Yield True while holding ``folder``'s ``in-use`` and refresh locks exclusively: no process has the
    cache open or can open it meanwhile; False when one has it open or is refreshing it.
    ``look_only`` creates no lock file (a missing one is not held)."""
    try:
        import fcntl
    except ImportError:
        yield True
        return
    with contextlib.ExitStack() as stack:
        try:
            for name in (IN_USE, "lock"):
                if look_only and not (folder / name).exists():
                    continue
                handle = stack.enter_context(open(folder / name, "a"))
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            free = False
        else:
            free = True
        yield free
