"""Countries and the regions they belong to: a question naming a country finds what the memory says of its region.

"Can I work remotely from Spain for a month?" is answered by a policy row for "another EU/EEA country", which holds
none of the question's words but "work".  Contract: ``regions(term)`` gives, for an index term that names a country
(``analyzer``'s terms of its English name), the term sets of the regions it belongs to; nothing for any other term.
Only countries named by one word: "Wales" is also New South Wales's, "Ireland" Northern Ireland's, and "Czech
Republic" two words (Czechia is listed).  General knowledge (EU and EEA membership as of 2026), not any memory's.
"""

from __future__ import annotations

from functools import cache

_EU = ("eu", "eea", "european union", "europe")
_EEA_ONLY = ("eea", "europe")  # in the European Economic Area, not the EU
_UK = ("uk", "united kingdom", "britain")
# Country (its English names) → the regions it belongs to, widest last.
COUNTRIES: dict[tuple[str, ...], tuple[str, ...]] = {
    **{
        (name,): _EU
        for name in (
            "austria belgium bulgaria croatia cyprus denmark estonia finland france germany greece hungary ireland "
            "italy latvia lithuania luxembourg malta netherlands poland portugal romania slovakia slovenia spain "
            "sweden"
        ).split()
    },
    ("czechia",): _EU,
    ("iceland",): _EEA_ONLY,
    ("liechtenstein",): _EEA_ONLY,
    ("norway",): _EEA_ONLY,
    ("switzerland",): ("efta", "europe"),
    ("england",): _UK,
    ("scotland",): _UK,
}


def regions(term: str) -> tuple[frozenset[str], ...]:
    """The regions of the country whose (single-term) name is ``term``, as term sets; () for any other term."""
    return _by_term().get(term, ())


@cache
def _by_term() -> dict[str, tuple[frozenset[str], ...]]:
    from retriever.text import analyzer  # at first use: the table is small, the analyzer is loaded by then

    out: dict[str, tuple[frozenset[str], ...]] = {}
    for names, places in COUNTRIES.items():
        sets = tuple(frozenset(analyzer.terms(place)) for place in places)
        for name in names:
            terms = analyzer.terms(name)
            if len(terms) == 1:  # a country of one term ("spain")
                out[terms[0]] = sets
    return out
