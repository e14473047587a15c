"""Front-matter prose as statements: what the author wrote about a document, citable as a fact.

A decision record's ``reason:`` ("Flink passed the 250,000 events/s load test…") answers "Why did we choose
Flink?" better than any sentence of its body, and a page's ``summary:`` is its author's one-line answer to
"What is Pulse Collect?".  The index reads every front-matter value (the ``meta`` field), but facts come
from statements, so these were found and never said.

Contract: ``statements(meta, text, offset)`` gives one ``Unit`` (kind "field", which no speaker's turn opens or
continues: ``pipeline.speakers``) per field of ``vocabulary.PROSE_FIELDS`` (its key in any case) whose value is
text of at least ``MIN_WORDS`` words, in the file's order: the summary as written, any other field labelled with
its name ("Reason: …", ``label``), each citing the front-matter lines its key and value take (1-based file lines,
blank and comment lines after it left out; the block's first line is the file's second).  A value is cleaned of
markup, then cut at ``MAX_CHARS`` with a marker (the front matter is bounded already:
``front_matter.MAX_FRONT_MATTER``).  ``opening(sections, units, title)`` puts them first in the document's first
section (a document of front matter alone gets them as its preamble);
``key_of(text)`` reads the field back.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from retriever.text.markup import clean_inline, truncate
from retriever.text.models import Lines, Section, Unit
from retriever.text.vocabulary import PROSE_FIELDS, SUMMARY

MIN_WORDS = 4  # "reason: cost" labels; it says nothing a reader could cite
MAX_CHARS = 1_000  # of one value: a statement, not a page
# A top-level key of a YAML or TOML block, bare or quoted ("summary:", '"summary":', "summary ="): at the line's start.
_KEY = re.compile(r"""^(?:"([^"\n]{1,64})"|'([^'\n]{1,64})'|([A-Za-z_][\w-]{0,63}))\s*[:=]""")
# A TOML table header, a whole line at column 0 ("[extra]", "[[links]]"): the keys after it are the table's.  Only in a
# TOML block: a YAML value's line may start with "[" (a flow list, a Markdown link in a folded text).
_TABLE = re.compile(r"^\[\[?[^\]\n]+\]\]?\s*(?:#.*)?$")
# Any other top-level key ("Кінцевий термін:", "a key with spaces:", a key of 65 characters): not read, but it ends
# the key before it.  In YAML, not a line opening with a bracket, a brace, a dash, a quote or a comment mark (a flow
# value's line, a list item, a quoted key ``_KEY`` reads, a comment); in TOML, a dotted or quoted key ("a.b = 1").
_OTHER_KEY = {False: re.compile(r"""^[^\s#\[\]{}'"-][^\n]*?:(?:\s|$)"""), True: re.compile(r"""^[^\s#\[][^\n]*?=""")}
_LABELS = {"tldr": "TL;DR"}  # how a field whose name is an abbreviation is said


def statements(meta: Mapping[str, Any], text: str, offset: int) -> tuple[Unit, ...]:
    """The prose fields of ``meta`` as statements; ``text`` is the file's text and ``offset`` the lines its
    front matter block takes (``front_matter.split_front_matter``)."""
    spans = _key_lines(text, offset)
    values = {str(key).casefold(): (key, value) for key, value in meta.items()}
    out: list[Unit] = []
    for name in PROSE_FIELDS:
        key, value = values.get(name, (None, None))
        if not isinstance(value, str) or key not in spans:
            continue
        prose, _ = truncate(" ".join(clean_inline(value).split()), MAX_CHARS, marker=" …")
        if len(prose.split()) < MIN_WORDS:
            continue
        out.append(Unit("field", prose if name == SUMMARY else f"{label(name)}: {prose}", spans[key]))
    return tuple(sorted(out, key=lambda unit: unit.lines))


def label(key: str) -> str:
    """How a field other than the summary is named in its statement: "reason" → "Reason", "tldr" → "TL;DR"."""
    return _LABELS.get(key, key.replace("_", " ").capitalize())


def key_of(statement: str) -> str:
    """The field a ``statements`` text was said from: the one whose label opens it, else the summary."""
    return next((key for key in PROSE_FIELDS if key != SUMMARY and statement.startswith(f"{label(key)}: ")), SUMMARY)


def opening(sections: list[Section], units: tuple[Unit, ...], title: str) -> list[Section]:
    """The front matter's prose statements open the document's first section: its preamble, the level-1 heading
    that opens it ("# INC-2026-031 Postmortem — 2026-11-17" under the title "INC-2026-031 Postmortem"), or, where
    the body starts at a lower heading (a static site's page keeps its title in the front matter and starts at
    "## Overview"), that heading's section, which is where a reader starts.  Not a section of their own: one
    with no text but its title had been read first for every question naming the document.  A document of front
    matter alone (a person's stub: role and summary) gets them as its preamble, ``title`` its title: with no section
    it had answered nothing."""
    if not units:
        return sections
    if not sections:
        lines = (units[0].lines[0], units[-1].lines[-1])
        text = "\n".join(u.text for u in units)
        return [Section(0, heading=None, title=title, level=0, heading_path=(), lines=lines, text=text, units=units)]
    return [dataclasses.replace(sections[0], units=units + sections[0].units), *sections[1:]]


def _key_starts(lines: list[str], toml: bool) -> list[tuple[int, str | None]]:
    """(line, key) of each top-level key of a front matter block's ``lines`` (fences included); None for a key not
    read (``_OTHER_KEY``) or a TOML table header, after which no key is read.  A TOML multi-line string's lines
    are its text, whatever they look like."""
    starts: list[tuple[int, str | None]] = []
    quoted = False
    for n, line in enumerate(lines[1:-1], 2):
        marks = line.count('"""') + line.count("'''") if toml else 0
        if quoted:
            quoted = marks % 2 == 0
            continue
        quoted = marks % 2 == 1
        if toml and _TABLE.match(line):
            starts.append((n, None))
            break
        if found := _KEY.match(line):
            starts.append((n, next(g for g in found.groups() if g is not None)))
        elif _OTHER_KEY[toml].match(line):
            starts.append((n, None))
    return starts


def _key_lines(text: str, offset: int) -> dict[str, Lines]:
    """Each top-level key of the front matter block, as written → the file lines from its own to its value's last
    (up to the next key, TOML table header or closing fence, with blank and comment lines at its end left out)."""
    lines = text.split("\n", offset)[:offset]
    starts = _key_starts(lines, toml=bool(lines) and lines[0].strip() == "+++")
    if not starts:  # no front matter, or none of its lines opens a key
        return {}
    ends = [n - 1 for n, _ in starts[1:]] + [len(lines) - 1]
    out: dict[str, Lines] = {}
    for (start, key), end in zip(starts, ends, strict=True):
        # A comment at column 0 (a block scalar's own lines are indented, and a "#" there is its text).
        while end > start and (not lines[end - 1].strip() or lines[end - 1].startswith("#")):
            end -= 1
        if key is not None:
            out[key] = (start, end)
    return out
