"""MDX pages: imports, exports and {/* comments */} blanked before parsing, every line kept where it was."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text.mdx import blank, is_mdx


def test_imports_exports_and_comments_become_spaces_and_every_line_keeps_its_place() -> None:
    body = (
        "import Tabs from '@theme/Tabs';\n"
        "import {TabItem} from '@theme/TabItem';\n"
        "\n"
        "# Install {/* TODO: Windows */}\n"
        "\n"
        "export const Note = ({children}) =>\n"
        "  <b>{children}</b>;\n"
        "\n"
        "Run it. {/* a comment\n"
        "over two lines */ } Then check.\n"
    )
    assert blank(body) == (
        " " * 31 + "\n" + " " * 39 + "\n\n"
        "# Install " + " " * 21 + "\n\n" + " " * 35 + "\n" + " " * 20 + "\n\n"
        "Run it. " + " " * 13 + "\n" + " " * 20 + "Then check.\n"
    )


def test_code_fences_keep_their_imports_and_comments() -> None:
    body = "```js\nimport x from 'y';\n{/* shown */}\n```\n\n~~~~\nexport default 1\n~~~\n~~~~\n"
    assert blank(body) == body


def test_an_import_a_paragraph_continues_or_an_indented_one_is_prose_and_one_after_a_fence_is_not() -> None:
    body = "We\nimport data weekly.\n\n    import x from 'y'\n\nimport the data\n```\ncode\n```\nexport {a}\n"
    assert blank(body).split("\n") == [
        "We",
        "import data weekly.",
        "",
        "    import x from 'y'",
        "",
        " " * 15,
        "```",
        "code",
        "```",
        " " * 10,
        "",
    ]


def test_a_comment_alone_on_its_line_may_precede_an_import_and_an_unclosed_comment_is_text() -> None:
    assert blank("{/* c */}\nimport a from 'b'\n") == " " * 9 + "\n" + " " * 17 + "\n"
    assert blank("Text {/* never closed\n\nmore */ text\n") == "Text {/* never closed\n\nmore */ text\n"


def test_only_mdx_files_are_mdx() -> None:
    assert is_mdx("docs/faq.mdx") and is_mdx("docs/FAQ.MDX")
    assert not is_mdx("docs/faq.md") and not is_mdx("docs/mdx")


PIECES = ["import ", "export {", "{/*", "*/}", "*/ }", "```", "~~~", "\n", " ", "a"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES)).map("".join))
def test_blank_keeps_every_line_break_and_only_turns_characters_into_spaces(body: str) -> None:
    out = blank(body)
    assert out.count("\n") == body.count("\n")
    for after, before in zip(out.split("\n"), body.split("\n"), strict=True):
        if len(after) < len(before):  # a comment's spaces before the text dropped: the text is no indented code
            rest = iter(before)
            assert after.strip() and all(ch in rest for ch in after.lstrip(" "))  # what is left, in its order
            continue
        assert all(a == b or (a == " " and b != "\n") for a, b in zip(after, before, strict=True))


def test_text_after_a_comment_at_a_lines_start_is_no_indented_code() -> None:
    assert blank("{/* TODO: check */} The cluster is wiped.\nNext") == "The cluster is wiped.\nNext"
    assert blank("  {/* x */}     Text") == "  Text"


@pytest.mark.parametrize(
    "body",
    [
        "{/*" * 350_000,
        "{/* */}" * 150_000,
        "import x\n" * 100_000,
        "```\n" * 250_000,
        "x */ " + " " * 1_000_000,
        "a [[" * 10_000 + "{/*" + "*/" * 400_000,
    ],
)
def test_blank_is_linear_on_hostile_bodies(body: str) -> None:
    started = time.perf_counter()
    blank(body)
    assert time.perf_counter() - started < 1
