"""Two leading facts from different documents that give different figures for one thing.

"What is the learning budget?" had been answered "Each employee has a learning budget of $750 per year. The
learning budget is $1,200 per person per year." with no word that a 2023 page and a 2026 page disagree (figures
review H2). Contract: ``note(first, second, language)`` is a sentence saying the sources differ, each figure with
its document and, where known, its date; "" unless the facts come from different documents, each gives an amount
in a unit the other gives too (``ranges.amounts``: currency, percent, time), no amount of that unit is in both, and
their other words mostly agree (``SAME_SUBJECT`` of the smaller fact's terms). It never reorders the facts.
"""

from __future__ import annotations

from retriever.pipeline import ranges
from retriever.pipeline.results import Fact
from retriever.text import analyzer

SAME_SUBJECT = 0.6  # share of the smaller fact's terms (figures aside) the other holds
_SAID = {
    "en": "The sources differ: {a} ({where_a}) against {b} ({where_b}).",
    "uk": "Джерела розходяться: {a} ({where_a}) проти {b} ({where_b}).",
}


def note(first: Fact, second: Fact, language: str = "en") -> str:
    """The sentence of the module's contract, or ""."""
    if first.rel_path == second.rel_path:
        return ""
    figures = _differing(first.statement, second.statement)
    if figures is None or not _same_subject(first.statement, second.statement):
        return ""
    said = _SAID.get(language, _SAID["en"])
    return said.format(a=figures[0], where_a=_where(first), b=figures[1], where_b=_where(second))


def _differing(a: str, b: str) -> tuple[str, str] | None:
    """A figure of ``a`` and one of ``b`` in a unit both give, no value of which they share; None without one."""
    mine, theirs = ranges.amounts(a), ranges.amounts(b)
    for unit in {u for _, u, _ in mine} & {u for _, u, _ in theirs}:
        values_a = {v for v, u, _ in mine if u == unit}
        values_b = {v for v, u, _ in theirs if u == unit}
        if values_a.isdisjoint(values_b):
            return next(w for _, u, w in mine if u == unit), next(w for _, u, w in theirs if u == unit)
    return None


def _same_subject(a: str, b: str) -> bool:
    words_a, words_b = _words(a), _words(b)
    smaller = min(len(words_a), len(words_b))
    return smaller > 0 and len(words_a & words_b) >= SAME_SUBJECT * smaller


def _words(statement: str) -> frozenset[str]:
    return frozenset(t for t in analyzer.term_set(statement) if not any(c.isdigit() for c in t))


def _where(fact: Fact) -> str:
    date = (fact.when.valid_at or "")[:10]
    return f"{fact.source_title}, {date}" if date else fact.source_title
