"""A cache that cannot be written mid-refresh (a full disk): the memory goes on in memory, with a warning.

Filling a real disk is not portable in a test, so the failure is raised at the seam where a full disk
surfaces: the real cache's write methods, raising what SQLite and the file system raise then.
"""

from __future__ import annotations

import errno
import gc
import os
import sqlite3
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from conftest import TreeFactory
from fixtures import ACME

from retriever.config import Settings, index_cache_dir
from retriever.memory.cache import IndexCache
from retriever.memory.documents import Documents
from retriever.memory.memory import Memory
from retriever.text import analyzer

LATER = 2_000_000_000_000_000_000  # an mtime no freshly written file has
FULL = "database or disk is full"


def _files(memory: Memory, query: str) -> list[str]:
    with memory.reading():
        ranked = memory.index.top(analyzer.terms(query), 10)
        return list(dict.fromkeys(memory.state.section_files[sid] for sid, _ in ranked))


def _full(*_: Any, **__: Any) -> None:
    raise sqlite3.OperationalError(FULL)


def _no_space(*_: Any, **__: Any) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _every_document_reads(memory: Memory) -> None:
    """Every section the index names comes back from its document (none was lost with the cache)."""
    with memory.reading():
        for sid in memory.index.alive.nonzero()[0].tolist():
            memory.section(sid)


@pytest.mark.parametrize("method", ["put_encoded", "commit"])
def test_a_first_build_whose_cache_fills_up_indexes_in_memory_and_a_later_run_builds_the_cache(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    acme, settings = make_tree(ACME), Settings.from_env()
    with monkeypatch.context() as patch:
        patch.setattr(IndexCache, method, _full)
        memory = Memory.open(acme, settings)

    assert memory.cache is None and memory.refresh_error is None
    folder = index_cache_dir(settings, acme)
    assert memory.warnings == [f"index cache unavailable at {folder} ({FULL}); indexing in memory"]
    assert (memory.stats.files, memory.stats.parsed, memory.stats.cache) == (8, 8, "disabled")
    assert _files(memory, "sick days") == ["policies/leave.md"]
    _every_document_reads(memory)
    assert Memory.open(acme, settings).stats.cache == "built"  # the full disk has room again
    assert Memory.open(acme, settings).stats.cache == "hit"


@pytest.mark.parametrize(("method", "failure"), [("commit", _full), ("save_index", _no_space)])
def test_a_later_refresh_whose_cache_fills_up_swaps_in_an_index_built_in_memory(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, method: str, failure: Callable[..., None]
) -> None:
    acme, settings = make_tree(ACME), Settings.from_env()
    memory = Memory.open(acme, settings)
    leave = acme / "policies/leave.md"
    leave.write_text(ACME["policies/leave.md"].replace("Employees earn", "Staff accrue"), encoding="utf-8")
    os.utime(leave, ns=(LATER, LATER))

    with monkeypatch.context() as patch:
        patch.setattr(IndexCache, method, failure)
        stats = memory.refresh()

    assert memory.cache is None and memory.refresh_error is None
    assert stats.cache == "disabled" and len(memory.warnings) == 1
    assert memory.warnings[0].startswith(f"index cache unavailable at {index_cache_dir(settings, acme)} (")
    assert _files(memory, "staff accrue") == ["policies/leave.md"] and _files(memory, "employees earn") == []
    _every_document_reads(memory)
    # The records were rolled back, never committed without their index: the next run reads the edit again.
    fresh = Memory.open(acme, settings)
    assert fresh.stats.parsed == 1 and fresh.cache is not None
    assert _files(fresh, "staff accrue") == ["policies/leave.md"] and _files(fresh, "employees earn") == []


def test_a_retrieval_between_a_refresh_storing_records_and_its_swap_reads_the_versions_the_old_index_numbers(
    make_tree: TreeFactory,
) -> None:
    leave = "# Leave\n\n## A\n\nAlpha.\n\n## B\n\nBeta.\n\n## C\n\nGamma.\n"
    root = make_tree({"leave.md": leave, "b.md": "# B\n\nHotels.\n"})
    memory = Memory.open(root, Settings.from_env())
    tree = memory._tree
    last = tree.file_sections("leave.md")[-1]
    tree.documents = Documents(memory.cache, recover=tree._recover)  # nothing held: every read goes to the cache
    (root / "leave.md").write_text("# Leave\n\nAll rewritten into one section now.\n", encoding="utf-8")
    found = tree._scan(None)
    tree._store(found)  # what apply() does before it takes the write lock and swaps the index in
    with memory.reading():
        assert memory.section(last)[1].heading_path == ("C",)
    tree.apply(found)
    assert [s.text for s in memory.document("leave.md").sections] == ["All rewritten into one section now."]


def test_a_dropped_memory_is_freed_at_once_not_left_to_the_cyclic_collector(make_tree: TreeFactory) -> None:
    memory = Memory.open(make_tree(ACME), Settings.from_env())
    tree = weakref.ref(memory._tree)
    gc.disable()
    try:
        del memory
        assert tree() is None  # a cycle through the documents' recover hook had kept the index until a collection
    finally:
        gc.enable()
