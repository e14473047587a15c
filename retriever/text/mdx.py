"""MDX pages read as markdown: the syntax only MDX has blanked out, every line kept where it was.

Contract: ``blank(body)`` returns ``body`` with, outside fenced code blocks,
- each ``{/* … */}`` comment (it may run over lines), and
- each ESM block: a line that starts, at its first column and where a block may start (the body's first line, or
  after a blank line), with ``import`` or ``export`` and then a space, ``{``, ``*`` or a quote (an import or export
  statement), with the lines after it up to the next blank line,
replaced by spaces.  Line breaks are kept and every line keeps its length, so line numbers, and columns, stay those
of the file; but where a block may start, a line whose text a comment at its start would leave four spaces in
(markdown's indented code) loses those spaces.  JSX tags are left: the parser strips them as it strips HTML.
Comments go first, so a line after a comment alone on its line may start an ESM block, as it may in MDX.
Linear time: each line is looked at once for fences and ESM; each comment's close is searched for once, from its
opener on, and an opener without a close ends the search (no later opener can close either).
"""

from __future__ import annotations

import re

MDX_SUFFIX = ".mdx"
_OPENER = "{/*"
_CLOSER = re.compile(r"\*/\s*\}")  # "*/}" and "*/ }": a whitespace run belongs to the one "*/" before it
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*$")
_ESM = re.compile(r"(?:import|export)[ \t{*\"']")


def is_mdx(rel_path: str) -> bool:
    """The file is an MDX page (``.mdx``), whose MDX-only syntax ``blank`` removes."""
    return rel_path.lower().endswith(MDX_SUFFIX)


def blank(body: str) -> str:
    """``body`` with its MDX comments and ESM blocks outside code fences as spaces (see the contract)."""
    if _OPENER not in body and "import" not in body and "export" not in body:
        return body
    lines = body.split("\n")
    fenced = fenced_lines(lines)
    start = 0
    while start < len(lines):  # each run of lines outside fences, its comments blanked at once
        if fenced[start]:
            start += 1
            continue
        end = start
        while end < len(lines) and not fenced[end]:
            end += 1
        run = "\n".join(lines[start:end])
        if _OPENER in run:
            lines[start:end] = _not_code(lines[start:end], _without_comments(run).split("\n"), start == 0)
        start = end
    _blank_esm(lines, fenced)
    return "\n".join(lines)


def fenced_lines(lines: list[str]) -> list[bool]:
    """Whether each line is part of a fenced code block (its fences included); an unclosed fence runs to the end."""
    fenced = [False] * len(lines)
    fence = ""  # the open fence's marks, "" outside one
    for number, line in enumerate(lines):
        if not fence:
            opened = _FENCE.match(line)
            if opened is not None:
                fence, fenced[number] = opened.group(1), True
            continue
        fenced[number] = True
        closed = _FENCE_CLOSE.match(line)
        if closed is not None and closed.group(1)[0] == fence[0] and len(closed.group(1)) >= len(fence):
            fence = ""
    return fenced


def _without_comments(text: str) -> str:
    """``text`` with each ``{/* … */}`` as spaces, its line breaks kept."""
    kept: list[str] = []
    done = 0
    while (start := text.find(_OPENER, done)) >= 0:
        closer = _CLOSER.search(text, start + len(_OPENER))
        if closer is None:
            break  # no later opener can close: the search ends here
        kept += [text[done:start], _spaces(text[start : closer.end()])]
        done = closer.end()
    kept.append(text[done:])
    return "".join(kept)


def _blank_esm(lines: list[str], fenced: list[bool]) -> None:
    """Each ESM block of ``lines`` outside fences as spaces, in place."""
    inside = False
    for number, line in enumerate(lines):
        if fenced[number] or not line.strip():
            inside = False
            continue
        if not inside:
            may_start = number == 0 or not lines[number - 1].strip() or fenced[number - 1]
            inside = may_start and _ESM.match(line) is not None
        if inside:
            lines[number] = " " * len(line)


def _not_code(before: list[str], after: list[str], first: bool) -> list[str]:
    """``after`` (``before``'s lines, comments blanked), but where the spaces of a comment at a line's start made its
    text an indented code block ("{/* TODO */} The staging cluster…" had been code), that text at ``before``'s
    indent: only where a block may start (the body's first line, or after a blank line)."""
    out: list[str] = []
    for number, (old, new) in enumerate(zip(before, after, strict=True)):
        lead, kept = len(new) - len(new.lstrip(" ")), len(old) - len(old.lstrip(" "))
        may_start = (first and number == 0) or (number > 0 and not out[-1].strip())
        out.append(" " * kept + new.lstrip(" ") if may_start and lead >= 4 > kept and new.strip() else new)
    return out


def _spaces(text: str) -> str:
    """``text`` with every character but a line break as a space."""
    return "\n".join(" " * len(part) for part in text.split("\n"))
