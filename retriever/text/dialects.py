"""Markdown as site generators extend it, read as plain markdown before parsing, every line kept where it was.

Contract: ``readable(rel_path, body)`` is ``body`` with
- an MDX page's MDX-only syntax blanked (``mdx.blank``), and
- the indented bodies of MkDocs Material's admonitions and content tabs (a line starting ``!!! note``,
  ``??? info "Title"``, ``???+ tip`` or ``=== "Tab"``, then lines indented by four spaces or a tab, blank lines
  among them) moved four spaces left, outside fenced code: markdown had read each body as an indented code block,
  so its sentences were never statements and the summary quoted the marker lines alone.
Lines are neither added nor removed. Linear: each line is looked at once.
"""

from __future__ import annotations

import re

from retriever.text import mdx

_MARKER = re.compile(r"(?:!!!|\?\?\?\+?|===\+?)[ \t]+\S")  # at the first column; "===" alone underlines a heading


def readable(rel_path: str, body: str) -> str:
    """``body`` as plain markdown (see the module's contract)."""
    body = mdx.blank(body) if mdx.is_mdx(rel_path) else body
    if "!!!" not in body and "???" not in body and "===" not in body:
        return body
    return _dedented(body)


def _dedented(body: str) -> str:
    lines = body.split("\n")
    fenced = mdx.fenced_lines(lines)
    inside = False  # in an admonition's or a tab's body
    for number, line in enumerate(lines):
        if fenced[number]:  # a fence at the first column: never a body (an indented one is part of the body)
            inside = False
        elif _MARKER.match(line):
            inside = True
        elif inside and line.strip():
            if line.startswith("    ") or line.startswith("\t"):
                lines[number] = line[4:] if line[0] == " " else line[1:]
            else:
                inside = False
    return "\n".join(lines)
