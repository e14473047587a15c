"""The repeated-key detector behind ``duplicate-key``: exact on mappings, and safe on any text."""

from __future__ import annotations

import time
from collections import Counter
from unittest import mock

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.lint import yaml_keys
from retriever.lint.yaml_keys import Repeat, front_matter_block, repeated_keys
from retriever.text.front_matter import MAX_FRONT_MATTER

# A 600-byte alias bomb: nine lists of nine aliases each, 9^9 values once expanded.
ALIAS_BOMB = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{','.join([f'*{chr(97 + i)}'] * 9)}]\n" for i in range(8)
)
TOKENS = [*"ab1 :-,{}[]&*!<>?|'\"#\n\t\ufeff", "<<", "&x", "*x", "a: ", "\n  ", "- ", "!!binary", "? "]
YAMLISH = st.lists(st.sampled_from(TOKENS), max_size=80).map("".join)


@pytest.fixture(params=["libyaml", "pure Python"])
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test runs with libyaml's composer and with PyYAML's own, which recurses per level."""
    if request.param == "pure Python":
        monkeypatch.setattr(yaml_keys, "_Loader", yaml.SafeLoader)


def test_each_repeat_lists_the_lines_of_every_occurrence_and_the_kept_value(loader: None) -> None:
    assert repeated_keys("owner: A\ntitle: X\nowner: B\n") == [Repeat("owner", (1, 3), "'B'")]


def test_an_alias_bomb_is_searched_without_expanding_it(loader: None) -> None:
    started = time.monotonic()
    assert repeated_keys(ALIAS_BOMB + "k: &m {x: 1, x: 2}\nl: [*m, *m, *m]\n") == [Repeat("k.x", (10, 10), "'2'")]
    assert time.monotonic() - started < 1


def test_a_node_that_contains_itself_ends_the_search_there(loader: None) -> None:
    assert repeated_keys("a: &a [*a, {k: 1, k: 2}]\n") == [Repeat("a[1].k", (1, 1), "'2'")]


def test_nesting_past_the_readers_limit_or_the_recursion_limit_gives_no_repeats(loader: None) -> None:
    assert repeated_keys("{a: " * 40 + "{k: 1, k: 2}" + "}" * 40) == []
    assert repeated_keys("[" * 100_000 + "]" * 100_000) == []


def test_invalid_yaml_over_long_text_and_unencodable_text_give_no_repeats(loader: None) -> None:
    assert repeated_keys("owner: a\nowner: b\nsummary: [unclosed\n") == []
    assert repeated_keys("owner: a\nowner: b\n" + "#" * MAX_FRONT_MATTER) == []
    assert repeated_keys("owner: a\nowner: \ud800\n") == []


def test_the_block_is_the_yaml_between_the_fences_and_toml_has_none() -> None:
    assert front_matter_block(["\ufeff---", "a: 1", "...", "body"], 3) == "a: 1"
    assert front_matter_block(["---", "a: 1", "---"], 2) == "a: 1"  # no line break after the closing fence
    assert front_matter_block(["+++", 'a = "1"', "+++", "body"], 3) is None
    assert front_matter_block(["# Title", "text"], 0) is None


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), YAMLISH), st.sampled_from([yaml_keys._Loader, yaml.SafeLoader]))
def test_any_text_gives_repeats_within_it_and_never_raises(block: str, loader_class: type[yaml.SafeLoader]) -> None:
    started = time.monotonic()
    with mock.patch.object(yaml_keys, "_Loader", loader_class):
        repeats = repeated_keys(block)
    assert time.monotonic() - started < 2
    lines = block.count("\n") + 1
    assert len(repeats) <= len(block)
    assert all(len(r.lines) >= 2 and all(1 <= n <= lines for n in r.lines) for r in repeats)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["owner", "title", "tags", "x1"]), max_size=12), st.booleans())
def test_the_repeats_of_a_mapping_are_exactly_its_keys_written_twice(keys: list[str], nested: bool) -> None:
    indent = "  " if nested else ""
    block = ("outer:\n" if nested else "") + "".join(f"{indent}{key}: v{i}\n" for i, key in enumerate(keys))
    counts = Counter(keys)
    expected = {("outer." if nested else "") + k: n for k, n in counts.items() if n > 1}
    assert {r.path: len(r.lines) for r in repeated_keys(block)} == expected
    loaded = yaml.safe_load(block) or {}
    fields = loaded["outer"] if nested else loaded
    for repeat in repeated_keys(block):
        key = repeat.path.rsplit(".", 1)[-1]
        last = max(i for i, k in enumerate(keys) if k == key)
        assert repeat.last_value == repr(fields[key]) == f"'v{last}'"  # the value the retriever reads
