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
from dataclasses import dataclass
from functools import lru_cache

_NUMBER = (
    r"\d|[£$€¥₴%]|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|hundred|thousand|million|half|dozen|once|twice|double|один|одна|одне|два|дві|три|чотири|"
    r"п.ять|шість|сім|вісім|дев.ять|десять|сто|тисяч\w*|мільйон\w*|половин\w*)\b"
)
_DURATION = (
    r"\b(?:minutes?|hours?|days?|weeks?|months?|years?|daily|weekly|fortnightly|monthly|quarterly|yearly|"
    r"annually|хвилин\w*|годин\w*|день|дні|днів|дня|тиждень|тижн\w*|місяц\w*|рік|роки|років|року|щодня|"
    r"щотижня|щомісяця|щороку)\b"
)
_DATE = (
    r"\b(?:january|february|april|june|july|august|september|october|november|december|jan|feb|apr|jun|jul|"
    r"aug|sept?|oct|nov|dec|monday|tuesday|wednesday|thursday|friday|saturday|sunday|weekends?|today|"
    r"tomorrow|yesterday|tonight|morning|afternoon|evening|noon|midnight|ago|spring|summer|autumn|winter|"
    r"січ\w*|лют\w*|берез\w*|квіт\w*|травн\w*|травень|червн\w*|червень|липн\w*|липень|серпн\w*|серпень|"
    r"вересн\w*|вересень|жовтн\w*|жовтень|листопад\w*|грудн\w*|грудень|понеділ\w*|вівтор\w*|серед[аиу]|"
    r"четвер\w*|п.ятниц\w*|субот\w*|неділ\w*|сьогодні|завтра|вчора|ранк\w*|вечор\w*|тому)\b"
)


@dataclass(frozen=True, slots=True)
class Kind:
    name: str
    question: re.Pattern[str]  # a question that asks for this kind
    answer: re.Pattern[str]  # a statement that holds one


KINDS: tuple[Kind, ...] = (
    Kind(
        "amount",
        re.compile(
            r"\bhow\s+(?:much|many|long|often|far|old|big|large|soon|quickly|fast|early|late)\b|"
            r"\b(?:what|which)\s+(?:percentage|percent|proportion|amount|number|price|cost|fee|rate|size)\b|"
            r"\bскільки\b|\bяк\s+(?:довго|часто|швидко|далеко|рано)\b|"
            r"\bяк(?:а|ий|у|ої)\s+(?:сум\w*|цін\w*|вартість|розмір\w*|кількість)\b",
            re.I,
        ),
        re.compile(f"{_NUMBER}|{_DURATION}", re.I),
    ),
    Kind(
        "time",
        re.compile(
            r"^\W*when\b|\b(?:and|or|but|so|then)\s+when\b|\bby\s+when\b|"
            r"\b(?:what|which)\s+(?:time|date|day|month|year|week)\b|"
            r"\bколи\b|\bо\s+котрій\b|\bякого\s+(?:числа|дня|місяця|року)\b",
            re.I,
        ),
        re.compile(f"{_NUMBER}|{_DURATION}|{_DATE}", re.I),
    ),
)


@lru_cache(maxsize=1024)
def asked(question: str) -> frozenset[str]:
    """The kinds of answer ``question`` asks for (names from ``KINDS``)."""
    return frozenset(kind.name for kind in KINDS if kind.question.search(question))


def holds(statement: str, kinds: frozenset[str]) -> bool:
    """True when ``statement`` holds something of one of ``kinds``."""
    return any(kind.answer.search(statement) for kind in KINDS if kind.name in kinds)
