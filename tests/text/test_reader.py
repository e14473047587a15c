"""The file-system seam: which files make the memory tree, and their decoded text."""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.errors import ConfigError
from retriever.text import reader, walk
from retriever.text.models import Skipped
from retriever.text.reader import ENTRIES_PER_FILE, MAX_DEPTH, Entry, Unreadable, read_text, scan

if TYPE_CHECKING:
    from conftest import TreeFactory


def _paths(root: Path) -> list[str]:
    return [e.rel_path for e in scan(root)[0]]


# scan


def test_scan_lists_markdown_files_sorted_with_posix_relative_paths(make_tree: TreeFactory) -> None:
    root = make_tree({"zeta.md": "z", "teams/sales/plan.md": "p", "alpha.md": "a", "teams/about.markdown": "m"})
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["alpha.md", "teams/about.markdown", "teams/sales/plan.md", "zeta.md"]
    assert skipped == []


def test_scan_reports_each_files_size_and_the_later_of_its_mtime_and_ctime(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "hello", "b.md": "world!"})
    later = 4_000_000_000_000_000_000  # after any ctime: the mtime counts
    os.utime(root / "a.md", ns=(1_700_000_000_000_000_000, later))
    os.utime(root / "b.md", ns=(1_700_000_000_000_000_000, 1_700_000_000_123_456_789))  # set back: the ctime counts
    ctime = (root / "b.md").stat().st_ctime_ns
    assert ctime > 1_700_000_000_123_456_789
    assert scan(root) == ([Entry("a.md", 5, later), Entry("b.md", 6, ctime)], [])


def test_scan_ignores_hidden_files_and_folders(make_tree: TreeFactory) -> None:
    root = make_tree({".git/HEAD.md": "x", ".obsidian/workspace.md": "x", ".hidden.md": "x", "kept.md": "k"})
    assert _paths(root) == ["kept.md"]


def test_scan_ignores_editor_noise(make_tree: TreeFactory) -> None:
    root = make_tree({"foo.md~": "x", "#foo.md#": "x", ".#foo.md": "x", "foo.md.swp": "x", "foo.md": "f"})
    assert _paths(root) == ["foo.md"]


def test_scan_leaves_out_a_wikis_sidebar_footer_and_header_and_reads_names_like_them(make_tree: TreeFactory) -> None:
    # GitHub's wiki shows them around every page: page names and links, which had come back as facts.
    chrome = {"_Sidebar.md": "x", "_Footer.md": "x", "team/_sidebar.markdown": "x", "_Header.md": "x"}
    root = make_tree({**chrome, "Home.md": "h", "Sidebar.md": "s", "_Sidebar-notes.md": "n", "_drafts/plan.md": "p"})
    assert _paths(root) == ["Home.md", "Sidebar.md", "_Sidebar-notes.md", "_drafts/plan.md"]
    assert not walk.is_memory_file("_Footer.md") and walk.is_memory_file("_drafts/plan.md")


def test_a_name_starting_with_a_hash_is_read_unless_it_also_ends_with_one_as_emacs_autosaves_do(
    make_tree: TreeFactory,
) -> None:
    root = make_tree({"#notes.md": "n", "#drafts/plan.md": "p", "#plan.md#": "x", "#old#/a.md": "x"})
    assert _paths(root) == ["#drafts/plan.md", "#notes.md"]
    assert walk.is_memory_file("#notes.md") and not walk.is_memory_file("#old#/a.md")


def test_scan_ignores_non_markdown_files(make_tree: TreeFactory) -> None:
    root = make_tree({"notes.txt": "x", "data.csv": "x", "logo.png": b"\x89PNG", "doc.md": "d"})
    assert _paths(root) == ["doc.md"]


def test_scan_reads_mdx_pages_as_markdown(make_tree: TreeFactory) -> None:
    root = make_tree({"docs/faq.mdx": "x", "docs/FAQ2.MDX": "x", "notes.markdown": "x", "site.mdxx": "x"})
    assert _paths(root) == ["docs/FAQ2.MDX", "docs/faq.mdx", "notes.markdown"]
    assert walk.is_memory_file("docs/faq.mdx") and not walk.is_memory_file(".docusaurus/faq.mdx")


def test_scan_honours_a_gitignore_in_the_root(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            ".gitignore": "drafts/\n*.secret.md\n",
            "drafts/d.md": "x",
            "teams/pw.secret.md": "x",
            "teams/plan.md": "p",
        }
    )
    assert _paths(root) == ["teams/plan.md"]


def test_scan_honours_a_nested_gitignore_relative_to_its_folder(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            "sub/.gitignore": "local.md\n/anchored.md\n",
            "local.md": "kept: the rule is in sub/",
            "sub/local.md": "x",
            "sub/deep/local.md": "x",
            "sub/anchored.md": "x",
            "sub/deep/anchored.md": "kept: /anchored.md only matches in sub/",
        }
    )
    assert _paths(root) == ["local.md", "sub/deep/anchored.md"]


def test_a_gitignore_line_that_is_no_valid_pattern_is_left_out_and_the_others_still_apply(
    make_tree: TreeFactory,
) -> None:
    root = make_tree(
        {
            ".gitignore": "[z-a]\ndrafts/\n",
            "sub/.gitignore": "*.tmp.md\n!\n[z-a]\nsecret.md\n\\\n",
            "a.md": "a",
            "drafts/d.md": "x",
            "sub/b.md": "b",
            "sub/secret.md": "x",
            "sub/x.tmp.md": "x",
        }
    )
    entries, skipped = scan(root)  # before: GitIgnorePatternError (or re.error) ended the whole scan
    assert [e.rel_path for e in entries] == ["a.md", "sub/b.md"]
    assert [s.rel_path for s in skipped] == [".gitignore", "sub/.gitignore"]
    top, sub = (s.reason for s in skipped)
    assert top.startswith("the pattern at line 1 ('[z-a]') is invalid (bad character range z-a): git leaves")
    assert top.endswith("which applies the file's other lines; fix or remove it")
    assert sub.startswith("the pattern at line 2 ('!') is invalid (not a pattern git reads), and so are those at")
    assert "at lines 3 and 5: git leaves such lines out" in sub and sub.endswith("fix or remove them")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_symlink_leading_outside_the_root_is_skipped_with_a_reason(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({"a.md": "a"})
    outside = tmp_path / "outside.md"
    outside.write_text("secret", encoding="utf-8")
    os.symlink(outside, root / "out.md")
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["a.md"]
    assert skipped == [Skipped("out.md", "symlink leads outside the memory root; copy the file in instead")]
    assert "outside" in skipped[0].reason


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_symlink_to_a_file_inside_the_root_is_listed(make_tree: TreeFactory) -> None:
    root = make_tree({"teams/a.md": "hello"})
    os.symlink(Path("teams") / "a.md", root / "alias.md")
    entries, skipped = scan(root)
    assert [(e.rel_path, e.size) for e in entries] == [("alias.md", 5), ("teams/a.md", 5)]
    assert skipped == []


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_a_symlink_to_a_folder_is_not_followed_and_says_so(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({"a.md": "a", "teams/b.md": "b"})
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "c.md").write_text("c", encoding="utf-8")
    os.symlink(shared, root / "shared")  # a shared folder linked in: passed over without a word until now
    os.symlink("teams", root / "squads")  # inside the root: still a link, still not followed
    (root / ".gitignore").write_text("ignored-link\n", encoding="utf-8")
    os.symlink(shared, root / "ignored-link")
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["a.md", "teams/b.md"]
    assert [s.rel_path for s in skipped] == ["shared", "squads"]
    assert skipped[0].reason.startswith("symlink to a folder: not followed")


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_dangling_symlink_is_skipped_with_a_reason(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    os.symlink("missing.md", root / "dangling.md")
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["a.md"]
    assert skipped == [Skipped("dangling.md", "symlink does not lead to a file")]


# read_text


def test_read_text_returns_the_text_and_the_sha1_of_the_bytes(make_tree: TreeFactory) -> None:
    data = "# Пам'ять\n\nCafé notes.\n".encode()
    root = make_tree({"a.md": data})
    assert read_text(root, "a.md", 1000) == ("# Пам'ять\n\nCafé notes.\n", hashlib.sha1(data).hexdigest())


def test_read_text_strips_a_utf8_bom_but_hashes_the_raw_bytes(make_tree: TreeFactory) -> None:
    data = b"\xef\xbb\xbfhello\n"
    root = make_tree({"bom.md": data})
    assert read_text(root, "bom.md", 1000) == ("hello\n", hashlib.sha1(data).hexdigest())


def test_read_text_refuses_a_file_over_the_size_limit(make_tree: TreeFactory) -> None:
    root = make_tree({"big.md": "x" * 1500})
    with pytest.raises(Unreadable) as caught:
        read_text(root, "big.md", 1000)
    assert str(caught.value) == "larger than the 1,000-byte limit (1,500 bytes); split it or raise max_file_bytes"


def test_read_text_accepts_a_file_exactly_at_the_size_limit(make_tree: TreeFactory) -> None:
    root = make_tree({"edge.md": "x" * 1000})
    assert read_text(root, "edge.md", 1000)[0] == "x" * 1000


def test_read_text_refuses_binary_content(make_tree: TreeFactory) -> None:
    root = make_tree({"bin.md": b"ab\x00cd"})
    with pytest.raises(Unreadable, match=r"^binary content \(NUL bytes\), not markdown text$"):
        read_text(root, "bin.md", 1000)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be", "utf-32", "utf-32-be"])
def test_text_in_utf16_or_utf32_with_its_byte_order_mark_is_named_so_not_binary(encoding: str) -> None:
    wide = ("\ufeff# Title\n" if encoding.endswith("-be") else "# Title\n").encode(encoding)  # with its mark
    name = "UTF-32" if "32" in encoding else "UTF-16"
    with pytest.raises(Unreadable, match=rf"^{name} text \(it opens with that byte-order mark\), not UTF-8; re-save"):
        reader.decode(wide)  # before: "binary content (NUL bytes)"


def test_read_text_refuses_non_utf8_naming_the_line_and_byte_offset(make_tree: TreeFactory) -> None:
    root = make_tree({"latin1.md": "# Menu\n\ncafé\n".encode("latin-1")})
    with pytest.raises(Unreadable) as caught:
        read_text(root, "latin1.md", 1000)
    assert str(caught.value) == "not UTF-8 (an invalid byte at line 3, offset 11); re-save it as UTF-8"


def test_read_text_of_a_missing_file_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(Unreadable, match=r"^cannot be read: No such file or directory$"):
        read_text(tmp_path, "nope.md", 1000)


# hostile trees (issue 9): every problem is a skip with a reason, never an exception


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_a_symlink_loop_is_skipped_with_a_reason(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    os.symlink("loop_b.md", root / "loop_a.md")
    os.symlink("loop_a.md", root / "loop_b.md")
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["a.md"]
    reason = "symlink loop (the links lead to each other); point it at a real file"
    assert sorted(skipped, key=lambda s: s.rel_path) == [Skipped("loop_a.md", reason), Skipped("loop_b.md", reason)]


def test_a_file_name_that_is_not_utf8_is_skipped_under_a_printable_name(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    with open(os.path.join(os.fsencode(root), b"bad\xff\xfe.md"), "wb") as handle:
        handle.write(b"# Bad name\n")
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["a.md"]
    assert skipped == [Skipped("bad\\xff\\xfe.md", "file name is not valid UTF-8; rename it")]
    skipped[0].rel_path.encode("utf-8")  # storable in SQLite and printable: no surrogates left


def test_a_folder_name_that_is_not_utf8_is_skipped_and_not_entered(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    folder = os.path.join(os.fsencode(root), b"notes\xff")
    os.mkdir(folder)
    with open(os.path.join(folder, b"inner.md"), "wb") as handle:
        handle.write(b"# Inner\n")
    assert scan(root) == (
        [Entry("a.md", 1, (root / "a.md").stat().st_mtime_ns)],
        [Skipped("notes\\xff", "folder name is not valid UTF-8; rename it")],
    )


def test_folders_deeper_than_the_limit_are_skipped_with_a_reason(make_tree: TreeFactory) -> None:
    deepest_read = "/".join(["d"] * MAX_DEPTH)
    root = make_tree({f"{deepest_read}/kept.md": "k", f"{deepest_read}/d/d/lost.md": "x"})
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == [f"{deepest_read}/kept.md"]
    assert skipped == [
        Skipped(f"{deepest_read}/d", "folder nested deeper than 64 levels; not read (move its files nearer the root)")
    ]


def test_a_fifo_is_skipped_with_a_reason_and_the_scan_never_opens_it(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    os.mkfifo(root / "pipe.md")
    entries, skipped = scan(root)  # opening a FIFO with no writer would block here
    assert [e.rel_path for e in entries] == ["a.md"]
    assert skipped == [Skipped("pipe.md", "not a regular file (a FIFO); remove it or give it a name without .md")]


def test_a_socket_is_skipped_with_a_reason(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a"})
    here = os.getcwd()
    os.chdir(root)  # a relative address stays under the 108-byte AF_UNIX limit
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.bind("sock.md")
    finally:
        os.chdir(here)
    reason = "not a regular file (a socket); remove it or give it a name without .md"
    assert scan(root)[1] == [Skipped("sock.md", reason)]


def test_read_text_of_a_fifo_is_unreadable_at_once_instead_of_blocking(make_tree: TreeFactory) -> None:
    root = make_tree({})
    os.mkfifo(root / "pipe.md")
    outcome: list[BaseException] = []
    reading = threading.Thread(target=lambda: _capture(outcome, root), daemon=True)
    reading.start()
    reading.join(timeout=10)
    if reading.is_alive():  # the read blocked: give it a writer so the thread ends, then fail
        with open(root / "pipe.md", "wb"):
            pass
        pytest.fail("read_text blocked on a FIFO")
    assert [str(e) for e in outcome] == ["not a regular file; remove it or give it a name without .md"]


def _capture(outcome: list[BaseException], root: Path) -> None:
    try:
        read_text(root, "pipe.md", 1000)
    except Unreadable as exc:
        outcome.append(exc)


def test_more_markdown_files_than_max_files_stops_the_scan_naming_root_and_setting(make_tree: TreeFactory) -> None:
    root = make_tree({f"n{i}.md": "x" for i in range(4)})
    assert len(scan(root, max_files=4)[0]) == 4
    with pytest.raises(ConfigError) as caught:
        scan(root, max_files=3)
    assert caught.value.code == "invalid_config"
    assert caught.value.message == (
        f"memory root {str(root.resolve())!r} holds more than 3 markdown files (the max_files setting, "
        "RETRIEVER_MAX_FILES, is 3); pass --root the memory folder itself, or raise RETRIEVER_MAX_FILES"
    )


def test_a_tree_of_many_other_files_stops_the_scan_too(make_tree: TreeFactory) -> None:
    root = make_tree({f"img{i}.png": b"x" for i in range(ENTRIES_PER_FILE * 2 + 1)})
    with pytest.raises(ConfigError, match=r"holds more than 40 files and folders .*RETRIEVER_MAX_FILES"):
        scan(root, max_files=2)


# read_text reads only the file the walk vetted


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
def test_read_text_refuses_a_plain_file_swapped_for_a_symlink_since_the_walk(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree({"flip.md": "mine", "other.md": "someone else's"})
    outside = tmp_path / "outside.md"
    outside.write_text("the outside secret", encoding="utf-8")
    entries = {e.rel_path: e for e in scan(root)[0]}
    for target in (outside, root / "other.md"):  # outside the root, or another file of it: either is not flip.md
        (root / "flip.md").unlink()
        (root / "flip.md").symlink_to(target)
        with pytest.raises(Unreadable, match="changed since the tree was listed"):
            read_text(root, "flip.md", 1000, entries["flip.md"])


def test_read_text_refuses_a_symlink_the_walk_accepted_once_it_leads_elsewhere(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree({"a.md": "a", "b.md": "b"})
    (root / "alias.md").symlink_to("a.md")
    entries = {e.rel_path: e for e in scan(root)[0]}
    assert read_text(root, "alias.md", 1000, entries["alias.md"])[0] == "a"
    outside = tmp_path / "outside.md"
    outside.write_text("the outside secret", encoding="utf-8")
    for target in (outside, root / "b.md"):
        (root / "alias.md").unlink()
        (root / "alias.md").symlink_to(target)
        with pytest.raises(Unreadable, match="changed since the tree was listed"):
            read_text(root, "alias.md", 1000, entries["alias.md"])


def test_read_text_refuses_a_file_replaced_by_another_since_the_walk(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "old"})
    (entry,) = scan(root)[0]
    (root / "new.md").write_text("new", encoding="utf-8")
    os.replace(root / "new.md", root / "a.md")  # an editor's atomic save: a new inode at the same path
    with pytest.raises(Unreadable, match="changed since the tree was listed"):
        read_text(root, "a.md", 1000, entry)
    assert read_text(root, "a.md", 1000)[0] == "new"  # vetted afresh, it reads


def test_read_text_without_an_entry_refuses_a_symlink_or_folder_leading_outside(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree({"a.md": "a"})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.md").write_text("the outside secret", encoding="utf-8")
    (root / "out.md").symlink_to(outside / "x.md")
    (root / "dir").symlink_to(outside)
    for rel in ("out.md", "dir/x.md"):
        with pytest.raises(Unreadable, match="outside the memory root"):
            read_text(root, rel, 1000)


# a folder swapped while the walk reaches it: listed only if it is still the folder its parent's listing showed

FOLDER_CHANGED = (
    "folder changed while it was read (replaced or swapped for a symlink); it is read again at the next refresh"
)


def _swap_before_listing(monkeypatch: pytest.MonkeyPatch, rel_dir: str, swap: Callable[[], None]) -> None:
    """Run ``swap`` once, just before the walk lists ``rel_dir`` (its parent's listing saw a folder there): the
    race, made deterministic."""
    real, pending = walk._Walk.folder, [swap]

    def folder(self: walk._Walk, directory: Path, rel: str, *rest: Any) -> Any:
        if rel == rel_dir and pending:
            pending.pop()()
        return real(self, directory, rel, *rest)

    monkeypatch.setattr(walk._Walk, "folder", folder)


def _elsewhere(base: Path) -> Path:
    """A folder outside the memory root (``/etc``, another user's memory) with a markdown file at two levels."""
    outside = base / "elsewhere"
    (outside / "b").mkdir(parents=True)
    (outside / "secret.md").write_text("the outside secret", encoding="utf-8")
    (outside / "b" / "secret.md").write_text("the outside secret", encoding="utf-8")
    return outside


def _move_away(folder: Path, base: Path) -> None:
    """Move a folder out of the tree but keep it: its inode is not reused by the folder swapped in."""
    away = base / "moved-away"
    away.mkdir(exist_ok=True)
    os.rename(folder, away / str(len(os.listdir(away))))


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
@pytest.mark.parametrize("target", ["outside", "inside"])
def test_a_folder_swapped_for_a_symlink_before_it_is_listed_is_skipped_not_followed(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    root = make_tree({"a.md": "a", "notes/n.md": "n", "z.md": "z"})
    outside = _elsewhere(tmp_path)

    def swap() -> None:
        _move_away(root / "notes", tmp_path)
        (root / "notes").symlink_to(outside if target == "outside" else root, target_is_directory=True)

    _swap_before_listing(monkeypatch, "notes", swap)
    entries, skipped = scan(root)

    assert [e.rel_path for e in entries] == ["a.md", "z.md"]  # not notes/secret.md, read through the link
    assert skipped == [Skipped("notes", FOLDER_CHANGED)]


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
def test_a_folder_replaced_by_another_before_it_is_listed_is_skipped(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({"a.md": "a", "notes/n.md": "n"})
    outside = _elsewhere(tmp_path)

    def swap() -> None:
        _move_away(root / "notes", tmp_path)
        os.rename(outside, root / "notes")

    _swap_before_listing(monkeypatch, "notes", swap)

    assert scan(root) == (
        [Entry("a.md", 1, (root / "a.md").stat().st_mtime_ns)],
        [Skipped("notes", FOLDER_CHANGED)],
    )
    assert [e.rel_path for e in scan(root)[0]] == ["a.md", "notes/b/secret.md", "notes/secret.md"]  # next refresh


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
def test_a_folder_whose_parent_was_swapped_for_a_symlink_after_its_listing_is_skipped(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({"a.md": "a", "notes/b/n.md": "n"})
    outside = _elsewhere(tmp_path)

    def swap() -> None:  # notes/ was listed; notes/b, reached through notes -> elsewhere, is elsewhere/b
        _move_away(root / "notes", tmp_path)
        (root / "notes").symlink_to(outside, target_is_directory=True)

    _swap_before_listing(monkeypatch, "notes/b", swap)
    entries, skipped = scan(root)

    assert [e.rel_path for e in entries] == ["a.md"]
    assert skipped == [Skipped("notes/b", FOLDER_CHANGED)]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="symlinks unsupported")
def test_a_root_given_as_a_symlink_to_a_folder_is_read(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({"a.md": "a", "notes/n.md": "n"})
    (tmp_path / "link").symlink_to(root, target_is_directory=True)
    assert scan(tmp_path / "link") == scan(root)
    assert _paths(tmp_path / "link") == ["a.md", "notes/n.md"]


def test_a_gitignore_that_is_a_fifo_is_ignored_and_never_opened_blocking(make_tree: TreeFactory) -> None:
    root = make_tree({"a.md": "a", "sub/b.md": "b"})
    os.mkfifo(root / "sub" / ".gitignore")
    entries, skipped = scan(root)  # opening a FIFO with no writer would block here
    assert [e.rel_path for e in entries] == ["a.md", "sub/b.md"]
    assert skipped == []


FOLDERS = st.lists(
    st.lists(st.sampled_from("abc"), min_size=1, max_size=3).map("/".join), min_size=1, max_size=6, unique=True
)


@pytest.mark.skipif(not hasattr(os, "O_NOFOLLOW"), reason="O_NOFOLLOW unsupported")
@settings(max_examples=60, deadline=None, database=None)
@given(FOLDERS, st.data(), st.sampled_from(["symlink outside", "symlink to the root", "another folder"]))
def test_whichever_folder_is_swapped_as_the_walk_reaches_it_only_its_files_are_left_out(
    folders: list[str], data: st.DataObject, how: str
) -> None:
    swapped = data.draw(st.sampled_from(folders))
    with tempfile.TemporaryDirectory() as temp, pytest.MonkeyPatch.context() as monkeypatch:
        base = Path(temp)
        root = base / "memory"
        for folder in folders:
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / "n.md").write_text(folder, encoding="utf-8")
        outside = _elsewhere(base)

        def swap() -> None:
            _move_away(root / swapped, base)
            if how == "another folder":
                os.rename(outside, root / swapped)
            else:
                (root / swapped).symlink_to(outside if how == "symlink outside" else root, target_is_directory=True)

        _swap_before_listing(monkeypatch, swapped, swap)
        entries, skipped = scan(root)

    kept = sorted(f"{f}/n.md" for f in folders if f != swapped and not f.startswith(f"{swapped}/"))
    assert [e.rel_path for e in entries] == kept
    assert skipped == [Skipped(swapped, FOLDER_CHANGED)]


def test_a_gitignore_over_its_bound_applies_its_first_lines_and_says_the_rest_were_not_read(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk, "MAX_GITIGNORE_BYTES", 40)
    rules = "hidden.md\n" + "#" * 25 + "\n" + "late.md\n" * 3  # the first two lines fit in 40 bytes
    root = make_tree({"hidden.md": "h", "late.md": "l", "kept.md": "k", ".gitignore": rules})
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["kept.md", "late.md"]
    assert [s.rel_path for s in skipped] == [".gitignore"]
    assert "only its first 2 lines apply" in skipped[0].reason


def test_a_path_too_long_for_the_system_is_no_folder_not_an_oserror(tmp_path: Path) -> None:
    assert reader.is_folder(tmp_path)
    assert not reader.is_folder(tmp_path / ("a" * 5_000))  # Path.is_dir raises ENAMETOOLONG here
    assert not reader.is_folder(tmp_path / "missing")


def test_a_looping_link_resolves_as_written_and_a_missing_home_is_left_unexpanded(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    assert reader.resolved(tmp_path / "loop" / "x") == tmp_path / "loop" / "x"  # Path.resolve: RuntimeError
    assert not reader.is_file(tmp_path / "loop") and not reader.is_file(tmp_path / ("a" * 5_000))
    assert reader.expanded(Path("~no-such-user-here/c.toml")) == Path("~no-such-user-here/c.toml")


def test_a_gitignore_of_more_lines_than_its_bound_applies_its_first_lines_and_says_so(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(walk, "MAX_GITIGNORE_LINES", 3)  # every file is matched against every line, each refresh
    root = make_tree({"a.md": "a", "b.md": "b", "c.md": "c", ".gitignore": "a.md\n# note\nb.md\nc.md\n"})
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["c.md"]
    assert [(s.rel_path, s.reason) for s in skipped] == [
        (".gitignore", "it has over 3 lines: only its first 3 apply; shorten it")
    ]


def test_a_gitignore_line_too_long_to_match_is_left_out_and_the_others_apply(make_tree: TreeFactory) -> None:
    # 500 KB of "[ab]" in one line: RE2 spent seconds, then refused it, and every command ended in a traceback.
    rules = "hidden.md\n" + "[ab]" * 125_000 + "\nlate.md\n"
    root = make_tree({"hidden.md": "h", "late.md": "l", "kept.md": "k", ".gitignore": rules})
    entries, skipped = scan(root)
    assert [e.rel_path for e in entries] == ["kept.md"]
    assert [s.rel_path for s in skipped] == [".gitignore"]
    assert skipped[0].reason.startswith("the pattern at line 2 ('[ab][ab]")
    assert "(too long to match)" in skipped[0].reason
