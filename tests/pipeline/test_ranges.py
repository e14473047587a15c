"""Amounts a question names and the ranges a statement gives."""

from __future__ import annotations

import math
import time

import pytest
from hypothesis import given as hypothesis_given
from hypothesis import strategies as st

from retriever.pipeline.ranges import MAX_CHARS, Interval, asked, given, within


@pytest.mark.parametrize(
    ("question", "amounts"),
    [
        ("Who needs to sign off on a 15% discount?", (Interval(15, 15, "%"),)),
        ("Can I expense €1,200 for a monitor?", (Interval(1200, 1200, "eur"),)),
        ("Do I need approval to take 3 weeks off?", (Interval(3, 3, "week"),)),
        ("Who approves discounts of at least 20%?", (Interval(20, math.inf, "%"),)),
        ("Is a 5k EUR budget enough?", (Interval(5000, 5000, "eur"),)),
        ("Is a 1,5% fee too much?", (Interval(1.5, 1.5, "%"),)),  # a decimal comma, not 5%
        ("Can I spend 50 € on dinner?", (Interval(50, 50, "eur"),)),
        # a count is in the noun after its figure, by its stem
        ("What discount do we give for 60 seats?", (Interval(60, 60, "n:seat"),)),
        ("What discount do we give for 1,500 seats?", (Interval(1500, 1500, "n:seat"),)),
        ("Who approves leave after 15+ years?", (Interval(15, math.inf, "year"),)),
        # a bare number is no amount: a quarter, a year, a version
        ("What did we plan for Q3 2027?", ()),
        ("What changed in Pulse 4.3?", ()),
        ("What did we decide in the 2026 planning meeting?", ()),  # a year counts nothing
        ("What is new in the 4.3 release?", ()),  # nor a version
    ],
)
def test_a_question_names_amounts_only_with_a_unit(question: str, amounts: tuple[Interval, ...]) -> None:
    assert asked(question) == amounts


def test_fewer_than_is_a_strict_upper_bound_of_the_noun_it_counts() -> None:
    (fewer,) = given("Fewer than 50 employees: no works council is needed.")
    assert fewer.low == -math.inf and fewer.high < 50 and fewer.unit == "n:employe"
    assert within(asked("Do we need a works council with 30 employees?"), "Fewer than 50 employees: none needed.")
    assert not within(asked("Do we need a works council with 50 employees?"), "Fewer than 50 employees: none.")


def test_a_seat_count_is_within_the_row_of_its_band_only() -> None:
    rows = ["Seats: 1–49; Discount: none", "Seats: 50–199; Discount: 10%", "Seats: 1,000+; Discount: 20%"]
    for question, band in [("60 seats", 1), ("1,500 seats", 2), ("20 seats", 0)]:
        amounts = asked(f"What discount do we give for {question}?")
        assert [within(amounts, row) for row in rows] == [i == band for i in range(3)], question
    assert not within(asked("What discount do we give for 60 users?"), rows[1])  # another noun, another count


def test_a_strict_bound_leaves_its_own_figure_out() -> None:
    (above,) = asked("Who approves discounts above 20%?")
    assert above.low > 20 and above.high == math.inf
    (under,) = asked("What can I spend under €60?")
    assert under.high < 60 and under.unit == "eur"


@pytest.mark.parametrize(
    ("statement", "ranges"),
    [
        ("Discount off list: 10–20%; Who approves: Miguel Santos", (Interval(10, 20, "%"),)),
        ("Discount off list: up to 10%; Who approves: Account Executive", (Interval(-math.inf, 10, "%"),)),
        ("Stays of 5 to 10 days need a manager's approval.", (Interval(5, 10, "day"),)),
        ("Released on 2026-11-20 to all tenants.", ()),  # a date's dashes are no range
        ("Discounts from 10% to 20% off list price.", (Interval(10, 20, "%"),)),  # "from 10%" is no bound of its own
        ("Знижка від 10 до 20%.", (Interval(10, 20, "%"),)),
        ("Meals: 50–100 € a head.", (Interval(50, 100, "eur"),)),  # the currency after the figure
        ("Multi-year (3 years): standard 8% extra", ()),  # figures, but no range or bound
        ("Between 31 and 90 days, we refund the unused months.", (Interval(31, 90, "day"),)),
        ("Between 3 and 15 years: 6 hours per pay period", (Interval(3, 15, "year"),)),
        ("Between Ana and Rui, 3 days were agreed.", ()),  # "between" with no amounts
        # a range without a unit counts the noun after it, else what its column or label is named
        ("Seats: 50–199; Discount: 10%", (Interval(50, 199, "n:seat"),)),
        ("Teams of 5 to 10 people need a lead.", (Interval(5, 10, "n:peopl"),)),
        ("Seats: 1,000+; Discount: 20%, negotiated", (Interval(1000, math.inf, "n:seat"),)),
        ("15+ years: 8 hours per pay period", (Interval(15, math.inf, "year"),)),
        ("Releases 2.1 to 2.4 notes", ()),  # versions count nothing
        # nor years, dates or a name after a range; a capitalised noun before one is what it counts
        ("Our 2024–2026 roadmap covers three themes.", ()),
        ("Date: 2026-11-10; Period: 2026-01-01 to 2026-11-20", ()),
        ("Call us 9-5 Monday to Friday", ()),
        ("The offsite runs November 10–12.", ()),  # a month names no count
        ("Growth: 50–199 seats", (Interval(50, 199, "n:seat"),)),  # the noun after it first
        ("Laptops for Levels 1-3.", (Interval(1, 3, "n:level"),)),
    ],
)
def test_a_statement_gives_ranges_and_bounds_with_their_unit(statement: str, ranges: tuple[Interval, ...]) -> None:
    assert given(statement) == ranges


def test_the_row_whose_range_holds_the_amount_is_within_and_the_others_are_not() -> None:
    fifteen, above = asked("Who signs off on a 15% discount?"), asked("Who approves discounts above 20%?")
    rows = ["up to 10%", "10–20%", "above 20%, or any free months"]
    assert [within(fifteen, f"Discount off list: {r}") for r in rows] == [False, True, False]
    assert [within(above, f"Discount off list: {r}") for r in rows] == [False, False, True]
    assert not within(asked("Do I need approval for 3 weeks off?"), "More than 10 days need approval.")  # no conversion


@hypothesis_given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    assert isinstance(within(asked(text), text), bool)


@pytest.mark.parametrize("piece", ["1", "1 to ", "up to 1", "€1,000 ", "10–", " - ", "123 ", "123,", "1 000 000 "])
def test_a_statement_of_repeated_pieces_is_read_in_bounded_time(piece: str) -> None:
    # A list of 3-digit codes ("123 456 …") had taken 0.4 s a statement, for each candidate of a question with an
    # amount: 38.7 s for one question over five such files.  Now a few milliseconds; the bound is generous.
    texts = [f"{i} {piece * 100_000}" for i in range(10)]  # ten statements: each is read (``given`` is cached)
    assert len(texts[0]) > MAX_CHARS
    began = time.monotonic()
    assert all(isinstance(given(text), tuple) and isinstance(asked(text[:8000]), tuple) for text in texts)
    assert time.monotonic() - began < 2.0
