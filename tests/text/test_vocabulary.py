"""The front-matter vocabulary's readers: a relation value's names, wiki links among them."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.vocabulary import link_target, listed, names


def test_a_relation_value_written_as_a_wiki_link_names_its_target() -> None:
    assert names("[[Ana Costa]]") == ["Ana Costa"]
    assert names(["[[Ana Costa|Ana]]", "[[People/Ana Costa#Contact]]", " [[ Laura Chen ]] ", "Marta Nowak"]) == [
        "Ana Costa",
        "People/Ana Costa",
        "Laura Chen",
        "Marta Nowak",
    ]
    assert names("[[People/Ana Costa#Contact|Ana]]") == ["People/Ana Costa"]


def test_as_written_keeps_a_wiki_link_as_the_file_writes_it() -> None:
    assert names(["[[Ana Costa|Ana]]", 7], numbers=False, as_written=True) == ["[[Ana Costa|Ana]]"]


@pytest.mark.parametrize(
    "value",
    ["[[#Contact]]", "[[]]", "[[Ana]] and [[Laura]]", "see [[Ana]]", "[[Ana]", "[[a[b]]", "![[chart.png]]", "[Ana]"],
)
def test_a_value_that_is_not_one_wiki_link_with_a_target_stays_as_written(value: str) -> None:
    assert link_target(value) == value


def test_a_text_of_wiki_links_with_commas_names_each_target() -> None:
    assert listed("[[Ana Costa]], [[Laura Chen|Laura]]; Marta Nowak") == ["Ana Costa", "Laura Chen", "Marta Nowak"]
    assert listed("[[Acme, Inc.]]") == ["Acme, Inc."]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="[]|#!ab \n", max_size=60))
def test_link_target_never_raises_and_gives_the_value_or_a_part_of_it(text: str) -> None:
    found = link_target(text)
    assert found in text.strip()
    assert found == text.strip() or text.strip().startswith("[[")


@pytest.mark.parametrize("text", ["[[" * 10_000, "[[" + "a" * 1_000_000, "[[" + "#" * 500_000 + "|" * 500_000])
def test_link_target_is_linear_on_hostile_values(text: str) -> None:
    started = time.perf_counter()
    link_target(text)
    names([text] * 10)
    assert time.perf_counter() - started < 1
