"""Two leading facts from different documents that give different figures for one thing.

"What is the learning budget?" had been answered "Each employee has a learning budget of $750 per year. The
learning budget is $1,200 per person per year." with no word that a 2023 page and a 2026 page disagree (figures
review H2). Contract: ``note(first, second, language)`` is a sentence saying the sources differ, each figure with
its document and, where known, its date; "" unless the facts come from different documents, the second within
``NEAR`` of the first's relevance, each gives one value in a unit the other gives one of too (``ranges.amounts``:
currency, percent, time), the two unlike, and both give it for one thing (``_same_subject``: their other words
mostly agree, they name no two things, and the words before each figure share one).

``newer_first(scored, earlier)`` orders such a pair by date before the facts are ranked: where the leading statement
and one within ``NEAR`` of its rank value disagree so, and both documents are dated, the older is brought to
``SUCCESSOR_MARGIN`` of the newer (for a question asking what held before, ``earlier``, the newer of the older).
A 2023 page's "$750 per year" had led a 2026 page's "$1,200 per person per year" by 0.04 of rank, which a longer
statement loses to length alone; recency had only broken exact ties.  Undated documents, or documents of one date,
keep their order: nothing says which is current.  ``dated_rivals(first, second)`` says whether two ranked facts are
such a pair, for the coverage of a retrieval that leads with one of them (``assemble``).
"""

from __future__ import annotations

import heapq
import re

from retriever.pipeline import ranges
from retriever.pipeline.results import Fact, Scored
from retriever.pipeline.signals import SUCCESSOR_MARGIN
from retriever.text import analyzer

SAME_SUBJECT = 0.6  # share of the smaller fact's terms (figures aside) the other holds
# A rival's rank value, as a share of the leading statement's, for their dates to order them: the disagreeing pair
# of the figures review stood at 0.96; well below the lead, a statement on the same subject is seldom its rival.
NEAR = 0.8
CONTENDERS = 5  # of the best statements, the ones compared with the leading one
_NAME = re.compile(r"[A-ZА-ЯІЇЄҐ]|[a-zа-яіїєґ]+\d")  # a name's capital, or a code's letters and digit ("p1", "v2")
_EDGES = ".,;:!?()[]«»\"'’"
_SAID = {
    "en": "The sources differ: {a} ({where_a}) against {b} ({where_b}).",
    "uk": "Джерела розходяться: {a} ({where_a}) проти {b} ({where_b}).",
}


def note(first: Fact, second: Fact, language: str = "en") -> str:
    """The sentence of the module's contract, or ""."""
    if first.rel_path == second.rel_path or second.relevance_score < NEAR * first.relevance_score:
        return ""
    figures = _same_thing(first.statement, second.statement)
    if figures is None:
        return ""
    said = _SAID.get(language, _SAID["en"])
    return said.format(a=figures[0], where_a=_where(first), b=figures[1], where_b=_where(second))


def newer_first(scored: list[Scored], earlier: bool = False) -> list[Scored]:
    """``scored`` with its leading statement below a disagreeing, newer rival's (see the module's contract)."""
    if len(scored) < 2:
        return scored
    best = heapq.nlargest(CONTENDERS, range(len(scored)), key=lambda i: scored[i].relevance)  # linear, stable
    lead = scored[best[0]]
    for i in best[1:]:
        rival = scored[i]
        if rival.relevance < NEAR * lead.relevance:
            break
        if _outdated(lead, rival, earlier):
            out = list(scored)
            out[best[0]] = Scored(
                lead.candidate, SUCCESSOR_MARGIN * rival.relevance, lead.valid_at, lead.evidence, lead.own
            )
            return out
    return scored


def dated_rivals(first: Fact, second: Fact) -> bool:
    """Whether ``second`` is within ``NEAR`` of ``first`` and gives another figure for its subject from a document
    dated otherwise: the two that ``newer_first`` orders by date, which the summary says differ (``note``)."""
    dates = (first.when.valid_at or "")[:10], (second.when.valid_at or "")[:10]
    return all(dates) and dates[0] != dates[1] and bool(note(first, second))  # note: within NEAR


def _outdated(lead: Scored, rival: Scored, earlier: bool) -> bool:
    """Whether ``rival`` gives another figure for ``lead``'s subject from a document dated later (earlier, when
    the question asks what held before)."""
    dates = lead.valid_at[:10], rival.valid_at[:10]
    if not all(dates) or dates[0] == dates[1] or (dates[1] < dates[0]) != earlier:
        return False
    if lead.candidate.target.rel_path == rival.candidate.target.rel_path:
        return False
    return _same_thing(lead.candidate.statement, rival.candidate.statement) is not None


def _same_thing(a: str, b: str) -> tuple[str, str] | None:
    """The figures ``a`` and ``b`` give differently for one thing (``_differing``, ``_same_subject``), else None."""
    figures = _differing(a, b)
    return figures if figures is not None and _same_subject(a, b, figures) else None


def _differing(a: str, b: str) -> tuple[str, str] | None:
    """The figure of ``a`` and the one of ``b`` in a unit each gives one value of, where the values differ; None
    without one.  A statement of several values in the unit (a row across plans: "starter 13 months, growth 25
    months") gives no one figure for the thing: "up to 60 months" had been said to differ from its first."""
    mine, theirs = ranges.amounts(a), ranges.amounts(b)
    for unit in sorted({u for _, u, _ in mine} & {u for _, u, _ in theirs}):
        values_a = {v for v, u, _ in mine if u == unit}
        values_b = {v for v, u, _ in theirs if u == unit}
        if len(values_a) == len(values_b) == 1 and values_a != values_b:
            return next(w for _, u, w in mine if u == unit), next(w for _, u, w in theirs if u == unit)
    return None


def _same_subject(a: str, b: str, figures: tuple[str, str]) -> bool:
    """Whether ``a`` and ``b`` give their ``figures`` for one thing: their other words mostly agree
    (``SAME_SUBJECT`` of the smaller's), they name no two things ("P1" against "P2", "Sales" against "Engineering":
    both name something, nothing in common; "From January 2026, …" against an unnamed statement is one thing), and
    the words before each figure share one ("learning
    budget … $750" and "learning budget is $1,200"; "We spent $300 of the learning budget" spends, it sets no
    budget)."""
    words_a, words_b = _words(a), _words(b)
    smaller = min(len(words_a), len(words_b))
    names_a, names_b = _names(a), _names(b)
    if names_a and names_b and names_a.isdisjoint(names_b):  # "P1" against "P2": two things named
        return False
    if not smaller or len(words_a & words_b) < SAME_SUBJECT * smaller:
        return False
    return bool(_words(a[: a.find(figures[0])]) & _words(b[: b.find(figures[1])]))


def _names(statement: str) -> frozenset[str]:
    """The words ``statement`` writes with a capital or a digit past its first word ("Sales", "P1", "SSO")."""
    return frozenset(w.strip(_EDGES) for w in statement.split()[1:] if _NAME.match(w.strip(_EDGES)))


def _words(statement: str) -> frozenset[str]:
    return frozenset(t for t in analyzer.term_set(statement) if not any(c.isdigit() for c in t))


def _where(fact: Fact) -> str:
    date = (fact.when.valid_at or "")[:10]
    return f"{fact.source_title}, {date}" if date else fact.source_title
