"""Sentences: where one ends (abbreviations, titles before names and export gaps respected), and a paragraph's
statements, a property block's lines among them.

Pure string functions, shared by the parser (index time) and the pipeline (a statement's first sentence).
Linear in the length of the text whatever it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# Abbreviations after which a full stop does not end a sentence (English, titles before a name among them: a
# transcript's "Hon. Anita Anand: …" had split into "Hon." and the turn; then Ukrainian: street, lane, avenue,
# boulevard, square, "named after", "for example", "see", thousand, "that is", "and so on").
_ABBREVIATIONS = frozenset(
    "e.g i.e etc mr mrs ms mx dr st vs no approx incl fig dept inc ltd co u.s u.k a.m p.m jan feb mar apr "
    "hon rt rev prof sen gov lt col capt sgt jr sr messrs "
    "jun jul aug sep sept oct nov dec вул пров просп бул пл ім напр див тис т.д т.п т.ч".split()
)
_OPENERS = "([{\"'“‘«*_"  # what may stand before an abbreviation: "(e.g. Ana…)", "«вул. …»"
_LAST_WORD_WINDOW = 64  # characters; longer than any abbreviation
# The gap after a sentence's stop: white space, or what an export writes for it ("CET.&nbsp;A release…<br/>").
_BOUNDARY = re.compile(r"(?<=[.!?…])([\"”’)]?)(?:\s|&nbsp;|&#160;|<[bB][rR]\s*/?>)+(?=[\"“‘(\[*_]*[A-ZА-ЯІЇЄҐ0-9])")


# A line of a property block: a short key, a colon, a value ("Owner: Ana Costa", "On-call: payments-oncall").
_PROPERTY_LINE = re.compile(r"[^\W\d_][\w .'/-]{0,30}:[ \t]+\S[^\n]*")


def statement_pieces(text: str) -> Iterator[tuple[int, str]]:
    """A paragraph's statements as (start offset, text): a block of "Key: value" lines (every line one, at least two,
    as Notion's and Confluence's exports write a page's properties) a statement a line, where having no stops they
    had been one ("Owner: Ana Costa Tier: 1 On-call: payments-oncall"), a line's sentences apart ("A: There is…
    We recommend…"); any other text its sentences."""
    if "\n" in text and ":" in text and text.count("\n") < 50:
        lines = text.split("\n")
        if all(_PROPERTY_LINE.fullmatch(line.strip()) for line in lines if line.strip()):
            offsets = [0]
            for line in lines[:-1]:
                offsets.append(offsets[-1] + len(line) + 1)
            for at, line in zip(offsets, lines, strict=True):  # a line of several sentences is still split
                yield from ((at + offset, sentence) for offset, sentence in iter_sentences(line))
            return
    yield from iter_sentences(text)


def split_sentences(text: str) -> list[tuple[int, str]]:
    """Sentences of ``text`` as (start offset, sentence), abbreviations respected."""
    return list(iter_sentences(text))


def iter_sentences(text: str) -> Iterator[tuple[int, str]]:
    """``split_sentences`` one at a time (a caller with a budget stops early); linear time."""
    start = 0
    for match in _BOUNDARY.finditer(text):
        # Only the last word matters, so look back a bounded way: after many abbreviations in a row
        # ``start`` stays put and slicing from it each time would make the split quadratic.
        before = text[max(start, match.start() - _LAST_WORD_WINDOW) : match.start()].rstrip('"”’)')
        words = before.rsplit(None, 1)
        last_word = words[-1].rstrip(".").lstrip(_OPENERS).casefold() if words else ""
        if last_word in _ABBREVIATIONS or (len(last_word) == 1 and last_word.isalpha()):
            continue
        piece = text[start : match.start() + len(match.group(1))].strip()
        if piece:
            yield start, piece
        start = match.end()
    piece = text[start:].strip()
    if piece:
        yield start, piece
