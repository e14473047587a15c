"""markdown-it's block parser, set up to read a file one top-level block at a time within budgets.

Contract: ``parse(body, feed, offset)`` runs CommonMark's block rules (and tables) over ``body`` and hands ``feed``
each finished top-level block's tokens, then the last ones, so a file's tokens never all live at once; inline
parsing is left to ``markup.clean_inline`` on the pieces kept.  It raises ``ParseError`` where a budget runs out
(``MAX_BLOCK_TOKENS`` tokens of one block, ``MAX_REFERENCES`` link reference definitions, ``quotes``' re-readings),
naming the file line (``offset``: the front matter's lines before the body) of the block being read.  Split from
``parser``, which turns the tokens into sections and statements.
"""

from __future__ import annotations

from collections.abc import Callable

from markdown_it import MarkdownIt
from markdown_it.rules_block import StateBlock, reference
from markdown_it.token import Token

from retriever.text import quotes
from retriever.text.front_matter import ParseError

MAX_BLOCK_TOKENS = 100_000  # tokens of one top-level block held at once (a 19,000-item list: 36 MB)
# Containers markdown-it reads inside one another (a list level counts two: the list and its item). Past it,
# markdown-it drops the rest of the container, and of the file after a list: such a file is refused, not cut.
MAX_NESTING = 100
# Work markdown-it does without making tokens, which MAX_TOKENS cannot bound: quotes' re-readings (``quotes``),
# and link reference definitions, 17-35 µs each (2 MB: 3.4-7 s).
MAX_REFERENCES = 10_000  # real files hold at most 10

_FEED = "retriever.feed"  # the env key under which ``_hand_over`` finds the builder's feed
_REFERENCES = "retriever.references"  # the env key of the definitions counted
_BLOCK_LINE = "retriever.block_line"  # the env key of the body line where the top-level block being read starts


def _hand_over(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """A block rule that never matches.  Tried first for every block, it hands the finished top-level
    blocks to the builder and drops their tokens, so a file's tokens never all live at once (1.8 MB
    of headings made 1.8 million tokens: 830 MB).  No other rule holds a token index at that point.

    Top level is ``state.level == 0``: nested blocks (in quotes and list items) are parsed after their
    container's opening token, at level 1 or more.  (``parentType`` cannot tell: markdown-it's
    ``lheading`` rule leaves it at "paragraph" when it does not match.)"""
    if not silent and state.level == 0:
        if state.tokens:
            state.env[_FEED](state.tokens)
            del state.tokens[:]
        state.env[_BLOCK_LINE] = start_line  # after the feed: a refusal there belongs to the block before
    return False


class _Tokens(list[Token]):
    """The list markdown-it appends tokens to, refusing to hold more than one block's budget."""

    def append(self, token: Token) -> None:
        if len(self) >= MAX_BLOCK_TOKENS:
            raise ParseError(
                f"one block (a list, quote or table) has more than {MAX_BLOCK_TOKENS:,} parts; split it up"
            )
        super().append(token)


def _count_reference(state: StateBlock, start_line: int, end_line: int, silent: bool) -> bool:
    """markdown-it's link reference definition rule, refusing a file of more than ``MAX_REFERENCES``."""
    if not reference(state, start_line, end_line, silent):
        return False
    state.env[_REFERENCES] += 1
    if state.env[_REFERENCES] > MAX_REFERENCES:
        raise ParseError(f"more than {MAX_REFERENCES:,} link reference definitions ('[label]: url'); split it up")
    return True


# Only block rules run: inline parsing is done by ``clean_inline`` on the pieces we keep.
_MD = MarkdownIt("commonmark", {"maxNesting": MAX_NESTING}).enable("table")
_MD.disable(["inline", "text_join"], ignoreInvalid=True)
_MD.block.ruler.before("table", "hand_over", _hand_over)
_MD.block.ruler.before("table", "count_quote_line", quotes.count_quote_line, {"alt": ["blockquote"]})
_MD.block.ruler.at("blockquote", quotes.quote, {"alt": ["paragraph", "reference", "blockquote", "list"]})
_MD.block.ruler.at("reference", _count_reference)  # its alternatives stay none: a definition ends no block


def parse(body: str, feed: Callable[[list[Token]], None], offset: int = 0) -> None:
    """The contract's block parse of ``body`` (see the module docstring)."""
    tokens = _Tokens()
    # The block parser directly: the core's other steps are off or done already (line endings, by the caller),
    # except NUL, which CommonMark replaces (binary files were refused before, but not a NUL past 8 KB).
    env = {_FEED: feed, _REFERENCES: 0, _BLOCK_LINE: 0, **quotes.env()}
    try:
        _MD.block.parse(body.replace("\0", "\ufffd"), _MD, env, tokens)
        feed(tokens)
    except ParseError as exc:  # a budget ran out: say where, so that the user knows which block to split
        raise ParseError(f"{exc} (in the block at line {env[_BLOCK_LINE] + offset + 1})") from None
