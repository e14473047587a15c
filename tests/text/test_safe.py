"""What a client sends, made safe to log, store and echo: bounded, JSON-ready, always encodable."""

from __future__ import annotations

import json
import math
import unicodedata
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.safe import (
    MAX_CHARS,
    MAX_DEPTH,
    MAX_ITEMS,
    bounded,
    clean_text,
    json_safe,
    json_text,
    lone_surrogate,
    one_line,
    preview,
    terminal_text,
)

ANY_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=50)  # surrogates included
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | ANY_TEXT
JSONISH = st.recursive(
    LEAVES, lambda inner: st.lists(inner, max_size=6) | st.dictionaries(ANY_TEXT, inner, max_size=6), max_leaves=40
)

# Hypothesis keeps its caches under ./.hypothesis unless told otherwise: tests write only in temp folders.


def _encodes(value: Any) -> bool:
    json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")
    return True


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def test_a_lone_surrogate_is_found_and_replaced_but_a_pair_becomes_its_character() -> None:
    assert lone_surrogate("plain") is None
    assert lone_surrogate("ok \ud800 no") == 3
    assert clean_text("ok \ud800 no") == "ok \ufffd no"
    assert clean_text("\ud83d\ude00") == "😀"


def test_nan_and_infinity_become_null_as_pydantic_writes_them() -> None:
    assert bounded({"a": math.nan, "b": [math.inf, -math.inf, 1.5]}) == {"a": None, "b": [None, None, 1.5]}


def test_a_huge_string_is_cut_with_a_marker_saying_how_much_was_left_out() -> None:
    text = bounded("x" * 100_000)
    assert text.startswith("x" * MAX_CHARS)
    assert text.endswith(f"…[cut: {100_000 - MAX_CHARS} more characters]")
    assert len(text) < MAX_CHARS + 40


def test_containers_are_capped_in_size_and_depth() -> None:
    assert len(bounded(list(range(10_000)))) == MAX_ITEMS + 1
    assert bounded(list(range(10_000)))[-1] == f"…[cut: {10_000 - MAX_ITEMS} more items]"
    wide = bounded({f"k{i}": i for i in range(5_000)})
    assert len(wide) == MAX_ITEMS + 1 and wide["…"] == f"[cut: {5_000 - MAX_ITEMS} more keys]"
    deep = json.dumps(bounded(_nested(100_000)))
    assert deep == "[" * MAX_DEPTH + json.dumps("…[cut: list nested too deep]") + "]" * MAX_DEPTH


def test_huge_integers_foreign_objects_and_odd_keys_become_short_text() -> None:
    assert bounded(10**5000) == "<integer of 16610 bits>"
    assert bounded({1: b"bytes", (1, 2): object()}) == {"1": "<bytes>", "…[cut: tuple nested too deep]": "<object>"}


def test_a_preview_quotes_a_bounded_encodable_prefix() -> None:
    assert preview("a" * 1000, 10) == "'aaaaaaaaaa…[cut: 990 more characters]'"
    assert preview("\ud800") == "'\ufffd'"


@settings(max_examples=200, deadline=None, database=None)
@given(JSONISH)
def test_any_value_comes_out_json_encodable_and_within_bounds(value: Any) -> None:
    out = bounded(value, chars=20, items=3, depth=3)
    assert _encodes(out)
    assert _encodes(json_safe(value))
    assert bounded(out, chars=10_000, items=10_000, depth=100) == out  # already bounded: a fixed point


def test_one_line_escapes_what_would_break_or_reorder_a_line_and_keeps_the_rest() -> None:
    assert one_line("a\n::warning file=x::pwned.md") == "a\\n::warning file=x::pwned.md"
    assert one_line("x\x00y\u202ez\u2028\r") == "x\\x00y\\u202ez\\u2028\\r"
    assert one_line("café · 中文 a\u00a0b 👍") == "café · 中文 a\u00a0b 👍"


@given(st.text())
def test_one_line_never_holds_a_line_break_control_character_or_bidi_override(text: str) -> None:
    shown = one_line(text)
    assert len(shown.splitlines()) <= 1 and "\n" not in shown and "\r" not in shown
    assert not any(unicodedata.category(ch) in ("Cc", "Zl", "Zp") or "\u202a" <= ch <= "\u202e" for ch in shown)


# terminal_text: many lines, nothing that drives a terminal

_DRIVERS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _drives_a_terminal(ch: str) -> bool:
    return ch not in "\t\n" and (ch in _DRIVERS or unicodedata.category(ch) in ("Cc", "Zl", "Zp"))


@given(ANY_TEXT)
def test_terminal_text_leaves_nothing_that_drives_a_terminal_and_keeps_the_lines(text: str) -> None:
    shown = terminal_text(text)
    assert not any(_drives_a_terminal(ch) for ch in shown)
    # each line as one_line shows it, its tabs kept
    expected = ["\t".join(one_line(part) for part in line.split("\t")) for line in text.split("\n")]
    assert shown.split("\n") == expected


@given(st.text(alphabet=st.characters(exclude_categories=("Cc", "Zl", "Zp", "Cs")), max_size=50))
def test_terminal_text_leaves_printable_text_and_its_layout_alone(text: str) -> None:
    text = text + "\n\tindented"
    assert terminal_text("".join(ch for ch in text if ch not in _DRIVERS)) == "".join(
        ch for ch in text if ch not in _DRIVERS
    )


def test_terminal_text_escapes_a_terminal_title_sequence_and_a_carriage_return() -> None:
    assert terminal_text("a\x1b]0;pwned\x07b\r\nc\td") == "a\\x1b]0;pwned\\x07b\\r\nc\td"


# json_text: JSON a terminal can show, the same document to a reader


@given(JSONISH)
def test_json_text_reads_back_as_the_same_value_and_drives_no_terminal(value: Any) -> None:
    value = json_safe(value)  # a JSON document: what the commands print
    shown = json_text(value)
    assert json.loads(shown) == value
    assert not any(_drives_a_terminal(ch) for ch in shown if ch != "\n")


def test_json_text_escapes_c1_controls_and_bidi_overrides_that_json_leaves_raw() -> None:
    shown = json_text({"title": "Plan\u0085\u009b31m \u202eevil\u2028x\x7f", "ok": "Київ"})
    assert '"Plan\\u0085\\u009b31m \\u202eevil\\u2028x\\u007f"' in shown
    assert '"Київ"' in shown  # readable UTF-8 kept
