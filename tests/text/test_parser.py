"""Markdown text → Document: front matter, sections by heading, statements with file lines."""

from __future__ import annotations

import contextlib
import itertools
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text import blocks, front_matter, parser
from retriever.text.models import Section, Unit
from retriever.text.parser import ParseError, parse_document, split_front_matter

PERSON = """\
---
title: Olena Kovalenko
type: Person
aliases: [Olena, OK]
created: 2024-03-01
updated: 2024-03-01T10:00:00
summary: Head of sales
---
Intro line about Olena.

## Role
She leads sales.

### Accounts
- Acme
  - renewal in May
- Globex

## Notes
| Client | Owner |
|---|---|
| Acme | Olena |
| Globex | Petro |
"""


def _headings(sections: tuple[Section, ...]) -> list[str | None]:
    return [s.heading for s in sections]


# front matter


def test_yaml_front_matter_fields_fill_the_document() -> None:
    doc = parse_document("people/olena.md", PERSON)
    assert doc.title == "Olena Kovalenko"
    assert doc.doc_type == "person"
    assert doc.aliases == ("Olena", "OK")
    assert doc.summary == "Head of sales"
    assert doc.line_count == 23


def test_yaml_dates_become_iso_strings() -> None:
    doc = parse_document("people/olena.md", PERSON)
    assert doc.front_matter["created"] == "2024-03-01"
    assert doc.front_matter["updated"] == "2024-03-01T10:00:00"


def test_toml_front_matter_is_read_and_aliases_may_be_a_comma_string() -> None:
    text = '+++\ntitle = "Toml Doc"\ntype = "DECISION"\naliases = "a, b ,c"\ndate = 2024-01-02\n+++\n\nBody here.\n'
    doc = parse_document("x.md", text)
    assert doc.title == "Toml Doc"
    assert doc.doc_type == "decision"
    assert doc.aliases == ("a", "b", "c")
    assert dict(doc.front_matter) == {
        "title": "Toml Doc",
        "type": "DECISION",
        "aliases": "a, b ,c",
        "date": "2024-01-02",
    }
    assert doc.sections[0].units == (Unit("sentence", "Body here.", (8, 8)),)


def test_split_front_matter_reports_the_lines_the_block_occupies() -> None:
    assert split_front_matter("---\na: 1\n---\nbody\n") == ({"a": 1}, "body\n", 3)
    assert split_front_matter("\ufeff---\na: 1\n...\nbody\n") == ({"a": 1}, "body\n", 3)
    assert split_front_matter("+++\na = 1\n+++\nbody\n") == ({"a": 1}, "body\n", 3)
    assert split_front_matter("no front matter\n") == ({}, "no front matter\n", 0)


def test_crlf_front_matter_is_recognised() -> None:
    # Suspected bug: the closing fence uses ``$`` under re.M, which does not match before "\r",
    # so Windows line endings leave the block unparsed and "title: Win" becomes a setext heading.
    doc = parse_document("crlf.md", "---\r\ntitle: Win\r\n---\r\n## A\r\nx\r\n")
    assert dict(doc.front_matter) == {"title": "Win"}
    assert doc.title == "Win"
    assert [(s.heading, s.lines) for s in doc.sections] == [("A", (4, 5))]


def test_bad_yaml_raises_parse_error_naming_the_line() -> None:
    with pytest.raises(ParseError) as caught:
        parse_document("e.md", "---\ntitle: a: b\n---\nx\n")
    assert str(caught.value) == "invalid YAML front matter at line 2: mapping values are not allowed in this context"


def test_front_matter_that_is_a_list_raises_parse_error() -> None:
    with pytest.raises(ParseError, match=r"^front matter must be a mapping of fields, found list$"):
        parse_document("e.md", "---\n- a\n- b\n---\nx\n")


def test_bad_toml_raises_parse_error() -> None:
    with pytest.raises(ParseError, match=r"^invalid TOML front matter: "):
        parse_document("e.md", "+++\ntitle = \n+++\nx\n")


def test_aliases_list_keeps_only_non_empty_scalars_and_non_string_type_is_ignored() -> None:
    doc = parse_document("al.md", "---\naliases: [a, 3, null, '', {x: 1}]\ntype: 5\n---\nx\n")
    assert doc.aliases == ("a", "3")
    assert doc.doc_type is None


# sections and line numbers


def test_sections_carry_file_line_numbers_including_the_front_matter() -> None:
    doc = parse_document("people/olena.md", PERSON)
    assert [(s.heading, s.level, s.lines) for s in doc.sections] == [
        (None, 0, (9, 10)),
        ("Role", 2, (11, 13)),
        ("Accounts", 3, (14, 18)),
        ("Notes", 2, (19, 23)),
    ]
    assert doc.sections[1].units == (Unit("sentence", "She leads sales.", (12, 12)),)


def test_text_before_the_first_heading_is_a_preamble_titled_after_the_document() -> None:
    preamble = parse_document("people/olena.md", PERSON).sections[0]
    assert preamble.heading is None
    assert preamble.level == 0
    assert preamble.title == "Olena Kovalenko"
    assert preamble.heading_path == ()
    assert preamble.text == "Intro line about Olena."


def test_an_empty_preamble_makes_no_section() -> None:
    doc = parse_document("fm.md", "---\ntitle: T\n---\n\n\n## A\nx\n")
    assert [(s.heading, s.lines) for s in doc.sections] == [("A", (6, 7))]


def test_hash_lines_in_fenced_indented_and_html_blocks_never_make_headings() -> None:
    text = (
        "## Real\n"
        "Text.\n"
        "\n"
        "```bash\n"
        "# not a heading\n"
        "```\n"
        "\n"
        "    # indented not heading\n"
        "\n"
        "<div>\n"
        "# html not heading\n"
        "</div>\n"
    )
    doc = parse_document("a.md", text)
    assert _headings(doc.sections) == ["Real"]
    assert doc.sections[0].text == "Text.\n# not a heading\n# indented not heading\n# html not heading"


def test_html_block_text_cites_its_own_line() -> None:
    doc = parse_document("h.md", "<div>\nSome words here\n</div>\n")
    assert doc.line_count == 3
    assert doc.sections[0].units == (Unit("sentence", "Some words here", (2, 2)),)


HTML_PAGE = """---
title: Continuity
---
# Continuity

<table>
  <tr><th>Role</th><th>Responsibility</th></tr>
  <tr><td>Security team</td><td>Coordinates the <b>response</b>.</td></tr>
  <tr>
    <td>VP of Engineering</td>
    <td>Restores service &amp; data within four hours.</td>
  </tr>
</table>

<p>Badges cost 20 EUR. Lost badges are
replaced in a day.</p><ul><li>Bring ID</li><li>Sign the <i>form</i></li></ul>
"""


def test_an_html_tables_rows_are_statements_under_its_header_each_citing_its_line() -> None:
    units = parse_document("c.md", HTML_PAGE).sections[0].units
    rows = [(u.text, u.lines, u.cells) for u in units if u.kind == "row"]
    assert rows == [
        (
            "Role: Security team; Responsibility: Coordinates the response.",
            (8, 8),
            (("Role", "Security team"), ("Responsibility", "Coordinates the response.")),
        ),
        (
            "Role: VP of Engineering; Responsibility: Restores service & data within four hours.",
            (9, 9),
            (("Role", "VP of Engineering"), ("Responsibility", "Restores service & data within four hours.")),
        ),
    ]


def test_html_paragraphs_split_into_sentences_and_list_items_into_items() -> None:
    units = parse_document("c.md", HTML_PAGE).sections[0].units
    assert [(u.kind, u.text, u.lines) for u in units if u.kind != "row"] == [
        ("sentence", "Badges cost 20 EUR.", (15, 15)),
        ("sentence", "Lost badges are replaced in a day.", (15, 16)),
        ("item", "Bring ID", (16, 16)),
        ("item", "Sign the form", (16, 16)),
    ]


def test_setext_headings_make_sections() -> None:
    doc = parse_document("a.md", "Title Here\n==========\n\nIntro para.\n\nSub Part\n--------\nText.\n")
    assert doc.title == "Title Here"
    assert [(s.heading, s.level, s.lines) for s in doc.sections] == [("Title Here", 1, (1, 5)), ("Sub Part", 2, (6, 8))]


def test_heading_paths_nest_and_unwind_by_level() -> None:
    text = "## A\na\n\n### B\nb\n\n#### C\nc\n\n## D\nd\n\n# Top\n\n### Deep\ne\n"
    doc = parse_document("h.md", text)
    assert [s.heading_path for s in doc.sections] == [
        ("A",),
        ("A", "B"),
        ("A", "B", "C"),
        ("D",),
        ("Top",),
        ("Top", "Deep"),
    ]


def test_headings_keep_markdown_while_titles_and_paths_are_plain() -> None:
    section = parse_document("h.md", "## **Launch** [plan](plan.md)\nx\n").sections[0]
    assert section.heading == "**Launch** [plan](plan.md)"
    assert section.title == "Launch plan"
    assert section.heading_path == ("Launch plan",)


# document title


def test_title_comes_from_a_leading_h1_whose_heading_leaves_the_paths() -> None:
    doc = parse_document("notes/q3_plan.md", "# Actual Title\n\n## A\nx\n")
    assert doc.title == "Actual Title"
    assert [(s.heading, s.heading_path) for s in doc.sections] == [("Actual Title", ()), ("A", ("A",))]


def test_front_matter_title_wins_and_an_h1_repeating_it_leaves_the_paths() -> None:
    doc = parse_document("t.md", "---\ntitle: Pricing\n---\n# Pricing\n\n## Tiers\nx\n")
    assert doc.title == "Pricing"
    assert [s.heading_path for s in doc.sections] == [(), ("Tiers",)]


def test_an_h1_that_differs_from_the_front_matter_title_stays_in_the_paths() -> None:
    doc = parse_document("t.md", "---\ntitle: Pricing\n---\n# Overview\n\n## Tiers\nx\n")
    assert doc.title == "Pricing"
    assert [s.heading_path for s in doc.sections] == [("Overview",), ("Overview", "Tiers")]


def test_title_falls_back_to_the_file_name() -> None:
    assert parse_document("notes/q3_plan.md", "## Sub\nx\n").title == "Q3 Plan"


@pytest.mark.parametrize("name", ["README.md", "_index.md", "index.md"])
def test_index_files_take_their_folders_name(name: str) -> None:
    assert parse_document(f"teams/sales_ops/{name}", "Just text.\n").title == "Sales Ops"


# statements: tables, lists, sentences


def test_table_rows_become_column_value_units_on_their_own_lines() -> None:
    notes = parse_document("people/olena.md", PERSON).sections[3]
    assert notes.units == (
        Unit("row", "Client: Acme; Owner: Olena", (22, 22), cells=(("Client", "Acme"), ("Owner", "Olena"))),
        Unit("row", "Client: Globex; Owner: Petro", (23, 23), cells=(("Client", "Globex"), ("Owner", "Petro"))),
    )


def test_empty_table_cells_are_left_out_of_the_row() -> None:
    text = "| Name | Role | Note |\n|---|---|---|\n| **Olena** | [Sales](s.md) | |\n| | | |\n| Petro | | x |\n"
    doc = parse_document("tbl.md", text)
    assert doc.sections[0].units == (
        Unit("row", "Name: Olena; Role: Sales", (3, 3), cells=(("Name", "Olena"), ("Role", "Sales"))),
        Unit("row", "Name: Petro; Note: x", (5, 5), cells=(("Name", "Petro"), ("Note", "x"))),
    )


def test_nested_list_items_carry_their_parent_item_as_context() -> None:
    accounts = parse_document("people/olena.md", PERSON).sections[2]
    assert accounts.units == (
        Unit("item", "Acme", (15, 15), lists=(1,), opens=True),
        Unit("item", "renewal in May", (16, 16), context="Acme", lists=(1, 2), opens=True),
        Unit("item", "Globex", (17, 17), lists=(1,), opens=True),
    )


def test_deeper_list_items_take_their_nearest_parent_as_context() -> None:
    doc = parse_document("n.md", "1. Step one\n   - detail a\n     - deeper\n2. Step two\n")
    assert doc.sections[0].units == (
        Unit("item", "Step one", (1, 1), lists=(1,), opens=True),
        Unit("item", "detail a", (2, 2), context="Step one", lists=(1, 2), opens=True),
        Unit("item", "deeper", (3, 3), context="detail a", lists=(1, 2, 3), opens=True),
        Unit("item", "Step two", (4, 4), lists=(1,), opens=True),
    )


def test_paragraphs_split_into_sentences_on_their_own_lines() -> None:
    text = "---\ntitle: P\n---\nFirst sentence here. Second one is **here**.\nThird on the next line. Fourth!\n"
    assert parse_document("p.md", text).sections[0].units == (
        Unit("sentence", "First sentence here.", (4, 4)),
        Unit("sentence", "Second one is here.", (4, 4)),
        Unit("sentence", "Third on the next line.", (5, 5)),
        Unit("sentence", "Fourth!", (5, 5)),
    )


def test_long_list_items_split_into_sentence_items() -> None:
    long_item = " ".join(f"Sentence number {i} is about the item." for i in range(20))
    units = parse_document("l.md", f"- {long_item}\n- short\n").sections[0].units
    assert [u.text for u in units[:2]] == [
        "Sentence number 0 is about the item.",
        "Sentence number 1 is about the item.",
    ]
    assert {u.kind for u in units} == {"item"}
    assert len(units) == 21
    assert units[-1] == Unit("item", "short", (2, 2), lists=(1,), opens=True)
    assert [u.opens for u in units[:3]] == [True, False, False]  # the long item opens with its first sentence


def test_a_lead_in_right_before_a_code_block_carries_its_first_line() -> None:
    text = "To update the repo, run:\n\n```sh\nhelm repo update\nhelm list\n```\n\nSee also:\n\ntext\n\n    indented\n"
    units = parse_document("l.md", text).sections[0].units
    assert (units[0].code, units[0].code_end) == ("helm repo update …", 6)
    assert (units[1].text, units[1].code) == ("See also:", "")  # a paragraph, not a code block, follows it


def test_a_statement_not_ending_in_a_colon_or_far_from_the_block_gets_no_code() -> None:
    text = "Run this.\n\n```\nmake\n```\n\nThen:\n\n\n\n```\nmake test\n```\n"
    units = parse_document("l.md", text).sections[0].units
    assert [u.code for u in units] == ["", ""]


def test_each_list_is_numbered_and_a_units_lists_say_where_it_sits() -> None:
    text = "Intro:\n\n- a\n\n  more of a\n\n> - quoted\n\n1. b\n   - c\n"
    units = parse_document("l.md", text).sections[0].units
    assert [(u.text, u.lists, u.opens) for u in units] == [
        ("Intro:", (), False),
        ("a", (1,), True),
        ("more of a", (1,), False),
        ("quoted", (2,), True),
        ("b", (3,), True),
        ("c", (3, 4), True),
    ]


# links


def test_relative_markdown_links_resolve_to_tree_paths() -> None:
    text = (
        '# Setup\n\nSee [intro](../intro.md), [same](./other.md#part), [deep](sub/deep.md "T"), [dup](../intro.md).\n'
    )
    assert parse_document("docs/guide/setup.md", text).links == (
        "docs/intro.md",
        "docs/guide/other.md",
        "docs/guide/sub/deep.md",
    )


def test_bracketed_percent_encoded_and_reference_links_are_followed_and_footnotes_are_not() -> None:
    text = (
        "# Setup\n\nSee [a](<../x y.md>), [b](z%20w.md) and [the plan][plan].\n\n"
        "[plan]: <plans/q1 plan.md>\n[^1]: A footnote, not a link: see it.\n[ref]: ../up.md 'Up'\n"
    )
    assert parse_document("docs/guide/setup.md", text).links == (
        "docs/x y.md",
        "docs/guide/z w.md",
        "docs/guide/plans/q1 plan.md",
        "docs/up.md",
    )


def test_links_with_single_quoted_or_parenthesised_titles_are_followed_as_check_reads_them() -> None:
    text = "# Setup\n\nSee [a](a.md 'Title A') and [b](<b.md> (Title B)).\n"
    assert parse_document("docs/setup.md", text).links == ("docs/a.md", "docs/b.md")


def test_links_to_mdx_and_markdown_pages_are_followed() -> None:
    text = "# Setup\n\nSee [install](./installation.mdx), [faq](../reference/FAQ.MDX) and [old](old.markdown).\n"
    assert parse_document("docs/guide/setup.md", text).links == (
        "docs/guide/installation.mdx",
        "docs/reference/FAQ.MDX",
        "docs/guide/old.markdown",
    )


MDX_PAGE = """\
---
title: FAQ
---

import Details from '@theme/Details';

{/* TODO: link [the runbook](gone.md) */}
The staging cluster is <Highlight>wiped every Sunday</Highlight>.

export const Highlight = ({children}) =>
  <span>{children}</span>;

Ask #platform.
"""


def test_an_mdx_page_is_read_without_its_imports_exports_and_comments_at_its_own_lines() -> None:
    doc = parse_document("docs/faq.mdx", MDX_PAGE)
    assert (doc.title, doc.links) == ("FAQ", ())
    assert [(u.text, u.lines) for s in doc.sections for u in s.units] == [
        ("The staging cluster is wiped every Sunday.", (8, 8)),
        ("Ask #platform.", (13, 13)),
    ]


def test_a_markdown_page_keeps_what_would_be_mdx_syntax_as_its_text() -> None:
    doc = parse_document("docs/faq.md", MDX_PAGE)
    assert doc.links == ("docs/gone.md",)
    assert next(u.text for s in doc.sections for u in s.units) == "import Details from '@theme/Details';"


def test_web_anchor_absolute_escaping_and_non_markdown_links_are_ignored() -> None:
    text = (
        "[anchor](#top) [web](https://example.com/x.md) [escape](../../../outside.md) "
        "[abs](/root.md) [mail](mailto:a@b.md) [img](pic.png) [noext](../intro)\n"
    )
    assert parse_document("docs/guide/setup.md", text).links == ()


def test_an_impossible_date_in_front_matter_is_read_as_the_text_written_and_the_document_stays() -> None:
    # YAML's loader refuses 2026-13-45, which had dropped the whole document; ``retriever check`` reports the field
    doc = parse_document("a.md", "---\ntitle: Plan\nupdated: 2026-13-45\ncreated: 2026-02-30\n---\n# A\n\nText.\n")
    assert (doc.front_matter["updated"], doc.front_matter["created"]) == ("2026-13-45", "2026-02-30")
    assert doc.sections[0].text == "Text."


def test_an_h1_repeating_the_title_with_other_punctuation_is_left_out_of_paths() -> None:
    doc = parse_document("m.md", "---\ntitle: Sync 2026-11-12\n---\n# Sync — 2026-11-12\n\n## Actions\n\nShip it.\n")
    assert [s.heading_path for s in doc.sections] == [(), ("Actions",)]


# hostile files (issue 9): a reason, never a crash; linear time; bounded memory


def test_toml_front_matter_nested_5000_deep_is_a_parse_error_not_a_recursion_error() -> None:
    text = "+++\na = " + "[" * 5000 + "]" * 5000 + "\n+++\n# Deep\n"
    with pytest.raises(ParseError, match=r"^front matter is nested too deeply \(more than 32 levels\); flatten it$"):
        parse_document("deep.md", text)


def test_yaml_front_matter_nested_900_deep_is_a_parse_error_not_a_recursion_error() -> None:
    with pytest.raises(ParseError, match=r"^front matter is nested too deeply"):
        parse_document("deep.md", "---\na: " + "[" * 900 + "]" * 900 + "\n---\n# Deep\n")


def _nested(kind: str, depth: int) -> str:
    body = "".join("  " * i + f"- level{i} item\n" for i in range(depth)) if kind == "list" else ">" * depth + " deep\n"
    return f"# Plan\n\nIntro.\n\n{body}\nAfter the block.\n\n## Next\n\nWombat text.\n"


@pytest.mark.parametrize(("kind", "depth"), [("list", 49), ("quote", 99)])
def test_lists_and_quotes_nested_to_the_limit_are_read_whole(kind: str, depth: int) -> None:
    doc = parse_document("deep.md", _nested(kind, depth))
    texts = [unit.text for section in doc.sections for unit in section.units]
    assert [s.title for s in doc.sections] == ["Plan", "Next"]
    assert texts[-3:] == [f"level{depth - 1} item" if kind == "list" else "deep", "After the block.", "Wombat text."]


@pytest.mark.parametrize(("kind", "depth"), [("list", 50), ("quote", 100), ("list", 3000), ("quote", 20000)])
def test_lists_or_quotes_nested_past_the_limit_refuse_the_file_rather_than_drop_its_rest(kind: str, depth: int) -> None:
    # markdown-it stops reading at its nesting limit, and after a list drops the rest of the file
    with pytest.raises(ParseError, match=r"^lists or quotes nested too deeply \(100 levels"):
        parse_document("deep.md", _nested(kind, depth))


def test_front_matter_nested_to_the_limit_is_kept() -> None:
    depth = front_matter.MAX_NESTING - 1  # the mapping itself is the first level
    doc = parse_document("ok.md", "---\na: " + "[" * depth + "1" + "]" * depth + "\n---\n# Ok\n")
    value = doc.front_matter["a"]
    for _ in range(depth):
        value = value[0]
    assert value == 1


def test_a_yaml_alias_bomb_is_a_parse_error_before_it_expands() -> None:
    names = "abcdefghi"
    lines = ["a: &a [" + ", ".join(["lol"] * 9) + "]"]
    lines += [f"{n}: &{n} [" + ", ".join([f"*{p}"] * 9) + "]" for p, n in itertools.pairwise(names)]
    text = "---\n" + "\n".join(lines) + "\n---\n# Bomb\n"
    assert len(text) < 700  # 9^9 values once expanded
    started = time.perf_counter()
    with pytest.raises(ParseError, match=r"more than 100,000 values once YAML aliases are expanded; remove the"):
        parse_document("bomb.md", text)
    assert time.perf_counter() - started < 5


def test_a_yaml_alias_that_contains_itself_is_a_parse_error() -> None:
    with pytest.raises(ParseError, match=r"^front matter is nested too deeply"):
        parse_document("self.md", "---\na: &a [1, *a]\n---\n# Self\n")


def test_yaml_aliases_within_the_budget_are_expanded() -> None:
    doc = parse_document("alias.md", "---\nbase: &b [Olena, Taras]\nteam: *b\n---\n# Team\n")
    assert doc.front_matter["team"] == ["Olena", "Taras"]


def test_front_matter_longer_than_the_limit_is_a_parse_error() -> None:
    text = "---\nnotes: " + "x" * front_matter.MAX_FRONT_MATTER + "\n---\n# Big\n"
    with pytest.raises(ParseError, match=r"^front matter is longer than 256,000 characters; keep fields short"):
        parse_document("big.md", text)


def test_more_lines_than_the_limit_is_a_parse_error_naming_the_count() -> None:
    with pytest.raises(ParseError, match=r"^more than 200,000 lines \(600,000\); split it into smaller files$"):
        parse_document("lines.md", "# \n" * 600_000)


def test_more_headings_than_the_limit_is_a_parse_error() -> None:
    assert len(parse_document("ok.md", "# h\n" * parser.MAX_HEADINGS).sections) == parser.MAX_HEADINGS
    refused = r"^more than 5,000 headings; split it into smaller files \(in the block at line 5001\)$"
    with pytest.raises(ParseError, match=refused):
        parse_document("many.md", "# h\n" * (parser.MAX_HEADINGS + 1))


def test_more_statements_than_the_limit_is_a_parse_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parser, "MAX_UNITS", 10)
    assert len(parse_document("ok.md", "One.\n\n" * 10).sections[0].units) == 10
    with pytest.raises(ParseError, match=r"^more than 10 statements \(sentences, list items, table rows\)"):
        parse_document("many.md", "One.\n\n" * 11)


def test_finished_blocks_are_handed_over_so_only_one_blocks_tokens_are_held(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "MAX_BLOCK_TOKENS", 20)
    doc = parse_document("many.md", "".join(f"## H{i}\n\nPara {i}.\n\n- item {i}\n\n" for i in range(300)))
    assert len(doc.sections) == 300  # 3,000 tokens in all, never more than 20 at once
    refused = r"^one block \(a list, quote or table\) has more than 20 parts; split it up \(in the block at line 6\)$"
    with pytest.raises(ParseError, match=refused):  # the list's first line in the file, front matter counted
        parse_document("list.md", "---\ntitle: L\n---\nIntro.\n\n" + "".join(f"- item {i}\n" for i in range(10)))


def test_more_tokens_than_the_limit_is_a_parse_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parser, "MAX_TOKENS", 100)
    refused = r"^more than 100 markdown blocks and parts; split it into smaller files \(in the block at line 201\)$"
    with pytest.raises(ParseError, match=refused):
        parse_document("hr.md", "***\n\n" * 101)


def test_blocks_handed_over_in_batches_parse_exactly_as_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    text = PERSON + "\n> quoted\n> more\n\n```\n# not a heading\n```\n\n1. one\n   - two\n\nSetext\n===\n\nTail.\n"
    handed = parse_document("people/olena.md", text)
    whole = blocks.MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])  # no hand-over rule
    monkeypatch.setattr(blocks, "_MD", whole)
    assert parse_document("people/olena.md", text) == handed


def test_a_details_summary_opens_the_statement_after_it_and_is_no_statement_of_its_own() -> None:
    text = (
        "# Onboarding\n\n<details>\n<summary>What if my laptop has not arrived?</summary>\n\n"
        "Borrow a loaner laptop from the IT desk. Ask your manager to chase it.\n\n</details>\n\n"
        "<details><summary>Compliance</summary>\n\n- Slack is approved.\n- Records are kept.\n\n</details>\n\n"
        "After the blocks.\n"
    )
    units = parse_document("onboarding.md", text).sections[0].units
    assert [(u.text, u.lines[0]) for u in units] == [
        ("What if my laptop has not arrived? Borrow a loaner laptop from the IT desk.", 6),
        ("Ask your manager to chase it.", 6),
        ("Compliance: Slack is approved.", 12),
        ("Records are kept.", 13),
        ("After the blocks.", 17),
    ]


def test_a_summary_answered_by_a_table_or_code_or_a_control_label_opens_no_later_statement() -> None:
    text = (
        "# IT FAQ\n\n<details>\n<summary>Which laptops can I order?</summary>\n\n| Model | RAM |\n|---|---|\n"
        "| ThinkPad X1 | 16 GB |\n| MacBook Pro | 32 GB |\n\n</details>\n\nOur office opens at 9 am.\n\n<details>\n"
        "<summary>Who approves software?</summary>\n\n```\napprovals: finance\n```\n</details>\n"
        "The finance team meets on Mondays.\n\n<details>\n<summary>Click to expand</summary>\n\n"
        "The VPN config is in the shared drive.\n\n</details>\n"
    )
    units = parse_document("faq.md", text).sections[0].units
    assert [(u.kind, u.context, u.text) for u in units] == [
        ("row", "Which laptops can I order?", "Model: ThinkPad X1; RAM: 16 GB"),  # every row of the table answers
        ("row", "Which laptops can I order?", "Model: MacBook Pro; RAM: 32 GB"),
        ("sentence", "", "Our office opens at 9 am."),
        ("sentence", "", "The finance team meets on Mondays."),  # after the code and </details> in one block
        ("sentence", "", "The VPN config is in the shared drive."),
    ]


def test_a_summary_left_open_by_its_details_is_dropped_at_the_next_heading() -> None:
    text = "# A\n\n<details><summary>Never answered here</summary>\n\n# B\n\nPlain text.\n"
    assert [u.text for s in parse_document("a.md", text).sections for u in s.units] == ["Plain text."]


def test_a_nul_byte_past_the_binary_check_is_replaced_not_a_crash() -> None:
    doc = parse_document("nul.md", "# T\n\nA\x00B here.\n")
    assert doc.sections[0].units[0].text == "A\ufffdB here."


def test_a_line_of_8000_link_openers_parses_in_linear_time() -> None:
    started = time.perf_counter()
    parse_document("links.md", "[a](b" * 8000 + "\n")  # 13 s before the link pattern was made linear
    assert time.perf_counter() - started < 3


def test_a_paragraph_of_many_sentences_numbers_their_lines_in_linear_time() -> None:
    text = "".join(f"Sentence {i} ends here.\n" for i in range(40_000))
    started = time.perf_counter()
    units = parse_document("s.md", text).sections[0].units  # 5.5 s when each line was counted from the start
    assert time.perf_counter() - started < 2
    assert [u.lines for u in units[:2]] == [(1, 1), (2, 2)]
    assert units[-1].lines == (40_000, 40_000)


def test_100000_distinct_links_are_collected_in_linear_time() -> None:
    text = " ".join(f"[d{i}](d{i}.md)" for i in range(100_000))
    started = time.perf_counter()
    assert len(parse_document("links.md", text).links) == 100_000
    assert time.perf_counter() - started < 10


# property-based: any text is a Document or a ParseError, quickly

_MARKDOWN_ALPHABET = [*list("#*_[]()<>!`~{}%|-+=:.,;'\"&\\/ \t\n\r\x00aZ09éЖ\u2028"), "---", "+++", "\n\n", "- ", "> "]
_ANY_TEXT = st.lists(st.sampled_from(_MARKDOWN_ALPHABET) | st.text(max_size=3), max_size=400).map("".join)
_FRONT_MATTER = st.sampled_from(["", "---\n", "+++\n", "---\ntitle: x\n---\n", "---\na: &a [1]\nb: *a\n---\n"])


@settings(max_examples=200, deadline=None)
@given(head=_FRONT_MATTER, body=_ANY_TEXT, tail=st.sampled_from(["", "\n---\n", "\n+++\n"]), more=_ANY_TEXT)
def test_any_text_parses_or_raises_parse_error_within_a_second(head: str, body: str, tail: str, more: str) -> None:
    started = time.perf_counter()
    try:
        doc = parse_document("any.md", head + body + tail + more)
    except ParseError:
        return
    finally:
        assert time.perf_counter() - started < 1
    assert all(s.lines[0] <= s.lines[1] for s in doc.sections)


@settings(max_examples=60, deadline=None)
@given(piece=st.lists(st.sampled_from(_MARKDOWN_ALPHABET), min_size=1, max_size=6).map("".join))
def test_a_piece_repeated_to_40_kb_parses_in_linear_time(piece: str) -> None:
    # Super-linear patterns show up on repetition: 40 KB took 13 s for "[a](b" before the fix.
    text = piece * (40_000 // len(piece))
    started = time.perf_counter()
    with contextlib.suppress(ParseError):
        parse_document("rep.md", text)
    assert time.perf_counter() - started < 3


def test_an_impossible_time_in_front_matter_is_read_as_the_text_written() -> None:
    text = "---\ntitle: E\ncreated: 2020-01-01T25:00:00\n---\n# E\n"
    assert parse_document("e.md", text).front_matter["created"] == "2020-01-01T25:00:00"


@pytest.mark.parametrize(
    "text",
    [
        "---\ntitle: 0x" + "f" * 5000 + "\n---\n# A\n",  # YAML reads it as an int of ~6,000 digits
        "---\nbudget: " + "9" * 5000 + "\n---\n# A\n",
        "+++\ntitle = " + "1" * 5000 + "\n+++\n# A\n",  # TOML's own int conversion refuses it
    ],
)
def test_a_number_of_thousands_of_digits_in_front_matter_says_to_quote_it(text: str) -> None:
    with pytest.raises(ParseError, match=r"front matter holds a number of more than 4,000 digits; quote it as text"):
        parse_document("a.md", text)


def test_yaml_binary_front_matter_reads_as_its_text_not_a_bytes_repr() -> None:
    doc = parse_document("d.md", "---\ntitle: !!binary aGVsbG8=\n---\n# D\n\nbody\n")
    assert doc.title == "hello"


def test_a_document_of_front_matter_alone_has_its_prose_fields_as_its_preamble() -> None:
    # a person's stub (role and summary, no body) had no section, and so answered nothing
    doc = parse_document("people/q.md", "---\ntype: person\ntitle: Quinn Park\nsummary: Leads the data team.\n---\n")
    [section] = doc.sections
    assert (section.heading, section.title, section.lines) == (None, "Quinn Park", (4, 4))
    assert section.text == "Leads the data team."
    assert parse_document("people/r.md", "---\ntype: person\ntitle: R\n---\n").sections == ()


def test_an_html_table_with_blank_lines_stays_one_table_and_its_cells_paragraphs_are_its_text() -> None:
    text = (
        "<table>\n<tr><th>Role</th><th>Duty</th></tr>\n<tr><td>VP Eng</td><td>Leads the response.</td></tr>\n\n"
        "<tr><td>CFO</td><td>Approves spend.<p>\n\nPlease ask first.\n\n</td></tr>\n</table>\n\nAfter the table.\n"
    )
    units = parse_document("t.md", text).sections[0].units
    assert [(u.kind, u.text, u.lines) for u in units] == [
        ("row", "Role: VP Eng; Duty: Leads the response.", (3, 3)),
        ("row", "Role: CFO; Duty: Approves spend. Please ask first.", (5, 5)),
        ("sentence", "After the table.", (12, 12)),
    ]


def test_an_html_paragraphs_entities_are_decoded_once() -> None:
    text = "<p>Run <code>rollback &lt;service&gt;</code> first. Write &amp;lt; for a less-than sign.</p>\n"
    units = parse_document("t.md", text).sections[0].units
    assert [u.text for u in units] == ["Run rollback <service> first.", "Write &lt; for a less-than sign."]
