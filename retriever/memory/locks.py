"""The two locks around a memory: readers against a refresh in this process, refreshes across processes.

- ``ReadWriteLock``: many retrievals read at once; a refresh's short swap step writes alone; a retrieval gives up
  its hold around an LLM call (``released``), so that a refresh need not wait for the model.
- ``cross_process(folder)``: an advisory ``flock`` on ``folder/lock``, so two CLI runs sharing one
  index cache refresh it one after the other (a no-op where ``fcntl`` does not exist).
- ``in_use(folder)``: a shared ``flock`` on ``folder/in-use`` held while a cache is open;
  ``unused(folder)`` takes it exclusively without waiting, so ``retriever cache prune`` removes only
  caches no process has open (and none can open one while it is being removed).
- ``private_folder(folder)``: create a folder and its missing parents readable by their owner only
  (a cache holds the memory's text, the store every prompt and response); folders that exist keep
  their mode, but ``folder`` itself must be private (``check_private``).
- ``check_private(info, path)`` / ``open_private(path)``: refuse (``NotPrivate``) a folder or file another
  uid owns or others may write: a cache unpickles what it reads, the store holds prompts, so bytes
  someone else could have put there are never read or written.  Checked on the opened descriptor
  (``fstat``), never by a separate ``stat`` that a swap could outrun.  Skipped where ``os.getuid``
  does not exist (Windows).

``cross_process`` says when it has to wait (one warning line naming the folder) and, given ``wait``,
gives up after that many seconds with ``TimeoutError`` (an ``OSError``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from retriever.text.regular import open_folder, open_nonblocking

log = logging.getLogger(__name__)

IN_USE = "in-use"
_OPEN_ATTEMPTS = 5
_POLL_SECONDS = 0.05  # how often a bounded wait tries a held lock again (flock has no timeout of its own)


class NotPrivate(PermissionError):
    """A folder or file another user owns, or others may write (or, where asked, read)."""


class ReadWriteLock:
    """Many readers or one writer; a waiting writer holds back new readers so it is not starved.  A reader may
    give up its hold for a while (``released``), as around a slow call that reads nothing the writer changes."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0
        self._held = threading.local()  # how many holds of ``reading`` the calling thread has

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        self._take()
        try:
            yield
        finally:
            self._give()

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """The calling thread's one hold of ``reading`` given up while the block runs, then taken back (waiting
        behind a writer, as a new reader waits).  A thread holding none, or more than one (nested ``reading``:
        giving one up would leave the writer waiting anyway), keeps what it holds."""
        if getattr(self._held, "count", 0) != 1:
            yield
            return
        self._give()
        try:
            yield
        finally:
            self._take()

    def _take(self) -> None:
        with self._cond:
            while self._writing or self._waiting:
                self._cond.wait()
            self._readers += 1
        self._held.count = getattr(self._held, "count", 0) + 1

    def _give(self) -> None:
        if getattr(self._held, "count", 0) <= 0:  # a hold never taken back (interrupted while waiting): none to give
            return
        self._held.count -= 1
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
def cross_process(folder: Path | None, *, wait: float | None = None) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder/lock`` (nothing when ``folder`` is None).

    Tried without blocking first: when another process holds it, one warning says this one waits for
    it; with ``wait`` (seconds) it gives up after that long, raising ``TimeoutError`` naming the folder.
    """
    if folder is None:
        yield
        return
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks; the atomic state file still protects readers
        yield
        return
    with _lock_file(folder / "lock") as handle:
        _take(handle, folder, wait)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _take(handle: IO[str], folder: Path, wait: float | None) -> None:
    """``flock`` ``handle`` exclusively, saying so when it must wait; bounded by ``wait`` seconds if given."""
    import fcntl

    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return
    except BlockingIOError:  # held: a refresh in another process (or a stopped one) has it
        log.warning("waiting for another retriever process refreshing %s", folder)
    if wait is None:
        fcntl.flock(handle, fcntl.LOCK_EX)
        return
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"another retriever process has held {folder / 'lock'} for {wait:g} s (a long refresh, or a "
                    "stopped process); let it finish or stop it"
                ) from None
            time.sleep(_POLL_SECONDS)


def private_folder(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700, whatever the umask; a folder that exists keeps its
    mode, whoever made it (a user's shared folder is theirs to set).  ``folder`` itself must then be
    ours and not writable by others: ``NotPrivate`` otherwise (``check_private``)."""
    leaf, missing = folder, []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=0o700)
        except FileExistsError:  # another process made it meanwhile: its mode is its own
            continue
        made.chmod(0o700)  # whatever the umask took away
    if hasattr(os, "getuid"):  # Windows cannot open a folder as a file, and has no uids to check
        os.close(open_private(leaf, folder=True))


def check_private(info: os.stat_result, path: Path, *, unreadable: bool = False) -> None:
    """Raise ``NotPrivate`` when ``info`` (``path``'s ``fstat``) shows another uid owns it, or group or
    others may write it (with ``unreadable``: read or write it).  Nothing where ``os.getuid`` does not
    exist (Windows: no uids or mode bits to check)."""
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return
    uid = getuid()
    if info.st_uid != uid:
        raise NotPrivate(f"{path} belongs to uid {info.st_uid}, not to you (uid {uid})")
    loose = info.st_mode & (0o077 if unreadable else 0o022)
    if loose:
        what = "readable or writable" if unreadable else "writable"
        raise NotPrivate(f"{path} is {what} by others (mode {stat.S_IMODE(info.st_mode):o})")


def open_private(path: Path, *, folder: bool = False, unreadable: bool = False) -> int:
    """A read-only descriptor of ``path`` (a final symlink is not followed), once its ``fstat`` passes
    ``check_private``; the caller closes it.  Raises ``NotPrivate`` (the descriptor closed) or the
    ``OSError`` of opening (``FileNotFoundError`` when absent)."""
    # A file non-blocking: a FIFO planted in its place must not hang the open.
    descriptor = open_folder(path) if folder else open_nonblocking(path, follow=False)
    try:
        check_private(os.fstat(descriptor), path, unreadable=unreadable)
    except NotPrivate:
        os.close(descriptor)
        raise
    return descriptor


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
            handle = _lock_file(folder / IN_USE)  # held open until the cache closes
        except FileNotFoundError:
            continue  # removed between mkdir and open
        fcntl.flock(handle, fcntl.LOCK_SH)
        if _same_file(handle, folder / IN_USE):
            return handle
        handle.close()  # a prune removed the folder while we waited: start again
    raise OSError(f"cache folder {folder} keeps being removed while it is opened")


def _lock_file(path: Path) -> IO[str]:
    """A lock file opened for appending (it stays empty), created readable by its owner only, as every cache file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o600)
    with contextlib.suppress(OSError):  # one an older version left 0644, or another user's: kept as it is
        os.fchmod(fd, 0o600)
    return os.fdopen(fd, "a")


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
                handle = stack.enter_context(_lock_file(folder / name))
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            free = False
        else:
            free = True
        yield free
