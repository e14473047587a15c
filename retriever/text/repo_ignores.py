"""The ignore rules a memory root inherits from the git repository around it.

Contract: ``inherited(root)`` gives the rules that apply to the root's files from above it, as matchers of paths
relative to the root: each ``.gitignore`` from the repository's top folder down to the root's parent, then the
repository's ``.git/info/exclude``.  A memory kept in ``docs/memory`` of a repository whose top ``.gitignore``
holds ``*.draft.md`` leaves its drafts out, as git does (the walk reads the ``.gitignore`` files under the root).
At a repository's top only its exclude file applies (the walk reads the root's ``.gitignore``); outside a repository
(no ``.git`` within ``MAX_LEVELS`` above) nothing does, and nothing from above when those rules ignore the root
itself: a folder the user points at on purpose is read.  A file that cannot
be read as a regular file is passed over.  Never raises.

A worktree's ``.git`` file leads to the main repository's exclude file.  Not read: ``core.excludesFile`` (a user's
own, global rules) and the index, so a file committed with ``git add -f`` that a rule matches is left out, as the
walk leaves out such a file under the root.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from retriever.text.gitignore import MAX_GITIGNORE_BYTES, MAX_GITIGNORE_LINES, Matcher, compiled
from retriever.text.regular import NotRegular, read_regular

MAX_LEVELS = 64  # folders above the root searched for the repository's top


@dataclass(frozen=True, slots=True)
class Above:
    """Rules of a file above the root: a path under the root is matched as ``prefix/path``."""

    prefix: str
    spec: Matcher

    def match_file(self, path: str) -> bool:
        return bool(self.spec.match_file(f"{self.prefix}/{path}" if self.prefix else path))


def inherited(root: Path) -> list[Above]:
    """The rules from above ``root`` (resolved), outermost first; [] outside a repository's subfolder."""
    top = _repository_top(root)
    if top is None:
        return []
    below = root.relative_to(top).parts  # ("docs", "memory"): the root's folders under the top
    folders = [top.joinpath(*below[:depth]) for depth in range(len(below))]  # the top, docs: not the root itself
    rules = [rule for folder in folders for rule in _rules(folder / ".gitignore", root.relative_to(folder).as_posix())]
    git_dir = _common_git_dir(top)
    rules += _rules(git_dir / "info" / "exclude", root.relative_to(top).as_posix()) if git_dir else []
    if any(r.prefix and r.spec.match_file(r.prefix + "/") for r in rules):  # the root is ignored: read it anyway
        return []
    return rules


def _repository_top(root: Path) -> Path | None:
    """The nearest folder holding ``.git``, ``root`` itself or above it; None when none is found."""
    try:
        for folder in [root, *list(root.parents)[:MAX_LEVELS]]:
            if (folder / ".git").exists():
                return folder
    except OSError:
        pass
    return None


def _common_git_dir(top: Path) -> Path | None:
    """The repository's git folder that holds ``info/exclude``: ``.git`` itself, or for a worktree (whose ``.git`` is
    a file, "gitdir: …/.git/worktrees/name") the main repository's, which its ``commondir`` names."""
    dot_git = top / ".git"
    if dot_git.is_dir():
        return dot_git
    named = _first_line(dot_git)
    if not named.startswith("gitdir:"):
        return None
    git_dir = top / named.removeprefix("gitdir:").strip()
    common = _first_line(git_dir / "commondir")
    return (git_dir / common) if common else git_dir


def _first_line(path: Path) -> str:
    """The first line of a small file, "" when it cannot be read as one."""
    try:
        return read_regular(path, 4096, whole=False).decode("utf-8", errors="replace").split("\n", 1)[0].strip()
    except (OSError, NotRegular):
        return ""


def _rules(path: Path, below: str) -> list[Above]:
    prefix = "" if below == "." else below  # the root itself is the repository's top
    try:
        data = read_regular(path, MAX_GITIGNORE_BYTES + 1, whole=False)
    except (OSError, NotRegular):
        return []
    spec, _ = compiled(data, MAX_GITIGNORE_BYTES, MAX_GITIGNORE_LINES)
    return [Above(prefix, spec)]
