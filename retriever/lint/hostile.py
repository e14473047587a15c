"""Lint rules for pages written to attack whoever reads the answers (the injection review).

Contract: ``addressed_to_ai(tree)`` yields a problem for each body line (outside code) and each front-matter text
that speaks to an AI (``text.instructions``): answers quote such a line marked as addressed to an AI, and a team
should know it is there.  ``control_characters(tree)`` yields one for each file or folder name, title, alias,
heading or front-matter text holding a control character or a bidirectional override (which can retitle a
terminal or reorder what is shown), and for each name (title, alias, a relation field) holding a line break (a
forged line in every answer that shows it).  ``future_dates(tree, today)`` yields one for each ``created`` or
``updated`` later than tomorrow: answers rank the newest first, so a date in 2099 (or a typo) wins every tie (a
``date`` may be a planned meeting's: not checked).  Messages show the text escaped and cut, never raw.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from retriever.lint.prose import prose_lines
from retriever.lint.tree import File, Problem, Tree
from retriever.memory.provenance import credible
from retriever.text.instructions import addressed_to_ai as _speaks_to_ai
from retriever.text.safe import cut, one_line
from retriever.text.vocabulary import CREATED, NAME_FIELDS, RELATION_FIELDS, TITLE, UPDATED, names

SHOWN_CHARS = 80  # of an offending text in a message
_NAMES = NAME_FIELDS | RELATION_FIELDS | {TITLE}  # fields that name something (aliases among NAME_FIELDS)


def addressed_to_ai(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        for key, value in _texts(file.doc.front_matter):
            if _speaks_to_ai(value):
                yield Problem(file.rel_path, file.key_line(key), _ai_message(f"`{key}`", value))
        for line, text in prose_lines(file):
            if _speaks_to_ai(text):
                yield Problem(file.rel_path, line, _ai_message("this line", text))


def control_characters(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        if not file.rel_path.isprintable():
            message = f"the file's path {_shown(file.rel_path)} holds a control character or a line break; rename it"
            yield Problem(file.rel_path, 1, message)
        yield from _in_front_matter(file)
        for section in file.doc.sections:
            if _hostile(section.title):
                yield Problem(file.rel_path, section.lines[0], f"heading {_shown(section.title)} {_HOLDS}; remove them")


_HOLDS = "holds control characters or bidirectional overrides, which can retitle a terminal or reorder what is shown"


def _in_front_matter(file: File) -> Iterator[Problem]:
    for key, value in _texts(file.doc.front_matter):
        hostile = _hostile(value)
        broken = key in _NAMES and any(ch in value for ch in "\n\r\u2028\u2029")
        if hostile or broken:
            what = "control characters" if hostile else "a line break"
            yield Problem(
                file.rel_path, file.key_line(key), f"`{key}` {_shown(value)} holds {what}: answers show it; remove it"
            )


def _texts(front_matter: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    """Each front-matter text, a list's items one by one."""
    for key, value in front_matter.items():
        for text in names(value, numbers=False, as_written=True) if isinstance(value, list) else [value]:
            if isinstance(text, str):
                yield key, text


def _hostile(text: str) -> bool:
    """Control characters (a page's own tabs and line breaks aside) or bidirectional overrides: what ``one_line``
    escapes."""
    plain = text.replace("\t", " ").replace("\n", " ")
    return one_line(plain) != plain


def _shown(text: str) -> str:
    return f"'{cut(one_line(text), SHOWN_CHARS)}'"  # escaped once: repr would double each escape's backslash


def _ai_message(where: str, text: str) -> str:
    return (
        f"{where} speaks to an AI ({_shown(text)}): answers quote it marked as addressed to an AI; if it is no "
        "attack, word it for people"
    )


def future_dates(tree: Tree, today: dt.date | None = None) -> Iterator[Problem]:
    for file in tree.files:
        for key in (CREATED, UPDATED):
            written = _date_of(file.doc.front_matter.get(key))  # after tomorrow as answers read it: ``credible``
            if written is not None and not credible(written.isoformat(), today):
                message = (
                    f"`{key}` is {written.isoformat()}, after today: answers rank the newest first, so it wins every "
                    "tie; write the date it happened"
                )
                yield Problem(file.rel_path, file.key_line(key), message)


def _date_of(value: Any) -> dt.date | None:
    """The day a date field names (YAML gives a date, or text ``field-type`` checks), None when it names none."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None
