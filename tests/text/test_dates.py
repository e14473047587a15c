"""Dates written in words, as the terms an ISO date gives."""

from __future__ import annotations

import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text.dates import iso_month, iso_terms


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("what happened on 10 november 2026?", ["2026-11", "2026-11-10"]),
        ("released november 10, 2026 and march 14th, 2026", ["2026-11", "2026-11-10", "2026-03", "2026-03-14"]),
        ("mrr at the end of june 2026", ["2026-06"]),
        ("version 3.1 (nov 2025)", ["2025-11"]),
        ("mar. 3, 2026", ["2026-03", "2026-03-03"]),
        ("10 листопада 2026 року", ["2026-11", "2026-11-10"]),
        ("45 june 2026", ["2026-06"]),  # no such day: the month alone
        # no date: a year alone, a word that only begins like a month, a number that runs on
        ("in 2026 we grew", []),
        ("decembers 2026", []),
        ("summary 2026", []),
        ("it was 5 may 20260", []),
    ],
)
def test_a_date_written_with_a_months_name_gives_its_iso_month_and_day(text: str, terms: list[str]) -> None:
    assert list(iso_terms(text)) == terms


def test_an_iso_dates_month_is_its_first_seven_characters_and_a_month_has_none() -> None:
    assert [iso_month("2026-11-10"), iso_month("2026-11"), iso_month("2026-13-01")] == ["2026-11", None, None]


@given(st.text(max_size=300))
def test_any_text_gives_only_iso_months_and_days(text: str) -> None:
    assert all(len(term) in (7, 10) and term[4] == "-" for term in iso_terms(text.casefold()))


def test_a_long_text_of_years_and_month_names_is_read_in_linear_time() -> None:
    text = "november 10, 2026 " * 20_000 + "2026 " * 50_000 + "may " * 50_000
    began = time.monotonic()
    assert len(list(iso_terms(text))) == 40_000
    assert time.monotonic() - began < 2.0  # a few hundred milliseconds; the bound is generous
