"""The prose the link rules read: code spans and HTML comments stripped as CommonMark pairs them, in linear time."""

from __future__ import annotations

import re
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.lint import prose
from retriever.lint.prose import strip_inline

# The pairing rules written as one (slow) regex: a run of N backticks up to the next run of exactly N on its
# line; ``<!--`` up to the first ``-->`` after its ``<!``.  The leftmost match wins, as in the scanner.
REFERENCE = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)|<!(?=--)(?s:.*?)-->")
MARKUP = st.lists(st.sampled_from([*"`a -<!>\n", "``", "<!--", "-->", "[x](y.md)"]), max_size=40).map("".join)


def _reference(text: str) -> str:
    return REFERENCE.sub(lambda m: " " + "\n" * m.group().count("\n"), text)


def test_a_code_span_closes_at_the_next_run_of_the_same_length_only() -> None:
    assert strip_inline("a ``x`y`` b `z` c ``` d") == "a   b   c ``` d"
    assert strip_inline("`one\ntwo` [x](y.md)") == "`one\ntwo` [x](y.md)"  # paired on its own line only


def test_a_comment_runs_to_the_first_closer_over_lines_and_an_unclosed_one_is_text() -> None:
    assert strip_inline("a <!-- [c](x.md)\nstill --> b <!--> c <!---> d") == "a  \n b   c   d"
    assert strip_inline("a <!-- [c](x.md) b") == "a <!-- [c](x.md) b"


def test_the_mark_that_starts_first_wins() -> None:
    assert strip_inline("`<!--` [x](y.md) -->") == "  [x](y.md) -->"
    assert strip_inline("<!-- ` --> [x](y.md) `") == "  [x](y.md) `"


@settings(max_examples=500, deadline=None)
@given(MARKUP)
def test_stripping_matches_the_pairing_rules_and_keeps_every_line(text: str) -> None:
    stripped = strip_inline(text)
    assert stripped == _reference(text)
    assert stripped.count("\n") == text.count("\n")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(["`", "``", "```", "<!--", "-->", "a", "\n"]), max_size=60), st.integers(1, 300))
def test_the_scanner_visits_each_mark_once_whatever_the_text(parts: list[str], repeat: int) -> None:
    text = "".join(parts) * repeat
    finds = _count_finds(text)
    assert finds <= 1 + text.count("<!--")  # each comment opener searches at most once, and only forward
    assert strip_inline(text).count("\n") == text.count("\n")


def _count_finds(text: str) -> int:
    """How many ``str.find`` calls the scanner makes on ``text`` (a str subclass that counts them)."""

    class Counted(str):
        calls = 0

        def find(self, *args: object) -> int:  # type: ignore[override]
            Counted.calls += 1
            return super().find(*args)  # type: ignore[arg-type]

    prose.strip_inline(Counted(text))
    return Counted.calls


def test_fifty_thousand_backticks_and_unclosed_comments_strip_in_well_under_a_second() -> None:
    lines = [
        "`" * 50_000 + "a",
        "".join("`" * n + "a" for n in range(1, 316)),  # 315 run lengths, none closed: 50,000 backticks
        "<!--" * 12_500,
        "<!-- -- " * 6_000 + "`" * 3,
    ]
    for line in lines:
        started = time.monotonic()
        assert strip_inline(line) == line
        assert time.monotonic() - started < 2
