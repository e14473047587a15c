"""The English thesaurus: a line's members stand for each other, a directed line's left for its right, read as
the analyzer reads text."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from retriever.text import analyzer, thesaurus
from retriever.text.thesaurus import Thesaurus, parse, to_json

TABLE = (
    "# leave\n"
    "external employment, moonlighting, side job, outside work\n"
    "fired, sacked => termination, dismissal\n"
    "on call, standby\n"
    "on-call, pager duty\n"
    "lonely\n"
)


def test_each_member_of_a_line_stands_for_every_other() -> None:
    table = parse(TABLE)
    assert table.bridges({"moonlight"}) == {"moonlight": (frozenset({"extern", "employ"}), frozenset({"side", "job"}))}


def test_a_phrase_stands_for_the_others_only_when_all_its_words_are_asked() -> None:
    table = parse(TABLE)
    assert table.bridges({"side"}) == {}
    found = table.bridges({"side", "job", "freelanc"})
    assert found["side"] == found["job"] == (frozenset({"extern", "employ"}), frozenset({"moonlight"}))


def test_a_directed_line_brings_its_right_side_and_never_the_reverse() -> None:
    table = parse(TABLE)
    assert table.bridges({"fire"})["fire"] == (frozenset({"sack"}), frozenset({"termin"}), frozenset({"dismiss"}))
    assert table.bridges({"termin"}) == {}


def test_a_paraphrase_already_asked_is_not_added() -> None:
    assert parse(TABLE).bridges({"moonlight", "side", "job"}) == {
        "moonlight": (frozenset({"extern", "employ"}),),
        "side": (frozenset({"extern", "employ"}),),
        "job": (frozenset({"extern", "employ"}),),
    }


def test_a_member_left_with_one_common_word_by_the_stop_list_is_passed_over() -> None:
    assert parse(TABLE).bridges({"work"}) == {}  # "outside work": "outside" is a stop word
    table = parse(TABLE)
    assert table.bridges({"call"}) == {}
    assert table.bridges({"standbi"}) == {}  # its one other member was passed over


def test_a_hyphenated_member_is_its_whole_compound() -> None:
    table = parse(TABLE)
    assert table.bridges({"on-call", "call"}) == {"on-call": (frozenset({"pager", "duti"}),)}


def test_a_possessive_member_is_its_noun_so_either_way_of_writing_it_is_asked() -> None:
    table = parse("doctor's note, medical certificate\n")
    for asked in ("doctors note", "doctor's note", "doctors' note"):
        terms = frozenset(t for t in analyzer.terms(asked) if "'" not in t)
        assert table.bridges(terms)["note"] == (frozenset({"medic", "certif"}),)


def test_the_packaged_table_loads_and_bridges_a_common_paraphrase() -> None:
    table = thesaurus.table()
    assert table.by_term, "the packaged thesaurus is empty"
    assert frozenset({"extern", "employ"}) in table.bridges({"moonlight"}).get("moonlight", ())


def test_the_shipped_terms_file_is_the_shipped_table_parsed() -> None:
    """Rebuild it with ``python scripts/build_lexicon.py`` after editing the table or the analyzer."""
    source = thesaurus.TABLE_PATH.read_bytes()
    assert thesaurus.TERMS_PATH.read_text(encoding="utf-8") == to_json(parse(source.decode("utf-8")), source)


def test_a_terms_file_read_back_is_the_table_it_was_made_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, terms = tmp_path / "t.tsv", tmp_path / "t.json"
    table.write_text(TABLE, encoding="utf-8")
    terms.write_text(to_json(parse(TABLE), TABLE.encode()), encoding="utf-8")
    monkeypatch.setattr(thesaurus, "TABLE_PATH", table)
    monkeypatch.setattr(thesaurus, "TERMS_PATH", terms)
    loaded = thesaurus._load()
    assert {t: loaded.by_term[t] for t in loaded.by_term} == parse(TABLE).by_term


def test_a_terms_file_made_from_another_table_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    table, terms = tmp_path / "t.tsv", tmp_path / "t.json"
    table.write_text(TABLE, encoding="utf-8")
    wrong = Thesaurus({"moonlight": ((frozenset({"moonlight"}), (frozenset({"wrong"}),)),)})
    terms.write_text(to_json(wrong, b"another table"), encoding="utf-8")
    monkeypatch.setattr(thesaurus, "TABLE_PATH", table)
    monkeypatch.setattr(thesaurus, "TERMS_PATH", terms)
    assert thesaurus._load().bridges({"moonlight"}) == parse(TABLE).bridges({"moonlight"})


def test_a_missing_table_is_an_empty_thesaurus_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(thesaurus, "TABLE_PATH", tmp_path / "missing.tsv")
    with caplog.at_level(logging.WARNING):
        assert thesaurus._load() == Thesaurus()
    assert "not paraphrased" in caplog.text


@given(st.text(max_size=300))
def test_any_text_parses_into_a_thesaurus(text: str) -> None:
    table = parse(text)
    for entries in table.by_term.values():
        for member, others in entries:
            assert member and member not in others


def test_only_the_members_asked_for_stand_for_their_paraphrases() -> None:
    table = parse(TABLE)
    found = table.bridges({"side", "job", "moonlight"}, lambda member: member != frozenset({"moonlight"}))
    assert set(found) == {"side", "job"}


def test_a_line_with_two_arrows_is_passed_over() -> None:
    assert parse("fired => termination => dismissal\n").by_term == {}


def test_each_line_of_the_shipped_table_gives_at_least_one_paraphrase() -> None:
    """A line whose members all collapse into one (or into none) does nothing: it is a mistake in the table."""
    for line in thesaurus.TABLE_PATH.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            assert parse(line).by_term, line
