"""Unresolved merge conflicts: git's ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` markers left in a file.

Contract: ``conflict(text)`` returns the (first, last) file lines of the first complete conflict (an opening
``<<<<<<<`` line, then a ``=======`` line, then a closing ``>>>>>>>`` line, each at the start of a line) outside
fenced code, or None.  Read as markdown, ``=======`` turns the lines above it into a heading and both sides become
facts, so the parser refuses such a file (``parse_document``) and ``retriever check`` reports it at the opening
line.  Markers shown inside a code fence are examples, not conflicts; a lone ``=======`` is a setext underline.
One pass over the lines: linear time.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"<{7}(?: |$)")
_SEPARATOR = re.compile(r"={7}[ \t]*$")
_CLOSE = re.compile(r">{7}(?: |$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def conflict(text: str) -> tuple[int, int] | None:
    """The first and last line of the first unresolved merge conflict outside fenced code, or None."""
    fence: str | None = None
    opened: int | None = None
    separated = False
    for number, line in enumerate(text.split("\n"), start=1):
        marks = _FENCE.match(line)
        if fence is not None:
            if marks and marks.group(1)[0] == fence[0] and len(marks.group(1)) >= len(fence) and not marks[2].strip():
                fence = None  # a closing fence: the same character, at least as many, nothing after them
            continue
        if marks:
            fence = marks.group(1)
            continue
        if _OPEN.match(line):
            opened, separated = number, False
        elif opened is not None and _SEPARATOR.match(line):
            separated = True
        elif opened is not None and separated and _CLOSE.match(line):
            return opened, number
    return None


def refusal(lines: tuple[int, int]) -> str:
    """Why a file holding the conflict at ``lines`` is not read, and what to do."""
    first, last = lines
    return (
        f"an unresolved merge conflict at line {first} (its markers run to line {last}); keep the right text and "
        "delete the <<<<<<<, ======= and >>>>>>> lines"
    )
