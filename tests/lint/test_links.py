"""The link rules on wiki links as Obsidian and GitHub wikis write them: attachments, embeds, either side of a |."""

from __future__ import annotations

import time
from pathlib import Path

from conftest import TreeFactory

from retriever.config import Settings
from retriever.lint.check import check
from retriever.memory.memory import Memory

PNG = b"\x89PNG\r\n\x1a\n" + bytes(16)


def _broken(root: Path) -> list[tuple[str, int, str]]:
    memory = Memory.open(root, Settings.from_env())
    return [(f.file, f.line, f.message) for f in check(memory) if f.rule == "broken-link"]


def test_an_embed_or_link_of_an_attachment_anywhere_in_the_tree_is_not_broken(make_tree: TreeFactory) -> None:
    # Obsidian finds an attachment by its name anywhere in the vault: each had been a broken-link error.
    body = (
        "# Atlas\n\n![[atlas.png]] and ![[Atlas.PNG|300]] and [[spec.pdf]].\n\n"
        "![[attachments/atlas.png]] and [[../attachments/atlas.png]] and [[files/deep/spec.pdf#page=2]].\n"
    )
    files = {"projects/atlas.md": body, "attachments/atlas.png": PNG, "files/deep/spec.pdf": b"%PDF-1.4\n"}
    assert _broken(make_tree(files)) == []


def test_a_missing_attachment_a_hidden_one_or_a_name_without_its_extension_is_still_broken(
    make_tree: TreeFactory,
) -> None:
    body = "# Notes\n\n![[missing.png]]\n\n[[workspace.png]]\n\n[[atlas]]\n\n[[other/atlas.png]]\n"
    files = {"notes.md": body, "attachments/atlas.png": PNG, ".obsidian/workspace.png": PNG}
    found = _broken(make_tree(files))
    assert [(line, message.split(" matches")[0]) for _, line, message in found] == [
        (3, "[[missing.png]]"),
        (5, "[[workspace.png]]"),
        (7, "[[atlas]]"),
        (9, "[[other/atlas.png]]"),
    ]


def test_a_github_wiki_link_written_text_then_page_passes_when_either_side_names_a_page(
    make_tree: TreeFactory,
) -> None:
    body = "# Home\n\nRead the [[Deploy guide|Deployment-Guide]].\n\nAnd the [[Error list|Error-Kodes]].\n"
    files = {"Home.md": body, "Deployment-Guide.md": "# Deployment Guide\n\nDeploy on Tuesdays.\n"}
    assert _broken(make_tree(files)) == [
        (
            "memory/Home.md",
            5,
            "[[Error list|Error-Kodes]]: no side of its | matches a document title, alias or file name; "
            "fix the name, or add it to the aliases of the document it means",
        )
    ]


def test_an_obsidian_link_to_nothing_is_broken_though_its_shown_text_is_a_pages_title(make_tree: TreeFactory) -> None:
    files = {"Home.md": "# Home\n\nAsk [[Ana Costa (old)|Ana Costa]].\n", "Ana Costa.md": "# Ana Costa\n\nSRE.\n"}
    assert [line for _, line, _ in _broken(make_tree(files))] == [3]


def test_an_mdx_page_is_checked_without_its_comments_and_links_to_it_are_checked_as_markdown(
    make_tree: TreeFactory,
) -> None:
    page = "import Tabs from '@theme/Tabs';\n\n# Install\n\n{/* [old](gone.md) */}\n[FAQ](faq.mdx) [back](index.md)\n"
    files = {"docs/index.md": "# Docs\n\nRead [install](installation.mdx) and [faq](faq.mdx).\n"}
    root = make_tree({**files, "docs/installation.mdx": page, "docs/faq.mdx.bak": "x"})
    assert [(file, line, message.split(",")[0]) for file, line, message in _broken(root)] == [
        ("memory/docs/index.md", 3, "link `faq.mdx` points to docs/faq.mdx"),
        ("memory/docs/installation.mdx", 6, "link `faq.mdx` points to docs/faq.mdx"),
    ]


def test_hostile_wiki_links_are_checked_in_linear_time(make_tree: TreeFactory) -> None:
    body = "# Doc\n\n" + "![[" * 10_000 + "\n\n" + "![[a.png]] " * 60_000 + "\n\n" + "[[x|" + "y" * 1_000_000 + "]]\n"
    root = make_tree({"doc.md": body, "a.png": PNG})
    started = time.perf_counter()
    found = _broken(root)
    assert time.perf_counter() - started < 5
    assert [line for _, line, _ in found] == [7]


def test_a_link_to_a_page_the_memory_leaves_out_is_broken_only_where_no_such_file_is(make_tree: TreeFactory) -> None:
    # A wiki's _Sidebar.md is on disk but no document (``walk``): a link to it had been "not in the tree".
    body = "# Home\n\nSee the [sidebar](_Sidebar.md) and the [footer](_Footer.md).\n"
    files = {"Home.md": body, "_Sidebar.md": "- [[Home]]\n"}
    assert [(line, message.split(",")[0]) for _, line, message in _broken(make_tree(files))] == [
        (3, "link `_Footer.md` points to _Footer.md")
    ]
