"""The loaded memory, as retrieval reads it: documents, the section index, names, paths, readiness.

Contract: ``Memory.open(root, settings)`` loads the tree (from the index cache where it is still
valid; see ``memory.refresh``) and raises when the first load fails; ``Memory.at_revision`` reads
the tree as it was at a git revision.  Everything else reads: ``document``, ``section``,
``resolve`` (a name to the document it refers to), ``when`` (provenance), ``supersession_cycles``,
``source_path`` and ``tree_path`` (see ``memory.paths``), ``readiness``.  ``refresh()`` hands over to
the refresher and never raises; hold ``reading()`` while retrieving so that a refresh never changes
the index mid-query.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from retriever.config import Settings
from retriever.errors import MemoryNotFound
from retriever.memory import gitinfo, paths, supersession
from retriever.memory.cache import DocInfo, IndexCache, IndexState
from retriever.memory.caches import open_cache
from retriever.memory.index import Params, SectionIndex
from retriever.memory.provenance import Provenance, When
from retriever.memory.refresh import Progress, Refresher, RefreshStats
from retriever.memory.snapshot import cached_changes
from retriever.text import reader
from retriever.text.markup import MARKDOWN_SUFFIXES, markdown_stem
from retriever.text.models import Document, Section, Skipped
from retriever.text.safe import preview

__all__ = ["Memory", "MemoryChanged", "Progress", "RefreshStats"]


class MemoryChanged(Exception):
    """A refresh changed the memory while a retrieval had given up its read lock for ``call`` (``Memory.unlocked``):
    the retrieval starts again on the memory as it is now.  Internal: the retrieval catches it, never a user."""

    def __init__(self, call: str) -> None:
        super().__init__(f"the memory changed during the {call} call")
        self.call = call


class Memory:
    """A memory tree ready for retrieval: a read-only view over what the last refresh published."""

    def __init__(
        self, settings: Settings, tree: Refresher, provenance: Provenance, revision: gitinfo.Revision | None = None
    ) -> None:
        self.root = tree.root
        self.settings = settings
        self.params = tree.params
        self.revision = revision  # set when the tree is read as it was at a revision
        self._tree = tree
        self._provenance = provenance
        self._names: tuple[tuple[int, int, int], dict[str, str]] | None = None
        # per memory version: the links on supersession cycles, and the records the other links make superseded
        self._links: tuple[tuple[int, int, int], frozenset[tuple[str, str]], frozenset[str]] | None = None
        self._links_lock = threading.Lock()

    @classmethod
    def open(
        cls, root: Path, settings: Settings, params: Params | None = None, progress: Progress | None = None
    ) -> Memory:
        """Load the tree at ``root``, from the cache where it is still valid."""
        why = reader.not_a_folder(root)
        if why is not None:
            raise MemoryNotFound.at(preview(str(root), 200), why)
        cache, warnings = open_cache(settings, root)
        if cache:
            cache.mark_used(root.resolve())  # for `retriever cache list|prune`
        tree = Refresher(root.resolve(), settings, params or Params(), cache, warnings)
        provenance = Provenance(tree.root, cache, warnings, gitinfo.find_repo(tree.root))
        try:
            tree.refresh_or_raise(provenance.update, progress)  # nothing to keep serving yet: the caller hears why
        except Exception:
            if cache:
                cache.close()  # a watcher retries every round: leave no connection behind
            raise
        return cls(settings, tree, provenance)

    @classmethod
    def at_revision(
        cls, root: Path, settings: Settings, rev: str, params: Params | None = None, progress: Progress | None = None
    ) -> Memory:
        """The tree as it was at a commit, tag or date, read from git objects (the working tree is not touched)."""
        repo = gitinfo.find_repo(root) if reader.is_folder(root) else None
        if repo is None:
            raise gitinfo.GitError(f"{preview(str(root), 200)} is not inside a git repository; --at needs one")
        revision = gitinfo.resolve(repo, rev)
        prefix = gitinfo.prefix_of(repo, root)
        tree = Refresher(root.resolve(), settings, params or Params(), None, [])
        snapshot = gitinfo.GitSnapshot(repo, prefix, revision.commit)
        if prefix and not snapshot.files():  # the folder was added later: say so, not "add .md files"
            raise gitinfo.GitError(
                f"{prefix!r} did not exist at {preview(rev)} (commit {revision.commit[:12]}, {revision.committed_at}); "
                "try a later revision"
            )
        tree.apply(cached_changes(snapshot, settings, root, progress))  # no index cache: every document stays in memory
        history = gitinfo.history(repo, prefix, revision.commit)
        return cls(settings, tree, Provenance(tree.root, None, tree.warnings, repo, history), revision)

    def refresh(self, progress: Progress | None = None) -> RefreshStats:
        """Bring documents and index up to date with the files on disk (see ``memory.refresh``).

        Safe while other threads retrieve; never raises: a failure keeps the last good index
        answering and is named in ``warnings``.  A tree read at a revision does not change.
        """
        if self.revision is not None:
            return self.stats
        return self._tree.refresh(self._provenance.update, progress)

    def close(self) -> None:
        """Close the index cache's database and release its ``in-use`` lock, once the retrievals reading it have
        ended (a retrieval in flight had met a closed database); the memory answers no more after."""
        with self._tree.rw.writing():
            if self.cache is not None:
                self.cache.close()

    # -- what the last refresh published ------------------------------------------------------------

    @property
    def state(self) -> IndexState:
        return self._tree.state

    @property
    def index(self) -> SectionIndex:
        return self._tree.state.index

    @property
    def cache(self) -> IndexCache | None:
        return self._tree.cache

    @property
    def skipped(self) -> list[Skipped]:
        return self._tree.skipped

    @property
    def warnings(self) -> list[str]:
        return self._tree.warnings

    @property
    def stats(self) -> RefreshStats:
        return self._tree.stats

    @property
    def refresh_error(self) -> str | None:
        """Why the last refresh failed (also in ``warnings``); None after a success."""
        return self._tree.refresh_error

    @property
    def version(self) -> tuple[int, int, int]:
        """Changes whenever a refresh changes the documents or the index (for caches keyed on the tree): the number
        such a refresh takes from a counter of the process's (``Refresher.generation``), with the index's size and
        live sections."""
        return (self._tree.generation, self.index.size, self.index.live_count)

    def reading(self) -> contextlib.AbstractContextManager[None]:
        """Hold while retrieving, so a refresh never changes the index mid-query."""
        return self._tree.rw.reading()

    @contextlib.contextmanager
    def unlocked(self, call: str) -> Iterator[None]:
        """Within ``reading()``, around a slow ``call`` that reads nothing of the memory (an LLM call): the read
        lock given up while it runs, so a refresh that found changes swaps them in meanwhile rather than wait for
        the model (with every request queued behind it: the lock prefers writers).  Raises ``MemoryChanged``
        after the block, the lock held again, when one did: what the retrieval worked out before the call
        refers to the index that refresh replaced."""
        version = self.version
        with self._tree.rw.released():
            yield
        if self.version != version:
            raise MemoryChanged(call)

    # -- reading ------------------------------------------------------------------------------------

    def document(self, rel_path: str) -> Document:
        """The parsed document (``KeyError`` when the tree has none at that path)."""
        return self._tree.documents.get(rel_path)

    def section(self, section_id: int) -> tuple[Document, Section]:
        state = self.state
        doc = self.document(state.section_files[section_id])
        return doc, doc.sections[state.section_ordinals[section_id]]

    def sections_of(self, rel_path: str) -> list[int]:
        """The live section ids of a document, in order (none where the tree has no document)."""
        return self._tree.file_sections(rel_path)

    def prefetch(self, section_ids: Iterable[int]) -> None:
        """Load the documents of ``section_ids`` from the cache in one read, before ``section`` asks for
        them one by one (only a speed-up: ``section`` loads whatever is still missing)."""
        files = self.state.section_files
        self._tree.documents.prefetch(files[sid] for sid in section_ids)

    def resolve(self, name: str) -> str | None:
        """The document a name refers to (title, alias, relative path or file stem; case-insensitive)."""
        return _resolved(self._name_table(), name)

    def _name_table(self) -> dict[str, str]:
        names = self._names
        version = self.version
        if names is None or names[0] != version:  # rebuilt only after a refresh changed documents
            names = self._names = (version, _name_index(self.state.catalog))
        return names[1]

    def supersession_cycles(self) -> frozenset[tuple[str, str]]:
        """The (superseded, successor) links a chain of supersession links leads back from, over every document
        (``memory.supersession``): worked out once per version, when a question first reads such a link, and by
        one reader while others wait for it (a hostile tree's links take seconds)."""
        return self._settled()[1]

    def superseded_records(self) -> frozenset[str]:
        """The documents a supersession link off every cycle makes superseded, whichever side wrote it (a new
        record's ``supersedes`` alone), worked out with ``supersession_cycles``."""
        return self._settled()[2]

    def _settled(self) -> tuple[tuple[int, int, int], frozenset[tuple[str, str]], frozenset[str]]:
        with self._links_lock:
            settled = self._links
            version = self.version
            if settled is None or settled[0] != version:
                resolve = functools.partial(_resolved, self._name_table())
                settled = self._links = (version, *supersession.settled(self.state.catalog, resolve))
            return settled

    def when(self, doc: Document) -> When:
        """The document's dates and author: git's first and last commit, else its front-matter dates.  A record
        whose ``superseded_by`` names only successors over links on a cycle is not superseded: a cycle says nothing
        about which record is newer.  One a later record's ``supersedes`` names is (``superseded_records``)."""
        found = self._provenance.when(doc)
        if found.superseded and supersession.superseded_only_by(
            doc.rel_path, doc.front_matter, self.resolve, self.supersession_cycles
        ):
            return dataclasses.replace(found, superseded=False)
        if not found.superseded and doc.rel_path in self.superseded_records():
            return dataclasses.replace(found, superseded=True)
        return found

    def provenance(self, rel_path: str) -> gitinfo.Provenance | None:
        """First and last commit of a file, its author and uncommitted state; None outside git."""
        return self._provenance.of(rel_path)

    @property
    def root_name(self) -> str:
        return self.root.name

    def source_path(self, rel_path: str) -> str:
        """The path as the seed shows it: the root folder's name first."""
        return paths.source_path(self.root_name, rel_path)

    def tree_path(self, rel_path: str, section: Section | None = None) -> str:
        """``Company Context > Relationships > Client Organizations > Tier 1``."""
        info = self.state.catalog.get(rel_path)
        headings = section.heading_path if section is not None else ()
        return paths.tree_path(self.root_name, rel_path, info.title if info else None, headings)

    def folder_titles(self, rel_path: str) -> list[str]:
        """Folder names as titles."""
        return paths.folder_titles(rel_path)

    @property
    def documents_count(self) -> int:
        return len(self.state.catalog)

    @property
    def sections_count(self) -> int:
        return self.state.index.live_count

    def readiness(self) -> tuple[bool, str]:
        """(memory_ready, readiness_state): ``empty`` < ``ready_sparse`` < ``ready_rich``."""
        if self.sections_count == 0:
            return False, "empty"
        if self.documents_count < 5 or self.sections_count < 20:
            return True, "ready_sparse"
        return True, "ready_rich"


def _resolved(names: dict[str, str], name: str) -> str | None:
    """The document ``name`` refers to in a table of ``_name_index``: a path may leave out its ``.md`` (or
    ``.markdown``, ``.mdx``: "People/Ana Costa", as a wiki link writes it)."""
    key = name.strip().casefold().removeprefix("./")
    found = names.get(key) or names.get(markdown_stem(key))
    return found or next((path for suffix in MARKDOWN_SUFFIXES if (path := names.get(key + suffix))), None)


def _name_index(catalog: dict[str, DocInfo]) -> dict[str, str]:
    """Casefolded title, alias, path and file stem → rel_path.  A shared name is the first document's in path
    order, whatever order refreshes left the catalog in: which record a name means decides its links' cycles."""
    names: dict[str, str] = {}
    for path in sorted(catalog):
        info = catalog[path]
        for name in (info.title, *info.aliases):
            names.setdefault(name.casefold(), path)
        names.setdefault(path.casefold(), path)
        names.setdefault(markdown_stem(path.rsplit("/", 1)[-1]).casefold(), path)
    return names

