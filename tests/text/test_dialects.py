"""Site generators' markdown read as plain markdown: MkDocs admonition and tab bodies moved left, lines kept."""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.dialects import readable
from retriever.text.parser import parse_document

PAGE = """# On-call

??? info "Compensation"

    On-call engineers are paid 200 EUR per week.

=== "Primary"

    The primary carries the pager from 09:00.

!!! warning "Escalation"
    PagerDuty escalates after 15 minutes.

Back to text.

    indented code stays code
"""


def test_admonition_and_tab_bodies_are_statements_under_their_titles_at_their_lines() -> None:
    units = parse_document("on-call.md", PAGE).sections[0].units
    assert [(u.text, u.lines) for u in units] == [
        ("Compensation:", (3, 3)),
        ("On-call engineers are paid 200 EUR per week.", (5, 5)),
        ("Primary:", (7, 7)),
        ("The primary carries the pager from 09:00.", (9, 9)),
        ("Escalation: PagerDuty escalates after 15 minutes.", (11, 12)),
        ("Back to text.", (14, 14)),
    ]


def test_an_indented_block_after_other_text_and_a_fenced_one_stay_code() -> None:
    body = "Text.\n\n    code\n\n```\n!!! note\n    still code\n```\n"
    assert readable("a.md", body) == body


def test_a_setext_underline_is_no_tab() -> None:
    body = "Title\n===\n\n    code\n"
    assert readable("a.md", body) == body


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["!!! note", "??? x", '=== "T"', "    body", "\tbody", "", "```", "x"]), max_size=40))
def test_lines_are_never_added_or_removed(lines: list[str]) -> None:
    body = "\n".join(lines)
    assert readable("a.md", body).count("\n") == body.count("\n")


def test_a_megabyte_of_markers_and_bodies_reads_in_linear_time() -> None:
    started = time.perf_counter()
    readable("a.md", "!!! note\n    body\n" * 60_000)
    assert time.perf_counter() - started < 2


def test_an_admonition_nested_in_a_tab_moves_left_a_level_more() -> None:
    body = '=== "Linux"\n\n    !!! warning\n\n        Run the installer as root.\n\n'
    body += "        ```\n        code\n        ```\nAfter."
    assert readable("a.md", body).split("\n") == [
        '=== "Linux"', "", "!!! warning", "", "Run the installer as root.", "", "```", "code", "```", "After."
    ]


def test_blank_lines_inside_an_html_table_are_held_and_an_unclosed_table_is_left_as_it_is() -> None:
    body = "<table>\n<tr><td>a</td></tr>\n\n<tr><td>b</td></tr>\n</table>\n\ntext"
    assert readable("a.md", body) == "<table>\n<tr><td>a</td></tr>\n<!---->\n<tr><td>b</td></tr>\n</table>\n\ntext"
    unclosed = "<table>\n<tr><td>a</td></tr>\n\n# Heading\n\n</table>"
    assert readable("a.md", unclosed) == unclosed  # a heading comes first: not held
