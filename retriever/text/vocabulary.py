"""The front-matter vocabulary, written down once: field names, relation fields, document types.

Every module that reads front matter takes its words from here: the index (which fields are
site machinery), assemble (relations and entity properties), provenance (dates, supersession)
and the linter (field types, known types, relation names).  Keys are compared as written in
the file; ``type`` values are compared lower-cased.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

from retriever.text.markup import MARKDOWN_SUFFIXES, WIKI_LINK_PARTS

TITLE, TYPE, ALIASES, SUMMARY, TAGS, OWNER = "title", "type", "aliases", "summary", "tags", "owner"
CREATED, UPDATED, DATE = "created", "updated", "date"
STATUS, SUPERSEDED_BY, SUPERSEDES = "status", "superseded_by", "supersedes"
# The words teams write for the two supersession keys, read as them ("replaces: DEC-0008" is "supersedes: DEC-0008"):
# written so, a replaced decision had kept leading, unmarked, and the linter had said nothing.
SUPERSESSION_KEYS = {
    SUPERSEDED_BY: SUPERSEDED_BY,
    "replaced_by": SUPERSEDED_BY,
    "obsoleted_by": SUPERSEDED_BY,
    SUPERSEDES: SUPERSEDES,
    "replaces": SUPERSEDES,
    "obsoletes": SUPERSEDES,
}
SUPERSEDED_STATUSES = frozenset({"superseded", "replaced", "obsolete"})  # a ``status`` saying the record is replaced

# Fields that hold one text value.
STRING_FIELDS = frozenset({TITLE, SUMMARY, TYPE, OWNER})

# Fields that hold the author's prose about the document, in the order they are cited: each becomes a statement
# of the document's top section (``text.field_statements``), a summary as written, the others labelled ("Reason: …").
PROSE_FIELDS = (SUMMARY, "description", "reason", "rationale", "outcome", "purpose", "tldr", "abstract")
REASON_FIELDS = ("reason", "rationale")  # of those, the ones that answer "why…?" (``pipeline.forms``)

# Fields that name other documents (by title, alias or path) even when the name does not resolve.
RELATION_FIELDS = frozenset(
    "owner owners team teams reports_to members member lead leads projects project client clients "
    "account_owner decided_by attendees related parent depends_on partner "
    "partners vendor customer customers manager sponsor stakeholders".split()
) | frozenset(SUPERSESSION_KEYS)

# Front-matter keys that never name a related thing, even where a value is some document's name (a tag
# "revenue" is the Revenue Team's alias; a type "strategy" the Strategy Index's).
NOT_RELATIONS = frozenset({TITLE, TYPE, ALIASES, SUMMARY, TAGS, STATUS, CREATED, UPDATED, DATE}) | frozenset(
    "layout permalink redirect_from redirect_to weight slug url draft toc sidebar menu nav_order".split()
)

# Relation fields that name documents rather than people or organizations: a name there that no document holds
# is not a party to anything.
DOCUMENT_RELATIONS = frozenset("related parent depends_on project projects".split()) | frozenset(SUPERSESSION_KEYS)

# Document types of people and organizations: seed 000's ``entities`` are "people and organizations tied to the
# query" (a tree may type its clients or vendors by what they are to the company).
PARTY_TYPES = frozenset("person team organization company client customer partner vendor department group".split())

# Fields that hold a name or a list of names (a relation field that takes one text value excepted).
NAME_FIELDS = frozenset({ALIASES, TAGS}) | (RELATION_FIELDS - STRING_FIELDS)

# Fields that hold an ISO date; provenance reads them when git cannot say.
DATE_FIELDS = frozenset({CREATED, UPDATED, DATE})
CREATED_FROM = (CREATED, DATE)  # first present wins: when a document was written
VALID_FROM = (UPDATED, DATE, CREATED)  # when it was last true

# Every top-level key the retriever reads, for the linter's "did you mean" (a key one slip away from one of these,
# "titel" or "superseeded_by", is read by nothing); other keys are a tree's own and pass.
READ_KEYS = (
    STRING_FIELDS
    | NAME_FIELDS
    | DATE_FIELDS
    | frozenset(PROSE_FIELDS)
    | NOT_RELATIONS
    | frozenset({STATUS, *SUPERSESSION_KEYS, "agent", "agent_id", "business", "confirmed"})
)

# Document types the linter knows; a tree adds its own under ``types`` in its check settings.
DOCUMENT_TYPES = frozenset(
    "person team organization project decision process policy meeting glossary topic product financial "
    "strategy document agent episode business_profile decision_ledger".split()
)

# Keys that hold site machinery (static-site generators), not knowledge: never indexed as text.
SITE_FIELDS = frozenset(
    "title aliases type layout permalink redirect_from redirect_to weight slug url draft toc sidebar "
    "menu nav_order parent_layout template css js bookcollapsesection bookhidden booksearchexclude".split()
)

# Keys an entity does not list among its properties (its label, type and aliases are said apart).
NOT_PROPERTIES = frozenset({TITLE, TYPE, ALIASES, "redirect_from", "layout", "permalink", "weight"})


def link_target(name: str) -> str:
    """The name a relation value gives: the target of a value that is one wiki link ("[[Ana Costa|Ana]]" is
    "Ana Costa", "[[People/Ana Costa#Contact]]" is "People/Ana Costa"), else the value, stripped.  A link with no
    target ("[[#Contact]]") stays as written: it names no document."""
    name = name.strip()
    match = WIKI_LINK_PARTS.fullmatch(name) if name.startswith("[[") else None  # a whole value, as Obsidian writes
    return (match.group(1).strip() or name) if match else name


def names(value: Any, *, numbers: bool = True, as_written: bool = False) -> list[str]:
    """A relation field's names: the string, or each string (and, with ``numbers``, integer) in a list; a name
    written as a wiki link is its target (``link_target``), unless ``as_written``.

    The linter passes ``numbers=False``: a number in a list is already a ``field-type`` finding.
    """
    if isinstance(value, str):
        found = [value.strip()] if value.strip() else []
    elif isinstance(value, list):
        kinds = (str, int) if numbers else (str,)
        found = [str(v).strip() for v in value if isinstance(v, kinds) and str(v).strip()]
    else:
        return []
    return found if as_written else [link_target(name) for name in found]


def from_file(rel_path: str, name: str) -> str | None:
    """A relation value written as a path from its own file ("../decisions/dec_0003.md", as links are written), as a
    path from the root; None for a value that is no such path or leads outside the root."""
    if "/" not in name and not name.endswith(MARKDOWN_SUFFIXES):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), name.strip()))
    return None if joined.startswith("../") or joined in ("..", ".") else joined


def resolved_from(rel_path: str, name: str, resolve: Callable[[str], str | None]) -> str | None:
    """The document ``name`` refers to, read from ``rel_path``'s place: ``resolve(name)``, else the document at the
    path from the file that ``name`` is (``from_file``)."""
    relative = from_file(rel_path, name)
    return resolve(name) or (resolve(relative) if relative else None)


# What follows a company's name after a comma ("Acme, Inc."): such a text is one name, not a list.
_LEGAL_FORMS = frozenset(
    "inc incorporated ltd limited llc llp plc corp corporation co company gmbh ag sa s.a sas sarl bv nv oy ab as "
    "spa s.p.a srl sl kg lp pte pty".split()
)


def listed(name: str) -> list[str]:
    """The names of a relation value written as one text with commas or semicolons ("Priya Shah, Tom Becker"):
    each part, stripped, a wiki link read as its target (``link_target``); one name gives itself (or its target).
    Read only where the whole text names no document, since a title may hold a comma ("Smith, Jones & Co")."""
    name = link_target(name)  # "[[Acme, Inc.]]" is one link
    parts = [p for p in (p.strip() for p in name.replace(";", ",").split(",")) if p]
    if len(parts) < 2 or any(p.casefold().rstrip(".") in _LEGAL_FORMS for p in parts):
        return [name]  # "Acme, Inc." is one company
    return [link_target(p) for p in parts]  # "[[Ana Costa]], [[Laura Chen]]" names Ana Costa and Laura Chen


def superseded(front_matter: Any) -> bool:
    """The document says it was superseded: a ``superseded_by`` name (or a word for it: ``SUPERSESSION_KEYS``), or
    a ``status`` of ``SUPERSEDED_STATUSES``."""
    named = any(front_matter.get(k) for k, key in SUPERSESSION_KEYS.items() if key == SUPERSEDED_BY)
    return named or status_superseded(front_matter)


def status_superseded(front_matter: Any) -> bool:
    """The document's ``status`` says it was superseded (or replaced, or is obsolete), whatever its links say."""
    return str(front_matter.get(STATUS, "")).strip().casefold() in SUPERSEDED_STATUSES


def first_date(front_matter: Any, keys: tuple[str, ...]) -> str | None:
    """The first value among ``keys`` that is a date, as text: a YAML or TOML date or datetime, or text in ISO 8601
    form ("2026-03-01", "2026-03-01T09:30:00Z"); None when none is.  "today", a number, a list or "10000-01-01" is
    no date: shown as a fact's ``created_at`` it misinforms, and as text it sorted above every real date."""
    for key in keys:
        value = front_matter.get(key)
        if isinstance(value, date):  # a datetime is a date too
            return str(value)
        if isinstance(value, str) and (written := _iso(value.strip())) is not None:
            return written
    return None


def _iso(text: str) -> str | None:
    """ISO 8601 text written as YAML writes its dates ("2026-03-01", "2026-03-01 09:30:00+00:00"), so that dates
    compare as text: "20260301" and "2026-W09-1" are dates too, and as typed sorted above every "2026-…"."""
    try:
        return date.fromisoformat(text).isoformat() if len(text) <= 10 else str(datetime.fromisoformat(text))
    except ValueError:
        return None
