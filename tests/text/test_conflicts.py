"""``text.conflicts``: git's merge-conflict markers found outside code, in one pass."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text.conflicts import conflict, refusal
from retriever.text.parser import ParseError, parse_document

MERGED = "# Owner\n\n<<<<<<< HEAD\nThe owner is Maksym.\n=======\nThe owner is Rui.\n>>>>>>> feature\n\nMore.\n"


def test_a_conflict_is_found_from_its_opening_to_its_closing_line() -> None:
    assert conflict(MERGED) == (3, 7)


def test_a_three_way_conflict_with_its_base_section_is_found() -> None:
    assert conflict("a\n<<<<<<< ours\nx\n||||||| base\nz\n=======\ny\n>>>>>>> theirs\n") == (2, 8)


@pytest.mark.parametrize(
    "text",
    [
        "# A\n\n```\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n```\n",  # shown in a code fence
        "~~~~\n<<<<<<< a\n=======\n>>>>>>> b\n~~~~\n",
        "Title\n=======\n\ntext\n",  # a setext underline
        "<<<<<<< HEAD\nx\n",  # an opening without the rest
        "<<<<<<< a\n>>>>>>> b\n=======\n",  # out of order
        "<<<<<<<< a\n========\n>>>>>>>> b\n",  # eight marks are no git marker
        "# Git\n\n<pre>\n<<<<<<< HEAD\nours\n=======\ntheirs\n>>>>>>> branch\n</pre>\n",  # shown in raw HTML
        "# Doc\n\n<!--\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n-->\n",
    ],
)
def test_markers_in_code_or_out_of_order_are_no_conflict(text: str) -> None:
    assert conflict(text) is None


def test_a_fence_with_an_info_string_does_not_close_a_fence() -> None:
    assert conflict("```\n```py\n<<<<<<< a\n=======\n>>>>>>> b\n```\n") is None
    assert conflict("```py\ncode\n```\n<<<<<<< a\n=======\n>>>>>>> b\n") == (4, 6)
    # a backtick run with a backtick after it is inline code, no fence: the conflict below it is one
    assert conflict("```foo``` is inline code\n\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n") == (3, 7)
    assert conflict("<!-- one line -->\n<<<<<<< a\n=======\n>>>>>>> b\n") == (2, 4)  # a closed comment hides nothing


def test_a_file_with_a_conflict_is_refused_at_its_opening_line() -> None:
    with pytest.raises(ParseError) as refused:
        parse_document("owner.md", MERGED)
    assert str(refused.value) == refusal((3, 7)) == (
        "an unresolved merge conflict at line 3 (its markers run to line 7); keep the right text and delete the "
        "<<<<<<<, ======= and >>>>>>> lines"
    )


@given(st.lists(st.sampled_from(["<<<<<<< a", "=======", ">>>>>>> b", "```", "~~~", "text", ""]), max_size=40))
def test_any_lines_are_scanned_without_error(lines: list[str]) -> None:
    found = conflict("\n".join(lines))
    assert found is None or (lines[found[0] - 1].startswith("<<<<<<<") and lines[found[1] - 1].startswith(">>>>>>>"))


def test_two_hundred_thousand_markers_scan_in_well_under_a_second() -> None:
    text = "<<<<<<< a\n=======\n" * 100_000
    started = time.monotonic()
    assert conflict(text) is None
    assert time.monotonic() - started < 1
