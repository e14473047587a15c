"""The index cache: parsed documents in SQLite, index segments as ``.npy`` files beside a state file."""

from __future__ import annotations

import copyreg
import hashlib
import io
import json
import logging
import os
import pickle
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import TreeFactory
from fixtures import ACME

from retriever.config import Settings
from retriever.memory import cachefiles, locks
from retriever.memory.build import add_sections
from retriever.memory.cache import (
    FORMAT,
    ROOT_FILE,
    DocInfo,
    IndexCache,
    IndexState,
    decode_document,
    encode_document,
)
from retriever.memory.documents import Documents
from retriever.memory.fields import analyze_document
from retriever.memory.fileview import FileRow
from retriever.memory.index import Params, SectionIndex
from retriever.memory.memory import Memory
from retriever.memory.vectors import document_texts
from retriever.text import analyzer
from retriever.text.models import Document, Fingerprint, Section, Unit
from retriever.text.parser import parse_document

GLOSSARY = """---
title: Glossary
---
## Revenue

Monthly recurring revenue (MRR) is billed every month.
"""

SEGMENT_PARTS = ("indptr", "indices", "values", "counts", "fields", "vectors", "scales", "moments")  # a .npy each
QUERIES = ["billing migration", "Olena", "sick days", "Stripe invoices", "MRR", "лікарняних"]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[IndexCache]:
    store = IndexCache(tmp_path / "cache")
    yield store
    store.close()


def _docs(files: dict[str, str]) -> list[Document]:
    return [parse_document(rel, text) for rel, text in sorted(files.items())]


def _add(state: IndexState, docs: list[Document]) -> None:
    """Index ``docs`` as one new segment, keeping the section table in step (as Memory does)."""
    analyzed = [analyze_document(d) for d in docs]
    texts = [text for d in docs for text in document_texts(d)]
    add_sections(state.index, [fields_ for per_doc in analyzed for fields_ in per_doc], texts)
    for doc in docs:
        state.section_files.extend([doc.rel_path] * len(doc.sections))
        state.section_ordinals.extend(range(len(doc.sections)))
        state.catalog[doc.rel_path] = DocInfo(doc.title, doc.doc_type, doc.aliases, len(doc.sections))
        for acronym, expansion in doc.acronyms:
            state.acronyms.setdefault(analyzer.normalize(acronym), set()).add(expansion.casefold())


def _state(docs: list[Document], params: Params | None = None) -> IndexState:
    state = IndexState(SectionIndex(params=params or Params()), [], [])
    state.index.set_avglen([fields_ for d in docs for fields_ in analyze_document(d)])
    _add(state, docs)
    return state


def _segment_files(cache: IndexCache) -> set[str]:
    return {p.name for p in (cache.folder / "index").glob("*.npy")}


def _assert_same_index(loaded: IndexState, saved: IndexState) -> None:
    for query in QUERIES:
        terms = analyzer.terms(query)
        np.testing.assert_array_equal(loaded.index.scores(terms), saved.index.scores(terms))
        assert loaded.index.top(terms, 5) == saved.index.top(terms, 5)
    assert loaded.index.vocab == saved.index.vocab
    assert loaded.index.alive.tolist() == saved.index.alive.tolist()
    assert loaded.index.df.tolist() == saved.index.df.tolist()
    assert loaded.index.avglen == saved.index.avglen
    assert loaded.index.lengths.tolist() == saved.index.lengths.tolist()
    for query in QUERIES:  # document scores come from the raw counts and lengths saved beside the segments
        terms, documents = analyzer.terms(query), saved.section_documents()
        np.testing.assert_array_equal(
            loaded.index.document_scores(terms, loaded.section_documents()),
            saved.index.document_scores(terms, documents),
        )
    sections = range(saved.index.size)
    for query in QUERIES:  # the field masks come back too: reasons and coverage read them
        terms = analyzer.terms(query)
        assert loaded.index.field_terms(sections, terms) == saved.index.field_terms(sections, terms)
    for query in QUERIES:  # meaning vectors come back as the int8 rows and scales they were built as
        vector = saved.index.meaning([query])[0]
        every = np.arange(saved.index.size)
        np.testing.assert_array_equal(loaded.index.cosines_at(vector, every), saved.index.cosines_at(vector, every))
    assert {(s.vectors.dtype.name, s.scales.dtype.name) for s in loaded.index.segments} == {("int8", "float32")}
    for kept, made in zip(loaded.index.segments, saved.index.segments, strict=True):  # the vector sums come back too
        np.testing.assert_array_equal(kept.moments, made.moments)
    assert loaded.index.params == saved.index.params
    assert len(loaded.index.segments) == len(saved.index.segments)
    assert loaded.catalog == saved.catalog
    assert loaded.acronyms == saved.acronyms
    assert loaded.section_files == saved.section_files
    assert loaded.section_ordinals == saved.section_ordinals
    assert loaded.segment_names == saved.segment_names


# files


def test_put_documents_come_back_equal(cache: IndexCache) -> None:
    docs = _docs(ACME)
    for number, doc in enumerate(docs):
        cache.put(doc.rel_path, Fingerprint(100 + number, 1_700_000_000_000_000_000, f"sha-{number}"), doc, None)
    assert cache.documents(["policies/leave.md"]) == {}  # written, not yet published with an index to read them by
    cache.publish()

    assert cache.documents(["policies/leave.md", "teams/platform.md"]) == {
        "policies/leave.md": next(d for d in docs if d.rel_path == "policies/leave.md"),
        "teams/platform.md": next(d for d in docs if d.rel_path == "teams/platform.md"),
    }
    assert cache.documents([d.rel_path for d in docs]) == {d.rel_path: d for d in docs}
    assert cache.documents(["not/there.md"]) == {}
    assert cache.documents([]) == {}


def test_file_rows_hold_fingerprints_and_skip_reasons(cache: IndexCache) -> None:
    doc = parse_document("teams/platform.md", ACME["teams/platform.md"])
    cache.put("teams/platform.md", Fingerprint(321, 1_700_000_000_000_000_001, "aaa"), doc, None)
    cache.put("broken.md", Fingerprint(12, 1_700_000_000_000_000_002, "bbb"), None, "invalid YAML front matter")

    assert cache.file_rows() == {
        "teams/platform.md": FileRow(Fingerprint(321, 1_700_000_000_000_000_001, "aaa"), None),
        "broken.md": FileRow(Fingerprint(12, 1_700_000_000_000_000_002, "bbb"), "invalid YAML front matter"),
    }
    assert cache.documents(["teams/platform.md", "broken.md"]) == {"teams/platform.md": doc}


def test_touch_updates_size_and_mtime_only(cache: IndexCache) -> None:
    doc = parse_document("teams/platform.md", ACME["teams/platform.md"])
    cache.put("teams/platform.md", Fingerprint(321, 1_700_000_000_000_000_000, "aaa"), doc, None)

    cache.touch("teams/platform.md", Fingerprint(322, 1_800_000_000_000_000_000, "zzz"))
    cache.touch("not/there.md", Fingerprint(1, 1, "x"))

    assert cache.file_rows() == {"teams/platform.md": FileRow(Fingerprint(322, 1_800_000_000_000_000_000, "aaa"), None)}
    assert cache.documents(["teams/platform.md"]) == {"teams/platform.md": doc}


def test_forget_removes_rows_and_documents(cache: IndexCache) -> None:
    docs = _docs(ACME)
    for doc in docs:
        cache.put(doc.rel_path, Fingerprint(1, 1, "s"), doc, None)

    cache.forget(["policies/leave.md", "teams/platform.md", "never/there.md"])

    assert sorted(cache.file_rows()) == [
        "decisions/dec_0054.md",
        "people/olena_marchenko.md",
        "people/taras_kovalenko.md",
        "policies/vidpustka.md",
        "projects/billing_migration.md",
        "relationships/northwind_retail.md",
    ]
    assert cache.documents(["policies/leave.md", "teams/platform.md"]) == {}


def test_committed_rows_survive_reopening_the_folder(tmp_path: Path) -> None:
    doc = parse_document("teams/platform.md", ACME["teams/platform.md"])
    first = IndexCache(tmp_path / "cache")
    first.put("teams/platform.md", Fingerprint(5, 6, "abc"), doc, None)
    first.commit()
    first.close()

    second = IndexCache(tmp_path / "cache")
    try:
        assert second.file_rows() == {"teams/platform.md": FileRow(Fingerprint(5, 6, "abc"), None)}
        assert second.documents(["teams/platform.md"]) == {"teams/platform.md": doc}
    finally:
        second.close()


def test_an_unreadable_record_is_left_out_of_documents(cache: IndexCache) -> None:
    doc = parse_document("teams/platform.md", ACME["teams/platform.md"])
    cache.put("teams/platform.md", Fingerprint(1, 1, "a"), doc, None)
    cache.put("garbled.md", Fingerprint(1, 1, "b"), doc, None)
    cache.commit()
    with sqlite3.connect(cache.folder / "records.sqlite") as db:
        db.execute("UPDATE files SET record = ? WHERE rel_path = 'garbled.md'", (b"\x80\x05garbage",))
    db.close()

    assert cache.documents(["teams/platform.md", "garbled.md"]) == {"teams/platform.md": doc}


def test_a_different_stored_format_clears_the_files_and_the_index(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    first = IndexCache(folder)
    first.put("teams/platform.md", Fingerprint(1, 1, "a"), parse_document("teams/platform.md", "Text."), None)
    first.save_index(_state(_docs(ACME)))
    first.commit()
    first.close()
    with sqlite3.connect(folder / "records.sqlite") as db:
        db.execute("UPDATE meta SET value = ? WHERE key = 'format'", (str(FORMAT - 1),))
    db.close()

    with caplog.at_level(logging.WARNING, logger="retriever.memory.cachefiles"):
        second = IndexCache(folder)
    assert caplog.messages == [
        f"the index cache was written by another version (format {FORMAT - 1}; this one reads {FORMAT}); it is rebuilt"
    ]
    try:
        assert second.file_rows() == {}
        assert second.load_index(Params()) is None
        assert not (folder / "index" / "state.pkl").exists()
    finally:
        second.close()
    with sqlite3.connect(folder / "records.sqlite") as db:
        assert db.execute("SELECT value FROM meta WHERE key = 'format'").fetchall() == [(str(FORMAT),)]
    db.close()


# shared by processes (a server and a CLI run, two replicas): each instance keeps the view its index has


def _open_twice(make_tree: TreeFactory) -> tuple[Path, Memory, Memory]:
    files = {"a.md": "# Alpha\n\nThe owner of alpha is Olena.\n", "b.md": "# Beta\n\nOne.\n\n## More\n\nTwo.\n"}
    root = make_tree(files)
    settings = Settings.from_env()
    return root, Memory.open(root, settings), Memory.open(root, settings)


def _headings(memory: Memory) -> list[tuple[str, tuple[str, ...]]]:
    return sorted((memory.state.section_files[sid], memory.section(sid)[1].heading_path) for sid in _live(memory))


def _live(memory: Memory) -> list[int]:
    return [int(sid) for sid in memory.index.alive.nonzero()[0]]


def test_a_memory_sees_files_another_process_reindexed_in_their_shared_cache(make_tree: TreeFactory) -> None:
    root, first, second = _open_twice(make_tree)
    (root / "a.md").write_text("# Alpha\n\nThe owner of alpha is Maksym.\n\n## Budget\n\nZebra quux.\n")
    (root / "b.md").unlink()

    second.refresh()  # writes the new rows first, as the quicker replica's watcher would
    first.refresh()

    assert _headings(first) == _headings(second) == [("a.md", ()), ("a.md", ("Budget",))]
    assert [first.state.section_files[sid] for sid, _ in first.index.top(analyzer.terms("zebra"), 3)] == ["a.md"]


def test_a_document_another_process_replaced_is_read_in_the_version_this_index_holds(make_tree: TreeFactory) -> None:
    root, first, second = _open_twice(make_tree)
    before = _headings(first)
    (root / "b.md").write_text("# Beta\n\nOne, shorter now.\n")
    (root / "a.md").unlink()
    second.refresh()
    first._tree.documents = Documents(first.cache)  # nothing held in memory: every read goes to the cache

    assert _headings(first) == before == [("a.md", ()), ("b.md", ()), ("b.md", ("More",))]
    assert "Olena" in first.section(_live(first)[0])[1].text


def test_prefetch_reads_the_missing_documents_of_many_sections_in_one_cache_read(make_tree: TreeFactory) -> None:
    _, memory, _ = _open_twice(make_tree)
    memory._tree.documents = Documents(memory.cache)  # nothing held in memory
    assert memory.cache is not None
    reads: list[list[str]] = []
    read = memory.cache.documents
    memory.cache.documents = lambda paths: reads.append(sorted(paths)) or read(paths)  # type: ignore[method-assign]

    memory.prefetch(_live(memory))
    headings = _headings(memory)

    assert reads == [["a.md", "b.md"]]
    assert headings == [("a.md", ()), ("b.md", ()), ("b.md", ("More",))]


def test_a_document_record_pickled_the_dataclass_way_still_loads(cache: IndexCache) -> None:
    doc = _docs(ACME)[0]

    class DataclassWay(pickle.Pickler):  # what records written before models' __reduce__ hold
        def reducer_override(self, obj: object) -> Any:
            if isinstance(obj, (Document, Section, Unit)):  # the default for a slotted dataclass
                return copyreg.__newobj__, (type(obj),), obj.__getstate__()  # type: ignore[attr-defined]
            return NotImplemented

    buffer = io.BytesIO()
    DataclassWay(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(doc)

    assert buffer.getvalue() != encode_document(doc)
    assert decode_document(buffer.getvalue()) == decode_document(encode_document(doc)) == doc


def test_an_open_cache_records_its_root_and_is_marked_in_use(make_tree: TreeFactory) -> None:
    root, first, second = _open_twice(make_tree)
    assert first.cache is not None and second.cache is not None
    recorded = json.loads((first.cache.folder / ROOT_FILE).read_text())
    assert recorded["root"] == str(root.resolve()) and recorded["format"] == FORMAT
    with locks.unused(first.cache.folder) as free:
        assert not free
    first.cache.close()
    with locks.unused(first.cache.folder) as free:
        assert not free  # the second still has it open
    second.cache.close()
    with locks.unused(first.cache.folder) as free:
        assert free



def test_a_root_whose_name_is_not_utf8_is_recorded_and_its_cache_used(tmp_path: Path) -> None:
    root = tmp_path / os.fsdecode(b"notes-\xff")  # a Latin-1 name: a lone surrogate once decoded
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAlpha beta.\n")
    Memory.open(root, Settings.from_env())
    memory = Memory.open(root, Settings.from_env())
    assert memory.cache is not None and memory.stats.cache == "hit"
    recorded = json.loads((memory.cache.folder / ROOT_FILE).read_bytes().decode("utf-8", "surrogateescape"))
    assert recorded["root"] == str(root.resolve())


# index


def test_a_saved_index_loads_back_identical(cache: IndexCache) -> None:
    state = _state(_docs({**ACME, "glossary.md": GLOSSARY}))
    state.index.remove([state.section_files.index("teams/platform.md")])
    assert state.acronyms == {"mrr": {"monthly recurring revenue"}}

    cache.save_index(state)
    loaded = cache.load_index(Params())

    assert loaded is not None
    assert len(state.segment_names) == 1
    _assert_same_index(loaded, state)
    assert loaded.index.live_count == 15
    assert _segment_files(cache) == {f"{state.segment_names[0]}.{part}.npy" for part in SEGMENT_PARTS}


def test_a_save_that_fails_half_way_leaves_no_segment_files_and_the_last_save_loads(
    cache: IndexCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache.save_index(_state(_docs(ACME)))
    before = sorted(p.name for p in (cache.folder / "index").iterdir())
    written = 0
    real = cachefiles.save_array

    def disk_fills(path: Path, array: Any) -> None:  # a full disk, three files into the save
        nonlocal written
        written += 1
        if written > 3:
            raise OSError(28, "No space left on device")
        real(path, array)

    monkeypatch.setattr(cachefiles, "save_array", disk_fills)
    with pytest.raises(OSError):
        cache.save_index(_state(_docs({**ACME, "new.md": "# New\n\nA new page.\n"})))

    assert sorted(p.name for p in (cache.folder / "index").iterdir()) == before
    assert cache.load_index(Params()) is not None


def test_nothing_saved_loads_as_none(cache: IndexCache) -> None:
    assert cache.load_index(Params()) is None


def test_an_index_saved_with_other_params_loads_as_none(cache: IndexCache) -> None:
    cache.save_index(_state(_docs(ACME)))
    assert cache.load_index(Params(k1=2.0)) is None
    assert cache.load_index(Params(group_weights=(1.0, 1.0, 1.0))) is None
    assert cache.load_index(Params()) is not None


@pytest.mark.parametrize(
    "garbage",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"this is not a pickle", id="text"),
        pytest.param(b"\x80\x05\x95", id="pickle-cut-short"),
        pytest.param(b"\x00\xff" * 40, id="noise"),
        pytest.param(b"\x80\x05\x8e\xff\xff\xff\xff\xff\xff\xff\x7f", id="impossible-length"),
    ],
)
def test_a_corrupt_state_file_loads_as_none_and_says_so(
    cache: IndexCache, garbage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    cache.save_index(_state(_docs(ACME)))
    (cache.folder / "index" / "state.pkl").write_bytes(garbage)
    assert cache.load_index(Params()) is None
    assert "the saved index at " in caplog.text and "is unreadable" in caplog.text  # why a warm start rebuilt


def test_a_missing_segment_file_loads_as_none_and_says_so(cache: IndexCache, caplog: pytest.LogCaptureFixture) -> None:
    state = _state(_docs(ACME))
    cache.save_index(state)
    (cache.folder / "index" / f"{state.segment_names[0]}.values.npy").unlink()
    assert cache.load_index(Params()) is None
    assert "is unreadable (FileNotFoundError); building it anew" in caplog.text


def test_no_saved_index_loads_as_none_without_a_word(cache: IndexCache, caplog: pytest.LogCaptureFixture) -> None:
    assert cache.load_index(Params()) is None
    assert caplog.text == ""


def test_a_corrupt_saved_history_is_read_again_and_says_so(cache: IndexCache, caplog: pytest.LogCaptureFixture) -> None:
    cache.save_history("abc", {"kept": 1})
    assert cache.load_history("abc") == {"kept": 1} and cache.load_history("def") is None
    assert caplog.text == ""
    (cache.folder / "history-abc.pkl").write_bytes(b"\x80\x05\x95")
    assert cache.load_history("abc") is None
    assert "the saved git history in" in caplog.text


def test_a_second_save_writes_only_the_new_segment(cache: IndexCache) -> None:
    docs = _docs(ACME)
    state = _state(docs[:5])
    cache.save_index(state)
    [first] = state.segment_names
    old_files = _segment_files(cache)
    old_mtimes = {name: 1_600_000_000_000_000_000 + n for n, name in enumerate(sorted(old_files))}
    for name, stamp in old_mtimes.items():
        os.utime(cache.folder / "index" / name, ns=(stamp, stamp))

    _add(state, docs[5:])
    cache.save_index(state)

    [kept, second] = state.segment_names
    assert kept == first
    assert _segment_files(cache) == old_files | {f"{second}.{part}.npy" for part in SEGMENT_PARTS}
    assert {name: (cache.folder / "index" / name).stat().st_mtime_ns for name in old_files} == old_mtimes
    loaded = cache.load_index(Params())
    assert loaded is not None
    _assert_same_index(loaded, state)


def test_saving_a_compacted_index_removes_segments_no_longer_listed(cache: IndexCache) -> None:
    docs = _docs(ACME)
    state = _state(docs[:5])
    cache.save_index(state)
    _add(state, docs[5:])
    cache.save_index(state)
    (cache.folder / "index" / "stray.values.npy").write_bytes(b"left by an old run")

    compacted = _state(docs)
    cache.save_index(compacted)

    [name] = compacted.segment_names
    assert name not in state.segment_names
    assert _segment_files(cache) == {f"{name}.{part}.npy" for part in SEGMENT_PARTS}
    loaded = cache.load_index(Params())
    assert loaded is not None
    _assert_same_index(loaded, compacted)


def test_section_documents_number_each_path_once_and_grow_with_the_section_table() -> None:
    state = IndexState(SectionIndex(), ["a.md", "a.md", "b.md"], [0, 1, 0])
    assert state.section_documents().tolist() == [0, 0, 1]
    # A changed file's sections are added anew at the end; its path keeps its number.
    state.section_files.extend(["a.md", "c.md"])
    assert state.section_documents().tolist() == [0, 0, 1, 0, 2]


def test_a_cache_makes_its_folder_and_missing_parents_readable_by_its_owner_only(tmp_path: Path) -> None:
    # The cache holds the memory's text; under umask 022 its folders were 0755 (the state folder included).
    old = os.umask(0o022)
    try:
        cache = IndexCache(tmp_path / "state" / "caches" / "abc")
    finally:
        os.umask(old)
    try:
        modes = [oct((tmp_path / p).stat().st_mode & 0o777) for p in ("state", "state/caches", "state/caches/abc")]
        assert modes == ["0o700", "0o700", "0o700"]
    finally:
        cache.close()


def test_a_folder_that_exists_keeps_its_mode_when_a_cache_opens_in_it(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o755)
    IndexCache(shared / "abc").close()
    assert (shared.stat().st_mode & 0o777, (shared / "abc").stat().st_mode & 0o777) == (0o755, 0o700)


@pytest.mark.parametrize(
    ("part", "cut"),
    [
        ("values", slice(0, -1)),
        ("fields", slice(0, -1)),
        ("counts", slice(1, None)),
        ("indices", slice(0, -3)),
        ("indptr", slice(0, -1)),
        ("vectors", slice(0, -1)),
        ("scales", slice(0, -1)),
    ],
)
def test_a_shortened_segment_file_loads_as_none_and_a_memory_rebuilds_and_answers(
    make_tree: TreeFactory, part: str, cut: slice
) -> None:
    # A segment file cut short still reads as a well-formed array: only its shape gives it away.
    root, settings = make_tree(ACME), Settings.from_env()
    first = Memory.open(root, settings)
    assert first.cache is not None
    terms = analyzer.terms("billing migration")
    expected = first.index.top(terms, 5)
    [name] = first.state.segment_names
    path = first.cache.folder / "index" / f"{name}.{part}.npy"
    np.save(path, np.load(path)[cut])
    assert first.cache.load_index(Params()) is None
    first.cache.close()

    again = Memory.open(root, settings)

    assert again.stats.cache == "built"
    assert again.index.top(terms, 5) == expected
    assert again.cache is not None and again.cache.load_index(Params()) is not None  # saved whole again
    again.cache.close()


def test_section_indices_past_the_section_count_load_as_none(cache: IndexCache) -> None:
    state = _state(_docs(ACME))
    cache.save_index(state)
    path = cache.folder / "index" / f"{state.segment_names[0]}.indices.npy"
    indices = np.load(path)
    indices[-1] = state.index.size
    np.save(path, indices)
    assert cache.load_index(Params()) is None


@pytest.mark.parametrize("garbage", [os.urandom(50_000), b"SQLite format 3\x00" + b"\xff" * 4080])
def test_a_records_file_that_is_not_a_database_is_moved_aside_and_a_new_one_started(
    tmp_path: Path, garbage: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "cache"
    IndexCache(folder).close()
    (folder / "records.sqlite").write_bytes(garbage)

    cache = IndexCache(folder)
    try:
        cache.put("a.md", Fingerprint(1, 1, "a"), parse_document("a.md", "Text."), None)
        cache.commit()
        assert set(cache.file_rows()) == {"a.md"}
    finally:
        cache.close()

    assert (folder / "records.sqlite.corrupt").read_bytes() == garbage
    [warning] = [r.getMessage() for r in caplog.records if "not a usable database" in r.getMessage()]
    assert f"moved it to {folder / 'records.sqlite.corrupt'} and started a new one" in warning
    reopened = IndexCache(folder)  # the new file is a database: opened as it is, nothing moved again
    assert set(reopened.file_rows()) == {"a.md"}
    reopened.close()
    assert len([r for r in caplog.records if "not a usable database" in r.getMessage()]) == 1


def test_a_records_file_that_stays_unusable_is_moved_aside_once_then_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    IndexCache(folder).close()
    attempts = []

    def never_a_database(db: sqlite3.Connection, format_: int) -> bool:
        attempts.append(format_)
        error = sqlite3.DatabaseError("file is not a database")
        error.sqlite_errorcode = sqlite3.SQLITE_NOTADB
        raise error

    monkeypatch.setattr(cachefiles, "prepare", never_a_database)
    with pytest.raises(sqlite3.DatabaseError, match="not a database"):
        IndexCache(folder)
    assert len(attempts) == 2
    with locks.unused(folder) as free:
        assert free


def test_a_locked_or_unwritable_database_is_not_taken_for_a_corrupt_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "cache"
    IndexCache(folder).close()

    def busy(db: sqlite3.Connection, format_: int) -> bool:
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr(cachefiles, "prepare", busy)
    with pytest.raises(sqlite3.OperationalError):
        IndexCache(folder)
    assert not (folder / "records.sqlite.corrupt").exists()


def test_parsed_records_are_the_cached_parses_of_exactly_the_bytes_asked_for(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    from retriever.config import index_cache_dir

    root = make_tree(ACME)
    Memory.open(root, Settings.from_env())
    folder = index_cache_dir(Settings.from_env(), root)
    path = "policies/leave.md"
    sha1 = hashlib.sha1((root / path).read_bytes(), usedforsecurity=False).hexdigest()
    found = cachefiles.parsed_records(folder, FORMAT, {path: sha1, "policies/travel.md": "0" * 40, "none.md": sha1})
    assert list(found) == [path]  # another version of travel.md, and a file the cache never held: parsed again
    assert decode_document(found[path]).rel_path == path
    assert cachefiles.parsed_records(folder, FORMAT + 1, {path: sha1}) == {}  # another format's records
    assert cachefiles.parsed_records(tmp_path / "no-cache", FORMAT, {path: sha1}) == {}
