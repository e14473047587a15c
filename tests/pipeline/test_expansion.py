"""What a question's words stand for in a memory: prefix variants, framing words' weights, translations' boosts."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from retriever.memory.build import add_sections
from retriever.memory.index import Params, SectionIndex
from retriever.pipeline.expansion import (
    EXPANSION_WEIGHT,
    FRAMING_SHARE,
    FRAMING_WEIGHT,
    bridge_boosts,
    containing,
    framing_cuts,
    framing_factor,
    roles,
    transliterations,
    variants,
)


def _memory_of(*sections: dict[str, int]) -> SectionIndex:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter(words), empty, empty, empty) for words in sections])
    return index


def _hundred_sections(**counts: int) -> SectionIndex:
    """100 sections; each named term in that many of them, the rest holding "filler"."""
    sections = [{"filler": 1} for _ in range(100)]
    for term, count in counts.items():
        for section in sections[:count]:
            section[term] = 1
    return _memory_of(*sections)


def test_a_missing_word_of_six_letters_gets_the_memorys_words_of_its_beginning_and_five_letters_do_not() -> None:
    index = _memory_of({"subsidi": 1, "accrual": 1})
    assert variants(("subsid",), index) == {"subsid": ["subsidi"]}  # "subsidized": six letters
    assert variants(("accru",), index) == {}  # five letters: too short a beginning to tell a word by


def test_a_missing_framing_word_brings_no_variants() -> None:
    """A 6-letter "status" or "summar" would have pulled in the memory's "statuses" at twice its own weight."""
    index = _memory_of({"statuses": 1}, {"summari": 1})
    assert variants(("status", "summar"), index) == {}


def test_a_framing_word_the_memory_seldom_writes_weighs_as_one_in_a_twentieth_of_the_sections() -> None:
    index = _hundred_sections(summar=1, detail=10)
    share = 100 * FRAMING_SHARE  # 5 sections of 100
    ceiling = math.log(1.0 + (100 - share + 0.5) / (share + 0.5))  # the idf of a word in 5 of the 100
    cut = framing_cuts(("summar", "detail", "missing", "filler"), index)
    assert set(cut) == {"summar"}  # "detail", in 10 sections of 100, keeps its weight
    assert cut["summar"] * index.term_idf("summar") == pytest.approx(FRAMING_WEIGHT * ceiling)
    assert framing_factor("detail", index) == FRAMING_WEIGHT
    assert framing_factor("status", index) == FRAMING_WEIGHT  # never written: keeps its weight (it ranks nothing)
    assert framing_factor("filler", index) is None


@pytest.mark.parametrize("framing", [True, False])
def test_a_translation_weighs_no_more_than_the_word_before_its_rarity_cut(framing: bool) -> None:
    """A framing word's translation is boosted from FRAMING_WEIGHT of the word's idf: the rarity cut is left out
    (cut, seed 001's Ukrainian question lost its English answer), and the translation's own idf caps it."""
    term = "summar" if framing else "budget"
    index = _hundred_sections(**{term: 1, "підсу": 40})
    boost = bridge_boosts(term, (frozenset({"підсу"}),), index, {})["підсу"]
    own = index.term_idf(term) * (FRAMING_WEIGHT if framing else 1.0)
    assert boost == pytest.approx(EXPANSION_WEIGHT * min(1.0, own / index.term_idf("підсу")))
    assert boost * index.term_idf("підсу") <= min(own, index.term_idf("підсу")) + 1e-9


def test_a_capitalised_cyrillic_name_stands_for_its_latin_spelling_or_the_word_it_begins() -> None:
    index = _memory_of({"olena": 1, "marchenko": 1}, {"olena": 1}, {"filler": 1})
    terms, words = ("олен", "марче", "займа"), {"олен": "олени", "марче": "марченка", "займа": "займається"}
    found = transliterations(terms, words, {"олени", "марченка"}, index)
    assert found == {"олен": (frozenset({"olena"}),), "марче": (frozenset({"marchenko"}),)}
    assert transliterations(terms, words, set(), index) == {}  # typed in lower case: no name


def test_a_names_latin_spelling_weighs_what_the_name_does_where_a_translation_weighs_less() -> None:
    index = _hundred_sections(олен=1, olena=10)
    bridges = (frozenset({"olena"}),)
    same = bridge_boosts("олен", bridges, index, {}, same=True)["olena"]
    assert math.isclose(same * index.term_idf("olena"), index.term_idf("олен"), rel_tol=1e-6)
    assert bridge_boosts("олен", bridges, index, {})["olena"] == EXPANSION_WEIGHT


def test_a_country_stands_for_the_regions_of_it_the_memory_writes() -> None:
    index = _memory_of({"eu": 1, "eea": 1, "work": 1}, {"spain": 1, "client": 1})
    assert containing(("work", "spain"), index) == {"spain": (frozenset({"eu"}), frozenset({"eea"}))}
    assert containing(("spain",), _memory_of({"spain": 1})) == {}  # no region the memory writes: nothing to add


def test_a_verb_stands_for_the_role_noun_the_memory_names_its_answer_by() -> None:
    index = _memory_of({"owner": 1, "ana": 1}, {"leader": 1})
    assert roles(("own", "bill", "api"), index) == {"own": ["owner"]}
    assert roles(("lead",), index) == {"lead": ["leader"]}


def test_no_role_noun_a_memory_does_not_use() -> None:
    assert roles(("hold", "budget"), _memory_of({"owner": 1})) == {}  # no "holder" in this memory
