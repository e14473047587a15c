"""The file-system seam: which files belong to the memory tree, and their decoded text.

Contract:
- ``scan(root, max_files)`` (from ``walk``) lists the tree's markdown files as ``Entry``s and the files
  left out as ``Skipped``, each with a reason; see ``retriever.text.walk``.
- ``read_text(root, rel_path, max_bytes, vetted)`` returns (text, sha1) or raises ``Unreadable`` with a
  reason: over the size limit, not a regular file, binary, not UTF-8, or not the file that was vetted
  (``vetted``: the walk's ``Entry``; without one the path is vetted as the walk would, just before).  It
  opens only that file: never a symlink swapped in since, nor anything outside the root.  It never blocks.
Nothing here parses markdown; nothing else in the core opens memory files.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

from retriever.text.regular import NotRegular, TooLarge, open_nonblocking, read_opened
from retriever.text.safe import preview
from retriever.text.walk import (
    DEFAULT_MAX_FILES,
    ENTRIES_PER_FILE,
    MAX_DEPTH,
    Entry,
    changed_ns,
    is_memory_file,
    printable,
    scan,
)

__all__ = [
    "DEFAULT_MAX_FILES",
    "ENTRIES_PER_FILE",
    "MAX_DEPTH",
    "Entry",
    "Unreadable",
    "check_size",
    "decode",
    "is_memory_file",
    "is_too_large",
    "modified_at",
    "printable",
    "read_text",
    "scan",
    "too_large",
    "vet",
]


class Unreadable(ValueError):
    """A file that cannot be read as text; the message says why."""


_CHANGED = (
    "changed since the tree was listed (replaced, or swapped for a symlink); it is read again at the next refresh"
)


def read_text(root: Path, rel_path: str, max_bytes: int, vetted: Entry | None = None) -> tuple[str, str]:
    """The file's text (UTF-8, BOM removed) and the SHA-1 of its bytes.

    Reads only the file ``vetted`` names (the walk's entry; without one the path is vetted now, as the
    walk would): a plain file is opened without following a symlink, an accepted symlink through its
    target, which must still lie inside the root, and either way the opened file must be the one vetted
    (same device and inode).  Otherwise a file swapped for a symlink between the walk and the read
    would be read through it: another user's file, or one outside the root, cited as this one.
    Never blocks: the file is opened non-blocking and refused unless it is a regular file (a FIFO
    swapped in after the scan would otherwise hang the read), and at most ``max_bytes`` + 1 bytes are read.
    """
    fresh = vetted is None or vetted.identity is None  # no walk behind it: vetted here, and checked again below
    if vetted is None or vetted.identity is None:  # ``fresh``, spelt out so the type checker narrows ``vetted``
        vetted = vet(root, rel_path)
    identity = vetted.identity

    def same_file(stat: os.stat_result) -> None:
        if (stat.st_dev, stat.st_ino) != identity:
            raise Unreadable(_CHANGED)

    try:
        data = read_opened(_open_vetted(root, vetted), max_bytes, same_file)
    except NotRegular:
        raise Unreadable("not a regular file; remove it or give it a name without .md") from None
    except TooLarge as exc:
        raise Unreadable(too_large(exc.size, max_bytes)) from None
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror}") from exc
    if fresh and not Path(os.path.realpath(root / rel_path)).is_relative_to(root.resolve()):
        raise Unreadable(_CHANGED)  # a folder swapped for a symlink while ``vet`` looked: vetted and read outside
    return decode(data)


def _open_vetted(root: Path, vetted: Entry) -> int:
    """A descriptor of the path the walk vetted, opened without following a symlink at its last step."""
    path = root / vetted.rel_path
    if vetted.link:  # the target, as it resolves now, and only while it is still inside the root
        path = Path(os.path.realpath(path))
        if not path.is_relative_to(root.resolve()):
            raise Unreadable(_CHANGED)
    try:
        return open_nonblocking(path, follow=False)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink where the walk saw a plain file
            raise Unreadable(_CHANGED) from exc
        raise Unreadable(f"cannot be read: {exc.strerror}") from exc


def vet(root: Path, rel_path: str) -> Entry:
    """The entry the walk would make of ``rel_path`` now; ``Unreadable`` where it would skip the file.

    For readers that hold a path but no entry (``retriever check`` reads the files an index lists): the
    link must lead inside the root, and the path must resolve inside it (no folder swapped for a symlink).
    """
    path = root / rel_path
    base = root.resolve()
    try:
        link = path.is_symlink()
        if not Path(os.path.realpath(path)).is_relative_to(base):
            raise Unreadable("symlink leads outside the memory root; copy the file in instead")
        stat = os.stat(path)
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror}") from exc
    return Entry(rel_path, stat.st_size, changed_ns(stat), (stat.st_dev, stat.st_ino), link)


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Unreadable(too_large(size, max_bytes))


_TOO_LARGE = "larger than the "


def too_large(size: int, max_bytes: int) -> str:
    """The skip reason of a file over the size limit (``is_too_large`` recognises it)."""
    return f"{_TOO_LARGE}{max_bytes:,}-byte limit ({size:,} bytes); split it or raise max_file_bytes"


def is_too_large(reason: str) -> bool:
    """Whether a recorded skip reason is ``too_large``'s: it depends on the limit, not on the file alone."""
    return reason.startswith(_TOO_LARGE)


# UTF-32's marks first: UTF-32 LE's opens with UTF-16 LE's.
_WIDE_MARKS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def decode(data: bytes) -> tuple[str, str]:
    """Markdown bytes as text (UTF-8, BOM removed) and their SHA-1; ``Unreadable`` for binary or other encodings."""
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    wide = next((name for mark, name in _WIDE_MARKS if data.startswith(mark)), None)
    if wide is not None:  # its NUL bytes are text: not "binary"
        raise Unreadable(f"{wide} text (it opens with that byte-order mark), not UTF-8; re-save it as UTF-8")
    if b"\x00" in data[:8192]:
        raise Unreadable("binary content (NUL bytes), not markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        where = f"line {line}, offset {exc.start}"
        raise Unreadable(f"not UTF-8 (an invalid byte at {where}); re-save it as UTF-8") from exc
    return text.removeprefix("\ufeff"), digest


def modified_at(root: Path, rel_path: str) -> float | None:
    """A file's modification time (Unix seconds), or None when it cannot be read."""
    try:
        return (root / rel_path).stat().st_mtime
    except OSError:
        return None


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder (a link to one counts); False, not ``OSError``, for a path the system cannot
    look up at all (over its name length, say: ``Path.is_dir`` lets ENAMETOOLONG through)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def not_a_folder(path: Path) -> str | None:
    """Why ``path`` is no folder, naming it absolute ("nothing is at /srv/memory", "/srv/memory is a file"); None
    for a folder."""
    if is_folder(path):
        return None
    where = preview(os.path.abspath(path), 200)
    if os.path.lexists(path):
        return f"{where} is a file" if is_file(path) else f"{where} is not a folder one can read"
    return f"nothing is at {where}"


def is_file(path: Path) -> bool:
    """Whether ``path`` is a regular file (a link to one counts); False, not ``OSError``, where it cannot be read."""
    try:
        return path.is_file()
    except OSError:
        return False


def resolved(path: Path) -> Path:
    """``path`` with its links followed; made absolute as written where they cannot be (a loop, a name too long)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # RuntimeError: a symlink loop, on Python 3.11
        return Path(os.path.abspath(path))


def expanded(path: Path) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; as written where there is no such home (``~nosuchuser``)."""
    try:
        return path.expanduser()
    except RuntimeError:  # "Could not determine home directory."
        return path
