"""Dates written in words, as the terms an ISO date gives: "10 November 2026" meets "2026-11-10".

A page writes "2026-11-10", a person asks "What happened on 10 November 2026?": the words "10", "november" and
"2026" are each everywhere, and the question had found leadership rituals.  Contract: ``iso_terms(text)`` gives,
for each date written with a month's name (English or Ukrainian) and a year, its ISO month ("2026-11") and, where a
day is given, its ISO day ("2026-11-10"), in order; ``iso_month(token)`` gives an ISO date's month ("2026-11-10" →
"2026-11"), so the month asked ("November 2026") meets the days written.  The text is the analyser's, already
case-folded; each year found is read back a few characters for its month, so the scan is linear.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Month names and their short forms, by the month's number; Ukrainian in the genitive ("10 листопада 2026") and
# the nominative ("листопад 2026").
_NAMES = (
    ("january", "jan", "січня", "січень"),
    ("february", "feb", "лютого", "лютий"),
    ("march", "mar", "березня", "березень"),
    ("april", "apr", "квітня", "квітень"),
    ("may", "травня", "травень"),
    ("june", "jun", "червня", "червень"),
    ("july", "jul", "липня", "липень"),
    ("august", "aug", "серпня", "серпень"),
    ("september", "sep", "sept", "вересня", "вересень"),
    ("october", "oct", "жовтня", "жовтень"),
    ("november", "nov", "листопада", "листопад"),
    ("december", "dec", "грудня", "грудень"),
)
_MONTH = {name: number for number, names in enumerate(_NAMES, 1) for name in names}
_NAME = "(" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
# The words before a year that make it a date: "10 November", "November 10,", "November"; a name is a whole word,
# a day no part of a number.  Matched on the few characters before each year found, never across the text.
_BEFORE_YEAR = re.compile(rf"(?:(?<![\w.]){_DAY}\s{{1,3}}{_NAME}|(?<!\w){_NAME}(?:\s{{1,3}}{_DAY})?),?\s{{1,3}}$")
_YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")
_LOOK = 24  # characters before a year read for its month and day: "september 30th, " is 16
_ISO_DAY = re.compile(r"(\d{4}-(?:0[1-9]|1[0-2]))-\d{2}")


def iso_terms(text: str) -> Iterator[str]:
    """The ISO month and, with a day, the ISO day of each date ``text`` writes with a month's name."""
    for year in _YEAR.finditer(text):
        start = year.start()
        match = _BEFORE_YEAR.search(text, max(0, start - _LOOK), start)
        if match is None:
            continue
        day, name = match.group(1, 2) if match.group(2) else match.group(4, 3)
        month = f"{year.group()}-{_MONTH[name]:02d}"
        yield month
        if day and 1 <= int(day) <= 31:
            yield f"{month}-{int(day):02d}"


def iso_month(token: str) -> str | None:
    """An ISO date's month ("2026-11-10" → "2026-11"), else None."""
    date = _ISO_DAY.fullmatch(token) if len(token) == 10 else None
    return date.group(1) if date else None
