"""Provenance: when a document was written and last changed, by whom, and whether it was superseded.

Contract: ``Provenance.when(doc)`` gives a ``When``: git's first and last commit (and the last
commit's author) when the tree is in a repository, else the front-matter dates (``created``,
``updated``, ``date``); ``uncommitted`` says the file changed since its last commit.  ``update()``
re-reads the history only when HEAD moved (one batched ``git log``, cached per commit in the index
cache) and the list of edited files every time; when git fails, provenance is turned off and a
warning says why.  A shallow clone is named in the warnings (its created dates are those of its oldest
fetched commit) for as long as it stays shallow; ``git fetch --unshallow`` re-reads the history even
though HEAD did not move.  A tree read at a revision has a fixed history and is never updated.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from retriever.memory import gitinfo
from retriever.memory.cache import IndexCache
from retriever.text import vocabulary
from retriever.text.models import Document


@dataclass(frozen=True, slots=True)
class When:
    """A document's dates and authorship: from git when the tree is in a repository, else front matter."""

    created_at: str | None = None
    valid_at: str | None = None
    author: str | None = None
    uncommitted: bool = False
    superseded: bool = False


class Provenance:
    """The git history of one tree (none outside a repository)."""

    def __init__(
        self,
        root: Path,
        cache: IndexCache | None,
        warnings: list[str],
        repo: Path | None,
        history: gitinfo.History | None = None,
    ) -> None:
        self._root = root
        self._cache = cache
        self._warnings = warnings  # the memory's own list: a failure shows in its diagnostics
        self._repo = repo
        self._history = history
        self._dirty: frozenset[str] = frozenset()
        if repo is not None and history is not None:
            self._note_shallow(repo, history.shallow)

    def update(self) -> None:
        """Git history (re-read only when HEAD moved or the clone was unshallowed) and the files edited since."""
        if self._repo is None:
            return
        try:
            prefix = gitinfo.prefix_of(self._repo, self._root)
            current = gitinfo.head(self._repo) or ""
            shallow = gitinfo.is_shallow(self._repo)  # asked every time: fetching the rest does not move HEAD
            if self._history is None or (self._history.head, self._history.shallow) != (current, shallow):
                self._history = self._load_history(self._repo, current, prefix, shallow)
            self._dirty = gitinfo.dirty(self._repo, prefix)
            self._note_shallow(self._repo, shallow)
        except gitinfo.GitError as exc:
            self._repo = None
            self._warnings.append(f"git provenance unavailable: {exc.message}")

    def _note_shallow(self, repo: Path, shallow: bool) -> None:
        """Name a shallow clone in the warnings once, and take the warning back once it is unshallowed."""
        warning = shallow_warning(repo)
        if shallow and warning not in self._warnings:
            self._warnings.append(warning)
        elif not shallow and warning in self._warnings:
            self._warnings.remove(warning)

    def _load_history(self, repo: Path, head: str, prefix: str, shallow: bool) -> gitinfo.History:
        """The history for ``head``: from the cache when this commit was read before, else one ``git log``."""
        cached = self._cache.load_history(head) if self._cache and head else None
        # A history cached before ``shallow`` existed lacks the field: getattr's None sends it back to git
        # (such a history also predates following renames).
        if isinstance(cached, gitinfo.History) and (cached.head, getattr(cached, "shallow", None)) == (head, shallow):
            return cached
        found = gitinfo.history(repo, prefix, shallow=shallow)
        if self._cache and head:
            try:
                self._cache.save_history(head, found)
            except OSError as exc:
                self._warnings.append(f"git history not cached ({exc.strerror})")
        return found

    def of(self, rel_path: str) -> gitinfo.Provenance | None:
        """First and last commit of a file, its author and uncommitted state; None outside git."""
        if self._history is None:
            return None
        return self._history.provenance(rel_path, self._dirty)

    def when(self, doc: Document) -> When:
        """The document's dates and author: git's first and last commit, else its front-matter dates."""
        found = self.of(doc.rel_path)
        return when(doc.front_matter, found)


def credible(date_text: str | None, today: dt.date | None = None) -> str:
    """``date_text`` (an ISO date or time) for ordering by recency, or "" when it is after tomorrow: a page dated
    2099, or a commit claiming to be, had come first of every tie (``retriever check`` warns of such dates).  A
    day of slack for time zones."""
    if not date_text:
        return ""
    latest = ((today or dt.date.today()) + dt.timedelta(days=1)).isoformat()
    return "" if date_text[:10] > latest else date_text


def shallow_warning(repo: Path) -> str:
    """The warning for a shallow clone: which dates are wrong, and how to get the true ones."""
    return (
        f"the git repository at {repo} is a shallow clone: created dates are those of its oldest fetched commit; "
        "run `git fetch --unshallow` for true dates"
    )


def when(front_matter: Mapping[str, Any], found: gitinfo.Provenance | None) -> When:
    """Git's dates when it knows the file's last commit, else the front matter's."""
    superseded = vocabulary.superseded(front_matter)
    if found is not None and found.valid_at is not None:
        return When(found.created_at, found.valid_at, found.author, found.uncommitted, superseded)
    return When(
        vocabulary.first_date(front_matter, vocabulary.CREATED_FROM),
        vocabulary.first_date(front_matter, vocabulary.VALID_FROM),
        None,
        bool(found and found.uncommitted),
        superseded,
    )
