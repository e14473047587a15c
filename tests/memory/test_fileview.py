"""One cache instance's view of the file rows: read once, its own writes on top, committed or rolled back."""

from __future__ import annotations

from retriever.memory.fileview import FileRow, FileView
from retriever.text.models import Fingerprint


def _row(sha1: str, skipped: str | None = None) -> FileRow:
    return FileRow(Fingerprint(1, 1, sha1), skipped)


def test_writes_show_at_once_and_last_only_when_committed() -> None:
    reads: list[int] = []
    view = FileView(lambda: reads.append(1) or {"a.md": _row("a1"), "b.md": _row("b1")})

    view.set("a.md", _row("a2"))
    view.set("b.md", None)
    view.set("c.md", _row("c1", "not UTF-8"))
    assert view.rows() == {"a.md": _row("a2"), "c.md": _row("c1", "not UTF-8")}
    view.rollback()
    assert view.rows() == {"a.md": _row("a1"), "b.md": _row("b1")}

    view.set("b.md", None)
    view.commit()
    view.rollback()
    assert view.rows() == {"a.md": _row("a1")} and view.row("b.md") is None
    assert reads == [1]  # the committed rows are read once; later rows of other processes never enter


def test_reset_replaces_the_committed_rows_and_drops_pending_writes() -> None:
    view = FileView(dict)
    view.set("a.md", _row("a1"))
    view.reset({"z.md": _row("z1")})
    assert view.rows() == {"z.md": _row("z1")}


def test_readers_see_a_write_only_once_published_and_a_rollback_hides_it_again() -> None:
    view = FileView(lambda: {"a.md": _row("a1")})
    view.set("a.md", _row("a2"))
    view.set("b.md", _row("b1"))
    assert view.row("a.md") == _row("a2") and view.published_row("a.md") == _row("a1")
    assert view.published_row("b.md") is None
    view.publish()
    assert view.published_row("a.md") == _row("a2") and view.published_row("b.md") == _row("b1")
    view.rollback()
    assert view.published_row("a.md") == _row("a1") and view.published_row("b.md") is None
    view.set("a.md", None)
    view.publish()
    assert view.published_row("a.md") is None
    view.commit()
    assert view.published_row("a.md") is None and view.row("a.md") is None
