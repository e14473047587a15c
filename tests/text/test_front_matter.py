"""Front matter's expanded-size budget is enforced on YAML's node graph, before construction copies merges.

No wall-clock asserts: the inputs are ones the old order (construct, then count) took 74 s and 2.3 GB on,
and a spy proves construction never starts; the budget's edge is pinned to the value.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text import front_matter
from retriever.text.front_matter import MAX_VALUES, ParseError, front_matter_end, split_front_matter

TOO_MANY = r"^front matter holds more than 100,000 values once YAML aliases are expanded; remove the aliases"


def _fields(block: str) -> dict[str, Any]:
    return split_front_matter("---\n" + block + "---\nbody\n")[0]


@pytest.fixture
def no_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if construction starts: the refusal must come from the node graph alone."""

    def refuse(*_: object) -> None:
        raise AssertionError("construct_document was called")

    monkeypatch.setattr(front_matter._Loader, "construct_document", refuse)


def test_168_kb_of_merge_keys_is_refused_before_anything_is_constructed(no_construction: None) -> None:
    n = 8_000  # 8,000 mappings each merging 8,000 keys: 64 million values, 74 s and 2.3 GB before
    block = "a: &a\n" + "".join(f"  k{i:05d}: 1\n" for i in range(n)) + "l:\n" + "- <<: *a\n" * n
    assert len(block) > 168_000
    with pytest.raises(ParseError, match=TOO_MANY):
        _fields(block)


def test_a_chain_of_merges_is_refused_before_anything_is_constructed(no_construction: None) -> None:
    n = 4_000  # a{i} merges a{i-1}: 8 million values in 144 KB
    block = "a0: &a0 {y0: 1}\n" + "".join(f"a{i}: &a{i} {{<<: *a{i - 1}, y{i}: 1}}\n" for i in range(1, n))
    with pytest.raises(ParseError, match=TOO_MANY):
        _fields(block)


def test_one_mapping_merged_many_times_in_one_list_is_refused(no_construction: None) -> None:
    # PyYAML keeps one copy of each merged key, but walks every merged mapping: 4,000 x 20,000 pairs
    block = "a: &a {" + ", ".join(f"k{i}: 1" for i in range(4_000)) + "}\nb: {<<: [" + "*a, " * 20_000 + "*a]}\n"
    with pytest.raises(ParseError, match=TOO_MANY):
        _fields(block)


def _merged_list(extra: str) -> str:
    """369 values (a mapping of 368) merged into 270 list items: exactly MAX_VALUES values with the list."""
    anchor = "a: &a {" + ", ".join(f"k{i}: {i}" for i in range(368)) + "}\n"
    return anchor + "l:\n" + "- {<<: *a}\n" * 270 + extra


def test_merges_that_expand_to_exactly_the_budget_are_constructed_as_yaml_reads_them() -> None:
    block = _merged_list("")
    assert MAX_VALUES == 369 + 1 + 270 * 369
    assert _fields(block) == yaml.safe_load(block)


def test_one_value_past_the_budget_is_refused() -> None:
    with pytest.raises(ParseError, match=TOO_MANY):
        _fields(_merged_list("z: 1\n"))


def test_a_mapping_merging_its_own_ancestor_never_ends_and_is_refused_as_too_deep() -> None:
    with pytest.raises(ParseError, match=r"^front matter is nested too deeply"):
        _fields("a: &a {x: {<<: *a}}\n")


def test_nesting_of_100_000_levels_is_counted_without_recursion() -> None:
    with pytest.raises(ParseError, match=r"^invalid YAML front matter at line 2: exceeded maximum nesting depth"):
        _fields("a: " + "[" * 100_000 + "]" * 100_000 + "\n")


@st.composite
def _anchored_yaml(draw: st.DrawFn) -> str:
    """Mappings anchored &a0.. that merge earlier ones (alone or in a list), and aliases to them."""
    lines: list[str] = []
    for i in range(draw(st.integers(1, 5))):
        own = draw(st.dictionaries(st.sampled_from(["k0", "k1", "k2", "k3"]), st.integers(-9, 9), max_size=3))
        parts = [f"{k}: {v}" for k, v in own.items()]
        if i:
            merged = draw(st.lists(st.integers(0, i - 1), min_size=0, max_size=3))
            if len(merged) == 1:
                parts.insert(draw(st.integers(0, len(parts))), f"<<: *a{merged[0]}")
            elif merged:
                parts.insert(draw(st.integers(0, len(parts))), "<<: [" + ", ".join(f"*a{j}" for j in merged) + "]")
        lines.append(f"a{i}: &a{i} {{" + ", ".join(parts) + "}")
    aliases = draw(st.lists(st.integers(0, len(lines) - 1), max_size=4))
    lines += [f"v{n}: [*a{j}, {{<<: *a{j}, k9: 0}}]" for n, j in enumerate(aliases)]
    return "\n".join(lines) + "\n"


@settings(max_examples=300, deadline=None)
@given(_anchored_yaml())
def test_front_matter_with_anchors_and_merges_within_the_budget_reads_as_safe_load(block: str) -> None:
    assert repr(_fields(block)) == repr(yaml.safe_load(block))


@pytest.mark.parametrize(
    ("text", "end"),
    [
        ("---\ndate: 2026-11-18\n---\n# Title\n", len("---\ndate: 2026-11-18\n---\n")),
        ("+++\ndate = 2026-11-18\n+++\n# Title\n", len("+++\ndate = 2026-11-18\n+++\n")),
        ("# Title\n\n---\n", 0),
    ],
)
def test_front_matter_end_is_where_the_reader_finds_the_block_closed(text: str, end: int) -> None:
    assert front_matter_end(text) == end


@pytest.mark.parametrize(
    "key",
    [
        "a." * 45_000 + "a",
        '"a".' * 40_000 + "a",
        "[" + "a." * 40_000 + "a]",
        "a . " * 33 + "a",
        "x = {" + "a." * 60_000 + "a",  # in an inline table: 16 s at 240 KB
    ],
)
def test_a_toml_key_of_more_dotted_parts_than_the_nesting_limit_is_refused_before_tomllib(
    key: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tomllib keeps every prefix of a dotted key: 45,000 parts (90 KB) took 32 s and 7.8 GB; 120,000 were OOM-killed.
    monkeypatch.setattr(front_matter.tomllib, "loads", lambda _: pytest.fail("tomllib read it"))
    line = key if key.startswith("[") else f"{key} = 1}}" if key.startswith("x = {") else f"{key} = 1"
    with pytest.raises(ParseError, match="nested too deeply"):
        split_front_matter(f"+++\n{line}\n+++\nbody\n")


def test_toml_keys_of_up_to_the_limits_parts_and_dots_in_values_read_as_tomllib_reads_them() -> None:
    key = ".".join(["a"] * front_matter.MAX_NESTING)
    oid = ".".join(str(i) for i in range(40))  # a multi-line string may hold a line of dotted words
    block = f'{key} = 1\ntitle = "{"x." * 1000}y"\nnotes = """\n{oid}\n"""\n[b.c]\nd = 2\n'
    meta, _, _ = split_front_matter(f"+++\n{block}+++\nbody\n")
    assert meta["title"] == "x." * 1000 + "y" and meta["b"] == {"c": {"d": 2}} and oid in meta["notes"]
