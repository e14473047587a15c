"""``retriever init``: a new memory repository, ready to edit, lint and check in CI.

Contract: ``scaffold(target)`` writes ``FILES`` (``lint.templates``: the files, as data) under ``target`` (which
must not exist, or be an empty folder of the user's own, else ``TargetNotEmpty`` / ``TargetNotOwned``;
``TargetTooLong`` for a path over ``MAX_NEW_LEVELS`` new folders deep or too long for the system) and returns the
files it wrote, in order.  It never overwrites and never follows a symlink: every folder and file under ``target``
is created new (``mkdir`` that fails on an existing name, ``O_CREAT|O_EXCL|O_NOFOLLOW``), so something that
appears there while it writes stops it (``TargetChanged``) instead of being written through.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from retriever.errors import InvalidArguments
from retriever.lint.templates import FILES, WORKFLOW_PATH, workflow
from retriever.text.safe import preview

__all__ = ["FILES", "FOLDERS", "WORKFLOW_PATH", "TargetChanged", "TargetNotEmpty", "TargetNotOwned", "scaffold"]

MAX_NEW_LEVELS = 64  # folders init makes above the tree: more is a mistyped (or hostile) path
FOLDERS = ("people", "teams", "projects", "decisions", "processes", "policies", "meetings", "glossary")
# Create, never open what is there: O_EXCL fails on any existing name (a symlink included) and O_NOFOLLOW
# says so again; O_BINARY keeps Windows from turning "\n" into "\r\n".  Both are missing on some systems.
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)


class TargetNotEmpty(InvalidArguments):
    """``retriever init`` never writes into a folder that already holds something."""


class TargetNotOwned(InvalidArguments):
    """``retriever init`` never writes into a folder that belongs to another user: they could swap its
    contents for links to your files while it writes."""


class TargetTooLong(InvalidArguments):
    """``retriever init`` makes at most ``MAX_NEW_LEVELS`` nested folders, in a path the system accepts."""


class TargetChanged(InvalidArguments):
    """Something appeared in the folder ``retriever init`` was filling; it stopped without touching it."""


def scaffold(target: Path, source: str | None = None) -> list[Path]:
    """Write a new memory tree under ``target``; the files written, in order.

    ``source`` is where the CI workflow installs the retriever from unless the repository variable
    RETRIEVER_SOURCE says otherwise; without either, the workflow fails saying how to set it.  Raises
    ``TargetNotEmpty``, ``TargetNotOwned``, ``TargetTooLong`` or ``TargetChanged`` (see the module's
    contract); files written before a ``TargetChanged`` or ``TargetTooLong`` stay.
    """
    files = {**FILES, WORKFLOW_PATH: workflow(source)}  # a bad source stops it before anything is made
    try:
        _claim(target)
    except OSError as exc:
        raise _too_long(exc, target, "nothing was written") from None
    made = {target}
    written: list[Path] = []
    try:
        for rel_path, content in files.items():
            path = target / rel_path
            _make_folders(target, path.parent, made)
            _create(target, path, content)
            written.append(path)
    except OSError as exc:
        raise _too_long(exc, target, "the files written before it stay") from None
    return written


def _too_long(exc: OSError, target: Path, left: str) -> Exception:
    """``TargetTooLong`` naming the path (bounded) when ``exc`` says it is too long, else ``exc`` itself."""
    if exc.errno != errno.ENAMETOOLONG:
        return exc
    return TargetTooLong(
        f"cannot write {preview(str(exc.filename or target))}: {exc.strerror}; {left}: pass a shorter path"
    )


def _claim(target: Path) -> None:
    """Make ``target`` (and its missing parents), or accept it as it is: an empty folder of this user's.

    ``mkdir`` without ``exist_ok``: a folder made here is new, this user's and empty.  Otherwise
    ``TargetNotEmpty`` for anything but an empty folder (saying what it is when it is no folder) and
    ``TargetNotOwned`` for another user's (where the system has user ids).  ``TargetTooLong`` when more
    than ``MAX_NEW_LEVELS`` folders would be made, or the system finds the path too long.
    """
    try:
        _make_new(target)
        return
    except FileExistsError:
        if not os.path.lexists(target):
            raise  # a parent is a file: the OSError names it
    try:
        info = target.stat()  # follows a link: a link to your own empty folder is fine
    except OSError as exc:
        raise TargetNotEmpty(_not_a_folder(target, _unfollowable(exc))) from None  # dangling, or a loop
    if not stat.S_ISDIR(info.st_mode):
        raise TargetNotEmpty(_not_a_folder(target, _kind(info.st_mode)))
    if next(target.iterdir(), None) is not None:
        raise TargetNotEmpty(f"{target} already exists and is not empty; choose a new or empty folder")
    geteuid = getattr(os, "geteuid", None)  # files made here would be this (effective) user's
    if geteuid is not None and info.st_uid != geteuid():
        raise TargetNotOwned(
            f"{target} belongs to another user (uid {info.st_uid}), who could swap what init writes for links "
            f"to your files; nothing was written: pass a folder that does not exist yet (init creates it) or "
            f"one you own"
        )


def _make_new(target: Path) -> None:
    """Create ``target`` and its missing parents, top down (a loop: ``mkdir(parents=True)`` and
    ``os.makedirs`` recurse once per missing parent).  ``FileExistsError`` when ``target`` exists;
    ``TargetTooLong`` before anything is made when over ``MAX_NEW_LEVELS`` folders are missing."""
    missing: list[Path] = []
    folder = target
    while not os.path.lexists(folder) and folder.parent != folder:
        if len(missing) == MAX_NEW_LEVELS:
            raise TargetTooLong(
                f"cannot write {preview(str(target))}: init makes at most {MAX_NEW_LEVELS} new nested folders; "
                "nothing was written: pass a shorter path"
            )
        missing.append(folder)
        folder = folder.parent
    if not missing:
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    made: list[Path] = []
    try:
        for folder in reversed(missing[1:]):
            with contextlib.suppress(FileExistsError):  # a parent made meanwhile is fine, as with parents=True
                folder.mkdir()
                made.append(folder)
        target.mkdir()  # never exist_ok: a folder made here is new
    except OSError:
        for folder in reversed(made):  # e.g. the path grew too long halfway: leave no empty folders behind
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _not_a_folder(target: Path, what: str) -> str:
    return f"{target} already exists and is {what}, not a folder; choose a new or empty folder"


def _unfollowable(exc: OSError) -> str:
    """What a link ``stat`` cannot follow is, from the error following it gave."""
    if exc.errno == errno.ELOOP:
        return "a symlink that loops"
    if exc.errno == errno.ENOENT:
        return "a dangling symlink (it points to nothing)"
    return f"a symlink that cannot be followed ({exc.strerror})"


def _kind(mode: int) -> str:
    """What a file system entry that is no folder is, in a few words, from its ``st_mode``."""
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "something other than a file"


def _make_folders(target: Path, folder: Path, made: set[Path]) -> None:
    """Create ``folder`` and those between it and ``target`` not made yet, each new (``TargetChanged``
    when the name is already taken: a folder or link someone else put there)."""
    missing: list[Path] = []
    while folder not in made:
        missing.append(folder)
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            raise _changed(target, folder) from None
        made.add(folder)


def _create(target: Path, path: Path, content: str) -> None:
    """Create ``path`` holding ``content``; ``TargetChanged`` when the name is taken (a symlink included)."""
    try:
        handle = os.open(path, _CREATE, 0o666)
    except OSError as exc:
        if exc.errno in (errno.EEXIST, errno.ELOOP):  # ELOOP: O_NOFOLLOW met a link
            raise _changed(target, path) from None
        raise
    with os.fdopen(handle, "wb") as out:
        out.write(content.encode("utf-8"))


def _changed(target: Path, path: Path) -> TargetChanged:
    """The error for ``path`` found taken while ``target`` was being filled."""
    return TargetChanged(
        f"{path} appeared while init was filling {target} (another process is writing there); init stopped "
        f"and overwrote nothing: look at what is in {target}, then run init on a new folder you own"
    )
