"""Query expansion: what a question's words stand for in this memory, and how much each counts.

A word the memory does not write can stand for ones it does: its acronym or expansion as the memory defines
them (``acronym_expansions``), its words of the same beginning (``variants``), its translations (``bridges``,
``lexicon``), a Cyrillic name's Latin spellings (``transliterations``) and paraphrases (``paraphrases``,
``thesaurus``); each added term weighs no more than the word
(``bridge_boosts``).  A framing word ("main", "summarize") weighs ``FRAMING_WEIGHT`` of its idf, capped as a
common word's where the memory seldom writes it (``framing_cuts``).  ``query.analyze`` calls these once per
question; they read the index, never text.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from retriever.memory.index import SectionIndex
from retriever.pipeline.signals import EXPANSION_WEIGHT, FRAMING_SHARE, FRAMING_WEIGHT
from retriever.text import analyzer, lexicon, regions, thesaurus, transliteration
from retriever.text.stopwords import FRAMING

PREFIX_MIN = 6  # letters a spelling variant must share with an unknown query word
# A word at most this share of the memory's sections holds is not the memory's word for its topic: its
# paraphrases stand for it (``paraphrases``).  Below 1,000 sections, only a word the memory never uses.
RARE_SHARE = 0.001
NAME_PREFIX_MIN = 4  # letters a name's Latin spelling must share with the memory's word: "Олени" → "olen(a)"
NAME_SPELLINGS = 2  # the memory's words a name may stand for, most frequent first
FRAMING_TERMS = frozenset(t for word in FRAMING for t in analyzer.terms(word))
Acronyms = Mapping[str, Iterable[str]]  # acronym (lower-case) → its expansions, as the memory defines them


def is_compound(term: str) -> bool:
    return any(not ch.isalnum() for ch in term)


def variants(terms: tuple[str, ...], index: SectionIndex) -> dict[str, list[str]]:
    """For terms of at least ``PREFIX_MIN`` letters the memory lacks, its terms sharing a prefix of
    ``PREFIX_MIN`` letters or all but the term's last two.

    Stemmers miss some pairs ("subsidized" → "subsid" but "subsidy" → "subsidi", long Ukrainian
    inflections); a word the memory never uses contributes nothing otherwise.  (British and American
    spellings are one word already: ``text.spelling``.)  Not for a framing word ("summarize", "status"): its
    variants would name no topic, yet weigh ``EXPANSION_WEIGHT``, twice the word's own ``FRAMING_WEIGHT``.
    """
    out: dict[str, list[str]] = {}
    for term in terms:
        if len(term) < PREFIX_MIN or is_compound(term) or term in FRAMING_TERMS or index.term_df(term) > 0:
            continue
        prefix = term[: max(PREFIX_MIN, len(term) - 2)]
        found = [v for v in index.with_prefix(prefix) if v != term and not is_compound(v)]
        if found:
            out[term] = found
    return out


def bridges(
    terms: tuple[str, ...], words: Mapping[str, str], index: SectionIndex
) -> dict[str, tuple[frozenset[str], ...]]:
    """For each term, its translations in the other language (``lexicon``, the word as typed first) that the
    memory holds: a Ukrainian question's "клієнти" stands for "client" in an English memory, an English "desk"
    for "місце"."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    table = lexicon.table()
    for term in terms:
        held = tuple(b for b in table.bridges(term, words.get(term, "")) if all(index.term_df(t) > 0 for t in b))
        if held:
            out[term] = held
    return out


def transliterations(
    terms: tuple[str, ...], words: Mapping[str, str], names: AbstractSet[str], index: SectionIndex
) -> dict[str, tuple[frozenset[str], ...]]:
    """For each Cyrillic term typed as a name (its word in ``names``, the words the question capitalises), the
    memory's words its Latin spellings are (``transliteration.latin``), or begin, as inflected ("Марченка" →
    "marchenk(o)"): "Чим займається Олена Марченко?" finds the English profile of Olena Marchenko."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    for term in terms:
        word = words.get(term, "")
        if word not in names:
            continue
        found: list[str] = []
        for spelling in transliteration.latin(word):
            found.extend(_spelt(spelling, index))
        if found:
            out[term] = tuple(frozenset({t}) for t in dict.fromkeys(found))[:NAME_SPELLINGS]
    return out


def _spelt(spelling: str, index: SectionIndex) -> list[str]:
    """The memory's words a name's Latin ``spelling`` is, else those it begins but for an ending of two letters."""
    held = [t for t in analyzer.terms(spelling) if index.term_df(t) > 0]
    if held:
        return held
    prefix = spelling[: max(NAME_PREFIX_MIN, len(spelling) - 2)]
    return [t for t in index.with_prefix(prefix, NAME_SPELLINGS) if t.isalpha()]


def paraphrases(terms: tuple[str, ...], index: SectionIndex) -> dict[str, tuple[frozenset[str], ...]]:
    """For each term the memory never or barely uses (``RARE_SHARE``), the paraphrases of the question's words
    it is part of (``thesaurus``) that the memory uses more: "freelance" stands for "external employment",
    "storm" for "inclement weather".

    Not for a word the memory uses as its own, as spelling variants are not (``variants``): bridged always, a
    first table's meeting talk ("cost" → "price") cost QMSum (MRR 0.696 → 0.682); bridged wherever at most 3
    sections used it, a chat's "travel for work" brought "business trip" (long chats multi-section recall
    0.667 → 0.567)."""
    rare = int(index.live_count * RARE_SHARE)
    if all(index.term_df(t) > rare for t in terms):
        return {}  # most questions: the table is not even loaded
    # A phrase the memory writes a word of ("coworking space", where it says "coworking") is its own.
    found = thesaurus.table().bridges(frozenset(terms), lambda member: all(index.term_df(t) <= rare for t in member))
    out = {}
    for term, options in found.items():
        own = index.term_df(term)
        held = tuple(o for o in options if all(index.term_df(t) > own for t in o))
        if held:
            out[term] = held
    return out


def containing(terms: tuple[str, ...], index: SectionIndex) -> dict[str, tuple[frozenset[str], ...]]:
    """For each term naming a country, the regions it belongs to that the memory writes (``regions``): "Spain"
    stands for "EU/EEA", where a policy says what holds in "another EU/EEA country"."""
    out = {}
    for term in terms:
        held = tuple(r for r in regions.regions(term) if all(index.term_df(t) > 0 for t in r))
        if held:
            out[term] = held
    return out


def merged(*maps: Mapping[str, tuple[frozenset[str], ...]]) -> dict[str, tuple[frozenset[str], ...]]:
    """Each term's alternates from all of ``maps``, in order, once each."""
    out: dict[str, tuple[frozenset[str], ...]] = {}
    for found in maps:
        for term, options in found.items():
            out[term] = tuple(dict.fromkeys(out.get(term, ()) + options))
    return out


def bridge_boosts(
    term: str,
    bridges: tuple[frozenset[str], ...],
    index: SectionIndex,
    known: Mapping[str, float],
    same: bool = False,
) -> dict[str, float]:
    """Each translation's ranking boost: what the word it translates weighs (its idf, a framing word's
    ``FRAMING_WEIGHT`` of it), never more.  A word rare in the memory's other language had outweighed the common
    word it translates: "main" (framing, in most English pages) → "головний" put a Ukrainian rule first for "Who
    are our main clients?".  The rarity cut of ``framing_cuts`` is not applied here: a Ukrainian framing word is
    rare in a mostly English memory because the memory says it in English, and cut, its translation lost seed
    001's "Хто наші основні клієнти?" to the Kyiv office's Ukrainian rules.

    With ``same``, the bridges are the word itself in other letters (a name's Latin spelling): each weighs exactly
    what the word does, more often written than it or less ("olena" in a dozen pages stands for "Олена" in two)."""
    own = index.term_idf(term) * (FRAMING_WEIGHT if term in FRAMING_TERMS else 1.0)
    out = {}
    for t in {t for bridge in bridges for t in bridge}:
        ratio = own / (index.term_idf(t) or 1.0)
        boost = ratio if same else EXPANSION_WEIGHT * min(1.0, ratio)
        out[t] = min(known.get(t, boost), boost)
    return out


def acronym_expansions(
    terms: tuple[str, ...], acronyms: Acronyms
) -> tuple[list[str], dict[str, tuple[frozenset[str], ...]]]:
    """The memory's acronyms a question's words expand or abbreviate: the terms to add, and for each asked term
    the term sets that stand for it ("MRR" for "monthly recurring revenue", and back)."""
    present = set(terms)
    extra: list[str] = []
    alternates: dict[str, list[frozenset[str]]] = {}
    for acronym, expansions in acronyms.items():
        short = analyzer.term_set(acronym)
        for expansion in expansions:
            long = analyzer.term_set(expansion)
            if not short or len(long) < 2:
                continue
            if short <= present:  # the query says "MRR": its expansion stands for it too
                extra.extend(sorted(long))
                for term in short:
                    alternates.setdefault(term, []).append(long)
            shared = long & present
            if len(shared) >= 2 and len(shared) * 3 >= len(long) * 2:  # "recurring revenue" → MRR
                extra.extend(sorted(short))
                for term in shared:
                    alternates.setdefault(term, []).append(short)
    return list(dict.fromkeys(extra)), {t: tuple(dict.fromkeys(v)) for t, v in alternates.items()}


def framing_cuts(terms: Iterable[str], index: SectionIndex) -> dict[str, float]:
    """For each framing word the memory writes, but in fewer than ``FRAMING_SHARE`` of its sections, the multiplier
    that weighs it as ``FRAMING_WEIGHT`` of the idf of a word in that share rather than of its own
    (``framing_factor``)."""
    out = {}
    for term in terms:
        factor = framing_factor(term, index)
        if factor is not None and factor < FRAMING_WEIGHT:
            out[term] = factor
    return out


def framing_factor(term: str, index: SectionIndex) -> float | None:
    """How much of its idf a framing word counts (None: ``term`` is no framing word): ``FRAMING_WEIGHT``, or less
    where the memory writes it in fewer than ``FRAMING_SHARE`` of its sections.  A framing word the memory never
    writes keeps ``FRAMING_WEIGHT``: it ranks no section, and counts against coverage as before."""
    if term not in FRAMING_TERMS:
        return None
    n = max(index.live_count, 1)
    df = max(1.0, n * FRAMING_SHARE)
    ceiling = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    idf = index.term_idf(term)
    return FRAMING_WEIGHT * ceiling / idf if idf > ceiling and index.term_df(term) > 0 else FRAMING_WEIGHT


# A who-question's verb, and the role noun a record names its answer by ("Who owns the billing API?" and a page's
# "Owner: Ana Costa"): Snowball keeps these nouns apart from their verbs (it joins "approver" and "approve").
ROLE_NOUNS = {"own": "owner", "lead": "leader", "sign": "signer", "hold": "holder"}


def roles(terms: tuple[str, ...], index: SectionIndex) -> dict[str, list[str]]:
    """Each verb of ``ROLE_NOUNS`` among a who-question's ``terms`` with its role noun, where the memory uses the
    noun; asked of who-questions only (``query``): "Can I use my own laptop?" asks of no owner."""
    nouns = ((term, ROLE_NOUNS[term]) for term in terms if term in ROLE_NOUNS)
    return {term: [noun] for term, noun in nouns if index.term_df(noun) > 0}
