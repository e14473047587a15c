"""markdown-it's block parser, read one top-level block at a time within budgets."""

from __future__ import annotations

import pytest
from markdown_it.token import Token

from retriever.text import blocks
from retriever.text.front_matter import ParseError


def test_each_top_level_block_is_handed_over_apart_and_the_tokens_never_all_held() -> None:
    batches: list[list[str]] = []

    def feed(tokens: list[Token]) -> None:
        batches.append([t.type for t in tokens])

    blocks.parse("# Title\n\nA paragraph.\n\n- one\n- two\n", feed)
    assert [b for b in batches if b] == [
        ["heading_open", "inline", "heading_close"],
        ["paragraph_open", "inline", "paragraph_close"],
        ["bullet_list_open", "list_item_open", "paragraph_open", "inline", "paragraph_close", "list_item_close",
         "list_item_open", "paragraph_open", "inline", "paragraph_close", "list_item_close", "bullet_list_close"],
    ]


def test_a_budget_run_out_names_the_file_line_of_its_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "MAX_BLOCK_TOKENS", 20)
    with pytest.raises(ParseError, match=r"in the block at line 5\)$"):  # two lines of front matter before the body
        blocks.parse("Intro.\n\n" + "".join(f"- item {i}\n" for i in range(10)), lambda tokens: None, offset=2)
