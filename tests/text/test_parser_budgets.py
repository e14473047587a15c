"""The parser's bounds on work markdown-it does without making tokens: lazy lines of nested quotes, and link
reference definitions (complexity review items 6 and 9)."""

from __future__ import annotations

import pytest

from retriever.text import blocks, quotes
from retriever.text.parser import ParseError, parse_document

_REREADS = r"^quotes nested in quotes or lists go on over many lines without their '>' marks"


def _texts(text: str) -> list[str]:
    return [unit.text for section in parse_document("q.md", text).sections for unit in section.units]


def test_a_deep_quote_continued_by_many_plain_lines_is_refused_early() -> None:
    # markdown-it read each line again for every level: 25,000 lines under a quote 96 deep took 12 s, and these
    # 50,000 52 s.  Now the re-readings are charged, and the file is refused after about a second's.
    text = "# T\n\n" + ">" * 96 + " x\n" + "lazy line\n" * 50_000
    with pytest.raises(ParseError, match=_REREADS):
        parse_document("q.md", text)


def test_long_plain_lines_under_a_deep_quote_are_charged_by_their_length() -> None:
    # Each line is scanned whole (as a would-be rule) at every level: 200 KB of such lines took 2 s.
    text = "# T\n\n" + ">" * 96 + " x\n" + ("*" * 1000 + "x\n") * 1000
    with pytest.raises(ParseError, match=_REREADS):
        parse_document("q.md", text)


def test_the_outermost_quote_reads_its_plain_lines_free(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quotes, "MAX_QUOTE_REREADS", 1_000)
    lazy = "more words\n" * 100  # 100 readings of 11 characters, each charged 111 were it nested
    assert _texts("# T\n\n> Quoted words\n" + lazy) == ["Quoted words " + "more words " * 99 + "more words"]
    assert _texts("# T\n\n- item\n\n  > Quoted words\n" + "more\n" * 8)[-1] == "Quoted words" + " more" * 8
    with pytest.raises(ParseError, match=_REREADS):
        parse_document("q.md", "# T\n\n> > Quoted words\n" + lazy)


def test_nested_quotes_continued_within_the_budget_read_as_before() -> None:
    text = "# T\n\n> > > Deep words\nlazy one\nlazy two\n\n> > Shallow words\n> and marked\n\nAfter.\n"
    assert _texts(text) == ["Deep words lazy one lazy two", "Shallow words and marked", "After."]


_ENDED_EARLY = r"^quotes end before lines without '>' marks that follow them"


@pytest.mark.parametrize(
    "unit", [">>\nx\n", "> # h\nx\n", "> ***\nx\n", "> ```\nx\n", "> <div>\nx\n", "> |a|\n> |-|\nx\n"]
)
def test_quotes_that_end_before_the_plain_lines_after_them_are_refused_early(unit: str) -> None:
    # A top-level quote whose last block is no paragraph read the plain lines after it, then ended before them,
    # and the next quote read them again: 12,000 of ">>\nx\n" (60 KB) took over 2 minutes, time growing with the
    # square of the file.  Now the lines read past a quote's end are charged, and the file is refused at once.
    with pytest.raises(ParseError, match=_ENDED_EARLY):
        parse_document("q.md", "# T\n\n" + unit * 12_000)


def test_quotes_ending_before_a_plain_line_now_and_then_read_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "# T\n\n> ```\n> code\n> ```\nnext line\n\n> # Heading\nafter it\n\n> quoted\nlazy\n"
    assert _texts(text) == ["next line", "Heading", "after it", "quoted lazy"]
    monkeypatch.setattr(quotes, "MAX_QUOTE_REREADS", 150)  # a line read again past a quote's end is charged 100
    assert _texts("# T\n\n> # Heading\nafter it\n\n> # Heading\nafter that\n")[-1] == "after that"  # each read once
    with pytest.raises(ParseError, match=_ENDED_EARLY):
        parse_document("q.md", "# T\n\n" + "> # h\nx\n" * 3)  # each quote reads the plain lines after it again


def test_one_quote_reading_many_plain_lines_after_it_once_is_not_charged() -> None:
    # A quoted code block, then 110,000 lines of a log: read once, linear work, and no reason to refuse the file.
    assert _texts("# T\n\n> ```\n> x\n> ```\n" + "log entry ok\n" * 110_000)[0].startswith("log entry ok")


def test_a_file_of_199_000_link_reference_definitions_is_refused_early() -> None:
    # They make no tokens, so no budget counted them: 199,000 took 3.4 s (7 s written "[a]:b").
    for line in ("[a]: b.md\n", "[a]:b\n"):
        with pytest.raises(ParseError, match=r"^more than 10,000 link reference definitions \('\[label\]: url'\)"):
            parse_document("r.md", "# T\n\n" + line * 199_000)


def test_link_reference_definitions_up_to_the_limit_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blocks, "MAX_REFERENCES", 3)
    text = "# T\n\nSee [the plan][p].\n\n[p]: plan.md\n[q]: q.md\n\n> [r]: r.md\n"
    doc = parse_document("r.md", text)
    assert [u.text for s in doc.sections for u in s.units] == ["See the plan."]
    assert doc.links == ("plan.md", "q.md")  # from the text, not from markdown-it
    with pytest.raises(ParseError, match=r"^more than 3 link reference definitions"):
        parse_document("r.md", text + "\n[s]: s.md\n")
