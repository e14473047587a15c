"""The file-system seam: which files belong to the memory tree, and their decoded text.

Contract:
- ``scan(root, max_files)`` lists the tree's markdown files (posix paths relative to ``root``) with
  their ``os.stat`` results, ignoring hidden files and folders, editor noise and ``.gitignore``d
  paths.  Symlinks that lead outside the root or loop, FIFOs, sockets and devices, names that are not
  UTF-8 and folders deeper than ``MAX_DEPTH`` come back as ``Skipped`` with a reason; a tree
  larger than ``max_files`` raises ``ConfigError``.
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
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISFIFO, S_ISREG, S_ISSOCK
from typing import TYPE_CHECKING, Any

from retriever.errors import ConfigError
from retriever.text.models import Skipped

if TYPE_CHECKING:
    import pathspec

_NOISE_SUFFIXES = ("~", ".swp", ".swo", ".tmp", ".bak", ".orig")
_MARKDOWN = (".md", ".markdown")
MAX_DEPTH = 64  # folder levels below the root that are read; deeper ones are skipped with a reason
DEFAULT_MAX_FILES = 100_000
ENTRIES_PER_FILE = 20  # a scan also stops after max_files × this many entries of any kind

_Spec = tuple[str, "pathspec.PathSpec[Any]"]  # a .gitignore and the folder it lives in


class Unreadable(ValueError):
    """A file that cannot be read as text; the message says why."""


@dataclass(frozen=True, slots=True)
class Entry:
    """A markdown file found in the tree.

    ``identity`` is the (st_dev, st_ino) of the file the walk vetted (a symlink's target, for a link it
    accepted) and ``link`` says whether it was reached through a symlink: ``read_text`` opens that file
    and no other.  Both are left out of comparisons: they say which file to read, not what it holds.
    """

    rel_path: str
    size: int
    mtime_ns: int
    identity: tuple[int, int] | None = field(default=None, compare=False)
    link: bool = field(default=False, compare=False)


def is_memory_file(rel_path: str) -> bool:
    """A markdown file outside hidden folders and not an editor's temp file (for trees not read from disk)."""
    parts = rel_path.split("/")
    return parts[-1].lower().endswith(_MARKDOWN) and not any(_is_noise(part) for part in parts)


def _is_noise(name: str) -> bool:
    return name.startswith((".", "#", "~$")) or name.endswith(_NOISE_SUFFIXES)


def _gitignore(directory: Path) -> pathspec.PathSpec[Any] | None:
    path = directory / ".gitignore"
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    import pathspec  # only trees with a .gitignore need it (a warm `retriever query` starts faster without)

    return pathspec.GitIgnoreSpec.from_lines(lines)


def _ignored(rel: str, is_dir: bool, specs: list[_Spec]) -> bool:
    for base, spec in specs:
        local = rel[len(base) + 1 :] if base else rel
        if spec.match_file(local + "/" if is_dir else local):
            return True
    return False


def scan(root: Path, max_files: int = DEFAULT_MAX_FILES) -> tuple[list[Entry], list[Skipped]]:
    """Markdown files under ``root`` in sorted order, and the files left out with a reason.

    Iterative (a tree of any depth cannot exhaust the stack): folders more than ``MAX_DEPTH``
    levels down are skipped with a reason.  Raises ``ConfigError`` naming the root and the
    setting when the tree holds more than ``max_files`` markdown files, or more than
    ``ENTRIES_PER_FILE`` times as many entries in all (``--root /`` stops early, not after an hour).
    """
    walk = _Walk(root.resolve(), max_files)
    pending = [(walk.root, "", list[_Spec]())]
    while pending:
        directory, rel_dir, specs = pending.pop()
        pending.extend(reversed(walk.folder(directory, rel_dir, specs)))
    walk.entries.sort(key=lambda e: e.rel_path)
    return walk.entries, walk.skipped


@dataclass
class _Walk:
    """The state of one scan: what was found, what was skipped, and how much was looked at."""

    root: Path
    max_files: int
    entries: list[Entry] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    looked_at: int = 0

    def folder(self, directory: Path, rel_dir: str, specs: list[_Spec]) -> list[tuple[Path, str, list[_Spec]]]:
        """List one folder: record its markdown files, return its sub-folders still to list."""
        spec = _gitignore(directory)
        if spec is not None:
            specs = [*specs, (rel_dir, spec)]
        try:
            with os.scandir(directory) as listing:
                children = sorted(listing, key=lambda d: d.name)
        except OSError as exc:
            self.skipped.append(Skipped(rel_dir or ".", f"folder cannot be listed: {exc.strerror}"))
            return []
        self._count(len(children))
        depth = rel_dir.count("/") + 1 if rel_dir else 0
        folders = []
        for child in children:
            if _is_noise(child.name):
                continue
            rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
            if _is_folder(child):
                if not _ignored(rel, True, specs) and self._enter(rel, child.name, depth + 1):
                    folders.append((Path(child.path), rel, specs))
            elif child.name.lower().endswith(_MARKDOWN) and not _ignored(rel, False, specs):
                self._file(child, rel)
        return folders

    def _enter(self, rel: str, name: str, depth: int) -> bool:
        problem = _bad_name(name, "folder") or (
            f"folder nested deeper than {MAX_DEPTH} levels; not read (move its files nearer the root)"
            if depth > MAX_DEPTH
            else None
        )
        if problem is not None:
            self.skipped.append(Skipped(printable(rel), problem))
        return problem is None

    def _file(self, child: os.DirEntry[str], rel: str) -> None:
        problem = _bad_name(child.name, "file")
        if problem is not None:
            self.skipped.append(Skipped(printable(rel), problem))
            return
        entry = _entry(self.root, child, rel, self.skipped)
        if entry is not None:
            self.entries.append(entry)
            if len(self.entries) > self.max_files:
                raise self._too_many(f"more than {self.max_files:,} markdown files")

    def _count(self, listed: int) -> None:
        self.looked_at += listed
        if self.looked_at > self.max_files * ENTRIES_PER_FILE:
            raise self._too_many(f"more than {self.max_files * ENTRIES_PER_FILE:,} files and folders")

    def _too_many(self, what: str) -> ConfigError:
        return ConfigError(
            f"memory root {str(self.root)!r} holds {what} (the max_files setting, RETRIEVER_MAX_FILES, is "
            f"{self.max_files:,}); pass --root the memory folder itself, or raise RETRIEVER_MAX_FILES"
        )


def _is_folder(child: os.DirEntry[str]) -> bool:
    try:
        return child.is_dir(follow_symlinks=False)
    except OSError:  # vanished while listing: neither a folder nor a file any more
        return False


def _bad_name(name: str, kind: str) -> str | None:
    """Why a name cannot be used (bytes that are not UTF-8 cannot be stored, shown or cited), or None."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return f"{kind} name is not valid UTF-8; rename it"
    return None


def printable(rel_path: str) -> str:
    """A path safe to store and print: bytes that are not UTF-8 shown as ``\\xff`` escapes."""
    return os.fsencode(rel_path).decode("utf-8", "backslashreplace")


def _entry(root: Path, child: os.DirEntry[str], rel: str, skipped: list[Skipped]) -> Entry | None:
    try:
        if child.is_symlink() and not Path(os.path.realpath(child.path)).is_relative_to(root):
            skipped.append(Skipped(rel, "symlink leads outside the memory root; copy the file in instead"))
            return None
        stat = os.stat(child.path)  # follows a symlink; a loop raises ELOOP here, never RecursionError
    except OSError as exc:
        skipped.append(Skipped(rel, _stat_problem(exc, child)))
        return None
    if not S_ISREG(stat.st_mode):
        skipped.append(Skipped(rel, _not_regular(stat.st_mode, child)))
        return None
    return Entry(rel, stat.st_size, stat.st_mtime_ns, (stat.st_dev, stat.st_ino), child.is_symlink())


def _stat_problem(exc: OSError, child: os.DirEntry[str]) -> str:
    if exc.errno == errno.ELOOP:
        return "symlink loop (the links lead to each other); point it at a real file"
    if exc.errno == errno.ENOENT and child.is_symlink():
        return "symlink does not lead to a file"
    return f"cannot be read: {exc.strerror}"


def _not_regular(mode: int, child: os.DirEntry[str]) -> str:
    if child.is_symlink():
        return "symlink does not lead to a file"
    kind = "a FIFO" if S_ISFIFO(mode) else "a socket" if S_ISSOCK(mode) else "a device or other special file"
    return f"not a regular file ({kind}); remove it or give it a name without .md"


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
    fd = _open_vetted(root, vetted)
    with os.fdopen(fd, "rb") as handle:
        try:
            stat = os.fstat(fd)
            if (stat.st_dev, stat.st_ino) != vetted.identity:
                raise Unreadable(_CHANGED)
            if not S_ISREG(stat.st_mode):
                raise Unreadable("not a regular file; remove it or give it a name without .md")
            check_size(stat.st_size, max_bytes)
            data = handle.read(max_bytes + 1)
        except OSError as exc:
            raise Unreadable(f"cannot be read: {exc.strerror}") from exc
    check_size(len(data), max_bytes)  # it grew since the stat
    if fresh and not Path(os.path.realpath(root / rel_path)).is_relative_to(root.resolve()):
        raise Unreadable(_CHANGED)  # a folder swapped for a symlink while ``vet`` looked: vetted and read outside
    return decode(data)


_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


def _open_vetted(root: Path, vetted: Entry) -> int:
    """A descriptor of the path the walk vetted, opened without following a symlink at its last step."""
    path = root / vetted.rel_path
    if vetted.link:  # the target, as it resolves now, and only while it is still inside the root
        path = Path(os.path.realpath(path))
        if not path.is_relative_to(root.resolve()):
            raise Unreadable(_CHANGED)
    try:
        return os.open(path, _FLAGS)
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
    return Entry(rel_path, stat.st_size, stat.st_mtime_ns, (stat.st_dev, stat.st_ino), link)


def check_size(size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise Unreadable(f"larger than the {max_bytes:,}-byte limit ({size:,} bytes); split it or raise max_file_bytes")


def decode(data: bytes) -> tuple[str, str]:
    """Markdown bytes as text (UTF-8, BOM removed) and their SHA-1; ``Unreadable`` for binary or other encodings."""
    digest = hashlib.sha1(data, usedforsecurity=False).hexdigest()
    if b"\x00" in data[:8192]:
        raise Unreadable("binary content (NUL bytes), not markdown text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Unreadable(f"not UTF-8 (invalid byte at offset {exc.start}); re-save it as UTF-8") from exc
    return text.removeprefix("\ufeff"), digest


def modified_at(root: Path, rel_path: str) -> float | None:
    """A file's modification time (Unix seconds), or None when it cannot be read."""
    try:
        return (root / rel_path).stat().st_mtime
    except OSError:
        return None
