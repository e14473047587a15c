"""An HTML block's pieces: rows under their header, paragraphs and items apart, each at its line; any input, quickly."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.html_blocks import Closed, Row, Text, details, labelled, read, says_nothing


def test_a_tables_first_row_of_th_cells_heads_the_rows_below_it() -> None:
    html = "<table>\n<tr><th>Host</th><th>Rack</th></tr>\n<tr><td>HOST-1</td><td>rack 2</td></tr>\n</table>"
    assert read(html) == [Row(("HOST-1", "rack 2"), ("Host", "Rack"), 3)]


def test_a_thead_heads_the_rows_and_a_table_without_one_has_no_header() -> None:
    headed = "<table><thead><tr><td>A</td><td>B</td></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>"
    assert read(headed) == [Row(("1", "2"), ("A", "B"), 1)]
    assert read("<table><tr><td>1</td><td>2</td></tr></table>") == [Row(("1", "2"), (), 1)]


def test_a_first_row_of_wholly_bold_cells_heads_the_table_and_a_partly_bold_one_does_not() -> None:
    exported = (
        "<table>\n<tr>\n<td><strong>Role</strong>\n</td>\n<td><b>Duty</b></td></tr>\n<tr><td>VP</td><td>Leads</td></tr></table>"
    )
    assert read(exported) == [Row(("VP", "Leads"), ("Role", "Duty"), 6)]
    partly = "<table><tr><td><b>A</b> note</td><td><b>B</b></td></tr><tr><td>1</td><td>2</td></tr></table>"
    assert [row.header for row in read(partly)] == [(), ()]


def test_a_row_label_in_th_after_the_first_row_is_a_cell() -> None:
    html = "<table><tr><th>Plan</th><th>Price</th></tr><tr><th>Team</th><td>$29</td></tr></table>"
    assert read(html) == [Row(("Team", "$29"), ("Plan", "Price"), 1)]


def test_block_tags_part_runs_of_text_and_a_texts_entities_are_left_for_the_parser_to_decode_once() -> None:
    html = "<p>One &amp; two &lt;svc&gt;.</p><p>Three four five</p>\n"
    html += "<div>Four words are here<br>Five words are here</div>"
    assert read(html) == [
        Text("One &amp; two &lt;svc&gt;.", 1),
        Text("Three four five", 1),
        Text("Four words are here", 2),
        Text("Five words are here", 2),
    ]
    assert read("<table><tr><td>A &amp; B</td></tr></table>") == [Row(("A & B",), (), 1)]  # a cell's are decoded


def test_a_short_text_labels_the_text_after_it_and_one_without_letters_is_left_out() -> None:
    html = "<div>Carly Jones</div>\n<div>VP, People &amp; Talent</div><p>—-------</p><li>Six</li>"
    assert read(html) == [Text("Carly Jones: VP, People &amp; Talent", 1), Text("Six", 2, item=True)]


def test_a_summary_is_marked_as_one_even_when_short_and_takes_no_label_itself() -> None:
    html = "<details>\n<summary>FAQ</summary>\n<p>Borrow a loaner laptop from the IT desk.</p>\n</details>"
    assert read(html) == [
        Text("FAQ", 2, summary=True),
        Text("Borrow a loaner laptop from the IT desk.", 3),
        Closed(4),
    ]
    assert read("<div>Onboarding</div><summary>What if it is late?</summary>") == [
        Text("Onboarding: What if it is late?", 1, summary=True)
    ]


@pytest.mark.parametrize(
    ("block", "state"),
    [
        ("<details>\n<summary>What if my laptop has not arrived?</summary>", "opens"),
        ("</details>", "closes"),
        ("<p>Answer.</p></details>", "closes"),
        ("</details>\n<details><summary>Next?</summary>", "opens"),
        ("<details><summary>Q?</summary>A.</details>", "closes"),
        ("<div>No details here</div>", ""),
    ],
)
def test_a_block_opens_or_closes_a_details_by_its_last_summary_and_close(block: str, state: str) -> None:
    assert details(block) == state


def test_a_details_close_is_a_piece_where_it_stands_and_a_controls_words_say_nothing() -> None:
    assert read("<p>Answer here now.</p></details>\n<p>Other words after it.</p>") == [
        Text("Answer here now.", 1),
        Closed(1),
        Text("Other words after it.", 2),
    ]
    assert says_nothing("Click to expand") and says_nothing("Show more…") and not says_nothing("Who approves it?")


def test_a_label_before_a_question_is_written_as_the_question_and_else_with_a_colon() -> None:
    assert labelled("What if it is late?", "Borrow one.") == "What if it is late? Borrow one."
    assert labelled("Carly Jones:", "VP") == "Carly Jones: VP"


def test_a_table_left_open_by_its_block_gives_its_last_row() -> None:
    assert read("<table><tr><td>1</td><td>2</td></tr><tr><td>3</td><td>4</td>") == [
        Row(("1", "2"), (), 1),
        Row(("3", "4"), (), 1),
    ]


def test_cells_of_a_table_the_block_did_not_open_are_one_piece_with_their_words_apart() -> None:
    assert read("<tr><td>CFO</td><td>Approves spend over the limit.</td></tr>") == [
        Text("CFO Approves spend over the limit.", 1)
    ]


def test_block_tags_inside_a_cell_part_its_words() -> None:
    html = "<table><tr><th>A</th><th>B</th></tr>"
    html += "<tr><td>Merge the PR.<br>Wait for CI.</td><td>one<p>two</td></tr></table>"
    assert read(html) == [Row(("Merge the PR. Wait for CI.", "one two"), ("A", "B"), 1)]


def test_a_title_row_across_the_table_is_a_label_and_the_next_bold_row_heads_it() -> None:
    html = (
        "<table><tr><td colspan=6><strong>Career Levels V2</strong></td></tr>"
        "<tr><td><b>Level</b></td><td><b>Scope</b></td></tr><tr><td>IC1</td><td>Own tasks</td></tr></table>"
    )
    assert read(html) == [Text("Career Levels V2", 1, label=True), Row(("IC1", "Own tasks"), ("Level", "Scope"), 1)]


def test_inline_tags_keep_a_sentence_whole_and_script_and_style_are_no_text() -> None:
    html = "<p>Call <b>Ana</b> at <a href='x'>ext 12</a>.</p><script>alert('x')</script><style>p {}</style>"
    assert read(html) == [Text("Call Ana at ext 12.", 1)]


def test_a_runs_line_is_where_its_first_word_stands() -> None:
    assert read("<div>\n\n   Words here\n</div>") == [Text("Words here", 3)]


def test_a_table_inside_a_cell_gives_its_own_rows() -> None:
    html = "<table><tr><td>outer</td><td><table><tr><td>in</td><td>ner</td></tr></table></td></tr></table>"
    assert read(html) == [Row(("in", "ner"), (), 1), Row(("outer", ""), (), 1)]


_PIECES = ["<table>", "</table>", "<tr>", "</tr>", "<td>", "</td>", "<th>", "<thead>", "</thead>", "<p>", "</p>",
           "<li>", "<br>", "<script>", "</script>", "<!--", "-->", "&amp;", "&", "<", ">", "\n", "a", " word "]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=3), max_size=80).map("".join))
def test_any_block_reads_without_raising_into_pieces_with_lines_in_the_block(html: str) -> None:
    lines = html.count("\n") + 1
    for piece in read(html):
        assert 1 <= piece.line <= lines
        assert (piece.text.strip() if isinstance(piece, Text) else any(piece.cells))


@pytest.mark.parametrize("piece", ["<td>", "<tr><td>x", "<table>", "<p>a", "<", "&", "<!--", "<li>", "<a b='"])
def test_a_megabyte_of_one_piece_reads_in_linear_time(piece: str) -> None:
    started = time.perf_counter()
    read(piece * (1_000_000 // len(piece)))
    assert time.perf_counter() - started < 10
