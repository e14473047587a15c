"""The git seam: provenance of memory files, and a tree read as it was at a revision.

Contract:
- ``find_repo(path)`` → the repository's top folder, or None (not a repository, or no ``git``);
  ``remote_url(repo)`` → its ``origin`` URL, or None.
- ``history(repo, prefix)`` reads every file's first and last commit (time, author, commit) under
  ``prefix`` in ONE ``git log`` pass, following renames; ``dirty(repo, prefix)`` lists files with
  uncommitted edits.
  ``Provenance`` joins the two for a file.  ``is_shallow(repo)`` says whether the repository is a
  shallow clone, whose oldest fetched commits stand in for the true first ones (``History.shallow``).
- ``resolve(repo, rev)`` turns a commit, tag, branch or date ("2026-10-01") into a commit;
  ``GitSnapshot`` lists and reads markdown files from that commit's objects (``git ls-tree``,
  one ``git cat-file --batch``), never touching the working tree.
Failures raise ``GitError`` with a message a user can act on.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from retriever.errors import RetrieverError
from retriever.text.safe import preview

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ][\d:]+.*)?$")
_RECORD, _FIELD = "\x1e", "\x1f"
_TWO_NAMES = re.compile(r"[RC]\d+")  # a commit's rename or copy in --name-status: its score, then two names
_TIMEOUT = 60


class GitError(RetrieverError):
    """git is missing, the folder is not in a repository, or a revision does not exist."""

    code = "git_error"


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    at: str  # ISO 8601
    author: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a file's content comes from, as git knows it."""

    created_at: str | None  # first commit that touched it
    valid_at: str | None  # last commit that touched it
    author: str | None  # that last commit's author
    commit: str | None  # that last commit, abbreviated
    uncommitted: bool  # edited (or new) since the last commit


@dataclass(frozen=True, slots=True)
class History:
    head: str
    first: dict[str, Commit]  # path (relative to the prefix) → oldest commit
    last: dict[str, Commit]  # path → newest commit
    # A shallow clone: ``first`` holds the oldest commits fetched, not the ones that created the files.
    shallow: bool = False

    def provenance(self, rel_path: str, dirty: frozenset[str]) -> Provenance:
        first, last = self.first.get(rel_path), self.last.get(rel_path)
        return Provenance(
            created_at=first.at if first else None,
            valid_at=last.at if last else None,
            author=last.author if last else None,
            commit=last.sha[:12] if last else None,
            uncommitted=rel_path in dirty or last is None,
        )


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    if shutil.which("git") is None:
        raise GitError("git is not installed; install it to use provenance or --at")
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), "-c", "core.quotepath=off", *args],
            input=stdin,
            capture_output=True,
            timeout=_TIMEOUT,
            check=False,
            # Reads only: `git status` would otherwise refresh the index under .git/index.lock, and the
            # user's own `git pull` or commit at that moment would fail with "index.lock: File exists".
            # Literal pathspecs: a root named ":(top)x" or "*" names that folder, not git's magic or a glob.
            env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "GIT_LITERAL_PATHSPECS": "1"},
        )
    except subprocess.TimeoutExpired as exc:
        raise GitError(f"git {args[0]} took longer than {_TIMEOUT} s in {repo}") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed in {repo}: {message[-1] if message else done.returncode}")
    return done.stdout


def find_repo(path: Path) -> Path | None:
    """The top folder of the repository containing ``path``, or None.  Its name is read as the file system's bytes
    (``os.fsdecode``), as every other path is: a folder named in no UTF-8 (``caf\\xe9``) had failed the load."""
    try:
        return Path(os.fsdecode(_git(path, "rev-parse", "--show-toplevel").rstrip(b"\r\n")))
    except (GitError, OSError):
        return None


def prefix_of(repo: Path, root: Path) -> str:
    """``root`` relative to the repository, as git writes paths ("" for the top)."""
    relative = root.resolve().relative_to(repo.resolve()).as_posix()
    return "" if relative == "." else relative


def remote_url(repo: Path, remote: str = "origin") -> str | None:
    """The URL of ``remote`` (None when it is not set)."""
    try:
        return _git(repo, "config", "--get", f"remote.{remote}.url").decode(errors="replace").strip() or None
    except (GitError, OSError):
        return None


def head(repo: Path) -> str | None:
    try:
        return _git(repo, "rev-parse", "--verify", "-q", "HEAD").decode().strip() or None
    except GitError:
        return None  # a repository without commits yet


def is_shallow(repo: Path) -> bool:
    """Whether ``repo`` is a shallow clone (``git clone --depth N``): its history stops short of the first commits."""
    return _git(repo, "rev-parse", "--is-shallow-repository").decode().strip() == "true"


def history(repo: Path, prefix: str, rev: str | None = None, shallow: bool | None = None) -> History:
    """First and last commit of every file under ``prefix`` (up to ``rev``, else HEAD), from one ``git log``.

    Renames are followed in that same pass (git's rename detection): a file's first commit is that of
    the file it was renamed from, back through every rename, while its last commit is the newest one
    touching its current path, so a rename, pure or with edits, counts as an update.  A name reused
    after a rename starts a history of its own.  A file moved in from outside ``prefix`` counts as
    created by the move (git compares only paths under the prefix).  ``shallow`` is
    ``is_shallow(repo)`` when the caller has already asked (else it is asked here).
    """
    current = rev or head(repo)
    if current is None:
        return History("", {}, {})
    output = _git(
        repo,
        "log",
        current,
        "--find-renames",  # explicit: a user's diff.renames setting must not change the dates
        "--name-status",  # a rename names both the old and the new path
        "-z",  # names as they are: without it git quotes names holding '"', tabs or newlines
        "--diff-merges=dense-combined",  # a merge names the files its conflict resolution changed
        f"--format={_RECORD}%H{_FIELD}%aI{_FIELD}%an",
        "--",
        prefix or ".",
    ).decode(errors="replace")
    first: dict[str, Commit] = {}
    last: dict[str, Commit] = {}
    renamed_to: dict[str, str] = {}  # an older name → the path it has now, learnt walking back past the rename
    for commit, changes in _log_records(output):
        for old, name in changes:
            rel = _strip(name, prefix)
            if not rel:
                continue
            now = renamed_to.get(rel, rel)
            last.setdefault(now, commit)  # newest first: the first sighting is the last commit
            first[now] = commit  # ...and the final sighting the first commit
            if old is not None and (was := _strip(old, prefix)):
                renamed_to[was] = now  # older commits touching ``was`` touched this file
    return History(current, first, last, is_shallow(repo) if shallow is None else shallow)


def _log_records(output: str) -> Iterator[tuple[Commit, list[tuple[str | None, str]]]]:
    """Each commit of ``history``'s ``git log`` output, newest first, with its changes (see ``_changes``)."""
    for record in output.split(_RECORD)[1:]:
        header, _, body = record.partition("\0")
        sha, at, author = header.split(_FIELD)
        # The names follow the header after a newline (a merge's after a NUL); a status never starts with either.
        yield Commit(sha, at, author), _changes(body.lstrip("\0\n").split("\0"))


def _changes(fields: list[str]) -> list[tuple[str | None, str]]:
    """``--name-status -z`` fields as (old name, name): the old name for a rename, else None.

    A merge's combined statuses (``MM``, ``RM``: one letter per parent) carry one name only.  A copy
    carries two, but its source lives on, so its history is not carried back.
    """
    changes: list[tuple[str | None, str]] = []
    at = 0
    while at + 1 < len(fields):
        status = fields[at]
        if _TWO_NAMES.fullmatch(status) and at + 2 < len(fields):
            changes.append((fields[at + 1] if status[0] == "R" else None, fields[at + 2]))
            at += 3
        else:
            changes.append((None, fields[at + 1]))
            at += 2
    return changes


def dirty(repo: Path, prefix: str) -> frozenset[str]:
    """Files under ``prefix`` modified, added or untracked since the last commit."""
    output = _git(repo, "status", "--porcelain", "-z", "--untracked-files=all", "--", prefix or ".").decode(
        errors="replace"
    )
    paths = [entry[3:] for entry in output.split("\0") if len(entry) > 3]
    return frozenset(rel for rel in (_strip(p, prefix) for p in paths) if rel)


def _strip(path: str, prefix: str) -> str | None:
    if not prefix:
        return path
    return path[len(prefix) + 1 :] if path.startswith(prefix + "/") else None


# -- answers as of a revision ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Revision:
    requested: str
    commit: str
    committed_at: str


def _is_date(text: str) -> bool:
    try:
        dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _after_today(date: str) -> bool:
    """Whether the date ``YYYY-MM-DD…`` is later than today (its first ten characters, compared as text)."""
    return date[:10] > time.strftime("%Y-%m-%d")


def _commit_at(repo: Path, date: str) -> str:
    """The branch's last commit on or before ``date`` (YYYY-MM-DD…; ``GitError`` for a day that does not exist)."""
    if not _is_date(date[:10]):
        raise GitError(f"{preview(date)} is not a date; give YYYY-MM-DD (a day that exists), a commit or a tag")
    if _after_today(date):  # git reads no date past 2099; a later one means now anyway
        return "HEAD"
    moment = date if "T" in date or " " in date else f"{date} 23:59:59"
    # The branch as it was then: a commit made on another branch and merged later was not on it yet.
    try:
        found = _git(repo, "rev-list", "-1", "--first-parent", f"--before={moment}", "HEAD").decode().strip()
    except GitError as exc:
        unborn = _no_commits_yet(repo, date)  # without a commit at HEAD, git answers with its usage text
        if unborn is None:
            raise
        raise unborn from exc
    if not found:
        raise GitError(f"no commit on or before {date} in {repo}")
    return found


def _no_commits_yet(repo: Path, rev: str) -> GitError | None:
    """The error for a revision asked of a repository whose HEAD has no commit yet; None when it has one.

    Asked only once resolving failed: a tag or branch can exist while HEAD is an unborn (orphan) branch.
    """
    if head(repo) is not None:
        return None
    return GitError(
        f"the git repository at {repo} has no commits yet, so it has no revision {preview(rev)} to read; "
        "commit the files first (`git add` then `git commit`), or drop --at to answer from the files on disk"
    )


def resolve(repo: Path, rev: str) -> Revision:
    """A commit, tag, branch, or a date (the last commit before the end of that day).

    ``GitError`` names a revision that does not exist, and a repository with no commits yet as such.
    """
    target = _commit_at(repo, rev) if _DATE.match(rev) else rev
    try:
        sha = _git(repo, "rev-parse", "--verify", "-q", f"{target}^{{commit}}").decode().strip()
    except GitError as exc:
        raise _no_commits_yet(repo, rev) or GitError(
            f"revision {preview(rev)} not found in the git repository at {repo}; try a commit, tag or YYYY-MM-DD date"
        ) from exc
    at = _git(repo, "show", "-s", "--format=%cI", sha).decode().strip()
    return Revision(rev, sha, at)


class GitSnapshot:
    """Markdown files under ``prefix`` as they were at ``commit``, read from git objects."""

    def __init__(self, repo: Path, prefix: str, commit: str) -> None:
        self.repo, self.prefix, self.commit = repo, prefix, commit
        self._blobs: dict[str, tuple[str, int]] = {}  # rel_path → (blob sha, size)

    def files(self) -> dict[str, tuple[str, int]]:
        """rel_path → (blob sha, size) of every file under the prefix at the commit."""
        if not self._blobs:
            spec = [self.prefix] if self.prefix else []
            output = _git(self.repo, "ls-tree", "-r", "-l", "-z", self.commit, "--", *spec).decode(errors="replace")
            for entry in output.split("\0"):
                meta, _, path = entry.partition("\t")
                parts = meta.split()
                # Mode 120000 is a symlink, whose blob is its target's name ("/etc/passwd"), not a document:
                # the working tree follows or skips such a link, never reads its name as text.
                is_file = len(parts) == 4 and parts[1] == "blob" and parts[0] != "120000"
                if is_file and (rel := _strip(path, self.prefix)):
                    self._blobs[rel] = (parts[2], int(parts[3]) if parts[3].isdigit() else 0)
        return self._blobs

    def read(self, rel_paths: list[str]) -> dict[str, bytes]:
        """The bytes of several files in one ``git cat-file --batch``."""
        wanted = [(rel, self.files()[rel][0]) for rel in rel_paths if rel in self.files()]
        if not wanted:
            return {}
        output = _git(self.repo, "cat-file", "--batch", stdin="".join(f"{sha}\n" for _, sha in wanted).encode())
        out: dict[str, bytes] = {}
        position = 0
        for rel, _ in wanted:
            header_end = output.index(b"\n", position)
            size = int(output[position:header_end].split()[2])
            start = header_end + 1
            out[rel] = output[start : start + size]
            position = start + size + 1  # the blob is followed by a newline
        return out
