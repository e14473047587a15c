"""Text analysis: the one tokeniser used at index time and at query time.

Contract: ``terms(text)`` returns the index terms of ``text`` in order, with repeats.
- Works for any script: ``\\w`` is Unicode-aware; runs of CJK characters become bigrams.
- Identifiers stay findable: ``DEC-0054``, ``v4.2.1``, ``olena@brightwave.io`` and
  ``follow_up`` are kept whole *and* split into their parts, so a query for either matches.
- Stop words (English and Ukrainian) are dropped, except a few written as capital acronyms among ordinary
  words ("What is IT?", "US citizens": ``capital_acronyms``), which follow the text's other terms.
- Plain words are stemmed (Snowball English
  for Latin script, a light suffix stripper for Cyrillic), so "approval" meets "approve"; irregular
  verb forms take their base form first (``inflections``), so "met" meets "meet".
"""

from __future__ import annotations

import importlib
import importlib.util
import itertools
import re
import sys
import types
import unicodedata
from collections import Counter
from collections.abc import Iterator
from functools import lru_cache
from itertools import chain
from typing import Any

from retriever.text.inflections import BASE_FORMS
from retriever.text.spelling import american
from retriever.text.stopwords import CAPITAL_ACRONYMS
from retriever.text.stopwords import WORDS as STOP_WORDS

# Emails first, then words joined by inner punctuation (hyphen, dot, slash, apostrophe): the tokens are what
# this pattern finds.  It is the specification, not run: its email branch retried the local part at every
# start of a long run of word characters, dots and pluses ("a+" * 40,000 and one "@": 11 s).  ``_tokens``
# finds the same tokens in linear time, by ``_WORD`` and by each "@" read outward (``_emails``).
_TOKEN = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\w+(?:['’ʼ./\-]\w+)*")
# ``_TOKEN``'s second branch alone: what ``_TOKEN`` finds in a text without "@" (no email can match),
# without first trying an email at every word (a fifth of ``terms``' time on typical sections).
_WORD = re.compile(r"\w+(?:['’ʼ./\-]\w+)*")
_NOT_LOCAL = re.compile(r"[^\w.+-]")  # what ends an email's local part: searched back from an "@", reversed
_DOMAIN = re.compile(r"[\w-]+(?:\.[\w-]+)+")  # no backtracking: "." is not in [\w-]
_JOINERS = re.compile(r"['’ʼ./\-_@+]+")
_APOSTROPHE_MARKS = ("’", "ʼ", "`")  # written as "'" by ``normalize``
# Invisible marks inside words, dropped by ``normalize``: a soft hyphen ("he\u00adlix" is "helix", not "he" and
# "lix"), zero-width joiners, direction marks and controls, the word joiner, a stray byte-order mark.  A zero-width
# space separates words (as Thai writes them), so it reads as a space.
_INVISIBLE = re.compile("[\u00ad\u200c-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_LATIN = re.compile(r"^[a-z]+$")
# "IT-led" and the possessive "IT's" too; not "IT'S" (shouted "it is") nor "US'd"
_ACRONYM = re.compile(r"(?<![\w'’])(?:" + "|".join(sorted(CAPITAL_ACRONYMS)) + r")(?:(?=['’]s\b)|(?![\w'’]))")
# A neighbour is the word next to an acronym within the same clause: a label's or a sentence's end between them
# ("NOTE: IT approves", "DONE. IT is fixed") parts them, so the capitals of a label are no shouting.
_WORD_BEFORE = re.compile(r"(\w+)[^\w.:;!?]{0,3}$")
_WORD_AFTER = re.compile(r"[^\w.:;!?]{0,3}(\w+)")
# Words in capitals side by side: shouting ("WHERE ARE WE?"), where a label or a row ("OWNER: IT") is not.
_SHOUTED = re.compile(r"[^\W\d_]{2,}[ \t]+[^\W\d_]{2,}")
_NEIGHBOUR_CHARS = 40  # of text looked at before an acronym for the word before it
_ACRONYMS_READ = 1_000  # of a text's acronyms: a text of thousands ("IT IT IT…", 2 MB) is no more findable by them
_CYRILLIC = re.compile(r"^[а-яіїєґё']+$")

_SNOWBALL_ALIAS = "retriever_snowball_english"  # a private package name for snowballstemmer's folder


def _english_stemmer() -> Any:
    """Snowball's English stemmer, the very one ``snowballstemmer.stemmer("english")`` returns.

    ``snowballstemmer/__init__`` imports all 36 languages' stemmers (~9 ms, more than a warm query's
    retrieval itself), and we need one: its ``english_stemmer`` module is loaded alone, from the
    package's own folder under a private package name.  Where PyStemmer is installed, snowballstemmer
    hands out PyStemmer's stemmer, so we do too.  Anything unexpected falls back to the plain import.
    """
    try:
        import Stemmer  # type: ignore[import-not-found]  # PyStemmer: what snowballstemmer prefers when present

        return Stemmer.Stemmer("english")
    except ImportError:
        pass
    try:
        spec = importlib.util.find_spec("snowballstemmer")  # locates the package without running its __init__
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("snowballstemmer is not installed")
        package = sys.modules.get(_SNOWBALL_ALIAS) or types.ModuleType(_SNOWBALL_ALIAS)
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules[_SNOWBALL_ALIAS] = package
        return importlib.import_module(f"{_SNOWBALL_ALIAS}.english_stemmer").EnglishStemmer()
    except (ImportError, AttributeError):  # a layout this loader does not know: the ordinary way
        import snowballstemmer

        return snowballstemmer.stemmer("english")


_english = _english_stemmer()


@lru_cache(maxsize=1)
def _script_runs() -> re.Pattern[str]:
    # Compiled on first use: its wide character classes take ~2 ms to compile, and most text has no CJK.
    return re.compile(
        r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+|[^\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]+"
    )


# Ukrainian inflectional endings (nouns, adjectives, common verb forms), longest first.
# The stem keeps at least 3 letters and is capped at 5 characters: Ukrainian inflects heavily
# and alternates vowels, so a short prefix conflates forms better than a longer stem.
_UK_ENDINGS = tuple(
    sorted(
        """ами ями ові еві ого ому ими іми ої ій ий ах ях ів їв ою ею ам ям ом ем ей ість ості
        ться ся сь ють уть ать ить а я о е и і ї у ю ь""".split(),
        key=len,
        reverse=True,
    )
)
_UK_STEM_CAP = 5


# A thousands separator between digits: "1,500" and "€3,900" are one number, as the question may write it ("1500"),
# where they had been "1" and "500", matching any 500 ("Which vendor costs 58,800?" found Zendesk's 6,800).
# A whole number, not after a "0," (a decimal comma, as Ukrainian writes "0,001") or a decimal point.
_THOUSANDS = re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")


def normalize(text: str) -> str:
    """Unicode NFKC, case-folded, invisible marks dropped (``_INVISIBLE``), typographic apostrophes made plain,
    thousands separators between digits dropped (``_THOUSANDS``)."""
    text = unicodedata.normalize("NFKC", text).casefold()
    if not text.isascii():  # most texts hold no invisible mark: one check, not a search
        text = _INVISIBLE.sub("", text).replace("\u200b", " ")
    # A replace per mark present, not ``str.translate``: translating looks every character up in a
    # mapping (7x the cost on a typical section), and most texts hold none of the marks.
    for mark in _APOSTROPHE_MARKS:
        if mark in text:
            text = text.replace(mark, "'")
    return _THOUSANDS.sub(lambda m: m.group().replace(",", ""), text) if "," in text else text


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """The stem of one lower-case word, taken of its base form where it is an irregular verb form
    (``inflections``: "met" → "meet") and of its American spelling where it is British (``spelling``:
    "colour" → "color"); words of other scripts come back unchanged."""
    if _LATIN.match(word):
        return str(_english.stemWord(BASE_FORMS.get(word) or american(word)))
    if _CYRILLIC.match(word):
        return _stem_ukrainian(word)
    return word


def _stem_ukrainian(word: str) -> str:
    for ending in _UK_ENDINGS:
        if word.endswith(ending) and len(word.replace("'", "")) - len(ending) >= 3:
            word = word[: -len(ending)]
            break
    return word[:_UK_STEM_CAP]


def _is_useful(part: str) -> bool:
    # Single Latin letters ("k" of 401(k)) carry nothing; digits and other scripts do.
    return len(part) > 1 or part.isdigit() or not part.isascii()


def _expand(token: str) -> Iterator[str]:
    """Index terms for one raw token: plain words stemmed, compounds whole plus parts."""
    if _CJK.search(token):
        # Runs of CJK become bigrams; Latin or digits written among them stay words ("使用API接口").
        for run in _script_runs().findall(token):
            yield from _cjk_bigrams(run) if _CJK.match(run) else _expand(run)
        return
    parts = [p for p in _JOINERS.split(token) if p]
    if (len(parts) == 1 and "_" not in token) or _CYRILLIC.match(token):
        # A Ukrainian apostrophe belongs inside the word (пам'ять), not between words.
        if token not in STOP_WORDS and _is_useful(token):
            yield stem(token)
        return
    if token in STOP_WORDS:  # contractions such as "don't"
        return
    yield token
    yield from _version_prefixes(token)
    yield from _month_name(token)
    for part in parts:
        if part not in STOP_WORDS and _is_useful(part):
            yield stem(part)


# A version of 3 or 4 dotted parts, each of at most 4 digits: longer dotted numbers are no versions, and a token of
# thousands of parts gave the square of its length in terms (60 KB of "1.1.1…": 22 s and 3.6 GB to index).
_VERSION = re.compile(r"v?\d{1,4}(?:\.\d{1,4}){2,3}")


def _version_prefixes(token: str) -> Iterator[str]:
    """A dotted version's shorter forms ("4.3.1" → "4.3"; "v4.3.1" → "v4.3"; at most two), so that a question about
    4.3 finds the notes of 4.3.0 and 4.3.1 (their parts alone match any version with a 4 and a 3)."""
    if len(token) <= 24 and _VERSION.fullmatch(token):
        parts = token.split(".")
        for end in range(len(parts) - 1, 1, -1):
            yield ".".join(parts[:end])


_ISO_DATE = re.compile(r"\d{4}-(0[1-9]|1[0-2])(?:-\d{2})?")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")


def _month_name(token: str) -> Iterator[str]:
    """An ISO date's month as its name ("2026-06-30" → "june"), so "MRR at the end of June 2026" meets the row dated
    2026-06-30, and a question dated 2026-06-30 a page that writes "30 June 2026"."""
    date = _ISO_DATE.fullmatch(token) if len(token) <= 10 else None
    if date is not None:
        yield stem(_MONTHS[int(date.group(1)) - 1])


def _cjk_bigrams(token: str) -> Iterator[str]:
    if len(token) == 1:
        yield token
        return
    for i in range(len(token) - 1):
        yield token[i : i + 2]


@lru_cache(maxsize=500_000)
def _token_terms(token: str) -> tuple[str, ...]:
    # Words repeat (Zipf): caching each raw token's terms makes indexing several times faster.
    return tuple(_expand(token))


def _tokens(text: str) -> list[str]:
    """``_TOKEN.findall(text)``, in time linear in ``text``.

    An email matches at a position exactly when the position lies in the run of local-part characters
    ([\\w.+-], which holds no "@") just before an "@" whose domain matches: the run cannot stop short of
    the "@", and the domain does not depend on where the run starts.  Elsewhere ``_WORD`` matches as
    ``_TOKEN``'s second branch does; a word may run on into an email's local part, which then starts
    where the word ends (or, reaching the "@", leaves no email)."""
    if "@" not in text:
        return _WORD.findall(text)
    out: list[str] = []
    done = 0
    for local, at, end in _emails(text):
        if done < local:
            done = _words_before(text, done, local, out)
        if done < at:  # the scan reaches the local part before its "@": the email is the next token
            out.append(text[max(done, local) : end])
            done = end
    out.extend(_WORD.findall(text, done))
    return out


def _emails(text: str) -> Iterator[tuple[int, int, int]]:
    """For each "@" of ``text`` with a domain after it and local-part characters before it, in order:
    where that run of local-part characters starts, where the "@" is, and where the domain ends."""
    reversed_text = text[::-1]  # a run before a position is a run after it here: found by one search
    at = text.find("@")
    while at >= 0:
        stop = _NOT_LOCAL.search(reversed_text, len(text) - at)  # reversed_text[len(text) - at] is text[at - 1]
        local = len(text) - stop.start() if stop is not None else 0
        domain = _DOMAIN.match(text, at + 1) if local < at else None
        if domain is not None:
            yield local, at, domain.end()
        at = text.find("@", at + 1)


def _words_before(text: str, done: int, stop: int, out: list[str]) -> int:
    """Append ``_WORD``'s matches in ``text`` that start in [done, stop); return where the last one ends.
    Matched with ``stop`` as the text's end, the last one may be cut short: it is matched again whole."""
    last = None
    for match in _WORD.finditer(text, done, stop):
        if last is not None:
            out.append(last.group())
        last = match
    if last is None:
        return done
    whole = _WORD.match(text, last.start())
    assert whole is not None  # it matched there on less text
    out.append(whole.group())
    return whole.end()


def _terms(text: str) -> Iterator[str]:
    tokens = _tokens(normalize(text))
    # map and chain iterate in C: a Python loop over every token cost more than the cached lookups.
    found = chain.from_iterable(map(_token_terms, tokens))
    if "IT" in text or "US" in text:  # a substring check first: most texts hold neither
        return chain(found, capital_acronyms(text))
    return found


def capital_acronyms(text: str) -> list[str]:
    """The stop words ``text`` writes as capital acronyms (``stopwords.CAPITAL_ACRONYMS``), lower-cased, in order.

    Not where the text shouts: beside a word in capitals of four letters or more ("IT WORKS", "THANK US"), or
    among words with no lower-case letter near ("WHERE IS IT?", "WHERE ARE WE? US."); alone ("IT", "## IT") it is
    the acronym.  A label's or a sentence's end parts it from a neighbour ("NOTE: IT approves laptops")."""
    out = []
    for match in itertools.islice(_ACRONYM.finditer(text), _ACRONYMS_READ):
        start, end = match.span()
        before = _WORD_BEFORE.search(text, max(0, start - _NEIGHBOUR_CHARS), start)
        after = _WORD_AFTER.match(text, end)
        neighbours = [m.group(1) for m in (before, after) if m is not None]
        low, high = max(0, start - _NEIGHBOUR_CHARS), end + _NEIGHBOUR_CHARS
        near = text[low:high]
        capitals = [w for w in neighbours if w.isupper()]
        # Parted from its neighbours by punctuation, it is still shouted among capital words ("WHERE ARE WE? US.").
        alone = not neighbours and bool(_SHOUTED.search(text, low, start) or _SHOUTED.search(text, end, high))
        shouted = near.upper() == near and (bool(capitals) or alone)
        if not any(len(w) >= 4 for w in capitals) and not shouted:
            out.append(match.group().lower())
    return out


def terms(text: str) -> list[str]:
    """Index terms of ``text``, in order, repeats kept (term frequency matters)."""
    return list(_terms(text))


def term_counts(text: str) -> Counter[str]:
    """``Counter(terms(text))``: each term's count, terms in the order first seen."""
    return Counter(_terms(text))


@lru_cache(maxsize=100_000)
def cached_terms(text: str) -> tuple[str, ...]:
    """``terms(text)`` memoised: at query time the same sections, statements and acronyms are
    analysed again and again, and a server answers many queries."""
    return tuple(terms(text))


@lru_cache(maxsize=100_000)
def term_set(text: str) -> frozenset[str]:
    """The distinct terms of ``text``, memoised like ``cached_terms``."""
    return frozenset(cached_terms(text))


def head_terms(word: str) -> list[str]:
    """A table word's one term, as the index holds it: a hyphenated word's whole compound ("on-call",
    "штаб-квартира"), never its parts, else its stem; none for a stop word.  The lexicon and the thesaurus read
    their words so: a part would stand for a common word alone.  A possessive is its noun ("doctor's" →
    "doctor"), which the index holds wherever the text says "doctor's", "doctors'" or "doctors"; a Ukrainian
    apostrophe is inside its word ("пам'ять")."""
    found = terms(word.strip())
    compound = [t for t in found if not t.isalnum() and "'" not in t]
    plain = [t for t in found if "'" not in t]
    return compound[:1] if compound else plain[:1] if plain else found[:1]


def raw_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` before stop-word removal (for triage)."""
    return _tokens(normalize(text))
