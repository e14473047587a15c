"""The section index: exact BM25F scores, segments and tombstones, and what each field holds."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.memory.build import add_sections
from retriever.memory.fields import FIELDS, Analyzed, analyze_document
from retriever.memory.index import Params, SectionIndex
from retriever.text import analyzer
from retriever.text.parser import parse_document

NOTHING: Counter[str] = Counter()


def _section(
    title: dict[str, int] | None = None,
    heading: dict[str, int] | None = None,
    path: dict[str, int] | None = None,
    meta: dict[str, int] | None = None,
    body: dict[str, int] | None = None,
) -> Analyzed:
    """One analysed section, its term counts given per field in ``FIELDS`` order."""
    return tuple(Counter(counts or {}) for counts in (title, heading, path, meta, body))


def _index(sections: list[Analyzed], params: Params | None = None) -> SectionIndex:
    index = SectionIndex(params=params or Params())
    index.set_avglen(sections)
    add_sections(index, sections)
    return index


def _saturate(tf: float, k1: float = 1.2) -> float:
    return tf * (k1 + 1.0) / (tf + k1)


def _terms(text: str) -> Counter[str]:
    return Counter(analyzer.terms(text))


# scoring


def test_one_section_one_term_scores_the_hand_computed_bm25f_value() -> None:
    params = Params(
        k1=1.0,
        weights=(2.0, 1.0, 1.0, 0.5, 1.0),
        b=(0.0, 0.0, 0.0, 0.0, 0.5),
        groups=(0, 1, 2, 2, 2),
        group_weights=(1.0, 2.0, 1.0),
    )
    section = _section(title={"stripe": 1}, heading={"stripe": 1}, meta={"stripe": 2}, body={"stripe": 1, "invoic": 1})
    index = _index([section], params)

    # N = 1, df = 1: idf = ln(1 + 0.5 / 1.5) = ln(4/3).  The body is as long as the average (norm 1).
    # title group: tf' = 2·1 = 2          → 2·2/(2+1) = 4/3, weighted 1
    # heading group: tf' = 1·1 = 1        → 1·2/(1+1) = 1,   weighted 2
    # path/meta/body group: 0.5·2 + 1 = 2 → 4/3,             weighted 1
    expected = math.log(4 / 3) * (4 / 3 + 2 * 1 + 4 / 3)
    assert index.scores(["stripe"]).tolist() == [pytest.approx(expected, rel=1e-6)]
    assert index.top(["stripe"], 5) == [(0, pytest.approx(expected, rel=1e-6))]


def test_length_normalisation_uses_each_fields_b_and_average_length() -> None:
    apple = _section(
        title={"appl": 1},
        path={"appl": 1, "farm": 1},
        meta={"appl": 1},
        body={"appl": 2, "pie": 2},
    )
    pear = _section(
        title={"pear": 1},
        heading={"pear": 1},
        path={"farm": 1, "orchard": 1, "north": 1, "field": 1},
        body={"pear": 8},
    )
    index = _index([apple, pear], Params())

    # Default params: k1 1.2, weights (1, 1, 1, 0.5, 1), b (0, 0, 0.3, 0, 0.75), groups (0, 1, 2, 2, 2),
    # group weights (1, 1.5, 1).  avglen: path (2 + 4) / 2 = 3, body (4 + 8) / 2 = 6.
    assert index.avglen == (1.0, 1.0, 3.0, 1.0, 6.0)
    path = 1 / (1 - 0.3 + 0.3 * 2 / 3)  # 1 / 0.9
    meta = 0.5 * 1
    body = 2 / (1 - 0.75 + 0.75 * 4 / 6)  # 2 / 0.75
    expected = math.log(1 + (2 - 1 + 0.5) / (1 + 0.5)) * (1.0 * _saturate(1.0) + 1.0 * _saturate(path + meta + body))
    assert index.scores(["appl"]).tolist() == [pytest.approx(expected, rel=1e-6), 0.0]


def test_a_tiny_set_ranks_exactly_and_ties_break_on_section_id() -> None:
    sections = [
        _section(heading={"refund": 1}, body={"polici": 4}),
        _section(body={"refund": 1, "polici": 3}),
        _section(body={"refund": 3, "polici": 1}),
        _section(body={"polici": 4}),
        _section(title={"refund": 1}, body={"polici": 4}),
        _section(meta={"refund": 1}, body={"polici": 4}),
    ]
    index = _index(sections)

    # idf = ln(1 + (6 - 5 + 0.5) / 5.5); every body is 4 terms long, the average, so no length penalty.
    idf = math.log(1 + 1.5 / 5.5)
    assert index.top(["refund"], 10) == [
        (2, pytest.approx(idf * _saturate(3.0), rel=1e-6)),  # three body mentions
        (0, pytest.approx(idf * 1.5 * _saturate(1.0), rel=1e-6)),  # the heading, group weight 1.5
        (1, pytest.approx(idf * _saturate(1.0), rel=1e-6)),  # one body mention …
        (4, pytest.approx(idf * _saturate(1.0), rel=1e-6)),  # … ties with the title: lower id first
        (5, pytest.approx(idf * _saturate(0.5), rel=1e-6)),  # front matter counts half
    ]


def test_identical_sections_come_back_in_section_id_order() -> None:
    match, other = _section(body={"quota": 1}), _section(body={"target": 1})
    index = _index([match, other, match, match, other])
    assert [sid for sid, _ in index.top(["quota"], 10)] == [0, 2, 3]


def test_ties_at_the_cut_off_keep_the_lowest_section_ids() -> None:
    sections = [_section(body={"quota": tf, "pad": 3 - tf}) for tf in (1, 1, 2, 2)]
    index = _index(sections)
    full = [sid for sid, _ in index.top(["quota"], 4)]
    assert full == [2, 3, 0, 1]
    assert [sid for sid, _ in index.top(["quota"], 1)] == [2]
    assert [sid for sid, _ in index.top(["quota"], 3)] == [2, 3, 0]


def test_boosts_scale_a_terms_contribution() -> None:
    index = _index(
        [
            _section(body={"billing": 1, "stripe": 2}),
            _section(body={"billing": 2}),
            _section(body={"stripe": 1, "invoic": 1}),
        ]
    )
    billing, stripe = index.scores(["billing"]), index.scores(["stripe"])
    boosted = index.scores(["billing", "stripe"], boosts={"billing": 2.0})
    np.testing.assert_allclose(boosted, 2.0 * billing + stripe, rtol=1e-6)
    np.testing.assert_allclose(index.scores(["billing", "stripe"], boosts={}), billing + stripe, rtol=1e-6)


def test_a_repeated_query_term_counts_once() -> None:
    index = _index([_section(body={"billing": 1}), _section(body={"stripe": 1})])
    np.testing.assert_array_equal(index.scores(["billing", "billing", "billing"]), index.scores(["billing"]))


def test_unknown_terms_score_nothing() -> None:
    index = _index([_section(body={"billing": 1}), _section(body={"stripe": 1})])
    assert index.scores(["zebra"]).tolist() == [0.0, 0.0]
    assert index.top(["zebra"], 5) == []
    assert index.top([], 5) == []


def test_top_never_returns_sections_with_zero_score() -> None:
    index = _index([_section(body={"other": 1}), _section(body={"quota": 1}), _section(body={"other": 2})] * 2)
    assert [sid for sid, _ in index.top(["quota"], 10)] == [1, 4]
    assert index.top(["quota"], 0) == []


def test_an_empty_index_scores_nothing() -> None:
    index = SectionIndex()
    assert (index.size, index.live_count) == (0, 0)
    assert index.scores(["anything"]).tolist() == []
    assert index.top(["anything"], 5) == []


# idf


def test_an_unseen_terms_idf_is_unseen_idf_and_beats_every_seen_term() -> None:
    index = _index(
        [_section(body={"billing": 1, "stripe": 1}), _section(body={"billing": 1}), _section(body={"rare": 1})]
    )
    assert index.unseen_idf() == pytest.approx(math.log(1 + (3 + 0.5) / 0.5))
    assert index.term_idf("never-indexed") == index.unseen_idf()
    assert index.term_idf("billing") == pytest.approx(math.log(1 + (3 - 2 + 0.5) / (2 + 0.5)))
    assert index.term_idf("rare") == pytest.approx(math.log(1 + (3 - 1 + 0.5) / (1 + 0.5)))
    assert max(index.term_idf(term) for term in index.vocab) < index.unseen_idf()


# tombstones and segments


def test_removed_sections_score_zero_and_leave_the_document_frequencies() -> None:
    index = _index([_section(body={"quota": 1}), _section(body={"quota": 2}), _section(body={"target": 1})])
    assert index.df[index.vocab["quota"]] == 2

    index.remove([0])

    assert index.scores(["quota"])[0] == 0.0
    assert [sid for sid, _ in index.top(["quota"], 10)] == [1]
    assert index.df[index.vocab["quota"]] == 1
    assert (index.size, index.live_count) == (3, 2)
    assert index.alive.tolist() == [False, True, True]


def test_removing_a_dead_section_again_changes_nothing() -> None:
    index = _index([_section(body={"quota": 1}), _section(body={"quota": 2})])
    index.remove([0])
    index.remove([0, 0])
    index.remove([])
    assert index.df[index.vocab["quota"]] == 1
    assert index.live_count == 1


def test_a_tombstoned_index_scores_like_one_built_without_the_dead_sections() -> None:
    keep = [_section(body={"quota": 1, "sales": 2}), _section(heading={"quota": 1}, body={"target": 3})]
    drop = [_section(body={"quota": 4}), _section(title={"sales": 1}, body={"quota": 1})]
    everything = [drop[0], keep[0], drop[1], keep[1]]
    tombstoned = _index(everything)
    tombstoned.remove([0, 2])
    clean = SectionIndex()
    clean.set_avglen(everything)  # same average lengths, so only the tombstones differ
    add_sections(clean, keep)

    for term in ("quota", "sales", "target"):
        np.testing.assert_allclose(tombstoned.scores([term])[[1, 3]], clean.scores([term]), rtol=1e-6)
        assert tombstoned.term_idf(term) == pytest.approx(clean.term_idf(term))


def test_a_term_only_dead_sections_held_scores_nothing_and_counts_as_unseen() -> None:
    index = _index([_section(body={"quota": 1}), _section(body={"legacy": 1, "quota": 1})])
    index.remove([1])
    assert index.scores(["legacy"]).tolist() == [0.0, 0.0]
    assert index.top(["legacy"], 5) == []
    assert index.term_idf("legacy") == index.unseen_idf()


def test_adding_after_a_removal_makes_a_new_segment_with_later_ids() -> None:
    index = _index([_section(body={"quota": 1}), _section(body={"target": 1})])
    index.remove([0])

    ids = add_sections(index, [_section(body={"quota": 2, "fresh": 1}), _section(heading={"fresh": 1})])

    assert ids == range(2, 4)
    assert len(index.segments) == 2
    assert (index.size, index.live_count) == (4, 3)
    assert index.alive.tolist() == [False, True, True, True]
    assert index.df[index.vocab["quota"]] == 1
    assert index.df[index.vocab["fresh"]] == 2
    assert [sid for sid, _ in index.top(["quota"], 10)] == [2]
    assert [sid for sid, _ in index.top(["fresh"], 10)] == [3, 2]


def test_terms_first_seen_in_a_later_segment_score_in_it_alone() -> None:
    index = _index([_section(body={"quota": 1})])
    add_sections(index, [_section(body={"newword": 1})])
    assert index.scores(["newword"]).tolist() == [0.0, pytest.approx(index.term_idf("newword"), rel=1e-6)]


# fields


LEAVE = """---
title: Leave Policy
aliases: [Time Off]
type: policy
layout: wide
permalink: /leave/
weight: 3
owner: Maria Lopez
email: hr@acme.test
summary: How holidays accrue
tags: [benefits, wellbeing]
---
Preamble about holidays.

## Sick Leave

### Certificates

Doctors sign certificates after three days.
"""


def test_analyze_document_fills_each_field_from_its_source() -> None:
    doc = parse_document("handbook/people-ops/leave_policy.md", LEAVE)
    assert [s.heading_path for s in doc.sections] == [(), ("Sick Leave",), ("Sick Leave", "Certificates")]

    analyzed = analyze_document(doc)

    title = _terms("Leave Policy Time Off")
    path = _terms("handbook people ops leave policy")
    meta = _terms("Maria Lopez hr@acme.test How holidays accrue benefits wellbeing")
    assert analyzed == [
        (title, _terms("Leave Policy"), path, meta, _terms("Preamble about holidays.")),
        (title, _terms("Sick Leave"), path, meta, NOTHING),
        (
            title,
            _terms("Certificates"),
            path + _terms("Sick Leave"),
            meta,
            _terms("Doctors sign certificates after three days."),
        ),
    ]


def test_the_meta_field_holds_owner_email_and_summary_but_not_site_machinery() -> None:
    doc = parse_document("handbook/people-ops/leave_policy.md", LEAVE)
    meta = analyze_document(doc)[0][FIELDS.index("meta")]
    assert {"maria", "lopez", "hr@acme.test", "accru", "benefit", "wellb"} <= set(meta)
    for machinery in ("polici", "wide", "leav", "3"):  # type, layout, permalink, weight (and title)
        assert machinery not in meta


def test_a_document_without_sections_analyzes_to_nothing() -> None:
    doc = parse_document("empty.md", "---\ntitle: Empty\n---\n")
    assert analyze_document(doc) == []


# document scores


def _reference_document_bm25(docs: list[list[Analyzed]], term: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Plain BM25 of one term over documents, each the sum of its sections' heading and body counts."""
    heading, body = FIELDS.index("heading"), FIELDS.index("body")
    tfs = [sum(s[heading][term] + s[body][term] for s in doc) for doc in docs]
    lengths = [sum(sum(s[heading].values()) + sum(s[body].values()) for s in doc) for doc in docs]
    present = [length for length in lengths if length > 0]
    avg = sum(present) / len(present)
    df = sum(tf > 0 for tf in tfs)
    idf = math.log(1 + (len(present) - df + 0.5) / (df + 0.5))
    return [
        idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg)) if tf else 0.0
        for tf, length in zip(tfs, lengths, strict=True)
    ]


def test_document_scores_are_bm25_over_each_documents_headings_and_bodies() -> None:
    docs = [
        [_section(heading={"quota": 1}, body={"sales": 3}), _section(body={"quota": 2, "pad": 2})],
        [_section(title={"quota": 5}, body={"target": 4})],  # the title is not the document's own text
        [_section(body={"quota": 1, "pad": 9})],
    ]
    index = _index([s for doc in docs for s in doc])
    documents = np.array([0, 0, 1, 2], dtype=np.int32)

    scores = index.document_scores(["quota"], documents)

    assert scores.tolist() == pytest.approx(_reference_document_bm25(docs, "quota"), rel=1e-5)
    assert scores[1] == 0.0 and scores[0] > scores[2] > 0.0


def test_document_scores_leave_out_dead_sections() -> None:
    index = _index([_section(body={"quota": 3}), _section(body={"quota": 1}), _section(body={"other": 1})])
    documents = np.array([0, 0, 1], dtype=np.int32)
    index.remove([0])
    assert index.document_scores(["quota"], documents).tolist() == pytest.approx(
        _reference_document_bm25([[_section(body={"quota": 1})], [_section(body={"other": 1})]], "quota"), rel=1e-5
    )


def test_section_lengths_count_heading_and_body_terms() -> None:
    index = _index([_section(title={"a": 4}, heading={"b": 1}, path={"c": 2}, body={"d": 2, "e": 1})])
    add_sections(index, [_section(body={"f": 5})])
    assert index.lengths.tolist() == [4.0, 5.0]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(1, 6)),  # heading, body tf of "quota"; padding
            min_size=1,
            max_size=4,
        ),
        min_size=1,
        max_size=6,
    )
)
def test_document_scores_match_plain_bm25_over_any_split_into_sections(shape: list[list[tuple[int, int, int]]]) -> None:
    docs = [
        [
            _section(heading={"quota": h} if h else None, body={"quota": b, "pad": p} if b else {"pad": p})
            for h, b, p in doc
        ]
        for doc in shape
    ]
    index = _index([s for doc in docs for s in doc])
    documents = np.array([d for d, doc in enumerate(docs) for _ in doc], dtype=np.int32)
    expected = _reference_document_bm25(docs, "quota") if any(h or b for doc in shape for h, b, _ in doc) else None
    scores = index.document_scores(["quota"], documents)
    assert scores.tolist() == (pytest.approx(expected, rel=1e-5, abs=1e-6) if expected else [0.0] * len(docs))


# field masks: which fields of a section hold a term, fixed at index time


def test_field_terms_name_the_fields_each_query_term_occurs_in() -> None:
    index = _index(
        [
            _section(title={"leav": 1}, heading={"sick": 1}, body={"sick": 3, "doctor": 1}),
            _section(title={"leav": 1}, path={"sick": 1}, meta={"owner": 1}),
        ]
    )

    found = index.field_terms([0, 1], ["sick", "leav", "owner", "absent"])

    assert found[0] == {"title": {"leav"}, "heading": {"sick"}, "path": set(), "meta": set(), "body": {"sick"}}
    assert found[1] == {"title": {"leav"}, "heading": set(), "path": {"sick"}, "meta": {"owner"}, "body": set()}


def test_field_terms_of_a_replaced_section_come_from_its_new_segment() -> None:
    index = _index([_section(body={"old": 1})])
    index.remove([0])
    add_sections(index, [_section(body={"new": 1})])

    found = index.field_terms([0, 1], ["old", "new"])

    assert found[0]["body"] == set()  # tombstoned: it holds nothing any more
    assert found[1]["body"] == {"new"}


_WORDS = st.sampled_from("leave sick doctor pay travel budget owner team certificate holiday".split())


@settings(max_examples=60, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.lists(_WORDS, max_size=3), st.lists(st.lists(_WORDS, max_size=6), min_size=1, max_size=3)),
        min_size=1,
        max_size=4,
    ),
    query=st.lists(_WORDS, min_size=1, max_size=5),
)
def test_field_terms_equal_the_query_terms_found_by_analysing_each_field(
    docs: list[tuple[list[str], list[list[str]]]], query: list[str]
) -> None:
    parsed = []
    for number, (title, sections) in enumerate(docs):
        body = "\n\n".join(f"## {w[0] if w else 'Part'} {i}\n\n{' '.join(w)}" for i, w in enumerate(sections))
        parsed.append(parse_document(f"team/doc_{number}.md", f"# {' '.join(title) or 'Doc'}\n\n{body}\n"))
    analysed = [fields_ for doc in parsed for fields_ in analyze_document(doc)]
    index = _index(analysed)
    terms = [t for word in query for t in analyzer.terms(word)]

    found = index.field_terms(range(len(analysed)), terms)

    for sid, fields_ in enumerate(analysed):
        expected = {name: set(counts) & set(terms) for name, counts in zip(FIELDS, fields_, strict=True)}
        assert found[sid] == expected


def test_in_fields_marks_the_live_sections_holding_a_term_in_one_of_the_fields_named() -> None:
    index = _index(
        [
            _section(title={"glossari": 1}, body={"shadow": 1}),
            _section(body={"glossari": 1}),
            _section(meta={"definit": 1}),
            _section(heading={"other": 1}),
        ]
    )
    assert index.in_fields(["glossari", "definit"], ("title", "meta")).tolist() == [True, False, True, False]
    assert index.in_fields(["glossari"], ("body",)).tolist() == [False, True, False, False]
    index.remove([0])
    assert index.in_fields(["glossari", "unknown"], FIELDS).tolist() == [False, True, False, False]
