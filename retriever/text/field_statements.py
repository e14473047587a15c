"""Front-matter prose as statements: what the author wrote about a document, citable as a fact.

A decision record's ``reason:`` ("Flink passed the 250,000 events/s load test…") answers "Why did we choose
Flink?" better than any sentence of its body, and a page's ``summary:`` is its author's one-line answer to
"What is Project Riverbed?".  The index reads every front-matter value (the ``meta`` field), but facts come
from statements, so these were found and never said.

Contract: ``statements(meta, text, offset)`` gives one ``Unit`` (kind "field") per field of
``vocabulary.PROSE_FIELDS`` whose value is text of at least ``MIN_WORDS`` words, in the file's order: the
summary as written, any other field labelled with its name ("Reason: …"; kind "field", which no speaker's turn
opens or continues: ``pipeline.speakers``), each citing the front-matter lines
its key and value take (1-based file lines; the block's first line is the file's second).  A value is cut at
``MAX_CHARS`` (the front matter is bounded already: ``front_matter.MAX_FRONT_MATTER``).  ``opening(sections,
units, title)`` puts them first in the document's top section.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from retriever.text.markup import clean_inline
from retriever.text.models import Lines, Section, Unit
from retriever.text.vocabulary import PROSE_FIELDS, SUMMARY

MIN_WORDS = 4  # "reason: cost" labels; it says nothing a reader could cite
MAX_CHARS = 1_000  # of one value: a statement, not a page
_KEY = re.compile(r"^([A-Za-z_][\w-]*)\s*[:=]")  # a top-level key of a YAML or TOML block


def statements(meta: Mapping[str, Any], text: str, offset: int) -> tuple[Unit, ...]:
    """The prose fields of ``meta`` as statements; ``text`` is the file's text and ``offset`` the lines its
    front matter block takes (``front_matter.split_front_matter``)."""
    spans = _key_lines(text, offset)
    out: list[Unit] = []
    for key in PROSE_FIELDS:
        value = meta.get(key)
        if not isinstance(value, str) or key not in spans:
            continue
        prose = " ".join(clean_inline(value[:MAX_CHARS]).split())
        if len(prose.split()) < MIN_WORDS:
            continue
        said = prose if key == SUMMARY else f"{label(key)}: {prose}"
        out.append(Unit("field", said, spans[key]))
    return tuple(sorted(out, key=lambda unit: unit.lines))


def label(key: str) -> str:
    """How a field other than the summary is named in its statement: "reason" → "Reason"."""
    return key.replace("_", " ").capitalize()


def opening(sections: list[Section], units: tuple[Unit, ...], title: str) -> list[Section]:
    """The front matter's prose statements open the document's top section (its preamble, or the level-1 heading
    that opens it: "# INC-2026-031 Postmortem — 2026-11-17" under the title "INC-2026-031 Postmortem"); where the
    body starts below a lower heading, they are a preamble of their own."""
    if not units:
        return sections
    if sections and (not sections[0].heading_path or sections[0].level == 1):
        return [dataclasses.replace(sections[0], units=units + sections[0].units), *sections[1:]]
    lines = (units[0].lines[0], max(u.lines[1] for u in units))
    own = Section(0, None, title, 0, (), lines, "", units)
    return [own, *(dataclasses.replace(s, ordinal=s.ordinal + 1) for s in sections)]


def _key_lines(text: str, offset: int) -> dict[str, Lines]:
    """Each top-level key of the front matter block → the file lines from its own to its value's last (the line
    before the next key, or the closing fence)."""
    lines = text.split("\n", offset)[:offset]
    starts = [(n, m.group(1)) for n, line in enumerate(lines, 1) if n > 1 and (m := _KEY.match(line))]
    if not starts:  # no front matter, or none of its lines opens a key
        return {}
    ends = [n - 1 for n, _ in starts[1:]] + [offset - 1]
    return {key: (start, max(start, end)) for (start, key), end in zip(starts, ends, strict=True)}
