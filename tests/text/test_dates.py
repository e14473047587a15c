"""Days written in words, as ISO writes them."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text.dates import iso_days


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("What happened on 10 November 2026?", ["2026-11-10"]),
        ("released November 10, 2026 and March 14th, 2026", ["2026-11-10", "2026-03-14"]),
        ("Nov. 10 2026, 01-Mar-2026 and 1-May-2026", ["2026-11-10", "2026-03-01", "2026-05-01"]),
        ("March 10–12, 2026 and 10–12 March 2026", ["2026-03-10", "2026-03-12", "2026-03-10", "2026-03-12"]),
        ("10 листопада 2026 року", ["2026-11-10"]),
        # no day: a month alone, a day no calendar has, a year alone or running on, a verb before a number
        ("MRR at the end of June 2026", []),
        ("Feb 30, 2026", []),
        ("the 2026 March madness", []),
        ("it was 5 may 20260", []),
        ("We may 2000 users", []),
        ("top 10 may 2026", []),  # the verb: the month is written "May"
        ("Sprint 14 - March 2026", []),
    ],
)
def test_a_day_written_with_a_months_name_is_its_iso_day(text: str, days: list[str]) -> None:
    assert list(iso_days(text)) == days


@given(st.text(max_size=300))
def test_any_text_gives_only_iso_days(text: str) -> None:
    assert all(len(day) == 10 and day[4] == day[7] == "-" for day in iso_days(text))


def test_a_long_text_of_years_and_month_names_is_read_in_linear_time() -> None:
    text = "November 10, 2026 " * 20_000 + "2026 " * 50_000 + "may " * 50_000
    began = time.monotonic()
    assert len(list(iso_days(text))) == 20_000
    assert time.monotonic() - began < 2.0  # a few hundred milliseconds; the bound is generous
