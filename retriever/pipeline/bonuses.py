"""What a statement's form adds to its rank, beside its words: part of the score stage (``score.run``).

Contract: ``Asks.of(question)`` reads once what a question asks for; ``bonus(candidate, asks, whole, weights,
relating)`` is the factor a statement's rank value is multiplied by before meaning: ``1 + typed_bonus`` when it
holds the kind of answer asked (``expected``) by words the question does not say itself, ``1 + key_bonus ·
key_share`` for a table row keyed by the question's words, ``other_version`` (below 1) under headings naming
only other versions than the question asks of (``asked_versions``; a heading's: ``versions``), and ``small_talk``
(below 1) for a statement that says nothing but courtesy or assent (``says_nothing``).  ``in_range``
multiplies, after meaning, by ``1 + range_bonus`` the statements whose range holds the question's amount
(``ranges``).  The weights are ``score.ScoreParams``'s.  Only the order changes: the answerability evidence stays
the words'.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from retriever.pipeline import expected, ranges, triage
from retriever.pipeline.results import Candidate, Scored
from retriever.text import analyzer

_ASIDE = re.compile(r"\([^)]*\)?")
# A version: dotted numbers ("4.3", "v2.10.1"), not an amount ("12.5%", "€2.5"), nor part of a longer one.
_VERSION = re.compile(r"(?<![\w.€$£])v?(\d{1,6}(?:\.\d{1,6}){1,3})(?![\w%€$£]|\.\d)", re.I)
# A question names a version by a name before it ("Pulse 4.3", "Mobile SDK 3.0"), a "v" ("v2.1") or the word
# ("version 4", "release 4.3", "релізу 4.4.0"); not "0.5 FTE", "at 8.30" or "12.03.2025" (no part of 4 digits).
_ASKED_VERSION = re.compile(
    r"(?:\b[A-ZА-ЯІЇЄҐ][\w-]*\s+|\bv|\b(?:version|release|версі\w*|реліз\w*)\s+)(\d{1,3}(?:\.\d{1,3}){1,3})(?![\w%]|\.\d)"
)
Words = frozenset[str]
_SMALL_TALK_CHARS = 80  # a longer statement is never only "Okay, yeah, right" (and need not be read for it)


class Weights(Protocol):
    """The bonuses' weights (``score.ScoreParams``)."""

    @property
    def typed_bonus(self) -> float: ...

    @property
    def key_bonus(self) -> float: ...

    @property
    def other_version(self) -> float: ...

    @property
    def small_talk(self) -> float: ...


def bonus(cand: Candidate, asks: Asks, whole: dict[str, float], p: Weights, relating: bool) -> float:
    """What a statement's form adds to its rank before meaning: the kind of answer asked for (``expected``; not by
    the question's own words, which it repeats), a table row keyed by the question's words (``key_share``; with
    ``relating``, or related to them: ``_relation_share``)."""
    typed = p.typed_bonus if asks.kinds and expected.holds(cand.statement, asks.kinds, asks.said) else 0.0
    other = p.other_version if asks.versions and _of_another_version(cand.target.tree_path, asks.versions) else 1.0
    other *= p.small_talk if says_nothing(cand) else 1.0
    return (1 + typed) * other * (1 + p.key_bonus * key_share(cand, whole, relating))


def says_nothing(cand: Candidate) -> bool:
    """Whether a statement is only courtesy, assent or filler once its speaker's label is set aside ("Grad B: Okay.",
    "Yeah, yeah.", "Right."; ``triage.is_low_information``): in a strong block of a transcript it took the block's
    strength and stood among the facts."""
    if cand.kind == "field" or len(cand.statement) > _SMALL_TALK_CHARS:
        return False
    label = analyzer.cached_terms(cand.speaker) if cand.speaker else ()
    if not all(t in label or triage.small_talk_term(t) for t in cand.terms or analyzer.cached_terms(cand.statement)):
        return False  # a word of substance: no need to read it whole (38 µs a statement, ~2 ms a question)
    text = cand.statement
    if cand.speaker and text.startswith(cand.speaker):  # a turn's first statement carries its label
        text = text[len(cand.speaker) :].lstrip(" :")
    return triage.is_low_information(text)


def asked_versions(question: str) -> tuple[str, ...]:
    """The versions a question asks of (``_ASKED_VERSION``), at most the first eight."""
    return tuple(dict.fromkeys(m.group(1) for m in _ASKED_VERSION.finditer(question[:2000])))[:8]


def versions(text: str) -> tuple[str, ...]:
    """The versions a text names ("Pulse 4.3" → ``("4.3",)``; "v2.10.1" → ``("2.10.1",)``), at most the first eight."""
    return tuple(dict.fromkeys(m.group(1) for m in _VERSION.finditer(text[:2000])))[:8]


def _of_another_version(tree_path: str, asked: tuple[str, ...]) -> bool:
    """Whether a section's headings below its document's title name versions, none of them one ``asked`` or of one
    ("4.3.0" and "4.3.1" are of "4.3"; "4.3" is the line "4.3.0" belongs to)."""
    _, _, headings = tree_path.partition(" > ")
    held = versions(headings)
    return bool(held) and not any(h == a or h.startswith(a + ".") or a.startswith(h + ".") for h in held for a in asked)


def in_range(
    scored: list[Scored], amounts: tuple[ranges.Interval, ...], weight: float, said: Sequence[bool]
) -> list[Scored]:
    """The statements whose range holds one of the question's ``amounts`` (``ranges.within``) and that ``said``
    some of the question in their own words (``Scored.own`` before meaning: "claim up to €200" for a coworking desk
    holds €50 but says nothing of "Can I expense a €50 client dinner?"), ``weight`` higher, after meaning: such a
    range is the surest sign a statement answers, and the question's figure ("15%"), which the memory never writes,
    leaves a gap that meaning fills by closeness alone (it had put "up to 10%" first)."""
    if not amounts or not weight:
        return scored
    return [
        Scored(s.candidate, s.relevance * (1 + weight), s.valid_at, s.evidence, s.own)
        if own and ranges.within(amounts, s.candidate.statement)
        else s
        for s, own in zip(scored, said, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class Asks:
    """What a question asks for, read once for all its candidates: kinds of answer (``expected.asked``), its own
    words (``expected.words_of``) and the versions it names."""

    kinds: frozenset[str]
    said: Words
    versions: tuple[str, ...] = ()  # the versions it asks of (``asked_versions``)

    @classmethod
    def of(cls, question: str) -> Asks:
        kinds = expected.asked(question)
        return cls(kinds, expected.words_of(question) if kinds else frozenset(), asked_versions(question))


def key_share(cand: Candidate, whole: dict[str, float], relating: bool = True) -> float:
    """The share of the question's weight a table row's first cell holds: the cell that names what the row is
    about ("MRR (monthly recurring revenue)", "Starter"), so a row keyed by the question's subject is about it,
    where another row only mentions it.  With ``relating``, the row's relation share counts alike; without (a
    question asking what something is), only a cell naming nothing else keys the row."""
    total = sum(whole.values())
    if not cand.cells or not total:
        return 0.0
    key = analyzer.term_set(cand.cells[0][1])
    # "What is Pulse?": the row of "Pulse Collect" is about a part of it; "MRR (monthly recurring revenue)" is MRR's.
    if not relating and not analyzer.term_set(_ASIDE.sub(" ", cand.cells[0][1])) <= whole.keys():
        return 0.0
    keyed = max(sum(w for t, w in whole.items() if t in key), _matrix_share(cand, whole, key)) / total
    return max(keyed, _relation_share(cand, whole) / total) if relating else keyed


def row_labelled(cells: tuple[tuple[str, str], ...]) -> bool:
    """A row of a matrix whose first column, unnamed, labels the rows and whose other columns name the things
    compared ("| | Starter | Growth |", a row "List price / month | €990 | €3,900"): there a column's name is what a
    question asks about ("the price of the Growth plan"), not a frame every row shares."""
    return len(cells) >= 3 and not cells[0][0] and all(column for column, _ in cells[1:])


def _matrix_share(cand: Candidate, whole: dict[str, float], key: frozenset[str]) -> float:
    """In a row-labelled matrix (``row_labelled``), the question's weight its row label holds with the name of the
    column it asks about: "List price / month" and "Growth" key the cell "€3,900" for "What is the price of the
    Growth plan?", as an add-on row's "Price / month: €120 (Growth)" had, ahead of it.  0 unless both hold some."""
    if not row_labelled(cand.cells) or not any(t in key for t in whole):
        return 0.0
    asked = [n for n in (analyzer.term_set(column) for column, _ in cand.cells[1:]) if any(t in n for t in whole)]
    return max((sum(w for t, w in whole.items() if t in key or t in n) for n in asked), default=0.0)


def _relation_share(cand: Candidate, whole: dict[str, float]) -> float:
    """The question's weight a further cell holds with its column's name, where the question names the column first:
    "Reports to: Olena Marchenko" answers "Who reports to Olena Marchenko?", not "Who does Olena Marchenko report
    to?" (her own row does).  The column is read first: few are named, and a wide table's cells are many."""
    order = {t: i for i, t in enumerate(whole)}  # the question's terms in its order
    best = 0.0
    for column, value in cand.cells[1:]:
        named = analyzer.term_set(column)
        first = min((order[t] for t in named if t in order), default=None)
        if first is None:
            continue
        held = analyzer.term_set(value)
        if first < min((order[t] for t in held if t in order), default=-1):
            best = max(best, sum(w for t, w in whole.items() if t in named or t in held))
    return best
