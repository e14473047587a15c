"""Days written in words, as ISO writes them: "10 November 2026" asks for what the memory dates "2026-11-10".

A page writes "2026-11-10", a person asks "What happened on 10 November 2026?": the words "10", "november" and
"2026" are each in every dated page (an ISO date is also its month's name: ``analyzer``), and the question had found
rituals that "happen".  Contract: ``iso_days(text)`` gives, in order, the ISO day ("2026-11-10") of each day ``text``
writes with a month's name (English, its short forms, or Ukrainian): "10 November 2026", "November 10, 2026",
"Nov. 10 2026", "10-Nov-2026", "10 листопада 2026", and both ends of "March 10–12, 2026" and "10–12 March 2026";
none for a month alone ("June 2026"), a day no calendar has ("Feb 30, 2026"), a year that runs on into digits,
"Sprint 14 - March 2026" or a lower-case "may".
Case does not matter.  Each year found is read back a few characters for its month and days, so the scan is
linear.  The question's terms take them (``pipeline.query``); the index is not changed: it holds the ISO dates pages
write as terms already.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator

# Month names and their short forms, by the month's number; Ukrainian in the genitive ("10 листопада 2026").
_NAMES = (
    ("january", "jan", "січня"),
    ("february", "feb", "лютого"),
    ("march", "mar", "березня"),
    ("april", "apr", "квітня"),
    ("may", "травня"),
    ("june", "jun", "червня"),
    ("july", "jul", "липня"),
    ("august", "aug", "серпня"),
    ("september", "sep", "sept", "вересня"),
    ("october", "oct", "жовтня"),
    ("november", "nov", "листопада"),
    ("december", "dec", "грудня"),
)
_MONTH = {name: number for number, names in enumerate(_NAMES, 1) for name in names}
_NAME = "(" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\.?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DAYS = rf"{_DAY}(?:\s{{0,2}}[–—-]\s{{0,2}}{_DAY})?"  # "10", "10–12"
# The words before a year that make it a day: "10 November", "10–12 March", "10-Nov-", "November 10,", "Nov 10–12,".
_BEFORE_YEAR = re.compile(
    rf"(?:(?<![\w.]){_DAYS}(?:\s{{1,3}}|-){_NAME}|(?<!\w){_NAME}\s{{1,3}}{_DAYS}),?(?:\s{{1,3}}|-)$", re.I
)
YEAR = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")  # a year, no part of a longer number
_LOOK = 32  # characters before a year read for its month and days: "september 30th – 31st, " is 24


def iso_days(text: str) -> Iterator[str]:
    """The ISO day of each day ``text`` writes with a month's name (see the module's contract)."""
    if "20" not in text and "19" not in text:  # a year's first digits, by substring checks: most texts hold none
        return
    for year in YEAR.finditer(text):
        start = year.start()
        match = _BEFORE_YEAR.search(text, max(0, start - _LOOK), start)
        if match is None:
            continue
        first, last, name = match.group(1, 2, 3) if match.group(3) else match.group(5, 6, 4)
        if name == "may":  # the verb ("top 10 may 2026"): the month is written "May"
            continue
        for day in (first, last):
            found = _day(int(year.group()), _MONTH[name.lower()], day)
            if found is not None:
                yield found


def _day(year: int, month: int, day: str | None) -> str | None:
    if day is None:
        return None
    try:
        return dt.date(year, month, int(day)).isoformat()
    except ValueError:  # 30 February
        return None
