"""The walk: which files belong to the memory tree.

Contract:
- ``scan(root, max_files)`` lists the tree's markdown files (posix paths relative to ``root``) with
  their ``os.stat`` results, ignoring hidden files and folders, editor noise and ``.gitignore``d
  paths.  Symlinks that lead outside the root or loop, FIFOs, sockets and devices, names that are not
  UTF-8, folders deeper than ``MAX_DEPTH`` and folders swapped (for a symlink or another folder) while
  the walk reached them come back as ``Skipped`` with a reason; a tree larger than ``max_files`` raises
  ``ConfigError``.  Each folder is listed only if it is still the one its parent's listing showed, so a
  folder swapped for a symlink mid-walk never lends the walk files from outside the root.
- A ``.gitignore`` line that is no valid pattern (``!``, a trailing backslash, ``[z-a]``) is left out, as git
  leaves it out, and the file's other lines apply; the file comes back as ``Skipped`` with a reason naming
  the first such line ("the pattern at line 3 ..."), which ``retriever check`` reports at that line.
It opens folders and ``.gitignore`` files, never a memory file: ``reader.read_text`` reads those.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, field
from pathlib import Path
from stat import S_ISFIFO, S_ISREG, S_ISSOCK

from retriever.errors import ConfigError
from retriever.text import repo_ignores
from retriever.text.gitignore import MAX_GITIGNORE_BYTES, MAX_GITIGNORE_LINES, Matcher, compiled
from retriever.text.markup import MARKDOWN_SUFFIXES
from retriever.text.models import Skipped
from retriever.text.regular import NotRegular, open_folder, read_regular

_NOISE_SUFFIXES = ("~", ".swp", ".swo", ".tmp", ".bak", ".orig")
# A GitHub (Gollum) wiki's navigation, shown around every page: links and page names, which had come back as facts
# ("Deployment-Guide") and as documents titled "Sidebar" and "Footer".
_WIKI_CHROME = frozenset(f"_{part}{suffix}" for part in ("sidebar", "footer", "header") for suffix in MARKDOWN_SUFFIXES)
# Said, not passed over: a team that links a shared folder in expects its files to be answered from.
_LINKED_FOLDER = "symlink to a folder: not followed (its files may lie outside the root); move or copy the folder in"
MAX_DEPTH = 64  # folder levels below the root that are read; deeper ones are skipped with a reason
DEFAULT_MAX_FILES = 100_000
ENTRIES_PER_FILE = 20  # a scan also stops after max_files × this many entries of any kind

# Folders are listed through a descriptor where the platform can (see ``_Walk.folder``); elsewhere (Windows)
# by path, as ``os.scandir`` alone would.
_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY") and hasattr(os, "O_NOFOLLOW")
# What opening a symlink (or a file) with O_DIRECTORY | O_NOFOLLOW raises: ENOTDIR on Linux, ELOOP on macOS,
# EMLINK on FreeBSD.
_NOT_A_FOLDER = frozenset({errno.ENOTDIR, errno.ELOOP, errno.EMLINK})
_FOLDER_CHANGED = (
    "folder changed while it was read (replaced or swapped for a symlink); it is read again at the next refresh"
)

# A .gitignore's rules and the folder it lives in ("" for the root, and for the rules from above it).
_Spec = tuple[str, Matcher]
# A folder still to list: its path, its path from the root, the .gitignore rules in force there, and the
# (st_dev, st_ino) its parent's listing showed (None for the root, and where folders are listed by path).
_Folder = tuple[Path, str, list[_Spec], tuple[int, int] | None]


@dataclass(frozen=True, slots=True)
class Entry:
    """A markdown file found in the tree.

    ``identity`` is the (st_dev, st_ino) of the file the walk vetted (a symlink's target, for a link it
    accepted) and ``link`` says whether it was reached through a symlink: ``reader.read_text`` opens that file
    and no other.  Both are left out of comparisons: they say which file to read, not what it holds.
    ``mtime_ns`` is the later of the file's modification and status-change times (``changed_ns``).
    """

    rel_path: str
    size: int
    mtime_ns: int
    identity: tuple[int, int] | None = field(default=None, compare=False)
    link: bool = field(default=False, compare=False)


def changed_ns(stat: os.stat_result) -> int:
    """When a file last changed, as far as its stat tells: the later of its mtime and ctime.  ``cp -p``,
    ``rsync -a``, ``tar x`` and ``touch -r`` set an edited file's mtime back (a same-size edit then looked
    unchanged, and its old text was served); none can set its ctime."""
    return max(stat.st_mtime_ns, stat.st_ctime_ns)


def is_memory_file(rel_path: str) -> bool:
    """A markdown file outside hidden folders and not an editor's temp file (for trees not read from disk)."""
    parts = rel_path.split("/")
    return parts[-1].lower().endswith(MARKDOWN_SUFFIXES) and not any(_is_noise(part) for part in parts)


def _is_noise(name: str) -> bool:
    """Hidden (``.name``), an Office lock (``~$name``), an Emacs auto-save (``#name#``: ``#`` at both ends, so
    ``#notes.md`` is a file like any other), a backup or swap file (``name~``, ``.swp``, …) or a wiki's navigation
    (``_Sidebar.md``, ``_Footer.md``, ``_Header.md``)."""
    autosave = len(name) > 1 and name.startswith("#") and name.endswith("#")
    chrome = name.startswith("_") and name.lower() in _WIKI_CHROME
    return autosave or chrome or name.startswith((".", "~$")) or name.endswith(_NOISE_SUFFIXES)


def _gitignore(directory: Path, fd: int | None) -> tuple[Matcher | None, str | None]:
    """The rules of the folder's ``.gitignore`` (None when it has none or it is not a readable regular file),
    and why some of its lines were left out (``gitignore.compiled``), else None.

    Read through ``fd``, the folder's vetted descriptor, where there is one: by path, a folder swapped for a
    symlink since would lend its rules from elsewhere.  Read as ``regular.read_regular`` reads: a FIFO named
    ``.gitignore`` would otherwise hang the walk, a huge one fill the memory.
    """
    name = ".gitignore" if fd is not None else directory / ".gitignore"
    try:
        data = read_regular(name, MAX_GITIGNORE_BYTES + 1, dir_fd=fd, whole=False)
    except (OSError, NotRegular):
        return None, None
    return compiled(data, MAX_GITIGNORE_BYTES, MAX_GITIGNORE_LINES)


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
    walk = _Walk(root.resolve(), max_files)  # resolved: a root given as a symlink to a folder is read
    above: list[_Spec] = [("", rules) for rules in repo_ignores.inherited(walk.root)]
    pending: list[_Folder] = [(walk.root, "", above, None)]
    while pending:
        pending.extend(reversed(walk.folder(*pending.pop())))
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

    def folder(self, directory: Path, rel_dir: str, specs: list[_Spec], seen: tuple[int, int] | None) -> list[_Folder]:
        """List one folder: record its markdown files, return its sub-folders still to list.

        The folder is listed through a descriptor opened without following a symlink, and only if it is the
        folder its parent's listing showed (``seen``).  Listed by path, a folder swapped for a symlink since
        would be followed, and the files of the folder it leads to (outside the root: ``/etc``, another user's
        memory) entered as this tree's.  A swapped folder is skipped with a reason, never raised.
        """
        try:
            fd = _open_folder(directory, seen)
        except OSError as exc:
            reason = _FOLDER_CHANGED if isinstance(exc, _Swapped) else f"folder cannot be listed: {exc.strerror}"
            self.skipped.append(Skipped(rel_dir or ".", reason))
            return []
        try:
            return self._list(directory, fd, rel_dir, specs)
        finally:
            if fd is not None:
                os.close(fd)

    def _list(self, directory: Path, fd: int | None, rel_dir: str, specs: list[_Spec]) -> list[_Folder]:
        # Entries of a listing by descriptor stat their names relative to ``fd``: it stays open while they are used.
        spec, problem = _gitignore(directory, fd)
        if spec is not None:
            specs = [*specs, (rel_dir, spec)]
        if problem is not None:
            self.skipped.append(Skipped(printable(f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"), problem))
        try:
            with os.scandir(directory if fd is None else fd) as listing:
                children = sorted(listing, key=lambda d: d.name)
        except OSError as exc:
            self.skipped.append(Skipped(rel_dir or ".", f"folder cannot be listed: {exc.strerror}"))
            return []
        self._count(len(children))
        depth = rel_dir.count("/") + 1 if rel_dir else 0
        folders: list[_Folder] = []
        for child in children:
            if _is_noise(child.name):
                continue
            rel = f"{rel_dir}/{child.name}" if rel_dir else child.name
            if _is_folder(child):
                if not _ignored(rel, True, specs) and self._enter(rel, child.name, depth + 1):
                    self._subfolder(child, directory, rel, specs, folders)
            elif child.name.lower().endswith(MARKDOWN_SUFFIXES) and not _ignored(rel, False, specs):
                self._file(child, directory, rel)
            elif _links_folder(child) and not _ignored(rel, True, specs):
                self.skipped.append(Skipped(printable(rel), _LINKED_FOLDER))
        return folders

    def _subfolder(
        self, child: os.DirEntry[str], directory: Path, rel: str, specs: list[_Spec], folders: list[_Folder]
    ) -> None:
        """Add the sub-folder to ``folders`` with the identity this listing shows (``folder`` checks it)."""
        try:
            # Not ``child.inode()``: at a mount point the listing holds the inode underneath, not the mounted one.
            stat = child.stat(follow_symlinks=False) if _BY_FD else None
        except OSError as exc:  # gone since the listing
            self.skipped.append(Skipped(rel, f"folder cannot be listed: {exc.strerror}"))
            return
        folders.append((directory / child.name, rel, specs, None if stat is None else _identity(stat)))

    def _enter(self, rel: str, name: str, depth: int) -> bool:
        problem = _bad_name(name, "folder") or (
            f"folder nested deeper than {MAX_DEPTH} levels; not read (move its files nearer the root)"
            if depth > MAX_DEPTH
            else None
        )
        if problem is not None:
            self.skipped.append(Skipped(printable(rel), problem))
        return problem is None

    def _file(self, child: os.DirEntry[str], directory: Path, rel: str) -> None:
        problem = _bad_name(child.name, "file")
        if problem is not None:
            self.skipped.append(Skipped(printable(rel), problem))
            return
        entry = _entry(self.root, directory, child, rel, self.skipped)
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


class _Swapped(OSError):
    """The path no longer names the folder the parent's listing showed."""


def _open_folder(path: Path, seen: tuple[int, int] | None) -> int | None:
    """A descriptor of the folder at ``path``, or None where folders are listed by path (``_BY_FD`` false).

    Never follows a symlink at ``path`` itself.  Raises ``_Swapped`` when ``path`` is no longer the folder
    ``seen`` (st_dev, st_ino) names: now a symlink, a file or another folder; other ``OSError``s as they come.
    The root (``seen`` None) is opened as it resolved, and an error there is reported as it is.
    """
    if not _BY_FD:
        return None
    try:
        fd = open_folder(path)
    except OSError as exc:
        if seen is not None and exc.errno in _NOT_A_FOLDER:
            raise _Swapped(_FOLDER_CHANGED) from exc
        raise
    try:
        if seen is not None and _identity(os.fstat(fd)) != seen:
            raise _Swapped(_FOLDER_CHANGED)
    except OSError:
        os.close(fd)
        raise
    return fd


def _identity(stat: os.stat_result) -> tuple[int, int]:
    return stat.st_dev, stat.st_ino


def _is_folder(child: os.DirEntry[str]) -> bool:
    try:
        return child.is_dir(follow_symlinks=False)
    except OSError:  # vanished while listing: neither a folder nor a file any more
        return False


def _links_folder(child: os.DirEntry[str]) -> bool:
    """Whether ``child`` is a symlink to a folder (which the walk never follows: its files may lie anywhere)."""
    try:
        return child.is_symlink() and child.is_dir()
    except OSError:  # a dangling or looping link: no folder
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


def _entry(root: Path, directory: Path, child: os.DirEntry[str], rel: str, skipped: list[Skipped]) -> Entry | None:
    """The entry for a file of ``directory``'s listing, or None with the reason appended to ``skipped``."""
    try:
        # ``child.path`` is only the name in a listing by descriptor: the full path is built here.
        if child.is_symlink() and not Path(os.path.realpath(directory / child.name)).is_relative_to(root):
            skipped.append(Skipped(rel, "symlink leads outside the memory root; copy the file in instead"))
            return None
        # Follows a symlink (relative to the listed folder's descriptor, so never through a folder swapped
        # since); a loop raises ELOOP here, never RecursionError.
        stat = child.stat()
    except OSError as exc:
        skipped.append(Skipped(rel, _stat_problem(exc, child)))
        return None
    if not S_ISREG(stat.st_mode):
        skipped.append(Skipped(rel, _not_regular(stat.st_mode, child)))
        return None
    return Entry(rel, stat.st_size, changed_ns(stat), (stat.st_dev, stat.st_ino), child.is_symlink())


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
