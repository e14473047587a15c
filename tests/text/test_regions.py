"""Countries and their regions: a country's name stands for the regions it belongs to, nothing else does."""

from __future__ import annotations

from retriever.text import analyzer, regions


def test_a_member_state_belongs_to_the_eu_the_eea_and_europe() -> None:
    [spain] = analyzer.terms("Spain")
    assert regions.regions(spain) == (
        frozenset({"eu"}), frozenset({"eea"}), frozenset(analyzer.terms("European Union")), frozenset({"europ"})
    )
    [norway] = analyzer.terms("Norway")
    assert frozenset({"eu"}) not in regions.regions(norway) and frozenset({"eea"}) in regions.regions(norway)
    [czechia] = analyzer.terms("Czechia")
    assert frozenset({"eu"}) in regions.regions(czechia)


def test_no_other_term_has_a_region() -> None:
    for word in ("client", "usa", "canada", "europe", "eu", "lisbon"):
        assert all(regions.regions(term) == () for term in analyzer.terms(word)), word
