"""Bounds on the work markdown-it's quote rule does without making tokens, which no token budget can count.

Two ways a quote reads lines again, each charged to one budget per file (``MAX_QUOTE_REREADS``, about a second's
work), past which the file is refused with ``ParseError`` naming what to change:
- A line that a nested quote reads without its ">" marks (a lazy continuation) is read again for every quote it
  continues, ~10 µs a line and up to ~0.1 µs a character (a quote 96 deep and 20,000 plain lines took 11 s):
  each reading but the outermost quote's is charged its characters plus ``LINE_CHARGE``.
- A top-level quote whose last block is no paragraph (a heading, a code block, a table) reads the plain lines
  after it, then ends before them, and the next quote reads them again (">>\\nx\\n" 12,000 times, 60 KB, took over
  two minutes: time grew with the square of the file).  A line read a second time is charged ``LINE_CHARGE``;
  one long quote reading its lines once is not (a code block in a quote, then 110,000 log lines, parses).

Contract: ``env()`` gives the counts' starting values for a parse's ``env``; ``count_quote_line`` and ``quote``
are block rules to install in markdown-it (see ``parser``).
"""

from __future__ import annotations

from typing import Any

from markdown_it.rules_block import StateBlock, blockquote

from retriever.text.front_matter import ParseError

MAX_QUOTE_REREADS, LINE_CHARGE = 10_000_000, 100  # characters' worth (about a second); a line's fixed cost
_REREADS = "retriever.quote_rereads"  # the budget spent
_SCANNED = "retriever.quote_scanned"  # the furthest line the top-level quote being parsed has read
_FURTHEST = "retriever.quote_furthest"  # the furthest line any earlier top-level quote read
_NESTED = (
    "quotes nested in quotes or lists go on over many lines without their '>' marks, which markdown reads again "
    "for every level; start each quoted line with its '>' marks, or flatten the quotes"
)
_ENDED_EARLY = (
    "quotes end before lines without '>' marks that follow them (a heading, code block or table as a quote's last "
    "part, then a line without '>'), which markdown reads again for every quote; add a blank line after each quote"
)


def env() -> dict[str, Any]:
    """The counts a parse starts with."""
    return {_REREADS: 0, _SCANNED: -1, _FURTHEST: -1}


def count_quote_line(state: StateBlock, line: int, end_line: int, silent: bool) -> bool:
    """A rule that never matches.  As a block rule (not ``silent``) it does nothing; first of the rules that may
    end a quote, it is called for each line a quote reads without ">", once per quote the line continues: it
    charges nested quotes' readings (``state.level`` is still the quote's parent's), and notes how far a top-level
    quote read (``quote``)."""
    if silent and state.level > 0:
        _charge(state, state.eMarks[line] - state.bMarks[line] + LINE_CHARGE, _NESTED)
    elif silent:
        state.env[_SCANNED] = max(state.env[_SCANNED], line)
    return False


def quote(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it's blockquote rule; a top-level quote is charged for the lines past its end that an earlier
    quote had read already."""
    if silent or state.level > 0:
        return blockquote(state, start_line, end_line, silent)
    state.env[_SCANNED] = -1
    matched = blockquote(state, start_line, end_line, silent)
    scanned, furthest = state.env[_SCANNED], state.env[_FURTHEST]
    if matched and min(scanned, furthest) >= state.line:
        _charge(state, (min(scanned, furthest) - state.line + 1) * LINE_CHARGE, _ENDED_EARLY)
    state.env[_FURTHEST] = max(furthest, scanned)
    return matched


def _charge(state: StateBlock, cost: int, why: str) -> None:
    state.env[_REREADS] += cost
    if state.env[_REREADS] > MAX_QUOTE_REREADS:
        raise ParseError(why)
