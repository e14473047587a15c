"""A statement as it is scored and embedded: framed by its parent item or heading when too short to stand alone."""

from __future__ import annotations

from retriever.text.framing import framed
from retriever.text.models import Section, Unit


def _section(title: str = "Sick leave") -> Section:
    return Section(1, title, title, 2, (title,), (5, 9), "", ())


def test_long_statements_stand_alone() -> None:
    unit = Unit("sentence", "Employees earn ten sick days a year.", (6, 6))
    assert framed(unit, _section()) == "Employees earn ten sick days a year."


def test_short_statements_get_their_section_heading() -> None:
    assert framed(Unit("item", "4 hours per pay period", (6, 6)), _section()) == "Sick leave: 4 hours per pay period"


def test_nested_items_get_their_parent_item() -> None:
    unit = Unit("item", "Internet: $50", (7, 7), context="Fringe benefit amount (per month):")
    assert framed(unit, _section()) == "Fringe benefit amount (per month): Internet: $50"


def test_table_rows_are_never_prefixed() -> None:
    row = Unit("row", "Owner: Olena", (8, 8))
    assert framed(row, _section()) == "Owner: Olena"


def test_preamble_statements_have_no_heading_to_borrow() -> None:
    preamble = Section(0, None, "Leave Policy", 0, (), (1, 3), "", ())
    assert framed(Unit("sentence", "Short one.", (2, 2)), preamble) == "Short one."


def test_a_short_front_matter_field_is_never_prefixed_with_the_section_it_opens() -> None:
    field = Unit("field", "Receipts filed within a week.", (3, 3))
    assert framed(field, _section("Cards")) == "Receipts filed within a week."
