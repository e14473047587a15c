"""An English thesaurus of workplace paraphrases: a question's everyday words stand for the words a handbook
writes ("freelance work on the side" for "outside employment"), as a Ukrainian word stands for its translation.

The table (``data/thesaurus_en.tsv``, written for this project from general usage, not from any memory or
question set) holds one meaning a line: comma-separated words and phrases that mean the same in a workplace
question (each stands for every other), or ``everyday words => handbook words`` (the left stand for the right
and for each other, never the reverse: a broad or formal word brings no colloquial ones).

Contract: ``table()`` is the packaged thesaurus, loaded once: from its terms file (``TERMS_PATH``, written by
``scripts/build_lexicon.py`` with the table's hash; a test keeps it equal to ``parse`` of the table), else
parsed from the table; an empty one, with a warning logged, when the table is missing or unreadable.
``Thesaurus.bridges(terms)`` maps each of ``terms`` (a question's terms) to the term sets its paraphrases are,
where a member of a line is in ``terms`` whole (all of a phrase's terms): a term set stands for the term when
all of its terms are present.  A member is read as the analyzer reads text; one that loses a word to the stop
list and keeps a single term ("on call" → "call") is passed over, and a hyphenated word is its whole compound
("on-call"), never its parts: either would stand for a common word alone.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retriever.text import analyzer, tables

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "thesaurus_en.tsv"
TERMS_PATH = TABLE_PATH.with_name("thesaurus_en.terms.json")  # the table as terms: ``scripts/build_lexicon.py``
Alternates = tuple[frozenset[str], ...]
_DIRECTED = "=>"


@dataclass(frozen=True, slots=True)
class Thesaurus:
    """Paraphrases by a member's first term (its terms sorted): (the member's terms, what it stands for)."""

    by_term: Mapping[str, tuple[tuple[frozenset[str], Alternates], ...]] = field(default_factory=dict)

    def bridges(
        self, terms: AbstractSet[str], asked: Callable[[frozenset[str]], bool] = lambda member: True
    ) -> dict[str, Alternates]:
        """For each of ``terms`` in a member found whole in ``terms`` (and ``asked``, where given), the member's
        paraphrases that are not themselves found whole (they would add nothing)."""
        out: dict[str, dict[frozenset[str], None]] = {}
        for term in sorted(terms):
            for member, others in self.by_term.get(term, ()):
                if member <= terms and asked(member):
                    new = dict.fromkeys(o for o in others if not o <= terms)
                    for t in sorted(member):
                        out.setdefault(t, {}).update(new)
        return {t: tuple(found) for t, found in out.items() if found}


def parse(text: str) -> Thesaurus:
    """The thesaurus of a table's text (see the module); a line with no two members, or with two arrows, is
    passed over."""
    found: dict[frozenset[str], dict[frozenset[str], None]] = {}
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.count(_DIRECTED) > 1:
            continue  # two arrows: which side a member sits on is not known
        left, arrow, right = line.partition(_DIRECTED)
        sources = _members(left)
        targets = [m for m in _members(right) if m not in sources] if arrow else []
        for member in sources:
            others = [m for m in sources if m != member] + targets
            if others:
                found.setdefault(member, {}).update(dict.fromkeys(others))
    by_term: dict[str, list[tuple[frozenset[str], Alternates]]] = {}
    for member, paraphrases in found.items():
        by_term.setdefault(min(member), []).append((member, tuple(paraphrases)))
    return Thesaurus({t: tuple(entries) for t, entries in by_term.items()})


def to_json(thesaurus: Thesaurus, source: bytes) -> str:
    """The terms file ``TERMS_PATH`` holds: the parsed ``thesaurus`` and the hash of the ``source`` it came from;
    each term set written once (``sets``) and an entry as the numbers of its sets."""
    sets: dict[frozenset[str], int] = {}

    def number(terms: frozenset[str]) -> int:
        return sets.setdefault(terms, len(sets))

    by_term = {
        term: [[number(member), [number(o) for o in others]] for member, others in entries]
        for term, entries in sorted(thesaurus.by_term.items())
    }
    return tables.terms_file({"sets": [sorted(s) for s in sets], "by_term": by_term}, source)


def _from_body(body: dict[str, Any]) -> Thesaurus:
    """The thesaurus a terms file holds, a term's entries made when first looked up (a question looks up a few)."""
    sets = body["sets"]

    def entries(raw: list[Any]) -> tuple[tuple[frozenset[str], Alternates], ...]:
        return tuple((frozenset(sets[m]), tuple(frozenset(sets[o]) for o in others)) for m, others in raw)

    return Thesaurus(tables.LazyMap(body["by_term"], entries))


def _members(side: str) -> list[frozenset[str]]:
    """A side's members as term sets, in order, once each (see the module for the ones passed over)."""
    out: dict[frozenset[str], None] = {}
    for phrase in side.split(","):
        words = analyzer.raw_words(phrase)
        terms = frozenset(t for word in words for t in analyzer.head_terms(word))
        if terms and (len(terms) >= 2 or len(words) == 1):
            out[terms] = None
    return list(out)


_lock = threading.Lock()
_table: Thesaurus | None = None


def table() -> Thesaurus:
    """The packaged thesaurus: its parsed terms (``TERMS_PATH``, a few ms), or the table parsed afresh (~100 ms)
    where that file is missing or was made from another table."""
    global _table
    with _lock:
        if _table is None:
            _table = _load()
        return _table


def _load() -> Thesaurus:
    unreadable = "the thesaurus %s cannot be read (%s): questions are not paraphrased"
    return tables.load(TABLE_PATH, TERMS_PATH, parse, _from_body, Thesaurus(), unreadable)
