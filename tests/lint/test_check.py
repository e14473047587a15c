"""``retriever check``: each rule on a failing and a passing tree, config files, output formats, exit codes."""

from __future__ import annotations

import json
import re
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import COMPANY_CONTEXT, TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever.adapters.cli import cli
from retriever.config import Settings
from retriever.errors import ConfigError
from retriever.lint import prose
from retriever.lint.check import Finding, check
from retriever.lint.config import CheckConfig, load_config
from retriever.lint.report import format_github
from retriever.memory.memory import Memory
from retriever.pipeline.extract import LONG_SECTION

PERSON = """\
---
type: person
title: Olena Marchenko
aliases: [Olena, OM]
team: Platform Team
created: 2026-01-05
---
# Olena Marchenko

Olena leads the [Platform Team](../teams/platform.md).
"""

TEAM = """\
---
type: team
title: Platform Team
lead: Olena Marchenko
members:
  - Olena Marchenko
related: [people/olena_marchenko.md, olena_marchenko]
---
# Platform Team

Runs production.
"""

CLEAN = {"people/olena_marchenko.md": PERSON, "teams/platform.md": TEAM}


def _findings(root: Path, config: CheckConfig | None = None) -> list[tuple[str, int, str, str]]:
    memory = Memory.open(root, Settings.from_env())
    return [(f.file, f.line, f.rule, f.severity) for f in check(memory, config)]


def _doc(front_matter: str, body: str = "# Doc\n\nSome text.\n") -> str:
    return f"---\n{front_matter}---\n{body}"


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


# -- the clean tree --------------------------------------------------------------------------------


def test_a_consistent_tree_has_no_findings(make_tree: TreeFactory) -> None:
    assert _findings(make_tree(CLEAN)) == []


def test_the_bundled_company_context_checks_clean() -> None:
    assert _findings(COMPANY_CONTEXT) == []


# -- unreadable ----------------------------------------------------------------------------------------


def test_invalid_yaml_is_unreadable_at_the_line_yaml_names(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "bad.md": "---\ntitle: Bad\nsummary: [unclosed\nowner: x\n---\nbody\n"})
    assert _findings(root) == [("memory/bad.md", 4, "unreadable", "error")]


def test_front_matter_that_is_not_a_mapping_is_unreadable(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "list.md": "---\n- a\n- b\n---\nbody\n"})
    assert _findings(root) == [("memory/list.md", 1, "unreadable", "error")]


def test_a_file_that_is_not_utf8_is_unreadable_at_the_line_of_its_first_invalid_byte(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "latin.md": b"# Menu\n\ncaf\xe9\n"})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/latin.md",
            3,
            "unreadable",
            "error",
            "the retriever skips this file: not UTF-8 (an invalid byte at line 3, offset 11); re-save it as UTF-8",
        )
    ]


def test_an_impossible_date_or_time_is_a_field_type_error_and_the_document_stays(make_tree: TreeFactory) -> None:
    # YAML's loader refuses both: the whole file had been skipped as unreadable
    front = "title: X\ncreated: 2026-13-45\nupdated: 2026-11-30T25:00:00\n"
    memory = Memory.open(make_tree({**CLEAN, "x.md": _doc(front)}), Settings.from_env())
    assert [(f.line, f.rule) for f in check(memory)] == [(3, "field-type"), (4, "field-type")]
    assert "x.md" in memory.state.catalog


def test_a_key_or_status_one_slip_from_one_the_retriever_reads_is_a_warning(make_tree: TreeFactory) -> None:
    front = (
        "titel: X\nsuperseeded_by: Platform Team\nstatus: superseeded\noutdated: true\nteams_channel: x\n"
        "tag: a\nvendors: [b]\nupdates: c\nsuperseded: false\n"  # another form of a word is a key of its own
    )
    memory = Memory.open(make_tree({**CLEAN, "x.md": _doc(front)}), Settings.from_env())
    found = [(f.line, f.rule, f.message) for f in check(memory) if f.rule == "misspelled-key"]
    assert [(line, message.split(";")[1].strip()) for line, _, message in found] == [
        (2, "did you mean `title`? Rename it, or keep it as a field of your own and disable this rule"),
        (3, "did you mean `superseded_by`? Rename it, or keep it as a field of your own and disable this rule"),
        (4, "did you mean it?"),  # "outdated", "teams_channel" and the rest are words of their own
    ]


def test_front_matter_never_closed_or_not_on_line_one_is_a_warning(make_tree: TreeFactory) -> None:
    files = {
        "open.md": "---\ntype: topic\ntitle: Open\n# Open\n\nText.\n",
        "late.md": "\n---\ntype: topic\ntitle: Late\n---\n# Late\n\nText.\n",
        "rule.md": "# Rule\n\nText.\n\n---\n\nMore text.\n",  # a thematic break is no front matter
    }
    memory = Memory.open(make_tree({**CLEAN, **files}), Settings.from_env())
    found = [(f.file, f.line, f.message) for f in check(memory) if f.rule == "front-matter"]
    assert found == [
        ("memory/late.md", 2, "front matter must start on line 1; remove the lines above it"),
        ("memory/open.md", 1, "front matter opened on line 1 is never closed; end it with ---"),
    ]


def test_an_unresolved_merge_conflict_is_unreadable_at_its_opening_line(make_tree: TreeFactory) -> None:
    merged = "# Owner\n\n<<<<<<< HEAD\nThe owner is Maksym.\n=======\nThe owner is Rui.\n>>>>>>> feature\n"
    root = make_tree({**CLEAN, "owner.md": merged})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.file, f.line, f.rule, f.severity) for f in check(memory)] == [
        ("memory/owner.md", 3, "unreadable", "error")
    ]
    assert "owner.md" not in memory.state.catalog  # neither side is served as a fact


def test_invalid_toml_front_matter_is_unreadable_at_its_file_line(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "toml.md": '+++\ntitle = "x\n+++\nbody\n'})
    assert _findings(root) == [("memory/toml.md", 2, "unreadable", "error")]


def test_a_symlink_leading_outside_the_root_is_unreadable(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(CLEAN)
    (tmp_path / "outside.md").write_text("# Outside\n\nText.\n", encoding="utf-8")
    (root / "link.md").symlink_to(tmp_path / "outside.md")
    assert _findings(root) == [("memory/link.md", 1, "unreadable", "error")]


def test_a_gitignore_line_that_is_no_valid_pattern_is_reported_at_its_line_and_the_tree_still_checks(
    make_tree: TreeFactory, runner: CliRunner
) -> None:
    root = make_tree({**CLEAN, "people/.gitignore": "*.tmp.md\n\n[z-a]\n"})
    assert _findings(root) == [("memory/people/.gitignore", 3, "unreadable", "error")]
    result = runner.invoke(cli, ["check", "--root", str(root)])  # before: a traceback (re.error)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit)  # findings, not a crash
    assert "memory/people/.gitignore:3: error unreadable: the retriever reads this file in part: the pattern" in (
        result.stdout
    )


# -- field-type ------------------------------------------------------------------------------------------


def test_a_title_that_is_not_text_is_a_field_type_error(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("type: topic\ntitle: 2024\n")})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/x.md",
            3,
            "field-type",
            "error",
            "`title` must be text, found a number (2024); write a single value, quoted if needed",
        )
    ]


def test_a_number_in_tags_is_a_field_type_error_that_says_to_quote_it(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\ntags:\n  - plans\n  - 2027\n")})
    memory = Memory.open(root, Settings.from_env())
    [finding] = check(memory)
    assert (finding.file, finding.line, finding.rule, finding.severity) == ("memory/x.md", 3, "field-type", "error")
    assert finding.message == (
        '`tags` must be a name or a list of names, found a list holding a number (2027); quote it: "2027"'
    )


def test_wrong_dates_and_relation_values_are_field_type_errors(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            **CLEAN,
            "x.md": _doc(
                "title: X\ncreated: next week\nupdated: '2026-02-30'\nrelated: {a: b}\nowner: [Olena Marchenko, OM]\n"
            ),
        }
    )
    assert _findings(root) == [
        ("memory/x.md", 3, "field-type", "error"),
        ("memory/x.md", 4, "field-type", "error"),
        ("memory/x.md", 5, "field-type", "error"),
        ("memory/x.md", 6, "field-type", "error"),
    ]


def test_well_typed_fields_pass(make_tree: TreeFactory) -> None:
    front_matter = (
        "title: X\ntype: topic\nsummary: One line.\nowner: Olena Marchenko\naliases: Ex\ntags: [a, '2027']\n"
        "created: 2026-01-05\nupdated: '2026-01-05T10:00:00'\ndate: 2026-01-06\nrelated: Platform Team\n"
    )
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    assert _findings(root) == []


def test_toml_front_matter_keys_are_found_for_field_type_errors(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": '+++\ntitle = "X"\ncreated = 5\n+++\n# X\n\nText.\n'})
    assert _findings(root) == [("memory/x.md", 3, "field-type", "error")]


# -- unknown-type ----------------------------------------------------------------------------------------


def test_an_unknown_type_is_a_warning_that_suggests_the_closest(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\ntype: persn\n")})
    memory = Memory.open(root, Settings.from_env())
    [finding] = check(memory)
    assert (finding.file, finding.line, finding.rule, finding.severity) == ("memory/x.md", 3, "unknown-type", "warning")
    assert finding.message.startswith("type 'persn' is not a known document type; did you mean 'person'? use one of ")
    assert finding.message.endswith("or list it under `types` in .retriever.toml [check]")


def test_known_types_pass_in_any_case_and_configured_types_are_known(make_tree: TreeFactory) -> None:
    root = make_tree(
        {**CLEAN, "x.md": _doc("title: X\ntype: Decision_Ledger\n"), "y.md": _doc("title: Y\ntype: story\n")}
    )
    assert _findings(root, CheckConfig(types=frozenset({"story"}))) == []


# -- broken-link ------------------------------------------------------------------------------------------


def test_a_relative_link_to_a_missing_file_is_broken_at_its_line(make_tree: TreeFactory) -> None:
    body = "# Doc\n\nIntro.\n\nSee [the plan](../plans/missing.md#goals) today.\n"
    root = make_tree({**CLEAN, "notes/x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/notes/x.md",
            8,
            "broken-link",
            "error",
            "link `../plans/missing.md#goals` points to plans/missing.md, which is not in the tree; "
            "fix the path or remove the link",
        )
    ]


def test_a_wiki_link_that_names_no_document_is_broken(make_tree: TreeFactory) -> None:
    body = "# Doc\n\nAsk [[Olena]] or [[platform|the team]] or [[Nobody Here#Role]].\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message) for f in check(memory)] == [
        (
            6,
            "broken-link",
            "[[Nobody Here]] matches no document title, alias or file name; "
            "fix the name, or add it to the aliases of the document it means",
        )
    ]


def test_a_link_leading_outside_the_root_is_broken(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", "# Doc\n\n[up](../../elsewhere.md)\n")})
    assert _findings(root) == [("memory/x.md", 6, "broken-link", "error")]


def test_links_in_code_urls_anchors_and_existing_files_pass(make_tree: TreeFactory) -> None:
    body = (
        "# Doc\n\n"
        "[web](https://example.com/a.md) [mail](mailto:a@b.c) [top](#doc) [cdn](//cdn.example/y.md) `[code](gone.md)`\n"
        "[person](people/olena_marchenko.md#role) [folder](teams/) [pic](img/chart.png) [ref][r]\n\n"
        "[r]: teams/platform.md\n\n"
        "```markdown\n[inside a fence](missing.md) and [[Nobody]]\n```\n\n"
        "    [indented code](missing.md)\n"
    )
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body), "img/chart.png": b"\x89PNG"})
    assert _findings(root) == []


def test_footnote_definitions_are_not_links(make_tree: TreeFactory) -> None:
    body = "# Leave\n\nLeave is 16 weeks.[^1] [^note]\n\n[^1]: This can vary by country.\n[^note]: /etc is not ours.\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    assert _findings(root) == []


def test_a_link_destination_in_angle_brackets_may_hold_spaces(make_tree: TreeFactory) -> None:
    body = (
        "# Doc\n\n"
        '[sp](<../a b.md>) [sp2](../a%20b.md) [titled](<../a b.md> "A B") [gone](<../no such.md>)\n\n'
        "[r]: <../a b.md>\n"
        "[r2]: <../no where.md> 'title'\n"
    )
    root = make_tree({**CLEAN, "a b.md": "# A B\n\nText.\n", "sub/x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message) for f in check(memory)] == [
        (
            6,
            "broken-link",
            "link `../no such.md` points to no such.md, which is not in the tree; fix the path or remove the link",
        ),
        (
            9,
            "broken-link",
            "link `../no where.md` points to no where.md, which is not in the tree; fix the path or remove the link",
        ),
    ]


def test_links_inside_html_comments_are_not_checked(make_tree: TreeFactory) -> None:
    body = (
        "# Doc\n\n"
        "<!-- [block](gone1.md) -->\n\n"
        "<!-- ## Old links\n\n- [multi](gone2.md)\n- [line](/gone3.md) -->\n\n"
        "Text <!-- [inline](gone4.md) --> and [after](gone5.md).\n\n"
        "A paragraph <!-- over\ntwo [lines](/gone6.md) --> [kept](gone7.md)\n\n"
        "An opener never closed <!-- [open](gone8.md)\n\nnor here -->\n"
    )
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.message.split(" ", 2)[1]) for f in check(memory)] == [
        (13, "`gone5.md`"),
        (16, "`gone7.md`"),
        (18, "`gone8.md`"),
    ]


def test_a_link_to_an_unreadable_markdown_file_is_not_broken(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", "# Doc\n\n[latin](latin.md)\n"), "latin.md": b"caf\xe9\n"})
    assert _findings(root) == [("memory/latin.md", 1, "unreadable", "error")]


def test_a_line_of_fifty_thousand_backticks_is_checked_in_well_under_two_seconds(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", "# Doc\n\nx " + "`" * 50_000 + "a [y](gone.md)\n")})
    memory = Memory.open(root, Settings.from_env())  # indexing is not what is timed
    started = time.monotonic()
    assert [(f.line, f.rule) for f in check(memory)] == [(6, "broken-link")]
    assert time.monotonic() - started < 2


def test_a_link_in_a_code_fence_thirty_quotes_deep_is_code_as_the_index_reads_it(make_tree: TreeFactory) -> None:
    deep = ">" * 30
    body = f"# Doc\n\n{deep} ```\n{deep} [x](gone.md)\n{deep} ```\n"
    assert _findings(make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})) == []


def test_each_body_is_parsed_once_for_both_link_rules(make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", "# Doc\n\nSee [y](gone.md) and [z](/teams/platform.md).\n")})
    memory = Memory.open(root, Settings.from_env())
    parsed: list[str] = []
    original = prose._MD.parse
    monkeypatch.setattr(prose._MD, "parse", lambda text: parsed.append(text) or original(text))
    assert sorted((f.file, f.rule) for f in check(memory)) == [
        ("memory/x.md", "absolute-link"),
        ("memory/x.md", "broken-link"),
    ]
    assert len(parsed) == len(memory.state.catalog) == 3


# -- absolute-link ---------------------------------------------------------------------------------------------


def test_a_site_absolute_link_to_a_file_of_the_tree_is_a_warning_giving_its_relative_form(
    make_tree: TreeFactory,
) -> None:
    body = "# Doc\n\nSee [PTO](/handbook/pto.md#carry-over).\n\n[team]: </teams/platform.md>\n"
    root = make_tree({**CLEAN, "handbook/pto.md": "# PTO\n\nTwenty days.\n", "notes/x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert memory.document("notes/x.md").links == ()  # the retriever follows relative links only
    assert check(memory) == [
        Finding(
            "memory/notes/x.md",
            6,
            "absolute-link",
            "warning",
            "link `/handbook/pto.md#carry-over` is site-absolute: the retriever follows relative links only, and "
            "it breaks wherever the tree is not served from its root; write it as `../handbook/pto.md#carry-over`",
        ),
        Finding(
            "memory/notes/x.md",
            8,
            "absolute-link",
            "warning",
            "link `/teams/platform.md` is site-absolute: the retriever follows relative links only, and "
            "it breaks wherever the tree is not served from its root; write it as `../teams/platform.md`",
        ),
    ]


def test_site_absolute_links_to_a_sibling_an_image_and_a_folder_get_their_relative_forms(
    make_tree: TreeFactory,
) -> None:
    body = "# Doc\n\n[Y](/y.md?v=2)\n![chart](/img/a%20chart.png)\n[teams](/teams/)\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body), "y.md": "# Y\n\nText.\n", "img/a chart.png": b"P"})
    memory = Memory.open(root, Settings.from_env())
    assert [f.message.rsplit("; ", 1)[1] for f in check(memory)] == [
        "write it as `y.md?v=2`",
        "write it as `img/a%20chart.png`",
        "write it as `teams/`",
    ]


def test_a_site_absolute_link_to_nothing_under_the_root_says_so_once(make_tree: TreeFactory) -> None:
    body = "# Doc\n\nSee [PTO](/handbook/../handbook/gone.md).\n"
    root = make_tree({**CLEAN, "notes/x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/notes/x.md",
            6,
            "absolute-link",
            "warning",
            "link `/handbook/../handbook/gone.md` is site-absolute, and handbook/gone.md is not under the memory "
            "root; the retriever follows relative links only: link a file of the tree by its relative path, "
            "or a web page by its full URL",
        )
    ]


def test_a_site_absolute_link_in_angle_brackets_may_hold_spaces(make_tree: TreeFactory) -> None:
    body = '# Doc\n\n[sp](</a b.md>)\n\n[ref2]: </a b.md> "t"\n'
    root = make_tree({**CLEAN, "a b.md": "# A B\n\nText.\n", "sub/x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message.rsplit("; ", 1)[1]) for f in check(memory)] == [
        (6, "absolute-link", "write it as `<../a b.md>`"),
        (8, "absolute-link", "write it as `<../a b.md>`"),
    ]


def test_percent_encoded_dot_segments_never_reach_outside_the_root(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    body = "# Doc\n\n[p](/%2e%2e/secret.txt) [q](/%2E%2E/%2e%2e/secret.txt#x) [r](%2e%2e/secret.txt)\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    looked_up: list[Path] = []
    exists = Path.exists

    def recorded(path: Path, *args: Any, **kwargs: Any) -> bool:
        looked_up.append(path)
        return exists(path, *args, **kwargs)

    monkeypatch.setattr(Path, "exists", recorded)
    assert [(f.rule, f.message) for f in check(memory)] == [
        (
            "absolute-link",
            "link `/%2E%2E/%2e%2e/secret.txt#x` is site-absolute, and secret.txt is not under the memory root; the "
            "retriever follows relative links only: link a file of the tree by its relative path, or a web page by "
            "its full URL",
        ),
        (
            "absolute-link",
            "link `/%2e%2e/secret.txt` is site-absolute, and secret.txt is not under the memory root; the retriever "
            "follows relative links only: link a file of the tree by its relative path, or a web page by its full URL",
        ),
        (
            "broken-link",
            "link `%2e%2e/secret.txt` leads outside the memory root; copy the file into the tree or link by URL",
        ),
    ]
    assert looked_up and all(p.resolve().is_relative_to(root.resolve()) for p in looked_up)


def test_a_site_absolute_link_with_an_encoded_slash_names_no_file_of_the_tree(make_tree: TreeFactory) -> None:
    body = "# Doc\n\n[p](/teams%2f..%2f..%2fsecret.txt) [q](/teams/%2e%2e/teams/platform.md)\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [f.message for f in check(memory)] == [
        "link `/teams%2f..%2f..%2fsecret.txt` is site-absolute, and teams/../../secret.txt is not under the memory "
        "root; the retriever follows relative links only: link a file of the tree by its relative path, or a web "
        "page by its full URL",
        "link `/teams/%2e%2e/teams/platform.md` is site-absolute: the retriever follows relative links only, and it "
        "breaks wherever the tree is not served from its root; write it as `teams/platform.md`",
    ]


def test_site_absolute_links_inside_html_comments_are_not_checked(make_tree: TreeFactory) -> None:
    body = "# Doc\n\n<!-- [c](/x.md) -->\n\nText <!-- [d](/teams/platform.md)\nover lines --> end.\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    assert _findings(root) == []


def test_protocol_relative_urls_schemes_anchors_and_code_are_not_site_absolute_links(make_tree: TreeFactory) -> None:
    body = (
        "# Doc\n\n"
        "[cdn](//cdn.example/teams/platform.md) [web](https://example.com/a) [top](#doc) `[code](/teams/platform.md)`\n"
        "[rel](teams/platform.md)\n\n"
        "```markdown\n[inside a fence](/teams/platform.md)\n```\n\n"
        "    [indented code](/gone.md)\n"
    )
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    assert _findings(root) == []


# -- duplicate-key -----------------------------------------------------------------------------------------------


def test_a_key_set_twice_is_a_warning_at_its_second_line_naming_the_value_kept(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\nowner: Olena Marchenko\ntype: topic\nowner: OM\n")})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/x.md",
            5,
            "duplicate-key",
            "warning",
            "`owner` is set twice in the front matter (lines 3 and 5); the retriever uses only the last value "
            "('OM', line 5) and ignores the first; remove one of them",
        )
    ]
    assert memory.document("x.md").front_matter["owner"] == "OM"  # reading is unchanged: the last value wins


def test_a_key_set_thousands_of_times_names_its_first_five_lines_how_many_more_and_the_last(
    make_tree: TreeFactory,
) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n" + "k: 1\n" * 40_000)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message) for f in check(memory)] == [
        (
            4,
            "duplicate-key",
            "`k` is set 40000 times in the front matter (lines 3, 4, 5, 6, 7, 39994 more and 40002); the retriever "
            "uses only the last value ('1', line 40002) and ignores the others; remove all but one",
        )
    ]


def test_a_file_gets_fifty_duplicate_key_findings_then_one_counting_the_rest(make_tree: TreeFactory) -> None:
    front_matter = "title: X\nitems:\n" + "".join(f"  - {{a: {i}, a: 2}}\n" for i in range(3000))
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    memory = Memory.open(root, Settings.from_env())
    findings = check(memory)
    assert [f.line for f in findings] == list(range(4, 55))
    assert findings[49].message.startswith("`items[49].a` is set twice in the front matter (line 53)")
    assert findings[50].message == (
        "and 2,950 more duplicate-key findings in this file from this line on; fix those above, check again"
    )


def test_repeated_keys_in_nested_mappings_and_list_items_are_named_by_their_path(make_tree: TreeFactory) -> None:
    front_matter = "title: X\ncontacts:\n  lead: A\n  lead: B\n  lead: [C]\nsteps:\n  - {n: 1, n: 2}\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message) for f in check(memory)] == [
        (
            5,
            "duplicate-key",
            "`contacts.lead` is set 3 times in the front matter (lines 4, 5 and 6); the retriever uses only the last "
            "value (a list, line 6) and ignores the others; remove all but one",
        ),
        (
            8,
            "duplicate-key",
            "`steps[0].n` is set twice in the front matter (line 8); the retriever uses only the last "
            "value ('2', line 8) and ignores the first; remove one of them",
        ),
    ]


def test_keys_that_read_as_one_field_are_repeats_and_a_shared_anchor_is_reported_once(make_tree: TreeFactory) -> None:
    front_matter = "title: X\n1: one\n'1': uno\nbase: &b {k: 1, k: 2}\ncopy: *b\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    assert [(line, rule) for _, line, rule, _ in _findings(root)] == [(4, "duplicate-key"), (5, "duplicate-key")]


def test_keys_in_different_mappings_and_a_key_overriding_a_merge_are_not_repeats(make_tree: TreeFactory) -> None:
    front_matter = "title: X\na: {k: 1}\nb: {k: 2}\nbase: &b {k: 1}\nc:\n  <<: *b\n  k: 3\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    assert _findings(root) == []


def test_a_repeated_key_in_invalid_yaml_or_toml_is_only_unreadable(make_tree: TreeFactory) -> None:
    root = make_tree(
        {
            **CLEAN,
            "bad.md": "---\nowner: a\nowner: b\nsummary: [unclosed\n---\n# Bad\n\nText.\n",
            "toml.md": '+++\ntitle = "X"\ntitle = "Y"\n+++\n# X\n\nText.\n',
        }
    )
    assert _findings(root) == [
        ("memory/bad.md", 5, "unreadable", "error"),
        ("memory/toml.md", 3, "unreadable", "error"),
    ]


# -- duplicate-name -------------------------------------------------------------------------------------------


def test_a_shared_alias_is_one_warning_on_the_later_document(make_tree: TreeFactory) -> None:
    other = _doc("type: person\ntitle: Olena Kovalenko\naliases:\n  - OK\n  - olena\n")
    root = make_tree({**CLEAN, "people/olena_kovalenko.md": other})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/people/olena_marchenko.md",
            4,
            "duplicate-name",
            "warning",
            "'Olena' is also used by memory/people/olena_kovalenko.md; "
            "give each document its own title and aliases so names resolve to one of them",
        )
    ]


def test_a_shared_title_is_reported_at_the_title_line(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "zz/copy.md": _doc("type: team\ntitle: platform team\n")})
    assert _findings(root) == [("memory/zz/copy.md", 3, "duplicate-name", "warning")]


def test_a_title_taken_from_the_first_heading_is_reported_at_that_heading(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "zz/copy.md": "Intro.\n\n# Platform Team\n\nText.\n"})
    assert _findings(root) == [("memory/zz/copy.md", 3, "duplicate-name", "warning")]


def test_distinct_names_and_an_alias_repeating_its_own_title_pass(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: Leo\naliases: [Leo, LEO, onboarding agent]\n")})
    assert _findings(root) == []


# -- empty-file -------------------------------------------------------------------------------------------------


def test_a_file_with_only_front_matter_is_empty(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": "---\ntitle: X\n---\n\n  \n"})
    memory = Memory.open(root, Settings.from_env())
    assert check(memory) == [
        Finding(
            "memory/x.md",
            1,
            "empty-file",
            "warning",
            "the file has no body besides front matter (only its summary and prose fields answer); write it or "
            "delete it",
        )
    ]


def test_a_file_with_a_line_of_text_is_not_empty(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": "---\ntitle: X\n---\nOne fact.\n"})
    assert _findings(root) == []


# -- empty-section ----------------------------------------------------------------------------------------------


def test_headings_with_nothing_under_them_are_empty_sections(make_tree: TreeFactory) -> None:
    body = "# Doc\n\nIntro.\n\n## Empty\n\n## Full\n\nText.\n\n### Last\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.severity, f.message) for f in check(memory)] == [
        (
            8,
            "empty-section",
            "warning",
            "heading 'Empty' has nothing under it; write the section or remove the heading",
        ),
        (
            14,
            "empty-section",
            "warning",
            "heading 'Last' has nothing under it; write the section or remove the heading",
        ),
    ]


def test_a_section_of_more_statements_than_a_question_reads_is_a_long_section(make_tree: TreeFactory) -> None:
    items = "\n".join(f"- Entry {i} deployed." for i in range(LONG_SECTION + 1))
    body = f"# Doc\n\nIntro.\n\n## Log\n\n{items}\n\n## Short\n\n" + "\n".join(["- One."] * LONG_SECTION) + "\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    memory = Memory.open(root, Settings.from_env())

    assert [(f.line, f.rule, f.message) for f in check(memory)] == [
        (
            8,
            "long-section",
            f"'Log' holds {LONG_SECTION + 1:,} statements: a question reads only its first and the"
            f" {LONG_SECTION - 1} holding most of its words; split it under headings",
        )
    ]


def test_a_title_heading_with_only_a_front_matter_summary_under_it_is_empty(make_tree: TreeFactory) -> None:
    page = "---\ntitle: X\nsummary: What this page will say once it is written.\n---\n# X\n"
    root = make_tree({**CLEAN, "x.md": page})
    assert _findings(root) == [("memory/x.md", 5, "empty-section", "warning")]


def test_a_heading_followed_by_a_higher_level_heading_is_empty(make_tree: TreeFactory) -> None:
    body = "# Doc\n\nIntro.\n\n## Part\n\n### Empty\n## Next\n\nText.\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    assert _findings(root) == [("memory/x.md", 10, "empty-section", "warning")]


def test_a_heading_with_only_sub_headings_or_a_table_or_code_is_not_empty(make_tree: TreeFactory) -> None:
    body = "# Doc\n\n## Parent\n\n### Child\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Code\n\n```\nx = 1\n```\n"
    root = make_tree({**CLEAN, "x.md": _doc("title: X\n", body)})
    assert _findings(root) == []


# -- unknown-relation --------------------------------------------------------------------------------------------


def test_a_relation_value_naming_no_document_is_a_warning_at_its_line(make_tree: TreeFactory) -> None:
    front_matter = "title: X\nteam: Ghost Team\nattendees:\n  - Olena Marchenko\n  - Petro Nobody\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    memory = Memory.open(root, Settings.from_env())
    findings = check(memory)
    assert [(f.file, f.line, f.rule, f.severity) for f in findings] == [
        ("memory/x.md", 3, "unknown-relation", "warning"),
        ("memory/x.md", 6, "unknown-relation", "warning"),
    ]
    assert findings[1].message == (
        "`attendees` names 'Petro Nobody', which matches no document title, alias or path; fix the name, "
        "add it to the aliases of the document it means, or write that document"
    )


def test_a_near_miss_name_gets_a_did_you_mean_and_a_list_written_as_one_text_is_told_to_be_a_list(
    make_tree: TreeFactory,
) -> None:
    # The author review: neither message had said what was wrong, and the comma list became one made-up entity.
    front_matter = "title: X\nowner: Olena Marchenk\nattendees: Olena Marchenko, Petro Nobody\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    messages = [f.message for f in check(Memory.open(root, Settings.from_env())) if f.rule == "unknown-relation"]
    assert messages == [
        "`owner` names 'Olena Marchenk', which matches no document title, alias or path; did you mean "
        "'Olena Marchenko'? fix the name, add it to the aliases of the document it means, or write that document",
        "`attendees` is one text holding commas, 'Olena Marchenko, Petro Nobody'; write it as a list, "
        "[Olena Marchenko, Petro Nobody], so each is a name",
    ]


def test_other_rules_point_at_the_last_of_a_repeated_key_which_the_retriever_reads(make_tree: TreeFactory) -> None:
    front_matter = (
        "title: 5\nowner: Olena Marchenko\nattendees:\n  - Ghost One\n"
        '"owner": Nobody\nattendees:\n  - Olena Marchenko\n  - Ghost Two\ntitle: 6\n'
    )
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    memory = Memory.open(root, Settings.from_env())
    assert [(f.line, f.rule, f.message.split(";")[0]) for f in check(memory) if f.rule != "duplicate-key"] == [
        (6, "unknown-relation", "`owner` names 'Nobody', which matches no document title, alias or path"),
        (9, "unknown-relation", "`attendees` names 'Ghost Two', which matches no document title, alias or path"),
        (10, "field-type", "`title` must be text, found a number (6)"),
    ]


def test_supersession_links_that_lead_back_are_each_a_warning_at_their_line(make_tree: TreeFactory) -> None:
    files = {
        **CLEAN,
        "old.md": _doc("title: Engine 2025\nsuperseded_by: Engine 2026\n"),
        "new.md": _doc("title: Engine 2026\nsuperseded_by: Engine 2025\n"),  # the slip: it should say supersedes
        "a.md": _doc("title: Plan A\n"),
        "b.md": _doc("title: Plan B\nsupersedes: Plan A\n"),
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    found = [(f.file, f.line, f.rule) for f in check(memory) if f.rule == "supersession-cycle"]
    assert found == [("memory/new.md", 3, "supersession-cycle"), ("memory/old.md", 3, "supersession-cycle")]


def test_a_record_naming_itself_and_a_number_on_a_cycle_are_supersession_findings(make_tree: TreeFactory) -> None:
    files = {
        **CLEAN,
        "self.md": _doc("title: Engine 2024\nsuperseded_by: Engine 2024\n"),
        "shared.md": _doc("title: Engine 2023\nsuperseded_by: Engine 2023\n"),  # meant for the other "Engine 2023"
        "z_shared.md": _doc("title: Engine 2023\n"),
        "2025.md": _doc("title: Engine 2025\nsuperseded_by: Engine 2026\n"),
        "new.md": _doc("title: Engine 2026\nsuperseded_by: [2025]\n"),  # a number, read as the retriever reads it
    }
    memory = Memory.open(make_tree(files), Settings.from_env())
    found = {(f.file, f.line, f.message.split(":")[0]) for f in check(memory) if f.rule == "supersession-cycle"}
    back = "and a chain of supersedes/superseded_by links leads back here"
    itself = "which is this record itself (a title or alias another document shares?)"
    assert found == {
        ("memory/self.md", 3, f"`superseded_by` names 'Engine 2024', {itself}"),
        ("memory/shared.md", 3, f"`superseded_by` names 'Engine 2023', {itself}"),
        ("memory/2025.md", 3, f"`superseded_by` names 'Engine 2026', {back}"),
        ("memory/new.md", 3, f"`superseded_by` names '2025', {back}"),
    }


def test_relations_by_title_alias_path_and_file_name_resolve(make_tree: TreeFactory) -> None:
    front_matter = "title: X\nowner: om\nmembers: [Olena Marchenko, ./teams/platform.md, platform]\nrole: Nobody\n"
    root = make_tree({**CLEAN, "x.md": _doc(front_matter)})
    assert _findings(root) == []


# -- configuration -------------------------------------------------------------------------------------------------

MESSY = {**CLEAN, "x.md": _doc("title: X\nteam: Ghost Team\n", "# X\n\n## Empty\n")}


def test_rules_are_disabled_in_a_parent_pyproject(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(MESSY)
    (tmp_path / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["empty-section"]\n', encoding="utf-8")
    config = load_config(root)
    assert config == CheckConfig(frozenset({"empty-section"}), frozenset(), (tmp_path / "pyproject.toml",))
    assert _findings(root, config) == [("memory/x.md", 3, "unknown-relation", "warning")]


def test_the_nearest_pyproject_with_a_check_table_wins(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(MESSY)
    (tmp_path / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["empty-section"]\n', encoding="utf-8")
    (root / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["unknown-relation"]\n', encoding="utf-8")
    assert _findings(root, load_config(root)) == [("memory/x.md", 7, "empty-section", "warning")]


def test_a_pyproject_without_a_check_table_is_passed_over(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(MESSY)
    (tmp_path / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["empty-section"]\n', encoding="utf-8")
    (root / "pyproject.toml").write_text('[project]\nname = "memory"\n', encoding="utf-8")
    assert load_config(root).disable == frozenset({"empty-section"})


def test_no_pyproject_above_the_repository_is_read_broken_or_not(tmp_path: Path) -> None:
    repo = tmp_path / "outer" / "repo"
    (repo / ".git").mkdir(parents=True)  # the repository holding the tree; its parent is another project's
    (repo / "mem").mkdir()
    (repo / "mem" / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    (tmp_path / "outer" / "pyproject.toml").write_text("this is not toml [", encoding="utf-8")
    assert load_config(repo / "mem") == CheckConfig(frozenset(), frozenset(), ())
    (repo / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["empty-section"]\n', encoding="utf-8")
    assert load_config(repo / "mem").disable == frozenset({"empty-section"})  # the repository's own is read


def test_the_trees_retriever_toml_merges_with_pyproject(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree({**MESSY, ".retriever.toml": '[check]\ndisable = ["unknown-relation"]\ntypes = ["Story"]\n'})
    (tmp_path / "pyproject.toml").write_text('[tool.retriever.check]\ndisable = ["empty-section"]\n', encoding="utf-8")
    config = load_config(root)
    assert config.disable == frozenset({"empty-section", "unknown-relation"})
    assert config.types == frozenset({"story"})
    assert _findings(root, config) == []


def test_a_retriever_toml_without_a_check_table_changes_nothing(make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, ".retriever.toml": "# nothing yet\n"})
    assert load_config(root).disable == frozenset()


def test_one_registry_names_each_rule_its_severity_finder_and_description(make_tree: TreeFactory) -> None:
    from retriever.lint.rules import RULES

    # Every registered id can be disabled, and nothing else can.
    for rule in RULES.values():
        root = make_tree({**CLEAN, ".retriever.toml": f'[check]\ndisable = ["{rule.id}"]\n'})
        assert load_config(root).disable == frozenset({rule.id})
        assert rule.severity in ("error", "warning") and rule.description and callable(rule.find)
    # A finding's severity is its rule's, read from the same registry.
    messy = make_tree({**MESSY, "y.md": _doc("title: Y\ntitle_case: 1\ncreated: soon\n")})
    found = {rule: severity for _, _, rule, severity in _findings(messy)}
    assert found and all(RULES[rule].severity == severity for rule, severity in found.items())


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[check\n", "cannot read check settings from"),
        ('[check]\ndisable = ["empty-sectoin"]\n', "[check] disable names unknown rule(s) empty-sectoin; known: "),
        ('[check]\ndisable = "empty-section"\n', '[check] disable must be a list of strings, e.g. disable = ["'),
        ("[check]\ntypes = [1]\n", "[check] types must be a list of strings"),
        ("[check]\nignore = []\n", "[check] has unknown key(s) ignore; it takes `disable` and `types`"),
        ("check = 3\n", "[check] must be a table"),
    ],
)
def test_a_malformed_retriever_toml_is_a_config_error_naming_the_file(
    make_tree: TreeFactory, content: str, problem: str
) -> None:
    root = make_tree({**CLEAN, ".retriever.toml": content})
    with pytest.raises(ConfigError) as caught:
        load_config(root)
    assert str(root / ".retriever.toml") in caught.value.message
    assert problem in caught.value.message


# -- the command ----------------------------------------------------------------------------------------------------


def test_check_exits_0_and_prints_the_summary_on_a_clean_tree(runner: CliRunner, make_tree: TreeFactory) -> None:
    result = runner.invoke(cli, ["check", "--root", str(make_tree(CLEAN))])
    assert result.exit_code == 0
    assert result.stdout == "No findings in 2 files.\n"
    assert result.stderr == ""


def test_check_on_a_folder_without_markdown_is_memory_empty_not_a_pass(runner: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not markdown")
    result = runner.invoke(cli, ["check", "--root", str(tmp_path)])
    assert result.exit_code == 2  # a CI job pointed at the wrong folder fails
    assert result.stdout == ""
    assert result.stderr.startswith("Error (memory_empty): memory root")


def test_check_as_json_prints_the_error_object_for_a_missing_root(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["check", "--root", str(tmp_path / "nope"), "--format", "json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error_code"] == "memory_not_found"


def test_check_exits_1_and_prints_one_line_per_finding(runner: CliRunner, make_tree: TreeFactory) -> None:
    result = runner.invoke(cli, ["check", "--root", str(make_tree(MESSY))])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "memory/x.md:3: warning unknown-relation: `team` names 'Ghost Team', which matches no document title, alias "
        "or path; fix the name, add it to the aliases of the document it means, or write that document",
        "memory/x.md:7: warning empty-section: heading 'Empty' has nothing under it; write the section or remove "
        "the heading",
        "2 findings (0 errors, 2 warnings) in 1 of 3 files.",
    ]
    assert result.stderr == ""


def test_check_json_lists_findings_and_counts(runner: CliRunner, make_tree: TreeFactory) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\ncreated: soon\n")})
    result = runner.invoke(cli, ["check", "--root", str(root), "--format", "json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout) == {
        "findings": [
            {
                "file": "memory/x.md",
                "line": 3,
                "rule": "field-type",
                "severity": "error",
                "message": "`created` must be a date, found 'soon'; write it as YYYY-MM-DD, e.g. created: 2026-03-01",
            }
        ],
        "files": 3,
        "errors": 1,
        "warnings": 0,
    }


def test_fail_on_error_exits_0_on_warnings_alone_and_1_on_an_error(runner: CliRunner, make_tree: TreeFactory) -> None:
    warned = make_tree({**CLEAN, "x.md": _doc("title: X\n", "# Doc\n\n## Empty\n")})
    assert runner.invoke(cli, ["check", "--root", str(warned)]).exit_code == 1
    result = runner.invoke(cli, ["check", "--root", str(warned), "--fail-on", "error"])
    assert result.exit_code == 0 and "warning empty-section" in result.stdout  # still listed
    (warned / "y.md").write_text(_doc("title: Y\ncreated: soon\n"), encoding="utf-8")
    assert runner.invoke(cli, ["check", "--root", str(warned), "--fail-on", "error"]).exit_code == 1


def test_check_json_on_a_clean_tree(runner: CliRunner, make_tree: TreeFactory) -> None:
    result = runner.invoke(cli, ["check", "--root", str(make_tree(CLEAN)), "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"findings": [], "files": 2, "errors": 0, "warnings": 0}


def test_check_github_prints_annotations_relative_to_the_working_folder(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({**CLEAN, "x.md": _doc("title: X\ncreated: soon\nteam: Ghost, Team\n")})
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["check", "--root", "memory", "--format", "github"])
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "::error file=memory/x.md,line=3,title=field-type::`created` must be a date, found 'soon'; "
        "write it as YYYY-MM-DD, e.g. created: 2026-03-01",
        "::warning file=memory/x.md,line=4,title=unknown-relation::`team` is one text holding commas, 'Ghost, Team'; "
        "write it as a list, [Ghost, Team], so each is a name",
        "2 findings (1 error, 1 warning) in 1 of 3 files.",
    ]
    monkeypatch.chdir(root / "teams")
    result = runner.invoke(cli, ["check", "--root", str(root), "--format", "github"])
    assert result.stdout.splitlines()[0].startswith("::error file=memory/x.md,line=3,title=field-type::")


def test_check_names_files_from_the_working_folder_when_it_holds_them(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree({**CLEAN, "notes/x.md": _doc("title: X\ncreated: soon\n")})
    monkeypatch.chdir(root)  # the hook's and workflow's `--root .`: "memory/notes/x.md" is no path from here
    text = runner.invoke(cli, ["check", "--root", "."])
    assert text.stdout.splitlines()[0].startswith("notes/x.md:3: error field-type: ")
    as_json = runner.invoke(cli, ["check", "--root", ".", "--format", "json"])
    assert [f["file"] for f in json.loads(as_json.stdout)["findings"]] == ["notes/x.md"]
    monkeypatch.chdir(tmp_path)
    assert runner.invoke(cli, ["check", "--root", "memory"]).stdout.startswith("memory/notes/x.md:3: error")
    monkeypatch.chdir(root / "teams")  # the file is not under the working folder: named from the root's parent
    assert runner.invoke(cli, ["check", "--root", str(root)]).stdout.startswith("memory/notes/x.md:3: error")


def test_check_github_escapes_annotation_properties(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree({**CLEAN, "a,b:c.md": _doc("title: X\ncreated: soon\n")})
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["check", "--root", "memory", "--format", "github"])
    assert result.stdout.splitlines()[0].startswith("::error file=memory/a%2Cb%3Ac.md,line=3,title=field-type::")


def test_check_github_escapes_control_characters_in_file_names(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    make_tree({**CLEAN, "a\x1b]0;pwned\x07%\nb.md": _doc("title: X\ncreated: soon\n")})
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(cli, ["check", "--root", "memory", "--format", "github"])
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    lines = result.stdout.splitlines()  # GitHub's escapes for % and LF, ours for ESC and BEL
    assert lines[0].startswith("::error file=memory/a\\x1b]0;pwned\\x07%25%0Ab.md,line=1,title=control-characters::")
    assert lines[1].startswith("::error file=memory/a\\x1b]0;pwned\\x07%25%0Ab.md,line=3,title=field-type::")


_DRIVERS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_GITHUB_ESCAPES = {"%25": "%", "%0D": "\r", "%0A": "\n", "%3A": ":", "%2C": ","}


def _github_decoded(text: str) -> str:
    """What GitHub's runner makes of an escaped value (in one pass, as its escapes are meant)."""
    return re.sub("%25|%0D|%0A|%3A|%2C", lambda m: _GITHUB_ESCAPES[m.group()], text)


def _drives_a_terminal(ch: str) -> bool:
    return ch in _DRIVERS or unicodedata.category(ch) in ("Cc", "Zl", "Zp")


ANY_NAME = st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=40)


@given(ANY_NAME, ANY_NAME)
def test_a_github_annotation_is_one_line_whatever_the_file_name_and_message_hold(name: str, message: str) -> None:
    (line,) = format_github([Finding(name, 3, "field-type", "error", message)], Path("/m/memory"), Path("/"))
    assert not any(_drives_a_terminal(ch) for ch in line)
    head, _, data = line.partition("::")[2].partition("::")
    assert head.startswith("error file=") and head.endswith(",line=3,title=field-type")
    assert "," not in head[len("error file=") : -len(",line=3,title=field-type")]  # a comma would end the property
    if not any(_drives_a_terminal(ch) for ch in message.replace("\r", "").replace("\n", "")):
        assert _github_decoded(data) == message  # CR, LF and % arrive as they were


def test_check_disables_rules_from_pyproject_through_the_command(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(MESSY)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.retriever.check]\ndisable = ["empty-section", "unknown-relation"]\n', encoding="utf-8"
    )
    result = runner.invoke(cli, ["check", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (0, "No findings in 3 files.\n")


def test_check_disables_rules_from_the_trees_retriever_toml(runner: CliRunner, make_tree: TreeFactory) -> None:
    root = make_tree({**MESSY, ".retriever.toml": '[check]\ndisable = ["empty-section", "unknown-relation"]\n'})
    result = runner.invoke(cli, ["check", "--root", str(root)])
    assert (result.exit_code, result.stdout) == (0, "No findings in 3 files.\n")


def test_check_exits_2_on_a_malformed_config(runner: CliRunner, make_tree: TreeFactory, tmp_path: Path) -> None:
    make_tree(CLEAN)
    (tmp_path / "pyproject.toml").write_text("[tool.retriever.check]\ndisable = [\n", encoding="utf-8")
    result = runner.invoke(cli, ["check", "--root", str(tmp_path / "memory")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(
        f"Error (invalid_config): cannot read check settings from {tmp_path / 'pyproject.toml'}: "
    )


def test_check_exits_2_when_the_root_is_missing(runner: CliRunner, tmp_path: Path) -> None:
    result = runner.invoke(cli, ["check", "--root", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"Error (memory_not_found): memory root {str(tmp_path / 'nowhere')!r} is not a folder "
        f"(nothing is at {str(tmp_path / 'nowhere')!r}); pass --root DIR or set RETRIEVER_ROOT\n"
    )


def test_check_exits_2_on_an_unknown_format(runner: CliRunner, make_tree: TreeFactory) -> None:
    result = runner.invoke(cli, ["check", "--root", str(make_tree(CLEAN)), "--format", "xml"])
    assert result.exit_code == 2
    assert "'xml' is not one of 'text', 'json', 'github'" in result.stderr


def test_check_reads_the_root_from_the_environment(
    runner: CliRunner, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_ROOT", str(make_tree(CLEAN)))
    result = runner.invoke(cli, ["check"])
    assert (result.exit_code, result.stdout) == (0, "No findings in 2 files.\n")


def test_a_rule_lists_at_most_50_findings_a_file_then_one_that_counts_the_rest(make_tree: TreeFactory) -> None:
    links = "".join(f"See [page {i}](missing-{i}.md).\n\n" for i in range(60))
    root = make_tree({**CLEAN, "notes.md": "# Notes\n\n" + links})
    found = [f for f in check(Memory.open(root, Settings.from_env())) if f.rule == "broken-link"]
    # Before: every one of them (one 1.9 MB file of "[[a]]" made 380,000 findings, 100 MB of JSON, 773 MB held).
    assert len(found) == 51
    last = found[-1]
    assert last.line == 3 + 2 * 50  # the first finding not listed
    assert last.message == (
        "and 10 more broken-link findings in this file from this line on; fix those above, check again"
    )


def test_a_relation_written_as_a_path_from_its_own_file_is_found(make_tree: TreeFactory) -> None:
    files = {**CLEAN, "meetings/m.md": _doc("title: M\nrelated: [../people/olena_marchenko.md, ./nowhere.md]\n")}
    findings = [f for f in check(Memory.open(make_tree(files), Settings.from_env())) if f.rule == "unknown-relation"]
    assert [f.message.split(",")[0] for f in findings] == ["`related` names './nowhere.md'"]


def test_a_relation_or_link_written_as_an_obsidian_wiki_link_names_its_target(make_tree: TreeFactory) -> None:
    # An Obsidian vault's properties and path links: each had been a false unknown-relation or broken-link.
    front = (
        'owner: "[[Olena Marchenko]]"\n'
        'attendees: ["[[Olena|OM]]", "[[people/olena_marchenko#Role]]", "[[Nobody Here|Nobody]]"]\n'
    )
    body = "# Doc\n\nSee [[teams/platform#Runs]] and [[people/olena_marchenko|Olena]].\n"
    memory = Memory.open(make_tree({**CLEAN, "m.md": _doc(front, body)}), Settings.from_env())
    assert [(f.line, f.rule, f.message.split(",")[0]) for f in check(memory)] == [
        (3, "unknown-relation", "`attendees` names '[[Nobody Here|Nobody]]'")
    ]


def test_from_file_reads_a_relative_path_from_the_file_and_nothing_else() -> None:
    from retriever.text.vocabulary import from_file

    assert from_file("meetings/2026/m.md", "../../people/ana.md") == "people/ana.md"
    assert from_file("meetings/m.md", "./notes.md") == "meetings/notes.md"
    assert from_file("meetings/m.md", "Ana Lima") is None  # a name, not a path
    assert from_file("m.md", "../outside.md") is None  # outside the root


def test_a_company_name_with_its_legal_form_after_a_comma_is_one_name() -> None:
    from retriever.text.vocabulary import listed

    assert listed("Acme, Inc.") == ["Acme, Inc."]  # it had become two parties, "Acme" and "Inc."
    assert listed("Globex, Ltd") == ["Globex, Ltd"]
    assert listed("Priya Shah, Tom Becker; Ana") == ["Priya Shah", "Tom Becker", "Ana"]
