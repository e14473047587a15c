"""A document's dates outside git: the front matter's, when they are dates."""

from __future__ import annotations

import datetime

import pytest

from retriever.memory.provenance import when
from retriever.text.vocabulary import first_date


@pytest.mark.parametrize(
    ("front_matter", "created", "valid"),
    [
        ({"created": datetime.date(2026, 3, 1)}, "2026-03-01", "2026-03-01"),
        ({"created": "2026-03-01", "updated": "2026-04-02T09:30:00Z"}, "2026-03-01", "2026-04-02 09:30:00+00:00"),
        ({"created": "20260301", "updated": "2026-W09-1"}, "2026-03-01", "2026-02-23"),
        ({"date": datetime.datetime(2026, 3, 1, 9, 30)}, "2026-03-01 09:30:00", "2026-03-01 09:30:00"),
        ({"created": "today", "date": "2026-05-05"}, "2026-05-05", "2026-05-05"),
        ({"created": "10000-01-01", "updated": 99999999999999999999}, None, None),
        ({"created": ["2026-01-01", "2027-01-01"], "updated": {"a": 1}}, None, None),
        ({"created": "2026-02-30"}, None, None),
    ],
)
def test_front_matter_dates_are_used_only_when_they_are_dates(
    front_matter: dict[str, object], created: str | None, valid: str | None
) -> None:
    """"today", "{'a': 1}" and 20-digit numbers had become facts' created_at, and sorted above real dates."""
    found = when(front_matter, None)
    assert (found.created_at, found.valid_at) == (created, valid)


def test_a_date_is_read_from_the_first_key_that_holds_one() -> None:
    assert first_date({"updated": "soon", "date": " 2026-01-02 "}, ("updated", "date")) == "2026-01-02"
    assert first_date({}, ("updated", "date")) is None


def test_a_date_after_tomorrow_is_no_date_for_recency() -> None:
    import datetime as dt

    from retriever.memory.provenance import credible

    today = dt.date(2026, 12, 5)
    assert credible("2099-01-01", today) == ""  # it had come first of every tie
    assert credible("2026-12-06T23:00:00", today) == "2026-12-06T23:00:00"  # a day of slack for time zones
    assert credible("2026-11-30", today) == "2026-11-30" and credible(None, today) == credible("", today) == ""
