"""Opening what the retriever did not write without blocking or following a planted link, and reading a
regular file within a size bound: the one way the core reads such a file (memory files, ``.gitignore``
files, the API keys file, the cache's and the store's own files).

Contract:
- ``read_regular(path, max_bytes)`` opens ``path`` non-blocking (a FIFO would hang the caller, a terminal
  become its controlling one), refuses anything but a regular file (a device such as ``/dev/zero`` would
  fill the memory) and reads at most ``max_bytes + 1`` bytes, so an over-long file is told apart from one
  exactly at the bound.  ``dir_fd`` opens ``path`` relative to a folder's descriptor; ``follow=False``
  refuses a symlink at the path's last step (``ELOOP``, or ``EMLINK`` on FreeBSD); ``check`` sees the open
  file's ``stat`` before a byte is read (to refuse a file swapped since it was vetted); ``whole=False``
  returns the first ``max_bytes`` bytes of a longer file instead of refusing it.
- ``read_opened(fd, max_bytes, check)`` does the same with a descriptor the caller opened, and closes it.
- ``open_nonblocking(path, follow=False)`` and ``open_folder(path)`` are the opens themselves, for readers
  that check the descriptor their own way (``memory.locks``, the store, the walk).
- Errors: ``OSError`` (cannot be opened or read), ``NotRegular`` and ``TooLarge`` (both ``ValueError``);
  each caller words its own message, since each names a different next step.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from stat import S_ISREG

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)


class NotRegular(ValueError):
    """The path names a FIFO, a socket, a device or a folder."""


class TooLarge(ValueError):
    """The file holds more than the bound; ``size`` is what its ``stat`` or the read showed (a lower bound
    when the file grew after the ``stat``)."""

    def __init__(self, size: int, max_bytes: int) -> None:
        super().__init__(f"{size:,} bytes, over the {max_bytes:,}-byte limit")
        self.size = size
        self.max_bytes = max_bytes


def open_nonblocking(path: str | Path, *, dir_fd: int | None = None, follow: bool = True) -> int:
    """A read-only descriptor of ``path`` that never blocks on open; ``OSError`` when it cannot be opened."""
    return os.open(path, _OPEN_FLAGS | (0 if follow else _NO_FOLLOW), dir_fd=dir_fd)


def open_folder(path: str | Path) -> int:
    """A read-only descriptor of the folder ``path``, never through a symlink at its last step (``ENOTDIR``
    on Linux, ``ELOOP`` on macOS, ``EMLINK`` on FreeBSD for a link or a file)."""
    return os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NO_FOLLOW)


def read_opened(
    fd: int, max_bytes: int, check: Callable[[os.stat_result], None] | None = None, *, whole: bool = True
) -> bytes:
    """At most ``max_bytes`` bytes of the regular file open at ``fd``, which is closed on return.

    ``check`` runs on the descriptor's ``stat`` before the type and size are judged (so a file swapped
    since it was vetted is refused as such, whatever it is now); ``whole=False`` cuts instead of refusing."""
    try:
        stat = os.fstat(fd)
        if check is not None:
            check(stat)
        if not S_ISREG(stat.st_mode):  # judged before any file object: one over a folder cannot even be made
            raise NotRegular("not a regular file")
        if whole and stat.st_size > max_bytes:
            raise TooLarge(stat.st_size, max_bytes)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(max_bytes + 1 if whole else max_bytes)
    finally:
        os.close(fd)
    if len(data) > max_bytes:  # it grew after the stat
        raise TooLarge(len(data), max_bytes)
    return data


def read_regular(
    path: str | Path,
    max_bytes: int,
    *,
    dir_fd: int | None = None,
    follow: bool = True,
    check: Callable[[os.stat_result], None] | None = None,
    whole: bool = True,
) -> bytes:
    """At most ``max_bytes`` bytes of the regular file at ``path``; see the module's contract."""
    return read_opened(open_nonblocking(path, dir_fd=dir_fd, follow=follow), max_bytes, check, whole=whole)
