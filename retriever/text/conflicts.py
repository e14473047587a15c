"""Unresolved merge conflicts: git's ``<<<<<<<`` / ``=======`` / ``>>>>>>>`` markers left in a file.

Contract: ``conflict(text)`` returns the (first, last) file lines of the first complete conflict (an opening
``<<<<<<<`` line, then a ``=======`` line, then a closing ``>>>>>>>`` line, each at the start of a line) outside
fenced code, HTML comments and ``<pre>`` blocks, or None.  Read as markdown, ``=======`` turns the lines above it
into a heading and both sides become facts, so the parser refuses such a file (``parse_document``) and
``retriever check`` reports it at the opening line.  Markers shown inside a code fence, a comment or ``<pre>`` are
examples, not conflicts; a lone ``=======`` is a setext underline.
One pass over the lines: linear time.
"""

from __future__ import annotations

import re

_OPEN = re.compile(r"<{7}(?: |$)")
_SEPARATOR = re.compile(r"={7}[ \t]*$")
_CLOSE = re.compile(r">{7}(?: |$)")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def conflict(text: str) -> tuple[int, int] | None:
    """The first and last line of the first unresolved merge conflict outside code and raw HTML, or None."""
    hidden: str | None = None  # what ends the fence, comment or <pre> block the scan is in
    opened: int | None = None
    separated = False
    for number, line in enumerate(text.split("\n"), start=1):
        if hidden is not None:
            hidden = None if _ends(line, hidden) else hidden
            continue
        hidden = _opening(line)
        if hidden is not None:
            continue
        if _OPEN.match(line):
            opened, separated = number, False
        elif opened is not None and _SEPARATOR.match(line):
            separated = True
        elif opened is not None and separated and _CLOSE.match(line):
            return opened, number
    return None


def _opening(line: str) -> str | None:
    """What ends the block ``line`` opens: a code fence ("```"), an HTML comment ("-->") or a <pre> block
    ("</pre>"), which show markers rather than hold a conflict; None for any other line.  A comment or <pre>
    that ends on its own line opens nothing, nor does a backtick run with a backtick after it ("```x``` text")."""
    marks = _FENCE.match(line)
    if marks and not (marks[1][0] == "`" and "`" in marks[2]):
        return marks[1]
    lowered = line.lstrip(" ").lower()
    for opener, closer in (("<!--", "-->"), ("<pre", "</pre>")):
        if lowered.startswith(opener) and closer not in lowered[len(opener) :]:
            return closer
    return None


def _ends(line: str, closer: str) -> bool:
    if closer[0] in "`~":  # a closing fence: the same character, at least as many, nothing after them
        marks = _FENCE.match(line)
        return bool(marks and marks[1][0] == closer[0] and len(marks[1]) >= len(closer) and not marks[2].strip())
    return closer in line.lower()


def refusal(lines: tuple[int, int]) -> str:
    """Why a file holding the conflict at ``lines`` is not read, and what to do."""
    first, last = lines
    return (
        f"an unresolved merge conflict at line {first} (its markers run to line {last}); keep the right text and "
        "delete the <<<<<<<, ======= and >>>>>>> lines"
    )
