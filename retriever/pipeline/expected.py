"""What kind of answer a question asks for, and whether a statement holds one.

"How long is each lightning talk slot?" asks for an amount; "When did Lena sign the lease?" for a
time.  Among statements that hold the question's words about as well, the one that holds such a
thing ("Each slot will be 10 minutes.") answers it, where an introduction ("Lightning Talks are a
meeting series…") only names the topic.  ``score`` ranks the statements that hold the kind asked
for a little higher (``ScoreParams.typed_bonus``).

Contract: ``asked(question)`` is the kinds the question asks for (empty for most questions: "What
is…", "Who owns…", "What did Grad B say when discussing…"); ``holds(statement, kinds)`` is True
when the statement holds something of one of those kinds.  English and Ukrainian.  The registry,
``KINDS``, is data: kind → (what asks for it, what answers it).  Words that are also common
verbs ("may", "march") are left out of the answers, so "You may claim it" is not a date.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from retriever.memory.memory import Memory
from retriever.pipeline.evidence import glossaries
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate
from retriever.text import analyzer

_FIGURE = re.compile(r"[\d£$€¥₴%]")  # a figure: "£200", "10 minutes", "3 March", "9:30"
_MONTH = (  # a month's name, English or Ukrainian ("may" and "march" too: beside a day's number they are months)
    r"(?:\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:січ|лют|берез|квіт|трав|черв|лип|серп|верес|жовт|листоп|груд)\w*)"
)
# A figure written as a time: a date, a clock time, a day of the month, a quarter or a year. "SCIM 2.0", "3 seats"
# or "12" alone answer no "When…?" ("When does the Stratacore contract renew?" had led with the SCIM requirement).
_TIME_FIGURE = re.compile(
    r"\d{4}-\d{2}|\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}/\d{1,2}\b|\b\d{1,2}(?:st|nd|rd|th)\b|\bQ[1-4]\b|\b(?:19|20)\d{2}\b"
    r"|\b\d{1,2}\s*(?:am|pm|a\.m|p\.m)\b|\b\d{1,2}\s+" + _MONTH + r"|" + _MONTH + r"\.?\s+\d{1,2}\b",
    re.I,
)
_WORD = re.compile(r"\w+(?:'\w+)*")
_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'"})
_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred "
    "thousand million half dozen once twice double один одна одне два дві три чотири п'ять шість сім вісім "
    "дев'ять десять сто"
)
_DURATION_WORDS = (
    "minute minutes hour hours day days week weeks month months year years daily weekly fortnightly monthly "
    "quarterly yearly annually день дні днів дня тиждень рік роки років року щодня щотижня щомісяця щороку"
)
# "may" and "march" are left out: they are more often verbs than months.
_DATE_WORDS = (
    "january february april june july august september october november december jan feb apr jun jul aug sep "
    "sept oct nov dec monday tuesday wednesday thursday friday saturday sunday weekend weekends today tomorrow "
    "yesterday tonight morning afternoon evening noon midnight ago spring summer autumn winter травень червень "
    "липень серпень вересень жовтень грудень середа середу середи сьогодні завтра вчора"
)
_NUMBER_STEMS = ("тисяч", "мільйон", "половин")
_UNITS = frozenset(f"{_DURATION_WORDS} {_DATE_WORDS}".split())  # what a number counts, not a number
_DURATION_STEMS = ("хвилин", "годин", "тижн", "місяц")
_DATE_STEMS = (
    "січ",
    "лют",
    "берез",
    "квіт",
    "травн",
    "червн",
    "липн",
    "серпн",
    "вересн",
    "жовтн",
    "листопад",
    "грудн",
    "понеділ",
    "вівтор",
    "четвер",
    "п'ятниц",
    "субот",
    "неділ",
    "ранк",
    "вечор",
)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    question: re.Pattern[str]  # a question that asks for this kind
    words: frozenset[str]  # words of a statement that holds one (besides a figure)
    stems: tuple[str, ...]  # beginnings of such words, for inflected (Ukrainian) forms


KINDS: tuple[Kind, ...] = (
    Kind(
        "amount",
        re.compile(
            r"\bhow\s+(?:much|many|long|often|far|old|big|large|soon|quickly|fast|early|late)\b|"
            r"\b(?:what|which)\s+(?:percentage|percent|proportion|amount|number|price|cost|fee|rate|size)\b|"
            # "What is the spending limit…", "What are our core working hours?", "What's the maximum number of…"
            r"\bwhat(?:'s|\s+is|\s+are|\s+was|\s+were)\s+(?:the\s+|our\s+|my\s+|your\s+)?(?:[\w-]+\s+){0,2}?"
            r"(?:limit|budget|maximum|minimum|max|allowance|price|cost|fee|rate|hours|salary|stipend|discount|amount|"
            r"number|total|percentage|share|headcount)s?\b|"
            r"\bскільки\b|\bяк\s+(?:довго|часто|швидко|далеко|рано)\b|"
            r"\bяк(?:а|ий|у|ої)\s+(?:сум\w*|цін\w*|вартість|розмір\w*|кількість)\b",
            re.I,
        ),
        frozenset(f"{_NUMBER_WORDS} {_DURATION_WORDS}".split()),
        _NUMBER_STEMS + _DURATION_STEMS,
    ),
    Kind(
        "time",
        re.compile(
            r"^\W*when\b|\b(?:and|or|but|so|then)\s+when\b|\bby\s+when\b|"
            r"\b(?:what|which)\s+(?:time|date|day|month|year|week)\b|"
            r"\bwhat(?:'s|\s+is|\s+are|\s+was)\s+(?:the\s+|our\s+|my\s+|your\s+)?(?:[\w-]+\s+){0,2}?"
            r"(?:deadline|due\s+date|cut-?off|start\s+date|end\s+date)s?\b|"
            r"\bколи\b|\bо\s+котрій\b|\bякого\s+(?:числа|дня|місяця|року)\b",
            re.I,
        ),
        frozenset(f"{_NUMBER_WORDS} {_DURATION_WORDS} {_DATE_WORDS}".split()),
        _NUMBER_STEMS + _DURATION_STEMS + _DATE_STEMS,
    ),
)


# What a statement defines: the words before the dash, colon or verb that opens a definition ("Shadow traffic —
# running…", "MRR: monthly recurring revenue", "A vendor is a …", "Тіньовий трафік — це …").  "Is"/"are" only
# before an article: "Riverbed is behind schedule" is news, not a definition.  Every repeat is bounded and only the
# opening is read: with two unbounded runs of punctuation around the subject, 16,000 "!" had taken 7 minutes.
_DEFINED = re.compile(
    r"^\W{0,8}([^.;:—–]{1,60}?)(?:\s*(:)|\s*[—–]|\s+-\s|\s+(?:is|are)\s+(?:an?|the|one|any|defined\s+as)\s"
    r"|\s+(?:means|refers\s+to|stands\s+for|це|означає)\s)",
    re.I,
)
_DEFINED_CHARS = 200  # of a statement that can hold its subject and the word opening its definition
_OPENING_WORDS = 8  # of a definition, that must not name the thing again
_ASIDE = re.compile(r"\([^)]*\)?")  # "MRR (monthly recurring revenue)" defines MRR
# After the name, what a heading says a thing is not ("What Pulse is not", "What Pulse doesn't do", "Чим X не є").
_NEGATION = re.compile(r"\b(?:not|never|isn['’]t|aren['’]t|doesn['’]t|don['’]t|не|ні)\b", re.I)
# What does not say what a thing is: a figure ("NRR - 118% this quarter", "Budget: €40k"; not "Sprint: 2-week
# cycle") or a pointer elsewhere ("OKRs: see the Q3 planning doc").
_NOT_A_MEANING = re.compile(r"^\W*(?:[£$€¥₴]|\d[\d.,]*\s*%|\d[\d.,]*(?:\s|$)|(?:see|cf)\b)", re.I)


def defines(statement: str, cells: Sequence[tuple[str, str]], topic: frozenset[str], glossary: bool = True) -> bool:
    """True when ``statement`` defines ``topic`` (the terms of "What is X?"): a table row whose first cell, or
    a sentence or item whose opening words (``_DEFINED``), hold ``topic`` and nothing else, asides in brackets
    left out ("Milestone: All tenants on Riverbed" does not define Riverbed), followed by words that neither
    open with a figure or a pointer (``_NOT_A_MEANING``) nor name the topic again (``_names_only``).  Outside a
    ``glossary``, "X: …" is a label more often than a meaning ("Riverbed: behind schedule by two weeks"), so
    there only a dash or a verb opens one."""
    if not topic:
        return False
    if cells:
        subject, rest = cells[0][1], " ".join(value for _, value in cells[1:])
    elif (match := _DEFINED.match(statement[:_DEFINED_CHARS])) and (glossary or not match.group(2)):
        subject, rest = match.group(1), statement[match.end() : match.end() + _DEFINED_CHARS]
    else:
        return False
    return bool(rest.strip()) and not _NOT_A_MEANING.match(rest) and _names_only(subject, rest, topic)


def _names_only(subject: str, rest: str, topic: frozenset[str]) -> bool:
    """True when ``subject`` (asides in brackets left out) holds ``topic`` and nothing else, says nothing is not
    (a heading "What Pulse is not" heads what it is not), and the first ``_OPENING_WORDS`` words of ``rest`` do
    not name it again: a definition says what the thing is in other words ("ATOs: Learn about ATOs" is a link)."""
    opening = " ".join(rest[:_DEFINED_CHARS].split()[:_OPENING_WORDS])
    subject = _ASIDE.sub(" ", subject)
    named = analyzer.term_set(subject) == topic and not _negated(subject[:_DEFINED_CHARS], topic)
    return named and not topic <= analyzer.term_set(opening)


def _negated(subject: str, topic: frozenset[str]) -> bool:
    """Whether a negation follows the first word of ``topic`` in ``subject`` ("What Pulse is not", "Чим Pulse не
    є"); one within the name itself ("Do Not Disturb mode", "Never event", "NOT NULL") is part of the name."""
    for word in _WORD.finditer(subject):
        if not topic.isdisjoint(analyzer.term_set(word.group())):
            return _NEGATION.search(subject, word.end()) is not None
    return False


def definers(query: Query, candidates: Sequence[Candidate], memory: Memory | None = None) -> list[bool]:
    """For each candidate, whether it defines what ``query`` asks the meaning of (``Query.defining``, the terms
    of X in "What is X?"): ``defines`` (its colon form only in the memory's glossaries: ``evidence.glossaries``),
    or the opening statement of a section headed X alone ("### Compiler" over "A compiler takes …"); all False
    for any other question."""
    topic = query.defining
    if not topic:
        return [False] * len(candidates)
    glossary = glossaries(memory) if memory is not None else None
    out, seen = [], set()
    for c in candidates:  # in their sections' order, each section's opening statement read first (``read_units``)
        opens = c.target.section_id not in seen and c.kind != "llm"
        seen.add(c.target.section_id)
        heading = c.target.tree_path.rsplit(" > ", 1)[-1]
        sid = c.target.section_id
        defined = defines(c.statement, c.cells, topic, glossary is None or bool(sid < len(glossary) and glossary[sid]))
        out.append(defined or (opens and _names_only(heading, c.statement, topic)))
    return out


_ALL_KINDS = frozenset(kind.name for kind in KINDS)
_FIGURE_KINDS = _ALL_KINDS - {"time"}


def asked(question: str) -> frozenset[str]:
    """The kinds of answer ``question`` asks for (names from ``KINDS``)."""
    question = question.translate(_APOSTROPHES)  # "What’s the deadline…", as "What's"
    return frozenset(kind.name for kind in KINDS if kind.question.search(question))


def holds(statement: str, kinds: frozenset[str], asked_words: frozenset[str] = frozenset()) -> bool:
    """True when ``statement`` holds something of one of ``kinds``, besides ``asked_words`` (the question's own
    words, lower-cased): "Everyone is reachable during core hours" repeats "What are our core hours?", and
    answers nothing."""
    return bool(kinds) and not kinds.isdisjoint(held(statement, asked_words))


def held(statement: str, besides: frozenset[str] = frozenset()) -> frozenset[str]:
    """The kinds of answer ``statement`` holds, its words in ``besides`` left out; where ``besides`` (the question)
    names a unit itself ("What are our core hours?"), a unit word answers nothing ("organise your day" had led over
    "10:00–14:00"): a figure or a number word does."""
    figured, by_kind = _kind_words(statement)
    if figured:  # a figure is an amount; a time only written as one ("2026-06-30", "9:30", "the 15th", "Q3", "2027"),
        # or beside a time word besides the question's ("after 12 months", "in March")
        return _ALL_KINDS if _TIME_FIGURE.search(statement) else _FIGURE_KINDS | _by_words(by_kind, besides)
    if not besides.isdisjoint(_UNITS):
        besides = besides | _UNITS
    return _by_words(by_kind, besides)


def _by_words(by_kind: tuple[tuple[str, frozenset[str]], ...], besides: frozenset[str]) -> frozenset[str]:
    """The kinds whose words a statement holds besides ``besides``."""
    return frozenset(name for name, words in by_kind if not words <= besides)


@lru_cache(maxsize=16_384)
def _kind_words(statement: str) -> tuple[bool, tuple[tuple[str, frozenset[str]], ...]]:
    """Whether ``statement`` holds a figure, and each kind's words it holds.  Cached per statement, whatever the
    question (``held`` leaves its words out): a memory's statements are met again and again, and the analyser's
    caches (``analyzer.cached_terms``) already keep the same texts."""
    figured = bool(_FIGURE.search(statement))
    words = words_of(statement)
    found = ((kind.name, frozenset(w for w in words if w in kind.words or w.startswith(kind.stems))) for kind in KINDS)
    return figured, tuple((name, kind_words) for name, kind_words in found if kind_words)


def words_of(text: str) -> frozenset[str]:
    """A text's words as ``held`` reads them (lower-cased, apostrophes made plain): a statement's, or a question's."""
    return frozenset(_WORD.findall(text.lower().translate(_APOSTROPHES)))
