"""Amounts a question names, and the ranges a statement gives, compared.

"Who signs off on a 15% discount?" is answered by the row "10–20% | Miguel Santos", which shares no word or
figure with it: all the matrix's rows held the question's words alike, and the row of "up to 10%" had led.  A
statement whose range holds the question's amount is that amount's answer; ``score`` ranks it ``ScoreParams.
range_bonus`` higher (the order only: the answerability evidence stays the words').

Contract: ``asked(question)`` is the amounts a question names, each as an ``Interval`` in a unit: a figure with a
percent sign, a currency or a unit of time ("15%", "€500", "3 weeks"), a count of the noun after it ("60 seats",
"300 users": the unit is the noun's stem), or a bound of one ("above 20%", "under €60", "more than 10 days", "15+
years"); none for a bare number ("Q3", "2027", "4.3", "in 2026 planning": a year is no count).
``within(amounts, statement)`` is True when a range or bound the statement gives in the same unit ("10–20%",
"between 31 and 90 days", "up to 10%", "from €1,000", "over 5 days", "1,000+", "fewer than 50 employees") overlaps
one of them; a range with no unit of its own counts the noun after it or, in a row, what its column is named
("Seats: 50–199" counts seats, so "60 seats" is within it).  A bare figure of the statement is no range ("€60"
answers "under €60" by its words, not here).  Every pattern is bounded and only the first ``MAX_CHARS`` of a
statement are read.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain

from retriever.text import analyzer, dates

MAX_CHARS = 2000  # of a statement read for ranges
MAX_AMOUNTS = 4  # a question's amounts compared

# Units: what a figure is counted in.  Currencies before or after it, percent and time after it.
_CURRENCY = {"€": "eur", "eur": "eur", "euro": "eur", "euros": "eur", "$": "usd", "usd": "usd", "£": "gbp",
             "gbp": "gbp", "₴": "uah", "uah": "uah", "грн": "uah"}
_AFTER = {"%": "%", "percent": "%", "per cent": "%", "відсотків": "%", "hour": "hour", "hours": "hour",
          "day": "day", "days": "day", "week": "week", "weeks": "week", "month": "month", "months": "month",
          "year": "year", "years": "year", **_CURRENCY}
# A figure: thousands grouped by a comma or a space ("1,190", "12 000"; at most three groups, none running on into
# digits: an unbounded run backtracked quadratically over a list of 3-digit codes, 0.4 s a statement), or a number
# with a decimal point or a decimal comma of one or two digits ("1,5%").
_NUMBER = r"(\d{1,3}(?:[,\u202f ]\d{3}){1,3}(?![\d,.])|\d{1,9}(?:\.\d{1,4}|,\d{1,2}(?!\d))?)\s?(k|K)?"
_BEFORE = r"(€|\$|£|₴)?\s?"
_UNIT = (
    r"\s?(%|percent|per cent|відсотків|hours?|days?|weeks?|months?|years?|eur|euros?|usd|gbp|uah|грн|€|\$|£|₴)?(?!\w)"
)
_AMOUNT = _BEFORE + _NUMBER + _UNIT
# Bounds, as data: the words before an amount, and which side of it they leave open.
_LOWER = r"above|over|more\s+than|at\s+least|from|min(?:imum)?|beyond|exceeding|понад|більше|від"
_UPPER = r"up\s+to|under|below|less\s+than|fewer\s+than|at\s+most|max(?:imum)?|до|менше"
_START = r"(?<![\w.,])"  # an amount starts no figure's middle
_RANGE = re.compile(_START + _AMOUNT + r"\s?(?:–|—|-|to|до)\s?" + _AMOUNT, re.I)
# "between 31 and 90 days", in _RANGE's groups
_BETWEEN = re.compile(r"(?<!\w)(?:between|між)\s+" + _AMOUNT + r"\s+(?:and|і|й|та)\s+" + _AMOUNT, re.I)
_BOUND = re.compile(r"(?<!\w)(" + _LOWER + "|" + _UPPER + r")\s+" + _AMOUNT, re.I)
_PLAIN = re.compile(_START + _AMOUNT, re.I)
_LOWER_WORDS = re.compile(r"^(?:" + _LOWER + r")$", re.I)
_STRICT = re.compile(
    r"^(?:above|over|more\s+than|beyond|exceeding|понад|більше|under|below|less\s+than|fewer\s+than|менше)$", re.I
)
_PLUS = re.compile(_START + _BEFORE + _NUMBER + r"\+" + _UNIT, re.I)  # "1,000+", "15+ years": that many or more
# What a unit-less figure counts: the word after it ("60 seats"), else, for a statement's range, the name of the
# column or label it is the value of ("Seats: 50–199").  Read within a few characters: a bounded look either side.
_NOUN_AFTER = re.compile(r"\s{1,3}([^\W\d_]{2,30})")
_LABEL_BEFORE = re.compile(r"([^\W\d_]{2,30})\s{0,3}:\s{0,3}$")
_LOOK = 40  # characters before a range read for its label
_DATE_NEXT = re.compile(r"-\d")  # a figure that runs on into a date's next part ("2026-11-10")
_NAMED_BEFORE = re.compile(r"(?<!\S)([A-ZА-ЯІЇЄҐ][^\W\d_]{1,29})\s{1,3}$")  # "Levels 1-3": the name it counts
_MONTH_NAME = re.compile(r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*$", re.I)  # "November 10–12"
_FRACTION = re.compile(r"\d(?:\.\d|,\d{1,2}(?!\d))")  # nor a version or a measure: "4.3 release notes"


@dataclass(frozen=True, slots=True)
class Interval:
    """``low`` to ``high`` (either may be infinite) in ``unit``; both ends included (a strict bound, "above 20%",
    ends just past its figure)."""

    low: float
    high: float
    unit: str

    def overlaps(self, other: Interval) -> bool:
        return self.unit == other.unit and self.low <= other.high and other.low <= self.high


_GROUPED = re.compile(r"\d{1,3}(?:[,\u202f ]\d{3})+")


def _value(number: str, thousands: str | None) -> float:
    """"1,190" → 1190; "1,5" → 1.5 (a decimal comma); "10k" → 10000."""
    plain = re.sub(r"[,\u202f ]", "", number) if _GROUPED.fullmatch(number) else number.replace(",", ".")
    return float(plain) * (1000 if thousands else 1)


def _unit(before: str | None, after: str | None) -> str | None:
    if before:
        return _CURRENCY[before]
    return _AFTER.get((after or "").lower())


def _counted(text: str, match: re.Match[str], label: bool) -> str | None:
    """The unit of a figure written without one: the stem of the lower-case noun after ``match`` ("60 seats" →
    "n:seat", "Growth 50–199 seats" too; not "9-5 Monday"), else (``label``) of the name it is the value of: a label
    before a colon ("Seats: 50–199") or a capitalised noun just before it ("Pages 10-20", not "November 10–12").  None
    where a figure is a
    year or part of a date ("2024–2026 roadmap", "Date: 2026-11-10"), has a fraction (a version) or counts nothing
    found."""
    if dates.YEAR.search(match.group()) or _FRACTION.search(match.group()) or _DATE_NEXT.match(text, match.end()):
        return None
    noun = _NOUN_AFTER.match(text, match.end())
    if noun is not None and not noun.group(1).islower():
        noun = None  # "9-5 Monday": a name follows, not what is counted
    if noun is None and label:
        before = text[max(0, match.start() - _LOOK) : match.start()]
        named = _NAMED_BEFORE.search(before)
        noun = _LABEL_BEFORE.search(before) or (named if named and not _MONTH_NAME.match(named.group(1)) else None)
    counted = analyzer.terms(noun.group(1)) if noun else []
    return f"n:{counted[0]}" if len(counted) == 1 else None


def asked(question: str) -> tuple[Interval, ...]:
    """The amounts ``question`` names (see the module's contract), at most ``MAX_AMOUNTS``."""
    text = question[:MAX_CHARS]
    out: list[Interval] = []
    spans: list[tuple[int, int]] = []
    for match in chain(_BOUND.finditer(text), _PLUS.finditer(text)):
        if (found := _bound(text, match)) is not None:
            out.append(found)
            spans.append(match.span())
    for match in _PLAIN.finditer(text):
        unit = _unit(match.group(1), match.group(4)) or _counted(text, match, label=False)
        if unit and not any(start <= match.start() < end for start, end in spans):
            value = _value(match.group(2), match.group(3))
            out.append(Interval(value, value, unit))
    return tuple(out[:MAX_AMOUNTS])


def _bound(text: str, match: re.Match[str]) -> Interval | None:
    """A bound (``_BOUND``: its words, then an amount) or a figure with a plus (``_PLUS``: an amount's groups)."""
    if match.re is _PLUS:
        unit = _unit(match.group(1), match.group(4)) or _counted(text, match, label=True)
        return None if unit is None else Interval(_value(match.group(2), match.group(3)), math.inf, unit)
    unit = _unit(match.group(2), match.group(5)) or _counted(text, match, label=True)
    if unit is None:
        return None
    value = _value(match.group(3), match.group(4))
    words = " ".join(match.group(1).split())
    if _LOWER_WORDS.match(words):  # "above 20%" leaves 20% out; "at least 20%" keeps it
        return Interval(math.nextafter(value, math.inf) if _STRICT.match(words) else value, math.inf, unit)
    return Interval(-math.inf, math.nextafter(value, -math.inf) if _STRICT.match(words) else value, unit)


@lru_cache(maxsize=16_384)  # a memory's statements are met again and again
def given(statement: str) -> tuple[Interval, ...]:
    """The ranges and bounds ``statement`` gives: "10–20%", "between 3 and 15 years", "up to 10%", "above 20%"; a
    bound's words inside a range ("from 10% to 20%", "від 10 до 20%") are part of it, never a bound of their own."""
    text = statement[:MAX_CHARS]
    out = []
    spans: list[tuple[int, int]] = []
    for match in chain(_RANGE.finditer(text), _BETWEEN.finditer(text) if "etween" in text or "між" in text else ()):
        low_unit, high_unit = _unit(match.group(1), match.group(4)), _unit(match.group(5), match.group(8))
        unit = high_unit or low_unit or _counted(text, match, label=True)  # "10–20%": the unit is written once
        if unit and (low_unit in (None, unit)):
            low, high = _value(match.group(2), match.group(3)), _value(match.group(6), match.group(7))
            out.append(Interval(min(low, high), max(low, high), unit))
            spans.append(match.span())
    for match in chain(_BOUND.finditer(text), _PLUS.finditer(text) if "+" in text else ()):
        start, end = match.span()
        if not any(start < done and here < end for here, done in spans) and (found := _bound(text, match)) is not None:
            out.append(found)
    return tuple(out)


def within(amounts: tuple[Interval, ...], statement: str) -> bool:
    """Whether a range or bound of ``statement`` overlaps one of ``amounts`` (``asked``) in its unit."""
    return bool(amounts) and any(a.overlaps(r) for r in given(statement) for a in amounts)


def amounts(statement: str) -> tuple[tuple[float, str, str], ...]:
    """The amounts ``statement`` gives with a unit (``asked``'s kinds: currency, percent, time), each as (value,
    unit, the figure as written), ranges and bounds among them read as their figures."""
    return tuple(
        (_value(m.group(2), m.group(3)), unit, m.group().strip())
        for m in _PLAIN.finditer(statement[:MAX_CHARS])
        if (unit := _unit(m.group(1), m.group(4)))
    )
