"""Markdown as site generators and exporters extend it, read as plain markdown before parsing, every line kept.

Contract: ``readable(rel_path, body)`` is ``body`` with
- an MDX page's MDX-only syntax blanked (``mdx.blank``);
- the indented bodies of MkDocs Material's admonitions and content tabs (a line ``!!! note``, ``??? info "Title"``,
  ``???+ tip`` or ``=== "Tab"``, then lines indented by four spaces or a tab, blank lines among them; nested ones
  four more) moved left by four spaces a level, outside fenced code: markdown had read each body as an indented code
  block, so its sentences were never statements and the summary quoted the marker lines alone;
- each blank line inside an HTML ``<table>`` (Google Docs' and Confluence's exports leave them between rows and in
  cells) written as an empty HTML comment, so the table stays one HTML block: markdown ends an HTML block at a blank
  line, and the rows after it had lost their header and their cells' edges. Only where the table closes within
  ``TABLE_LINES`` lines and before a heading; an unclosed one is left as it is.
Lines are neither added nor removed. Linear: each line is looked at once (a table's close searched for once).
"""

from __future__ import annotations

import re

from retriever.text import mdx

TABLE_LINES = 2000  # lines a table may span and still be held together
# A marker line as MkDocs writes it, whole (as ``markup`` reads it): "!!! note", '??? info "Title"', '=== "Tab"'.
_MARKER = re.compile(
    r"""(?:(?:!!!|\?\?\?\+?)[ \t]+[a-z][\w-]{0,30}(?:[ \t]+"[^"\n]*")?|===\+?[ \t]+"[^"\n]*")[ \t]*$"""
)
_TABLE_OPEN = re.compile(r"<table\b", re.I)
_TABLE_CLOSE = re.compile(r"</table\s*>", re.I)
_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_HELD = "<!---->"  # an empty HTML comment: no blank line, and nothing to read


def readable(rel_path: str, body: str) -> str:
    """``body`` as plain markdown (see the module's contract)."""
    body = mdx.blank(body) if mdx.is_mdx(rel_path) else body
    admonitions = "!!!" in body or "???" in body or "===" in body
    tables = "<table" in body or "<TABLE" in body
    if not admonitions and not tables:
        return body
    lines = body.split("\n")
    fenced = mdx.fenced_lines(lines)
    if admonitions:
        _dedent(lines, fenced)
    if tables:
        _hold_tables(lines, fenced)
    return "\n".join(lines)


def _dedent(lines: list[str], fenced: list[bool]) -> None:
    """Admonition and tab bodies moved left, in place; ``levels`` holds each open marker's body indent."""
    levels: list[int] = []
    for number, line in enumerate(lines):
        if fenced[number] or not line.strip():
            levels = [] if fenced[number] else levels
            continue
        indent = _indent(line)
        while levels and indent < levels[-1]:
            levels.pop()
        depth = len(levels)
        if _MARKER.match(line[_cut(line, 4 * depth) :]):
            levels.append(4 * (depth + 1))
        lines[number] = line[_cut(line, 4 * depth) :]


def _indent(line: str) -> int:
    """Columns of white space before the line's text, a tab counting four (as markdown's indented code does)."""
    columns = 0
    for ch in line:
        if ch not in " \t":
            break
        columns += 4 if ch == "\t" else 1
    return columns


def _cut(line: str, columns: int) -> int:
    """How many characters of ``line``'s leading white space make up ``columns`` columns (fewer when it has less)."""
    taken = count = 0
    while count < len(line) and taken < columns and line[count] in " \t":
        taken += 4 if line[count] == "\t" else 1
        count += 1
    return count


def _hold_tables(lines: list[str], fenced: list[bool]) -> None:
    """Blank lines inside each HTML table as ``_HELD``, in place (see the module's contract)."""
    number = 0
    while number < len(lines):
        if fenced[number] or not _TABLE_OPEN.search(lines[number]):
            number += 1
            continue
        end = _table_end(lines, fenced, number)
        if end is None:
            number += 1
            continue
        for inside in range(number + 1, end):
            if not lines[inside].strip():
                lines[inside] = _HELD
        number = end + 1


def _table_end(lines: list[str], fenced: list[bool], start: int) -> int | None:
    """The line closing the table opened on ``start`` (nested tables counted), or None: none within
    ``TABLE_LINES``, or a heading or a fence comes first."""
    depth = 0
    for number in range(start, min(len(lines), start + TABLE_LINES)):
        line = lines[number]
        if number > start and (fenced[number] or _HEADING.match(line)):
            return None
        depth += len(_TABLE_OPEN.findall(line)) - len(_TABLE_CLOSE.findall(line))
        if depth <= 0:
            return number
    return None
