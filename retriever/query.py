"""Query analysis: the query's terms, the user's word for each, and their weights.

Weights are idf values (terms the memory lacks weigh most, so a question about something
the memory never mentions cannot score high), with question-framing words ("main",
"current") down-weighted.  Compound terms (``end-of-year``) rank sections, where an exact
match is a strong sign, but leave coverage to their parts: a text that writes "end of
year" answers the question as well as one that hyphenates it.

(Splitting many-part questions into facets searched apart was measured on the dev
questions and lost file hit@1 without gaining multi-section recall, so it is not done.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from retriever import analyzer
from retriever.index import SectionIndex
from retriever.stopwords import FRAMING

FRAMING_WEIGHT = 0.3  # a framing word counts this much of its idf
_FRAMING_TERMS = frozenset(t for word in FRAMING for t in analyzer.terms(word))


@dataclass(frozen=True, slots=True)
class Query:
    """An analysed query: unique terms in order and the user's word for each term."""

    text: str
    terms: tuple[str, ...]
    words: Mapping[str, str]

    def word(self, term: str) -> str:
        return self.words.get(term, term)


def _is_compound(term: str) -> bool:
    return any(not ch.isalnum() for ch in term)


def analyze(text: str) -> Query:
    """Terms and words of a query text."""
    words: dict[str, str] = {}
    for word in analyzer.raw_words(text):
        for term in analyzer.terms(word):
            words.setdefault(term, word)
    return Query(text, tuple(dict.fromkeys(analyzer.terms(text))), words)


def framing_boosts(terms: Iterable[str]) -> dict[str, float]:
    """Down-weights for words that frame the question rather than name its topic."""
    return {t: FRAMING_WEIGHT for t in terms if t in _FRAMING_TERMS}


def weights(query: Query, index: SectionIndex) -> dict[str, float]:
    """Each non-compound query term's coverage weight: its idf, framing words down-weighted."""
    boosts = framing_boosts(query.terms)
    return {t: index.term_idf(t) * boosts.get(t, 1.0) for t in query.terms if not _is_compound(t)}


def coverage(weights: Mapping[str, float], present: set[str]) -> float:
    """Share of the query's weight found in ``present`` (0..1)."""
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in present) / total if total else 0.0
