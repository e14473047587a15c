"""A Ukrainian–English lexicon of business words: a query word in one language stands for its
translations in the other, so a question finds what the memory writes in the other language.

The table (``data/lexicon_uk_en.tsv``, written for this project) holds one meaning a line: the
Ukrainian forms a user types (inflections, prefixed verbs, close synonyms), a tab, the English words.
Both sides are read as the analyzer reads text, so a line's forms become the terms the index holds.

Contract: ``table()`` is the packaged lexicon, loaded once: from its terms file (``TERMS_PATH``, written by
``scripts/build_lexicon.py`` with the table's hash; a test keeps it equal to ``parse`` of the table), else parsed
from the table itself; an empty one, with a warning logged, when the table is missing or unreadable.
``Lexicon.bridges(term)`` is the term's translations as alternates: term sets whose terms, all present,
stand for it ("time off" is one set of two terms).
A hyphenated Ukrainian form stands only for its whole compound ("штаб-квартира"), never its parts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from retriever.text import analyzer

log = logging.getLogger(__name__)

TABLE_PATH = Path(__file__).with_name("data") / "lexicon_uk_en.tsv"
TERMS_PATH = TABLE_PATH.with_name("lexicon_uk_en.terms.json")  # the table as terms: ``scripts/build_lexicon.py``
Alternates = tuple[frozenset[str], ...]


@dataclass(frozen=True, slots=True)
class Lexicon:
    """Term → its translations' term sets, both ways."""

    to_english: Mapping[str, Alternates] = field(default_factory=dict)
    to_ukrainian: Mapping[str, Alternates] = field(default_factory=dict)

    def bridges(self, term: str) -> Alternates:
        return self.to_english.get(term, ()) + self.to_ukrainian.get(term, ())


def language(text: str) -> str:
    """"uk" when more of ``text``'s letters are Cyrillic than Latin, else "en": the language to answer in."""
    cyrillic = sum(1 for ch in text if "\u0400" <= ch <= "\u04ff")
    latin = sum(1 for ch in text if ch.isascii() and ch.isalpha())
    return "uk" if cyrillic > latin else "en"


def parse(text: str) -> Lexicon:
    """The lexicon of a table's text (see the module); a line without a tab or a side is passed over."""
    english: dict[str, dict[frozenset[str], None]] = {}
    ukrainian: dict[str, dict[frozenset[str], None]] = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        left, tab, right = line.partition("\t")
        uk_terms = {t for form in left.split(",") for t in _form_terms(form)}
        en_sets = [s for s in (_phrase_terms(w) for w in right.split(",")) if s]
        if not tab or not uk_terms or not en_sets:
            continue
        for term in uk_terms:
            english.setdefault(term, {}).update(dict.fromkeys(en_sets))
        for phrase in en_sets:
            if len(phrase) == 1:  # a phrase's words are not each the Ukrainian word
                (term,) = phrase
                ukrainian.setdefault(term, {}).update(dict.fromkeys(frozenset({u}) for u in sorted(uk_terms)))
    return Lexicon(
        {t: tuple(s) for t, s in english.items()},
        {t: tuple(s) for t, s in ukrainian.items()},
    )


def _form_terms(form: str) -> list[str]:
    """A Ukrainian form's one term: its stem, or a hyphenated form's whole compound."""
    terms = analyzer.terms(form.strip())
    compound = [t for t in terms if not t.isalnum() and "'" not in t]
    return compound[:1] if compound else terms[:1]


def _phrase_terms(words: str) -> frozenset[str]:
    return frozenset(t for t in analyzer.terms(words.strip()) if t.isalnum())


def to_json(lexicon: Lexicon, source: bytes) -> str:
    """The terms file ``TERMS_PATH`` holds: the parsed ``lexicon`` and the hash of the ``source`` it came from."""
    body = {
        "source_sha256": hashlib.sha256(source).hexdigest(),
        "to_english": {t: [sorted(s) for s in v] for t, v in sorted(lexicon.to_english.items())},
        "to_ukrainian": {t: [sorted(s) for s in v] for t, v in sorted(lexicon.to_ukrainian.items())},
    }
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"


def _from_json(text: str, source: bytes) -> Lexicon | None:
    """The lexicon a terms file holds, or None when it was made from another source than ``source``."""
    body = json.loads(text)
    if body.get("source_sha256") != hashlib.sha256(source).hexdigest():
        return None
    return Lexicon(_Sets(body["to_english"]), _Sets(body["to_ukrainian"]))


class _Sets(Mapping[str, Alternates]):
    """A terms file's lists, made term sets when first looked up: a question looks up a few terms, and making
    all ~2,600 entries' sets at load took most of its ~9 ms."""

    def __init__(self, raw: dict[str, list[list[str]]]) -> None:
        self._raw = raw
        self._made: dict[str, Alternates] = {}

    def __getitem__(self, term: str) -> Alternates:
        made = self._made.get(term)
        if made is None:
            made = self._made[term] = tuple(frozenset(s) for s in self._raw[term])
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)


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
    try:
        source = TABLE_PATH.read_bytes()
    except OSError as exc:
        log.warning("the lexicon %s cannot be read (%s): questions are not bridged", TABLE_PATH, exc)
        return Lexicon()
    try:
        parsed = _from_json(TERMS_PATH.read_text(encoding="utf-8"), source)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        parsed = None
    if parsed is not None:
        return parsed
    try:
        return parse(source.decode("utf-8"))
    except UnicodeDecodeError as exc:
        log.warning("the lexicon %s cannot be read (%s): questions are not bridged", TABLE_PATH, exc)
        return Lexicon()
