"""A Ukrainian–English lexicon of business words: a query word in one language stands for its
translations in the other, so a question finds what the memory writes in the other language.

The table (``data/lexicon_uk_en.tsv``, written for this project) holds one meaning a line: the
Ukrainian forms a user types (inflections, prefixed verbs, close synonyms), a tab, the English words.
Both sides are read as the analyzer reads text, so a line's forms become the terms the index holds.

Contract: ``table()`` is the packaged lexicon, loaded once: from its terms file (``TERMS_PATH``, written by
``scripts/build_lexicon.py`` with the table's hash; a test keeps it equal to ``parse`` of the table), else parsed
from the table itself; an empty one, with a warning logged, when the table is missing or unreadable.
``Lexicon.bridges(term, word)`` is the term's translations as alternates: term sets whose terms, all present,
stand for it ("time off" is one set of two terms); those of ``word`` as typed where the table lists that form,
else those of its stem, unless two lines share the stem (then none: the stemmer cuts Ukrainian words short).
A hyphenated Ukrainian form stands only for its whole compound ("штаб-квартира"), never its parts.
``language(text)`` is "uk" or "en", the language a summary is framed in and meaning is read for.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from retriever.text import analyzer, tables

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "lexicon_uk_en.tsv"
_SCRIPT_WORD = re.compile(r"[^\W\d_]+")  # a run of letters: a word of one script or another
TERMS_PATH = TABLE_PATH.with_name("lexicon_uk_en.terms.json")  # the table as terms: ``scripts/build_lexicon.py``
Alternates = tuple[frozenset[str], ...]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Translations' term sets: of a Ukrainian word as typed (``by_form``), of a Ukrainian stem (``to_english``),
    of an English term (``to_ukrainian``)."""

    to_english: Mapping[str, Alternates] = field(default_factory=dict)
    to_ukrainian: Mapping[str, Alternates] = field(default_factory=dict)
    by_form: Mapping[str, Alternates] = field(default_factory=dict)

    def bridges(self, term: str, word: str = "") -> Alternates:
        """The translations of ``term``; of ``word`` (what the user typed for it) first, where the table lists it."""
        typed = self.by_form.get(analyzer.normalize(word)) if word else None
        return typed if typed is not None else self.to_english.get(term, ()) + self.to_ukrainian.get(term, ())


def language(text: str) -> str:
    """"uk" when more of ``text``'s words are Cyrillic than Latin, or as many and it opens with a Cyrillic one
    ("Що таке shadow traffic?"), else "en": the language to answer in."""
    words = _SCRIPT_WORD.findall(text)
    cyrillic = sum(1 for w in words if "\u0400" <= w[0] <= "\u04ff")
    latin = len(words) - cyrillic
    opens_cyrillic = bool(words) and "\u0400" <= words[0][0] <= "\u04ff"
    return "uk" if cyrillic > latin or (cyrillic == latin and opens_cyrillic) else "en"


def parse(text: str) -> Lexicon:
    """The lexicon of a table's text (see the module); a line without a tab or a side is passed over.

    The Ukrainian stemmer cuts words short, so one stem can stand for words of different lines ("відкласти",
    postpone, and "відключення", outage): such a stem translates nothing, by either way; the forms that are
    written on a line still translate as typed."""
    english: dict[str, dict[frozenset[str], None]] = {}
    lines: dict[str, set[tuple[frozenset[str], ...]]] = {}  # stem → the English sides of the lines it stems
    by_form: dict[str, tuple[frozenset[str], ...]] = {}
    entries = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        left, tab, right = line.partition("\t")
        forms = [f.strip() for f in left.split(",") if f.strip()]
        uk_terms = {t for form in forms for t in analyzer.head_terms(form)}
        en_sets = tuple(dict.fromkeys(s for s in (_phrase_terms(w) for w in right.split(",")) if s))
        if not tab or not uk_terms or not en_sets:
            continue
        entries.append((uk_terms, en_sets))
        by_form.update({analyzer.normalize(form): en_sets for form in forms})
        for term in uk_terms:
            lines.setdefault(term, set()).add(en_sets)
    shared = {t for t, sides in lines.items() if len(sides) > 1}
    ukrainian: dict[str, dict[frozenset[str], None]] = {}
    for uk_terms, en_sets in entries:
        own = sorted(uk_terms - shared)
        for term in own:
            english.setdefault(term, {}).update(dict.fromkeys(en_sets))
        for phrase in en_sets:
            if len(phrase) == 1 and own:  # a phrase's words are not each the Ukrainian word
                (term,) = phrase
                ukrainian.setdefault(term, {}).update(dict.fromkeys(frozenset({u}) for u in own))
    return Lexicon(
        {t: tuple(s) for t, s in english.items()},
        {t: tuple(s) for t, s in ukrainian.items()},
        by_form,
    )


def _phrase_terms(words: str) -> frozenset[str]:
    return frozenset(t for t in analyzer.terms(words.strip()) if t.isalnum())


def to_json(lexicon: Lexicon, source: bytes) -> str:
    """The terms file ``TERMS_PATH`` holds: the parsed ``lexicon`` and the hash of the ``source`` it came from."""
    sides = list(dict.fromkeys(lexicon.by_form.values()))
    number = {side: i for i, side in enumerate(sides)}
    body = {
        "to_english": {t: [sorted(s) for s in v] for t, v in sorted(lexicon.to_english.items())},
        "to_ukrainian": {t: [sorted(s) for s in v] for t, v in sorted(lexicon.to_ukrainian.items())},
        # Each line's English side once, and every form as the number of its line: ~6,000 forms in a third of
        # the bytes (and of the load time) their sets took written out.
        "lines": [[sorted(s) for s in side] for side in sides],
        "by_form": {form: number[side] for form, side in sorted(lexicon.by_form.items())},
    }
    return tables.terms_file(body, source)


def _from_body(body: dict[str, Any]) -> Lexicon:
    """The lexicon a terms file holds, its sets made when first looked up (all ~2,600 entries' took ~9 ms)."""
    lines = body["lines"]
    return Lexicon(
        tables.LazyMap(body["to_english"], _sets),
        tables.LazyMap(body["to_ukrainian"], _sets),
        tables.LazyMap(body["by_form"], lambda line: _sets(lines[line])),
    )


def _sets(value: list[list[str]]) -> Alternates:
    return tuple(frozenset(s) for s in value)


_lock = threading.Lock()
_table: Lexicon | None = None


def table() -> Lexicon:
    """The packaged lexicon: its parsed terms (``TERMS_PATH``, ~3 ms), or the table parsed afresh (~120 ms) where
    that file is missing or was made from another table."""
    global _table
    with _lock:
        if _table is None:
            _table = _load()
        return _table


def _load() -> Lexicon:
    unreadable = "the lexicon %s cannot be read (%s): questions are not bridged"
    return tables.load(TABLE_PATH, TERMS_PATH, parse, _from_body, Lexicon(), unreadable)
