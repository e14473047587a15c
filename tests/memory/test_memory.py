"""The loaded memory: opening a tree, reusing the index cache, and refreshing after edits."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TreeFactory
from fixtures import ACME

from retriever.config import Settings, index_cache_dir
from retriever.errors import ConfigError, MemoryNotFound
from retriever.memory import intake
from retriever.memory import refresh as refresh_module
from retriever.memory.memory import Memory, RefreshStats
from retriever.text import analyzer
from retriever.text.models import Document, Skipped

LATER = 2_000_000_000_000_000_000  # an mtime no freshly written file has
ACME_SECTIONS = 15

BAD_YAML = """---
title: Northwind Retail
industry: [Retail
---
# Northwind Retail

A retail chain in Portugal.
"""


@pytest.fixture
def settings() -> Settings:
    return Settings.from_env()  # RETRIEVER_STATE_DIR points at the test's own state folder


@pytest.fixture
def acme(make_tree: TreeFactory) -> Path:
    return make_tree(ACME)


def _write(path: Path, text: str, mtime_ns: int = LATER) -> None:
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _hits(memory: Memory, query: str, k: int = 10) -> list[tuple[str, int]]:
    """(file, section ordinal) of the best sections for ``query``, best first."""
    state = memory.state
    ranked = memory.index.top(analyzer.terms(query), k)
    return [(state.section_files[sid], state.section_ordinals[sid]) for sid, _ in ranked]


def _section_ids(memory: Memory, query: str) -> list[int]:
    return [sid for sid, _ in memory.index.top(analyzer.terms(query), 10)]


def _files(memory: Memory, query: str) -> list[str]:
    return list(dict.fromkeys(path for path, _ in _hits(memory, query)))


def _catch_up(memory: Memory, how: str) -> Memory:
    """See the tree's changes: ``refresh`` the open memory, or ``reopen`` it as the next run would."""
    if how == "refresh":
        memory.refresh()
        return memory
    if memory.cache:
        memory.cache.close()
    return Memory.open(memory.root, memory.settings)


def _listing(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


HOW = pytest.mark.parametrize("how", ["refresh", "reopen"])


# opening


def test_a_first_open_parses_every_file_and_builds_the_index(acme: Path, settings: Settings) -> None:
    memory = Memory.open(acme, settings)
    assert memory.stats == RefreshStats(files=8, parsed=8, removed=0, rebuilt=True, cache="built")
    assert (memory.documents_count, memory.sections_count, memory.index.size) == (8, ACME_SECTIONS, ACME_SECTIONS)
    assert (memory.skipped, memory.warnings) == ([], [])
    assert _files(memory, "sick days") == ["policies/leave.md"]


def test_a_second_open_of_an_unchanged_tree_parses_nothing_and_ranks_the_same(acme: Path, settings: Settings) -> None:
    first = Memory.open(acme, settings)
    second = Memory.open(acme, settings)

    assert second.stats == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="hit")
    for query in ("billing migration", "Olena Marchenko", "sick days", "DEC-0054", "лікарняних"):
        terms = analyzer.terms(query)
        assert second.index.top(terms, 10) == first.index.top(terms, 10)
    assert second.state.catalog == first.state.catalog
    assert second.state.section_files == first.state.section_files


def test_a_refresh_of_an_unchanged_tree_changes_nothing_and_keeps_saying_how_the_index_was_made(
    acme: Path, settings: Settings
) -> None:
    memory = Memory.open(acme, settings)
    assert memory.refresh() == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="built")
    assert len(memory.index.segments) == 1
    reopened = Memory.open(acme, settings)
    assert reopened.refresh() == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="hit")
    _write(acme / "teams/platform.md", ACME["teams/platform.md"] + "\nOn call: Mykola.\n")
    assert reopened.refresh().cache == "updated"
    assert reopened.refresh() == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="updated")


def test_progress_names_its_phase_and_counts_every_file_read_then_the_save(acme: Path, settings: Settings) -> None:
    calls: list[tuple[str, int, int]] = []
    Memory.open(acme, settings, progress=lambda *call: calls.append(call))
    assert calls == [("indexing", n, 8) for n in range(9)] + [("saving", 0, 1), ("saving", 1, 1)]


def test_a_refresh_reports_the_changed_files_it_reads_and_the_save(acme: Path, settings: Settings) -> None:
    memory = Memory.open(acme, settings)
    _write(acme / "teams/platform.md", ACME["teams/platform.md"] + "\nOn call: Mykola.\n")
    _write(acme / "teams/sales.md", "# Sales\n\nThe quarterly quota is 2M EUR.\n")
    calls: list[tuple[str, int, int]] = []
    memory.refresh(progress=lambda *call: calls.append(call))
    assert calls == [("refreshing", n, 2) for n in range(3)] + [("saving", 0, 1), ("saving", 1, 1)]
    calls.clear()
    memory.refresh(progress=lambda *call: calls.append(call))
    assert calls == []  # nothing to read, nothing to save


def test_a_missing_root_raises_memory_not_found_naming_the_path(tmp_path: Path, settings: Settings) -> None:
    missing = tmp_path / "no-such-memory"
    with pytest.raises(MemoryNotFound) as caught:
        Memory.open(missing, settings)
    assert caught.value.message == (
        f"memory root {str(missing)!r} is not a folder (nothing is at {str(missing)!r}); "
        "pass --root DIR or set RETRIEVER_ROOT"
    )
    assert caught.value.code == "memory_not_found"


def test_a_file_given_as_root_raises_memory_not_found(tmp_path: Path, settings: Settings) -> None:
    file = tmp_path / "notes.md"
    file.write_text("# Notes\n", encoding="utf-8")
    with pytest.raises(MemoryNotFound, match="pass --root DIR or set RETRIEVER_ROOT"):
        Memory.open(file, settings)


# refreshing


@HOW
def test_an_edited_file_is_reparsed_alone_and_replaces_its_own_sections(
    acme: Path, settings: Settings, how: str
) -> None:
    memory = Memory.open(acme, settings)
    leave = acme / "policies/leave.md"
    _write(leave, ACME["policies/leave.md"].replace("Employees earn 10 sick days", "Staff accrue 12 sick days"))

    memory = _catch_up(memory, how)

    assert memory.stats == RefreshStats(files=8, parsed=1, removed=0, rebuilt=False, cache="updated")
    assert _hits(memory, "employees earn") == []
    assert _hits(memory, "staff accrue") == [("policies/leave.md", 1)]
    assert memory.section(memory.index.top(analyzer.terms("accrue"), 1)[0][0])[1].text == (
        "Staff accrue 12 sick days per year. Unused sick days do not carry over."
    )
    assert (memory.sections_count, memory.index.size) == (ACME_SECTIONS, ACME_SECTIONS + 3)
    assert _files(memory, "Stripe") == ["decisions/dec_0054.md", "projects/billing_migration.md"]


@HOW
def test_a_same_size_edit_whose_mtime_was_set_back_is_reparsed(acme: Path, settings: Settings, how: str) -> None:
    leave = acme / "policies/leave.md"
    before = leave.stat()
    memory = Memory.open(acme, settings)
    # `cp -p`, `rsync -a` and `touch -r` keep the old mtime; an edit of the same size then looked unchanged
    leave.write_text(ACME["policies/leave.md"].replace("Employees earn", "Workers accrue"), encoding="utf-8")
    os.utime(leave, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert (leave.stat().st_size, leave.stat().st_mtime_ns) == (before.st_size, before.st_mtime_ns)

    memory = _catch_up(memory, how)

    assert memory.stats.parsed == 1
    assert _hits(memory, "workers accrue") == [("policies/leave.md", 1)]


def test_a_refresh_that_finds_nothing_changed_takes_no_write_lock(acme: Path, settings: Settings) -> None:
    # A retrieval holds the read lock through its LLM calls (up to minutes); a watcher's round that waited for the
    # write lock had queued every other request behind it (the lock prefers writers).
    memory = Memory.open(acme, settings)
    holding, release = threading.Event(), threading.Event()

    def slow_retrieval() -> None:
        with memory.reading():
            holding.set()
            release.wait(30)

    reader = threading.Thread(target=slow_retrieval)
    reader.start()
    try:
        assert holding.wait(10)
        refresher = threading.Thread(target=memory.refresh)
        refresher.start()
        refresher.join(10)
        assert not refresher.is_alive()
        assert memory.stats.parsed == 0
    finally:
        release.set()
        reader.join(10)


@HOW
def test_a_touched_file_is_not_reparsed(acme: Path, settings: Settings, how: str) -> None:
    memory = Memory.open(acme, settings)
    os.utime(acme / "teams/platform.md", ns=(LATER, LATER))

    memory = _catch_up(memory, how)

    # Nothing changed: the refreshed index is still the one built; the reopened one came from the cache.
    word = "built" if how == "refresh" else "hit"
    assert memory.stats == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache=word)
    assert memory.index.size == ACME_SECTIONS
    assert memory.cache is not None
    assert memory.cache.file_rows()["teams/platform.md"].fingerprint.mtime_ns == LATER
    assert _files(memory, "shared infrastructure") == ["teams/platform.md"]
    assert Memory.open(acme, settings).stats.parsed == 0


@HOW
def test_a_deleted_file_leaves_the_catalog_and_the_results(acme: Path, settings: Settings, how: str) -> None:
    memory = Memory.open(acme, settings)
    assert _files(memory, "shared infrastructure") == ["teams/platform.md"]
    (acme / "teams/platform.md").unlink()

    memory = _catch_up(memory, how)

    assert memory.stats == RefreshStats(files=7, parsed=0, removed=1, rebuilt=False, cache="updated")
    assert "teams/platform.md" not in memory.state.catalog
    assert _files(memory, "shared infrastructure") == []
    assert memory.sections_count == ACME_SECTIONS - 1
    assert memory.cache is not None
    assert "teams/platform.md" not in memory.cache.file_rows()


@HOW
def test_an_added_file_is_found(acme: Path, settings: Settings, how: str) -> None:
    memory = Memory.open(acme, settings)
    _write(acme / "teams/sales.md", "---\ntitle: Sales Team\n---\n## Quota\n\nThe quarterly quota is 2M EUR.\n")

    memory = _catch_up(memory, how)

    assert memory.stats == RefreshStats(files=9, parsed=1, removed=0, rebuilt=False, cache="updated")
    assert _hits(memory, "quarterly quota") == [("teams/sales.md", 0)]
    assert memory.tree_path("teams/sales.md") == "Memory > Teams > Sales Team"
    assert memory.sections_count == ACME_SECTIONS + 1


@HOW
def test_a_file_that_becomes_unreadable_is_skipped_and_stops_scoring(acme: Path, settings: Settings, how: str) -> None:
    memory = Memory.open(acme, settings)
    assert _files(memory, "Portugal") == ["relationships/northwind_retail.md"]
    _write(acme / "relationships/northwind_retail.md", BAD_YAML)

    memory = _catch_up(memory, how)

    # Still there, so not deleted (``removed`` counts files deleted); skipped, its sections out of the index.
    assert memory.stats == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="updated")
    assert [s.rel_path for s in memory.skipped] == ["relationships/northwind_retail.md"]
    assert memory.skipped[0].reason.startswith("invalid YAML front matter at line 4:")
    assert _files(memory, "Portugal") == []
    assert "relationships/northwind_retail.md" not in memory.state.catalog
    assert memory.sections_count == ACME_SECTIONS - 1


def test_a_skipped_file_that_is_fixed_comes_back(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree({**ACME, "relationships/northwind_retail.md": BAD_YAML})
    memory = Memory.open(root, settings)
    assert memory.skipped == [Skipped("relationships/northwind_retail.md", memory.skipped[0].reason)]

    _write(root / "relationships/northwind_retail.md", ACME["relationships/northwind_retail.md"])
    memory.refresh()

    assert memory.skipped == []
    assert memory.stats == RefreshStats(files=8, parsed=1, removed=0, rebuilt=False, cache="updated")
    assert _files(memory, "Portugal") == ["relationships/northwind_retail.md"]


def test_an_unchanged_skipped_file_keeps_the_cache_a_hit(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree({**ACME, "relationships/northwind_retail.md": BAD_YAML})
    Memory.open(root, settings)

    memory = Memory.open(root, settings)
    memory.refresh()

    assert [s.rel_path for s in memory.skipped] == ["relationships/northwind_retail.md"]
    assert memory.stats == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="hit")
    assert len(memory.index.segments) == 1


def test_a_changed_size_limit_applies_to_files_the_cache_already_knows(make_tree: TreeFactory) -> None:
    root = make_tree({"small.md": "# Small\n\nShort.\n", "big.md": "# Big\n\n" + "lengthy words " * 200})

    def opened(limit: int) -> tuple[list[str], list[str]]:
        memory = Memory.open(root, Settings.from_env(max_file_bytes=limit))
        return sorted(memory.state.catalog), [s.rel_path for s in memory.skipped]

    assert opened(1000) == (["small.md"], ["big.md"])
    assert opened(10_000) == (["big.md", "small.md"], [])  # raised: read, though the cache had it skipped
    assert opened(1000) == (["small.md"], ["big.md"])  # lowered: dropped, though the cache had it indexed


def test_a_reopened_memory_that_gained_a_file_still_retires_old_files_sections(acme: Path, settings: Settings) -> None:
    Memory.open(acme, settings)
    memory = Memory.open(acme, settings)  # the index comes from the cache
    _write(acme / "teams/sales.md", "## Quota\n\nThe quarterly quota is 2M EUR.\n")
    memory.refresh()

    leave = acme / "policies/leave.md"
    _write(leave, ACME["policies/leave.md"].replace("Employees earn", "Staff accrue"), LATER + 1)
    (acme / "teams/platform.md").unlink()
    memory.refresh()

    assert _hits(memory, "employees earn") == []
    assert _hits(memory, "staff accrue") == [("policies/leave.md", 1)]
    assert _files(memory, "shared infrastructure") == []
    assert memory.sections_count == ACME_SECTIONS


# compaction


def _notes(count: int) -> dict[str, str]:
    return {f"notes/note_{n:02d}.md": f"## Note {n}\n\nMarker word item{n} lives here.\n" for n in range(count)}


def test_many_refreshes_each_adding_a_segment_compact_into_one(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree({**ACME, **_notes(25)})
    memory = Memory.open(root, settings)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]

    rebuilt = []
    for number, word in enumerate(words, 1):
        _write(root / "notes/note_00.md", f"## Note zero\n\nCodeword {word} today.\n", LATER + number)
        memory.refresh()
        assert memory.stats.parsed == 1
        rebuilt.append(memory.stats.rebuilt)

    assert rebuilt == [False] * 7 + [True]
    assert memory.stats.cache == "built"
    assert len(memory.index.segments) == 1
    assert memory.index.size == memory.sections_count == ACME_SECTIONS + 25
    assert _hits(memory, "hotel") == [("notes/note_00.md", 0)]
    assert [_hits(memory, word) for word in words[:-1]] == [[]] * 7
    assert _hits(memory, "item7") == [("notes/note_07.md", 0)]

    reopened = Memory.open(root, settings)
    assert reopened.stats == RefreshStats(files=8 + 25, parsed=0, removed=0, rebuilt=False, cache="hit")
    assert _hits(reopened, "hotel") == [("notes/note_00.md", 0)]


@pytest.mark.parametrize(
    ("deleted", "dead", "rebuilt"),
    [
        # 15 sections: more than 30% (4.5) dead forces a rebuild.
        (["policies/leave.md", "teams/platform.md"], 4, False),
        (["policies/leave.md", "teams/platform.md", "people/taras_kovalenko.md"], 5, True),
    ],
)
def test_deleting_over_30_percent_of_sections_compacts_the_index(
    acme: Path, settings: Settings, deleted: list[str], dead: int, rebuilt: bool
) -> None:
    memory = Memory.open(acme, settings)
    for rel_path in deleted:
        (acme / rel_path).unlink()

    memory.refresh()

    assert memory.stats == RefreshStats(
        files=8 - len(deleted), parsed=0, removed=len(deleted), rebuilt=rebuilt, cache="built" if rebuilt else "updated"
    )
    live = ACME_SECTIONS - dead
    assert memory.sections_count == live
    assert memory.index.size == (live if rebuilt else ACME_SECTIONS)
    assert _files(memory, "sick days") == []
    assert _files(memory, "billing migration")[0] == "projects/billing_migration.md"
    assert set(memory.state.catalog) == set(ACME) - set(deleted)


# readiness


def test_readiness_is_empty_without_sections(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree({"notes.txt": "not markdown", "blank.md": ""})
    assert Memory.open(root, settings).readiness() == (False, "empty")


def test_readiness_is_sparse_for_a_small_tree(acme: Path, settings: Settings) -> None:
    assert Memory.open(acme, settings).readiness() == (True, "ready_sparse")


@pytest.mark.parametrize(
    ("docs", "sections_each", "state"),
    [(5, 4, "ready_rich"), (4, 5, "ready_sparse"), (5, 3, "ready_sparse"), (10, 2, "ready_rich")],
)
def test_readiness_is_rich_from_five_documents_and_twenty_sections(
    make_tree: TreeFactory, settings: Settings, docs: int, sections_each: int, state: str
) -> None:
    files = {
        f"doc_{d}.md": "".join(f"## Part {s}\n\nFact {s} of document {d}.\n\n" for s in range(sections_each))
        for d in range(docs)
    }
    memory = Memory.open(make_tree(files), settings)
    assert (memory.documents_count, memory.sections_count) == (docs, docs * sections_each)
    assert memory.readiness() == (True, state)


# paths


def test_tree_and_source_paths_of_a_nested_file(acme: Path, settings: Settings) -> None:
    memory = Memory.open(acme, settings)
    doc, section = memory.section(_section_ids(memory, "approves production database")[0])
    assert doc.rel_path == "people/olena_marchenko.md"
    assert memory.tree_path(doc.rel_path) == "Memory > People > Olena Marchenko"
    assert memory.tree_path(doc.rel_path, section) == "Memory > People > Olena Marchenko > Responsibilities"
    assert memory.source_path(doc.rel_path) == "memory/people/olena_marchenko.md"


def test_a_folder_readme_titles_the_folder_itself(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree(
        {
            "teams/sales/README.md": "---\ntitle: Sales Team\n---\nThe sales team sells.\n\n## Quota\n\nQuota is 2M.\n",
            "README.md": "# About Acme\n\nAcme makes anvils.\n",
        }
    )
    memory = Memory.open(root, settings)
    doc = memory.document("teams/sales/README.md")
    assert memory.tree_path("teams/sales/README.md") == "Memory > Teams > Sales"
    assert memory.tree_path("teams/sales/README.md", doc.sections[1]) == "Memory > Teams > Sales > Quota"
    assert memory.source_path("teams/sales/README.md") == "memory/teams/sales/README.md"
    assert memory.tree_path("README.md") == "Memory > About Acme"
    assert memory.tree_path("people/ghost_writer.md") == "Memory > People > Ghost Writer"


def test_a_name_resolves_by_title_path_stem_or_path_without_its_md(make_tree: TreeFactory, settings: Settings) -> None:
    root = make_tree({"People/Ana Costa.md": "---\ntitle: Ana C.\n---\nAna leads payments.\n"})
    memory = Memory.open(root, settings)
    # "People/Ana Costa" is how a wiki link ([[People/Ana Costa]]) names the file: it had named nothing.
    found = [memory.resolve(n) for n in ("Ana C.", "people/ana costa.md", "Ana Costa", "People/Ana Costa", "People")]
    assert found == ["People/Ana Costa.md"] * 4 + [None]


def test_an_mdx_page_is_a_document_with_title_tree_path_and_names(make_tree: TreeFactory, settings: Settings) -> None:
    # A Docusaurus site's .mdx pages had not been read at all, and nothing said so.
    body = "import Tabs from '@theme/Tabs';\n\n<Tabs>\n\nInstall with Homebrew.\n\n</Tabs>\n"
    root = make_tree({"getting-started/installation.mdx": body, "getting-started/index.mdx": "Start here.\n"})
    memory = Memory.open(root, settings)
    assert sorted(memory.state.catalog) == ["getting-started/index.mdx", "getting-started/installation.mdx"]
    assert memory.tree_path("getting-started/installation.mdx") == "Memory > Getting Started > Installation"
    assert memory.tree_path("getting-started/index.mdx") == "Memory > Getting Started"
    found = [memory.resolve(n) for n in ("Installation", "installation", "getting-started/installation")]
    assert found == ["getting-started/installation.mdx"] * 3
    units = [u for s in memory.document("getting-started/installation.mdx").sections for u in s.units]
    assert [(u.text, u.lines) for u in units] == [("Install with Homebrew.", (5, 5))]


def test_a_state_folder_inside_the_tree_disables_the_cache_and_writes_nothing_there(
    acme: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_STATE_DIR", str(acme / ".state"))
    settings = Settings.from_env()
    before = _listing(acme)

    memory = Memory.open(acme, settings)
    _write(acme / "teams/platform.md", ACME["teams/platform.md"].replace("shared infrastructure", "shared tooling"))
    memory.refresh()

    assert memory.cache is None
    assert memory.warnings == [
        f"state folder {index_cache_dir(settings, acme)} is inside the memory tree; index cache disabled"
    ]
    assert memory.stats == RefreshStats(files=8, parsed=1, removed=0, rebuilt=False, cache="disabled")
    assert _files(memory, "shared tooling") == ["teams/platform.md"]
    assert _files(memory, "sick days") == ["policies/leave.md"]
    assert _listing(acme) == before


def test_without_a_usable_cache_memory_still_loads_and_refreshes(
    acme: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "state-is-a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv("RETRIEVER_STATE_DIR", str(blocker))
    settings = Settings.from_env()

    memory = Memory.open(acme, settings)

    assert memory.cache is None
    assert len(memory.warnings) == 1
    assert memory.warnings[0].startswith(f"index cache unavailable at {index_cache_dir(settings, acme)} (")
    assert memory.warnings[0].endswith("); indexing in memory")
    assert memory.stats == RefreshStats(files=8, parsed=8, removed=0, rebuilt=True, cache="disabled")
    assert _files(memory, "sick days") == ["policies/leave.md"]

    assert memory.refresh() == RefreshStats(files=8, parsed=0, removed=0, rebuilt=False, cache="disabled")
    os.utime(acme / "teams/platform.md", ns=(LATER, LATER))
    assert memory.refresh().parsed == 0
    _write(acme / "policies/leave.md", ACME["policies/leave.md"].replace("Employees earn", "Staff accrue"), LATER + 1)
    assert memory.refresh() == RefreshStats(files=8, parsed=1, removed=0, rebuilt=False, cache="disabled")
    assert _hits(memory, "employees earn") == []
    assert _hits(memory, "staff accrue") == [("policies/leave.md", 1)]
    assert blocker.read_text(encoding="utf-8") == "not a folder"


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """``path`` made unwritable even for root (``chattr +i``); the test skips where the file system or the
    user cannot do that."""
    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(path)], capture_output=True, check=False).returncode:
        pytest.skip("chattr +i is not available here")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(path)], capture_output=True, check=False)


def test_a_cache_database_that_reads_but_cannot_be_written_is_set_aside_not_a_crash(
    acme: Path, settings: Settings
) -> None:
    built = Memory.open(acme, settings).cache
    assert built is not None
    built.close()
    database = index_cache_dir(settings, acme) / "records.sqlite"
    with _immutable(database):
        memory = Memory.open(acme, settings)
        assert memory.cache is None and "; indexing in memory" in memory.warnings[0]
        assert _files(memory, "sick days") == ["policies/leave.md"]


def test_a_corrupt_state_file_is_treated_as_absent_and_rebuilt(acme: Path, settings: Settings) -> None:
    first = Memory.open(acme, settings)
    state_file = index_cache_dir(settings, acme) / "index" / "state.pkl"
    assert state_file.is_file()
    state_file.write_bytes(b"\x00garbage\xff" * 10)

    memory = Memory.open(acme, settings)

    assert (memory.stats.rebuilt, memory.stats.cache) == (True, "built")
    for query in ("billing migration", "sick days", "Olena"):
        terms = analyzer.terms(query)
        assert memory.index.top(terms, 10) == first.index.top(terms, 10)
    assert Memory.open(acme, settings).stats.cache == "hit"


def test_the_cache_folder_is_under_the_state_folder_not_the_tree(
    acme: Path, settings: Settings, isolated_state: Path
) -> None:
    before = _listing(acme)
    memory = Memory.open(acme, settings)
    assert memory.cache is not None
    assert memory.cache.folder == index_cache_dir(settings, acme)
    assert memory.cache.folder.is_relative_to(isolated_state)
    assert (memory.cache.folder / "records.sqlite").is_file()
    assert _listing(acme) == before


def test_every_kind_of_bad_file_is_skipped_with_a_reason_and_the_rest_is_indexed(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nSecret notes.\n")
    root = make_tree(
        {
            **ACME,
            "bad_yaml.md": BAD_YAML,
            "not_a_mapping.md": "---\n- one\n- two\n---\n# List\n",
            "latin1.md": "# Café\n\nCafé menu.\n".encode("latin-1"),
            "binary.md": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "huge.md": "# Huge\n\n" + "word " * 400,
        }
    )
    (root / "linked.md").symlink_to(outside)
    memory = Memory.open(root, Settings.from_env(max_file_bytes=1000))
    reasons = {s.rel_path: s.reason for s in memory.skipped}
    assert set(reasons) == {"bad_yaml.md", "not_a_mapping.md", "latin1.md", "binary.md", "huge.md", "linked.md"}
    assert reasons["bad_yaml.md"].startswith("invalid YAML front matter at line 4")
    assert reasons["not_a_mapping.md"] == "front matter must be a mapping of fields, found list"
    assert reasons["latin1.md"].startswith("not UTF-8 (an invalid byte at line 1, offset")
    assert reasons["binary.md"] == "binary content (NUL bytes), not markdown text"
    assert reasons["huge.md"].startswith("larger than the 1,000-byte limit")
    assert "outside the memory root" in reasons["linked.md"]
    assert len(memory.state.catalog) == len(ACME)
    assert memory.sections_count == ACME_SECTIONS


# failures (issue 9): one file never stops the tree, a failed refresh keeps the last good index


def test_a_file_whose_parsing_fails_unexpectedly_is_skipped_with_the_error_named(
    acme: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = intake.parse_document

    def parse(rel_path: str, text: str) -> Document:
        if rel_path == "teams/platform.md":
            raise RuntimeError("parser bug")
        return real(rel_path, text)

    monkeypatch.setattr(intake, "parse_document", parse)
    memory = Memory.open(acme, settings)
    assert memory.skipped == [
        Skipped("teams/platform.md", "could not be indexed (RuntimeError: parser bug); please report this")
    ]
    assert len(memory.state.catalog) == len(ACME) - 1
    assert _files(memory, "sick days") == ["policies/leave.md"]


def test_too_many_files_at_open_is_a_config_error_naming_the_setting(acme: Path) -> None:
    with pytest.raises(ConfigError, match=r"holds more than 7 markdown files .*RETRIEVER_MAX_FILES"):
        Memory.open(acme, Settings.from_env(max_files=7))


def test_a_refresh_that_fails_keeps_the_last_good_index_and_says_why_until_one_succeeds(acme: Path) -> None:
    memory = Memory.open(acme, Settings.from_env(max_files=8))
    extra = acme / "teams/sales.md"
    _write(extra, "# Sales\n\nThe quarterly quota is 2M EUR.\n")

    assert memory.refresh() == memory.stats  # never raises
    assert memory.refresh_error is not None
    assert memory.refresh_error.startswith("the last refresh failed (memory root ")
    assert "holds more than 8 markdown files" in memory.refresh_error
    assert memory.warnings.count(memory.refresh_error) == 1
    memory.refresh()  # a failing watcher round after round does not pile warnings up
    assert len(memory.warnings) == 1
    assert _files(memory, "sick days") == ["policies/leave.md"]
    assert memory.sections_count == ACME_SECTIONS

    extra.unlink()
    memory.refresh()
    assert memory.refresh_error is None
    assert memory.warnings == []


def test_a_refresh_that_fails_half_way_changes_neither_the_cache_nor_the_documents(
    acme: Path, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = Memory.open(acme, settings)
    leave = acme / "policies/leave.md"
    _write(leave, ACME["policies/leave.md"].replace("Employees earn 10 sick days", "Staff accrue 12 sick days"))

    def fail(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(refresh_module, "_analyzed", fail)
    memory.refresh()
    assert memory.refresh_error is not None and "OSError: disk full" in memory.refresh_error
    assert _hits(memory, "employees earn") == [("policies/leave.md", 1)]
    old_section = memory.section(_section_ids(memory, "employees earn")[0])[1]
    assert "Employees earn 10 sick days" in old_section.text  # the document still matches the index

    monkeypatch.undo()
    memory.refresh()  # the edit was not recorded as seen, so it is picked up now
    assert memory.refresh_error is None
    assert _hits(memory, "staff accrue") == [("policies/leave.md", 1)]
    assert Memory.open(acme, settings).stats.parsed == 0
