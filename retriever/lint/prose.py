"""A document body's prose as the link rules read it: code and HTML comments left out, in linear time.

Contract:
- ``prose_lines(file)`` yields ``(file line, text)`` for each body line outside fenced and indented code
  blocks and outside HTML comment blocks (a line starting with ``<!--``, up to the line holding ``-->``, or
  the end of the file if none does: markdown renders those lines as raw HTML).  In ``text`` each code span
  and each inline HTML comment is replaced by one space.  A comment may run over the lines of one block (a
  paragraph, a heading, a table row); a code span is paired on its own line only, as before (a span that
  crosses a line break is left in: its links are checked).
- ``strip_inline(text)`` is that replacement on the lines of one block joined by ``\\n``; it keeps every
  ``\\n``, so its result splits into as many lines as ``text``.  Per CommonMark, marks are taken left to
  right and the first to start wins: a run of N backticks opens a code span closed by the next run of
  exactly N backticks on its line, else it is literal text; ``<!--`` opens a comment closed by the first
  ``-->`` after its ``<!`` (so ``<!-->`` is a whole comment), else it is literal text.
- Both run in time linear in the body's length: each mark is visited once, a run's closer is found through
  a table built in one pass, and the search for ``-->`` never covers a character twice (once it fails, no
  later comment can close).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from markdown_it import MarkdownIt

from retriever.lint.tree import File
from retriever.text.blocks import MAX_NESTING

_MARK = re.compile(r"`+|<!--")
_CODE_TOKENS = frozenset({"fence", "code_block"})
# The parser's nesting limit, so that the lint hides the same code blocks the index leaves out of prose.
_MD = (
    MarkdownIt("commonmark", {"maxNesting": MAX_NESTING})
    .enable("table")
    .disable(["inline", "text_join"], ignoreInvalid=True)
)


def prose_lines(file: File) -> Iterator[tuple[int, str]]:
    """(file line, text without code spans and comments) for each body line outside code and comment blocks.

    Worked out once per file and kept on it: both link rules read it, and one markdown-it pass is the cost."""
    kept = file.prose.get("lines")
    if kept is None:
        kept = file.prose["lines"] = list(_prose_lines(file))
    return iter(kept)


def _prose_lines(file: File) -> Iterator[tuple[int, str]]:
    body = file.body
    hidden, blocks = _layout(body)
    index = 0
    while index < len(body):
        if index in hidden:
            index += 1
            continue
        end = blocks.get(index, index + 1)
        for offset, text in enumerate(strip_inline("\n".join(body[index:end])).split("\n")):
            yield file.body_start + index + offset + 1, text
        index = end


def _layout(body: list[str]) -> tuple[set[int], dict[int, int]]:
    """The body lines of code and comment blocks, and each block of inline text as first line -> end line."""
    hidden: set[int] = set()
    blocks: dict[int, int] = {}
    for token in _MD.parse("\n".join(body)):
        if not token.map:
            continue
        first, end = token.map
        if token.type in _CODE_TOKENS or (token.type == "html_block" and token.content.lstrip().startswith("<!--")):
            hidden.update(range(first, end))
        elif token.type == "inline":  # the cells of a table row share the row's line
            blocks[first] = max(blocks.get(first, first + 1), end)
    return hidden, blocks


def strip_inline(text: str) -> str:
    """``text`` with each code span and HTML comment replaced by one space, line breaks kept (see the contract)."""
    marks = [(m.start(), m.end()) for m in _MARK.finditer(text)]
    closers = _closers(text, marks)
    kept: list[str] = []
    done = 0  # text[:done] is settled
    comments_can_close = True
    for index, (start, _) in enumerate(marks):
        if start < done:
            continue  # inside a span already removed
        if text[start] == "`":
            closer = closers[index]
            if closer is None:
                continue
            kept.append(f"{text[done:start]} ")
            done = marks[closer][1]
            continue
        close = text.find("-->", start + 2) if comments_can_close else -1
        if close < 0:
            comments_can_close = False
            continue
        kept.append(f"{text[done:start]} " + "\n" * text.count("\n", start, close))
        done = close + 3
    kept.append(text[done:])
    return "".join(kept)


def _closers(text: str, marks: list[tuple[int, int]]) -> list[int | None]:
    """For each mark that is a backtick run, the index of the next run of the same length on its line."""
    closers: list[int | None] = [None] * len(marks)
    following: dict[tuple[int, int], int] = {}  # (line, run length) -> the nearest such run after this one
    line = text.count("\n")
    position = len(text)
    for index in range(len(marks) - 1, -1, -1):
        start, end = marks[index]
        line -= text.count("\n", start, position)
        position = start
        if text[start] == "`":
            closers[index] = following.get((line, end - start))
            following[(line, end - start)] = index
    return closers
