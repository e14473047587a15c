"""Parsed documents held in memory: a least-recently-used set backed by the index cache.

Contract: ``get(rel_path)`` returns the document (from memory, else from the cache, which then
keeps it in memory) or raises ``KeyError``.  With a cache, at most ``limit`` documents stay in
memory after a refresh or a read; without one, every document stays (nothing else holds them).
A document whose cache record does not decode is asked of ``recover`` (the refresher reads its file
again when its bytes are still the version indexed), so a damaged record costs a parse, not the question; where
the file changed since, ``get`` raises ``errors.DocumentUnavailable`` (a ``RetrieverError`` and a ``KeyError``).
Thread-safe: retrievals read while a refresh updates.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterable, Mapping

from retriever.errors import DocumentUnavailable
from retriever.memory.cache import IndexCache
from retriever.text.models import Document

DOCUMENTS_IN_MEMORY = 2048  # parsed documents kept after a refresh when the cache holds them all


class Documents:
    """Documents by rel_path, the most recently used last."""

    def __init__(
        self,
        cache: IndexCache | None,
        limit: int = DOCUMENTS_IN_MEMORY,
        recover: Callable[[str], Document | None] | None = None,
    ) -> None:
        self._cache = cache
        self._recover = recover
        self._limit = limit
        self._docs: dict[str, Document] = {}
        self._lock = threading.Lock()

    def get(self, rel_path: str) -> Document:
        with self._lock:
            doc = self._docs.pop(rel_path, None)
            if doc is not None:
                self._docs[rel_path] = doc  # most recently used last
        if doc is None:
            doc = self.prefetch([rel_path]).get(rel_path)
        if doc is None and self._recover is not None and self._cache and rel_path in self._cache.damaged():
            doc = self._recover(rel_path)
            if doc is None:
                raise DocumentUnavailable(
                    f"the index cache's record of {rel_path[:200]!r} is damaged and the file changed since it was "
                    "indexed; ask again once the memory has refreshed (it reads the file anew)"
                )
            with self._lock:
                doc = self._docs.setdefault(rel_path, doc)
        if doc is None:
            raise KeyError(rel_path)
        return doc

    def prefetch(self, rel_paths: Iterable[str]) -> dict[str, Document]:
        """Read the documents among ``rel_paths`` not in memory from the cache at once (a question reads
        sections of a dozen documents, and one cache query per document cost more than the unpickling);
        returns the ones read, as now held."""
        with self._lock:
            missing = [p for p in dict.fromkeys(rel_paths) if p not in self._docs]
        if not missing or not self._cache:
            return {}
        found = self._cache.documents(missing)
        with self._lock:  # a refresh's newer version, stored meanwhile, wins
            held = {path: self._docs.setdefault(path, doc) for path, doc in found.items()}
        self.trim()
        return held

    def among(self, present: set[str]) -> dict[str, Document | None]:
        """The documents held in memory whose paths are in ``present`` (for a full rebuild)."""
        with self._lock:
            return {p: d for p, d in self._docs.items() if p in present}

    def update(self, docs: Mapping[str, Document | None], gone: Iterable[str]) -> None:
        """Keep the new versions, drop what is gone and what became unreadable (None)."""
        with self._lock:
            for path in gone:
                self._docs.pop(path, None)
            for path, doc in docs.items():
                if doc is None:
                    self._docs.pop(path, None)
                else:
                    self._docs[path] = doc

    def trim(self) -> None:
        """Keep only the most recently used documents in memory; the cache serves the rest."""
        with self._lock:
            excess = len(self._docs) - self._limit
            if self._cache and excess > 0:
                for path in list(itertools.islice(self._docs, excess)):
                    self._docs.pop(path, None)
