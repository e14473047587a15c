"""A question's parts: where a many-part question splits, each part's terms, and how many are kept.

Contract: ``question_parts(text)`` is the terms of each clause that has a content word of its own, the first
``MAX_PARTS``, in time linear in the text's length; ``is_many_part(text)`` is True when there are two or more.
``query.analyze`` keeps them as ``Query.parts``: phase 1 reads the sections that best answer any one part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import islice

from retriever.pipeline.expansion import FRAMING_TERMS
from retriever.text import analyzer

# A many-part question is searched and scored once per part, each time over all of the question's terms,
# so its parts are capped: real questions have up to five ("where do I submit them, who approves them, how
# long do they take, and how often…?"), and a prompt of 8,000 characters in 800 "…?" parts took 30-40 s.
MAX_PARTS = 8
# Where a question splits into parts: "?" between questions, ";" or ":", ", and how…", " and what…",
# "both … and …" (``_CLAUSE``), and a comma before a final "and" list (``_clauses``: the last comma, when
# an "and" follows it; a lookahead for that, tried at every comma, took cubic time on long whitespace runs).
_CLAUSE = re.compile(
    r"\?\s+|[;:]\s+|\bboth\b|,\s+(?=(?:and\s+)?(?:how|what|who|when|where|which|why|is|are|do|does|can)\b)"
    r"|\s+and\s+(?=(?:how|what|who|when|where|which|why)\b)",
    re.I,
)
_AND = re.compile(r"\band\b", re.I)
# A comparison asks about each thing compared: "How did Kafka Streams and Flink compare…", "How does Riverbed compare
# to Pulse Classic?", "How is Flink different from Kafka Streams?".  Its clause splits at the first "and", "from",
# "to", "with", "than", "vs" or "versus" (one split, so the comparison's own details stay with the second thing).
_COMPARE = re.compile(
    r"\b(?:compare[sd]?|comparing|comparison|differ(?:s|ed)?|difference|different\s+(?:from|than|to)|versus|vs)\b", re.I
)
_COMPARED = re.compile(r" (?:and|from|to|with|than|versus|vs\.?) ", re.I)
_SPACE = re.compile(r"\s+")
_WORDS = re.compile(r"\w+")
# A pronoun that points back at what an earlier part named ("… and when does its contract renew?"); in lower case
# or capitalised, never in capitals, where "IT" and "US" are acronyms (``analyzer.capital_acronyms``).
_REFERS = re.compile(
    r"(?<!\w)(?:[Ii]ts?|[Tt]hey|[Tt]hem|[Tt]heir|[Hh]e|[Hh]im|[Hh]is|[Ss]he|[Hh]er|його|її|їх|він|вона|вони)(?!\w)"
)


def question_parts(text: str) -> tuple[tuple[str, ...], ...]:
    """The terms of each clause that has a content word of its own (see ``_clauses``), in order: the
    first ``MAX_PARTS`` such clauses.  A clause with a pronoun that points back (``_REFERS``) also holds the
    names of the clause before it (``_names``): "its contract" in "What is Harbourline's MRR and when does its
    contract renew?" is Harbourline's.  Time linear in the text's length."""
    clauses = (c for c in _clauses(text) if c and c.strip(" ,.?"))
    return tuple(islice((p for p in _referred(clauses) if any(t not in FRAMING_TERMS for t in p)), MAX_PARTS))


def _referred(clauses: Iterable[str]) -> Iterator[tuple[str, ...]]:
    """Each clause's terms, with the names of the clause before where a pronoun points back and it asks something."""
    before: list[str] = []
    for clause in clauses:
        terms = analyzer.terms(clause)
        own = any(t not in FRAMING_TERMS for t in terms)  # "and why did we do it?": no part of borrowed names
        yield tuple(dict.fromkeys(terms + before if own and before and _REFERS.search(clause) else terms))
        before = _names(clause)


def _names(clause: str) -> list[str]:
    """The terms of the words a clause names things with: capitalised past its first word, or holding a digit."""
    words = _WORDS.findall(clause)[1:]
    return analyzer.terms(" ".join(w for w in words if w[:1].isupper() or any(c.isdigit() for c in w)))


def _clauses(text: str) -> list[str]:
    """``text`` split where a question splits into parts (see ``_CLAUSE``), whitespace runs written as one
    space (no term holds whitespace, and each ``\\s+`` of ``_CLAUSE`` then matches one character, so no
    match backtracks over a long run).  The last comma splits too when whitespace and an "and" follow it
    ("… team budget, hotels and meals"): no comma after it is a list's final comma."""
    flat = _SPACE.sub(" ", text)
    last = flat.rfind(",")
    if last >= 0 and flat.startswith(" ", last + 1) and _AND.search(flat, last + 2):
        # A match of ``_CLAUSE`` holds a comma only as its first character: none spans this one.
        clauses = [*_CLAUSE.split(flat[:last]), *_CLAUSE.split(flat[last + 2 :])]
    else:
        clauses = _CLAUSE.split(flat)
    return [part for clause in clauses for part in _compared(clause)]


def _compared(clause: str) -> list[str]:
    """A comparison's clause as the things it compares (``_COMPARE``), else the clause."""
    return _COMPARED.split(clause, maxsplit=1) if _COMPARE.search(clause) else [clause]


def is_many_part(text: str) -> bool:
    """True when the question asks several things: two clauses with content words each."""
    return len(question_parts(text)) >= 2
