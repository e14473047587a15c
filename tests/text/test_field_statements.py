"""Front-matter prose fields become statements of the document's top section, citing their own lines."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.pipeline.speakers import turns
from retriever.text.field_statements import MAX_CHARS, MIN_WORDS, statements
from retriever.text.front_matter import split_front_matter
from retriever.text.parser import parse_document

RECORD = """---
type: decision
title: DEC-0052 — Apache Flink for Riverbed
reason: Flink passed the load test with 40-second recovery, where Kafka Streams stalled.
summary: >
  Use Apache Flink on EKS as the stream processor
  for Project Riverbed.
owner: Dmytro Shevchenko
---

# DEC-0052 — Apache Flink for Riverbed

**Status:** accepted · **Date:** 2026-06-24

## Decision

Self-managed Apache Flink 1.20 on EKS.
"""


def _units(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    meta, _, offset = split_front_matter(text)
    return [(u.kind, u.text, u.lines) for u in statements(meta, text, offset)]


def test_summary_is_said_as_written_and_reason_is_labelled_each_citing_its_lines() -> None:
    assert _units(RECORD) == [
        ("field", "Reason: Flink passed the load test with 40-second recovery, where Kafka Streams stalled.", (4, 4)),
        ("field", "Use Apache Flink on EKS as the stream processor for Project Riverbed.", (5, 7)),
    ]


def test_prose_statements_open_the_section_the_title_heading_opens() -> None:
    doc = parse_document("dec.md", RECORD)
    top = doc.sections[0]
    assert top.title == "DEC-0052 — Apache Flink for Riverbed"
    assert [u.lines for u in top.units] == [(4, 4), (5, 7), (13, 13)]
    assert doc.sections[1].heading == "Decision"
    assert [u.text for u in doc.sections[1].units] == ["Self-managed Apache Flink 1.20 on EKS."]


def test_a_level_one_heading_other_than_the_title_still_takes_the_prose() -> None:
    text = "---\ntitle: INC-31 Postmortem\nsummary: A shadow job replaying Kafka delayed the dashboards.\n---\n\n"
    doc = parse_document("inc.md", text + "# INC-31 Postmortem — 2026-11-17\n\nSEV-2.\n")
    assert [s.heading for s in doc.sections] == ["INC-31 Postmortem — 2026-11-17"]
    assert doc.sections[0].units[0].text == "A shadow job replaying Kafka delayed the dashboards."


def test_a_body_starting_below_a_level_two_heading_says_its_fields_in_that_first_section() -> None:
    text = "---\ntitle: Pricing\ndescription: List prices of the three plans and their add-ons.\n---\n\n"
    text += "## Plans\n\nStarter.\n\n## Add-ons\n\nSSO.\n"
    doc = parse_document("pricing.md", text)
    assert [(s.heading, [(u.kind, u.text, u.lines) for u in s.units]) for s in doc.sections] == [
        ("Plans", [
            ("field", "Description: List prices of the three plans and their add-ons.", (3, 3)),
            ("sentence", "Starter.", (8, 8)),
        ]),
        ("Add-ons", [("sentence", "SSO.", (12, 12))]),
    ]


def test_short_values_lists_and_other_keys_are_no_statements() -> None:
    text = "---\ntitle: A page about things\nreason: cost\ndescription: [a, list, of, words]\nowner: Rui Costa\n---\n"
    assert _units(text + "Body.\n") == []


def test_a_file_without_front_matter_has_no_prose_statements() -> None:
    assert _units("# Title\n\nsummary: this line is body text, not front matter.\n") == []
    assert parse_document("a.md", "## Only a section\n\nText here.\n").sections[0].ordinal == 0


def test_a_labelled_field_opens_no_speakers_turn() -> None:
    top = parse_document("dec.md", RECORD).sections[0]
    assert all(turn.speaker is None and not turn.continues for turn in turns(top.units)[:2])


def test_a_span_ends_before_trailing_blank_and_comment_lines_and_at_a_toml_table() -> None:
    yaml_text = "---\ntitle: T\nsummary: A page about the office rules here.\n\n# the end\n---\nBody.\n"
    assert _units(yaml_text) == [("field", "A page about the office rules here.", (3, 3))]
    toml_text = '+++\ntitle = "T"\nsummary = "The office rules for everyone here."\n\n'
    toml_text += '[extra]\nsummary = "x y z w"\n+++\n'
    assert _units(toml_text) == [("field", "The office rules for everyone here.", (3, 3))]


def test_a_yaml_line_opening_with_a_bracket_ends_no_key_and_a_block_scalars_hash_line_is_its_text() -> None:
    text = "---\ntitle: T\ndescription: >\n  How to page the on-call engineer, see\n"
    text += "  [the paging guide](https://wiki/paging) for the rules.\ntags:\n  [a, b]\n"
    text += "reason: We moved paging to Opsgenie because of the price.\n"
    text += "summary: |\n  Paging notes.\n  #on-call line\n---\n"
    assert [(u[1][:12], u[2]) for u in _units(text)] == [
        ("Description:", (3, 5)),
        ("Reason: We m", (8, 8)),
        ("Paging notes", (9, 11)),
    ]


def test_an_array_of_arrays_in_toml_is_no_table() -> None:
    text = '+++\ntitle = "T"\nmatrix = [\n  [1, 2],\n]\nsummary = "The office rules for everyone here."\n+++\n'
    assert _units(text) == [("field", "The office rules for everyone here.", (6, 6))]


def test_quoted_and_capitalised_keys_are_read_and_a_long_value_is_cut_with_a_marker() -> None:
    text = '---\n"Summary": "' + "word " * 400 + '"\nTLDR: Use the [runbook](https://ex.com/r) first, always.\n---\n'
    units = _units(text)
    assert [(kind, lines) for kind, _, lines in units] == [("field", (2, 2)), ("field", (3, 3))]
    assert units[0][1].endswith("word …") and len(units[0][1]) <= MAX_CHARS + 2
    assert units[1][1] == "TL;DR: Use the runbook first, always."


def test_a_field_ending_in_a_colon_introduces_nothing() -> None:
    text = '---\ntitle: T\nsummary: "The steps every new hire follows are:"\n---\n# T\n\n- Sign the contract.\n'
    top = parse_document("t.md", text).sections[0]
    assert not top.units[0].leads_in


def test_toml_front_matter_fields_are_read_too() -> None:
    text = '+++\ntitle = "Remote work"\nsummary = "Remote-first, with offices in Lisbon and Kyiv."\n+++\n\n'
    text += "# Remote work\n"
    assert _units(text) == [("field", "Remote-first, with offices in Lisbon and Kyiv.", (3, 3))]


_VALUE = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\r"), max_size=80)


@settings(max_examples=200, deadline=None)
@given(summary=_VALUE, reason=_VALUE, body=_VALUE)
def test_any_front_matter_parses_and_every_prose_line_lies_in_the_block(summary: str, reason: str, body: str) -> None:
    text = f"---\ntitle: T\nsummary: {summary!r}\nreason: {reason!r}\n---\n{body}\n"
    try:
        meta, _, offset = split_front_matter(text)
    except ValueError:
        return  # malformed YAML is the reader's concern: the file is skipped with its reason
    for unit in statements(meta, text, offset):
        assert 2 <= unit.lines[0] <= unit.lines[1] < offset
        assert len(unit.text.split()) >= MIN_WORDS
    parse_document("t.md", text)  # never raises past the front matter's own errors


def test_a_key_not_read_ends_the_span_of_the_key_before_it() -> None:
    text = "---\ntitle: T\nsummary: A page about the office rules here.\nКінцевий термін: 2026-12-01\n"
    text += "a key with spaces: yes\nreason: We moved paging to Opsgenie because of the price.\n---\nBody.\n"
    assert [lines for _, _, lines in _units(text)] == [(3, 3), (6, 6)]


def test_a_toml_dotted_key_ends_a_span_and_a_multi_line_strings_lines_are_its_text() -> None:
    text = '+++\ntitle = "T"\nsummary = "The office rules for everyone here."\nextra.note = 1\n'
    text += 'reason = """\nWe moved paging = a cheaper plan,\nsee the vendors page.\n"""\n+++\nBody.\n'
    assert [lines for _, _, lines in _units(text)] == [(3, 3), (5, 8)]
