"""Documents held in memory and read from the index cache; a damaged cache record is read from its file again."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest
from conftest import TreeFactory

from retriever import Retriever
from retriever.config import Settings
from retriever.errors import DocumentUnavailable
from retriever.memory.cache import IndexCache, decode_document
from retriever.memory.documents import Documents
from retriever.memory.memory import Memory
from retriever.service.service import MemoryService
from retriever.service.sources import READ_SOURCE
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import TOOL_NAME

LEAVE = "# Leave\n\n## Allowance\n\nStaff take 25 days of paid leave a year.\n\nCarry-over is capped at five days.\n"
TRAVEL = "# Travel\n\n## Hotels\n\nHotels are paid up to 130 euros a night.\n"
QUESTION = "How many days of paid leave do staff take?"


def _damage(cache: IndexCache, rel_path: str) -> None:
    """Overwrite the middle of a file's record, as a bad disk sector or a stray write would."""
    db = sqlite3.connect(cache.folder / "records.sqlite")
    (blob,) = db.execute("SELECT record FROM files WHERE rel_path = ?", (rel_path,)).fetchone()
    middle = len(blob) // 2
    db.execute("UPDATE files SET record = ? WHERE rel_path = ?", (blob[:middle] + b"\xff" * 16, rel_path))
    db.commit()
    db.close()


def _cold(memory: Memory) -> IndexCache:
    """The memory's cache, with nothing held in memory: every document is read from the cache."""
    assert memory.cache is not None
    memory._tree.documents = Documents(memory.cache, recover=memory._tree._recover)
    return memory.cache


def _record(cache: IndexCache, rel_path: str) -> bytes:
    db = sqlite3.connect(cache.folder / "records.sqlite")
    (blob,) = db.execute("SELECT record FROM files WHERE rel_path = ?", (rel_path,)).fetchone()
    db.close()
    return bytes(blob)


def test_a_damaged_record_is_read_from_its_file_and_the_question_still_answers(
    make_tree: TreeFactory, caplog: pytest.LogCaptureFixture
) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    Retriever(root).retrieve(QUESTION)  # builds the cache
    retriever = Retriever(root, refresh_interval=3600)  # no refresh between the two questions
    cache = retriever.memory.cache
    assert cache is not None
    _damage(cache, "leave.md")
    _cold(retriever.memory)

    with caplog.at_level(logging.WARNING, logger="retriever.memory.cache"):
        first = retriever.retrieve(QUESTION)
        again = retriever.retrieve(QUESTION)

    assert "Staff take 25 days of paid leave a year." in [f.statement for f in first.facts][:2]
    assert [f.statement for f in again.facts] == [f.statement for f in first.facts]
    [warning] = [r.getMessage() for r in caplog.records]
    assert "'leave.md' is damaged" in warning
    assert cache.damaged() == {"leave.md"}


def test_the_next_refresh_stores_a_damaged_record_again(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    cache = _cold(memory)
    _damage(cache, "leave.md")
    memory.document("leave.md")  # found damaged, read from the file

    memory.refresh()

    assert cache.damaged() == frozenset()
    assert decode_document(_record(cache, "leave.md")).sections[1].heading_path == ("Allowance",)
    fresh = Memory.open(root, Settings.from_env())
    assert [s.heading_path for s in fresh.document("leave.md").sections] == [(), ("Allowance",)]


def test_a_damaged_record_of_a_file_edited_since_is_not_read_from_the_new_file(make_tree: TreeFactory) -> None:
    # The new bytes would give sections the index does not number; the next refresh indexes them instead.
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    cache = _cold(memory)
    _damage(cache, "leave.md")
    (root / "leave.md").write_text("# Leave\n\nRewritten: 30 days.\n", encoding="utf-8")

    with pytest.raises(DocumentUnavailable, match=r"'leave\.md' is damaged and the file changed"):
        memory.document("leave.md")
    memory.refresh()

    assert "30 days" in memory.document("leave.md").sections[0].text


def test_a_path_the_tree_never_held_is_a_key_error_without_reading_any_file(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE})
    memory = Memory.open(root, Settings.from_env())
    asked: list[str] = []
    assert memory.cache is not None
    memory._tree.documents = Documents(memory.cache, recover=lambda path: asked.append(path))  # type: ignore[func-returns-value]

    with pytest.raises(KeyError):
        memory.document("travel.md")
    assert asked == []


def test_a_sound_record_is_decoded_not_read_from_its_file(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    assert memory.cache is not None
    asked: list[str] = []
    memory._tree.documents = Documents(memory.cache, recover=lambda path: asked.append(path))  # type: ignore[func-returns-value]

    assert memory.document("leave.md").sections[1].heading_path == ("Allowance",)
    assert asked == []
    assert memory.cache.damaged() == frozenset()


def test_documents_without_a_cache_hold_every_document(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE})
    documents = Documents(None)
    memory = Memory.open(root, Settings.from_env())
    doc = memory.document("leave.md")
    documents.update({"leave.md": doc}, [])

    assert documents.get("leave.md") is doc
    documents.update({}, ["leave.md"])
    with pytest.raises(KeyError):
        documents.get("leave.md")


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [(TOOL_NAME, {"prompt": QUESTION}), (READ_SOURCE, {"source_path": "leave.md"})],
)
def test_a_document_that_cannot_be_read_now_is_a_logged_error_result_naming_the_next_step(
    make_tree: TreeFactory, tmp_path: Path, tool: str, arguments: dict[str, str]
) -> None:
    # It had escaped the service as an exception: no request-log record, -32603 over HTTP, "internal error" on stdio.
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    retriever = Retriever(root, Settings.from_env(), refresh_interval=1e9)
    service = MemoryService(retriever, SQLiteStore(tmp_path / "store.sqlite"), watch=False)
    try:
        _damage(_cold(retriever.memory), "leave.md")
        (root / "leave.md").write_text("# Leave\n\nRewritten: staff take 30 days of paid leave.\n", encoding="utf-8")

        result = service.call_tool(tool, arguments)

        assert result["isError"] is True
        assert result["structuredContent"]["error_code"] == "document_unavailable"
        assert "ask again once the memory has refreshed" in result["content"][0]["text"]
        assert [r["error_code"] for r in service.requests(10, None, None)] == ["document_unavailable"]
    finally:
        service.close()
    assert isinstance(DocumentUnavailable("x"), KeyError)  # as a path the tree never held is


def test_a_damaged_record_found_by_one_process_is_stored_again_by_the_next_ones_load(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    first = Memory.open(root, Settings.from_env())
    cache = _cold(first)
    _damage(cache, "leave.md")
    first.document("leave.md")  # found damaged, read from the file, its row flagged for every process

    second = Memory.open(root, Settings.from_env())  # a CLI run: its load refreshes before any question

    assert second.cache is not None and second.cache.damaged() == frozenset()
    assert decode_document(_record(second.cache, "leave.md")).sections[1].heading_path == ("Allowance",)
    assert second.refresh().parsed == 0  # stored again once, not at every load


def test_a_damaged_file_deleted_is_no_longer_listed_as_damaged(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    cache = _cold(memory)
    _damage(cache, "leave.md")
    memory.document("leave.md")
    (root / "leave.md").unlink()

    memory.refresh()

    assert cache.damaged() == frozenset()
    with pytest.raises(KeyError):
        memory.document("leave.md")


def test_a_damaged_record_stored_again_stays_listed_until_the_store_is_committed(make_tree: TreeFactory) -> None:
    root = make_tree({"leave.md": LEAVE, "travel.md": TRAVEL})
    memory = Memory.open(root, Settings.from_env())
    cache = _cold(memory)
    _damage(cache, "leave.md")
    memory.document("leave.md")  # found damaged
    row = cache.file_rows()["leave.md"]
    sound = memory.document("travel.md")

    cache.put("leave.md", row.fingerprint, sound, None)  # a refresh that fails after storing it
    cache.rollback()
    assert cache.damaged() == {"leave.md"}  # the damaged bytes are still what the cache holds

    cache.put("leave.md", row.fingerprint, sound, None)
    assert cache.damaged() == {"leave.md"}
    cache.commit()
    assert cache.damaged() == frozenset()
