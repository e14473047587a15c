"""The lint rules, and their one registry: id, severity, the function that finds problems, and what it checks.

Each rule is one small generator over the ``Tree`` (``lint.tree``) that yields ``Problem``s whose
messages say how to fix them (the link rules are in ``lint.links``).  To add a rule, write its function here
and add one ``Rule`` to ``RULES``: settings (``disable``), the output formats and ``retriever check`` pick it up
from there.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from retriever.lint import encoding, hostile
from retriever.lint.links import absolute_links, broken_links
from retriever.lint.tree import LOCAL_CONFIG, File, Problem, Tree
from retriever.lint.yaml_keys import Repeat, front_matter_block, repeated_keys
from retriever.memory import supersession
from retriever.pipeline.extract import LONG_SECTION
from retriever.text.vocabulary import (
    DATE_FIELDS,
    NAME_FIELDS,
    READ_KEYS,
    RELATION_FIELDS,
    STATUS,
    STRING_FIELDS,
    link_target,
    listed,
    names,
    resolved_from,
)

Severity = Literal["error", "warning"]
ERROR: Severity = "error"
WARNING: Severity = "warning"

_ALL_TEXT = object()
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_AT_LINE = re.compile(r"\bat line (\d+)")
NEAREST_BUDGET = 200  # dangling relation names given a "did you mean" in one check (each is compared with every name)
_LINES_NAMED = 5  # of a repeated key's lines, the first five are named, then how many more, then the last


@dataclass(frozen=True, slots=True)
class Rule:
    """One lint rule: its id (as settings and findings name it), severity, finder and description."""

    id: str
    severity: Severity
    find: Callable[[Tree], Iterator[Problem]]
    description: str


def _unreadable(tree: Tree) -> Iterator[Problem]:
    for skipped in tree.memory.skipped:
        match = _AT_LINE.search(skipped.reason)
        line = int(match.group(1)) if match else 1
        if match and "TOML" in skipped.reason:
            line += 1  # tomllib counts from the block's first line, which is file line 2
        hint = "; fix the front matter block at the top of the file" if "front matter" in skipped.reason else ""
        what = "reads this file in part" if skipped.rel_path.rsplit("/", 1)[-1] == ".gitignore" else "skips this file"
        message = f"the retriever {what}: {skipped.reason}{hint}"
        yield Problem(skipped.rel_path, line, message)


def _field_types(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        for key, value in file.doc.front_matter.items():
            problem = _type_problem(key, value)
            if problem:
                yield Problem(file.rel_path, file.key_line(key), f"`{key}` {problem}")


def _type_problem(key: str, value: Any) -> str | None:
    if key in STRING_FIELDS and not isinstance(value, str):
        return f"must be text, found {_describe(value)}; write a single value, quoted if needed"
    if key in NAME_FIELDS and not isinstance(value, str):
        if not isinstance(value, list):
            return f"must be a name or a list of names, found {_describe(value)}; write e.g. {key}: [First, Second]"
        wrong = next((v for v in value if not isinstance(v, str)), _ALL_TEXT)
        if wrong is not _ALL_TEXT:
            number = isinstance(wrong, int | float) and not isinstance(wrong, bool)
            fix = f'quote it: "{wrong}"' if number else "write each entry as plain text"
            return f"must be a name or a list of names, found a list holding {_describe(wrong)}; {fix}"
    if key in DATE_FIELDS and not _is_date(value):
        return f"must be a date, found {_describe(value)}; write it as YYYY-MM-DD, e.g. {key}: 2026-03-01"
    return None


def _is_date(value: Any) -> bool:
    if not isinstance(value, str) or not _ISO_DATE.match(value):
        return False
    try:  # a time of day must be one too ("2026-11-30T25:00:00" is none); the retriever reads it so
        dt.date.fromisoformat(value[:10]) if len(value) <= 10 else dt.datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def _describe(value: Any) -> str:
    if value is None:
        return "no value"
    if isinstance(value, bool):
        return f"true/false ({str(value).lower()})"
    if isinstance(value, int | float):
        return f"a number ({value})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a nested mapping"
    return repr(value)


def _unknown_types(tree: Tree) -> Iterator[Problem]:
    known = tree.known_types
    for file in tree.files:
        value = file.doc.front_matter.get("type")
        if isinstance(value, str) and value.strip().lower() not in known:
            close = difflib.get_close_matches(value.strip().lower(), sorted(known), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            yield Problem(
                file.rel_path,
                file.key_line("type"),
                f"type {value!r} is not a known document type; {hint}use one of {', '.join(sorted(known))}, "
                f"or list it under `types` in {LOCAL_CONFIG} [check]",
            )


def _misspelled_keys(tree: Tree) -> Iterator[Problem]:
    """Keys one slip away from a key the retriever reads (``READ_KEYS``), and a ``status`` one slip from
    "superseded": both are read by nothing, and a supersession written so is lost."""
    for file in tree.files:
        for key in file.keys:
            close = _slip_of(key, READ_KEYS)
            if close:
                why = f"`{key}` is no field the retriever reads; did you mean `{close}`? Rename it, or keep it as a "
                yield Problem(file.rel_path, file.key_line(key), why + "field of your own and disable this rule")
        status = file.doc.front_matter.get(STATUS)
        if isinstance(status, str) and _slip_of(status.strip().casefold(), frozenset({"superseded"})):
            message = f"status {status!r} is not 'superseded', the word the retriever reads; did you mean it?"
            yield Problem(file.rel_path, file.key_line(STATUS), message)


def _slip_of(word: str, known: frozenset[str]) -> str | None:
    """The known word ``word`` is one slip away from, else None: close, at most 2 letters longer or shorter, and
    with the same first letter (slips are seldom there; "outdated" is a word of its own, not "updated")."""
    if word in known:
        return None
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.8)
    if not close or abs(len(close[0]) - len(word)) > 2 or close[0][0] != word[:1]:
        return None
    # Another form of the word is a key of its own, not a slip: "tag", "vendors", "updates", "superseded".
    inflected = word.rstrip("s") == close[0].rstrip("s") or word[:-1] == close[0][:-1]
    return None if inflected else close[0]


def _duplicate_keys(tree: Tree) -> Iterator[Problem]:
    """One finding per repeated key, at its second line (``check`` lists a file's first ``LISTED_PER_FILE``)."""
    for file in tree.files:
        block = front_matter_block(file.lines, file.body_start)
        for repeat in repeated_keys(block) if block is not None else []:
            lines = [n + 1 for n in repeat.lines]  # block line N is file line N + 1
            yield Problem(file.rel_path, lines[1], _repeat_message(repeat, lines))


def _repeat_message(repeat: Repeat, lines: list[int]) -> str:
    """The key, how often and where it is set (the first ``_LINES_NAMED`` lines and the last), the value kept."""
    count = "twice" if len(lines) == 2 else f"{len(lines)} times"
    distinct = [str(n) for n in dict.fromkeys(lines)]  # a flow mapping ({k: 1, k: 2}) repeats on one line
    if len(distinct) > _LINES_NAMED + 1:
        distinct = [*distinct[:_LINES_NAMED], f"{len(distinct) - _LINES_NAMED - 1} more", distinct[-1]]
    where = f"line {distinct[0]}" if len(distinct) == 1 else f"lines {', '.join(distinct[:-1])} and {distinct[-1]}"
    others, fix = ("the first", "remove one of them") if len(lines) == 2 else ("the others", "remove all but one")
    return (
        f"`{repeat.path}` is set {count} in the front matter ({where}); the retriever uses only the last "
        f"value ({repeat.last_value}, line {lines[-1]}) and ignores {others}; {fix}"
    )


def _duplicate_names(tree: Tree) -> Iterator[Problem]:
    first_owner: dict[str, str] = {}
    for file in tree.files:
        clashes: dict[str, str] = {}  # other rel_path -> the name shared with it
        for name in (file.doc.title, *file.doc.aliases):
            owner = first_owner.setdefault(name.casefold(), file.rel_path)
            if owner != file.rel_path:
                clashes.setdefault(owner, name)
        if clashes:
            name = next(iter(clashes.values()))
            shared = "; ".join(f"{n!r} is also used by {tree.memory.source_path(p)}" for p, n in clashes.items())
            message = f"{shared}; give each document its own title and aliases so names resolve to one of them"
            yield Problem(file.rel_path, _name_line(file, name), message)


def _name_line(file: File, name: str) -> int:
    """Where a document's title or alias is written: its front-matter key, else its first H1."""
    if name != file.doc.title:
        return file.value_line("aliases", name)
    if "title" in file.keys:
        return file.key_line("title")
    return next((s.lines[0] for s in file.doc.sections if s.level == 1), 1)


_FENCES = ("---", "+++")
_KEY_LINE = re.compile(r"[A-Za-z_][\w-]*\s*[:=]")


def _misplaced_front_matter(tree: Tree) -> Iterator[Problem]:
    """Front matter the retriever does not read: opened on line 1 but never closed, or written after line 1
    (a blank line above it): its keys become body text, and its closing fence a heading of them."""
    for file in tree.files:
        if file.body_start or not file.lines:
            continue
        first = file.lines[0].rstrip()
        if first in _FENCES:
            yield Problem(file.rel_path, 1, f"front matter opened on line 1 is never closed; end it with {first}")
            continue
        start = next((n for n, line in enumerate(file.lines) if line.strip()), len(file.lines))
        late = start + 1 < len(file.lines) and file.lines[start].rstrip() in _FENCES
        if late and _KEY_LINE.match(file.lines[start + 1]):
            yield Problem(file.rel_path, start + 1, "front matter must start on line 1; remove the lines above it")


def _empty_files(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        if not "".join(file.body).strip():
            why = "the file has no body besides front matter (only its summary and prose fields answer)"
            yield Problem(file.rel_path, 1, f"{why}; write it or delete it")


def _empty_sections(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        sections = file.doc.sections
        for index, section in enumerate(sections):
            following = sections[index + 1] if index + 1 < len(sections) else None
            # A front-matter summary opens the top section's statements (``text.field_statements``) but is not
            # written under its heading.
            if section.heading is None or section.text.strip() or any(u.kind != "field" for u in section.units):
                continue
            if following is None or following.level <= section.level:
                message = f"heading {section.title!r} has nothing under it; write the section or remove the heading"
                yield Problem(file.rel_path, section.lines[0], message)


def _long_sections(tree: Tree) -> Iterator[Problem]:
    for file in tree.files:
        for section in file.doc.sections:
            if len(section.units) > LONG_SECTION:
                message = (
                    f"{section.title!r} holds {len(section.units):,} statements: a question reads only its first "
                    f"and the {LONG_SECTION - 1} holding most of its words; split it under headings"
                )
                yield Problem(file.rel_path, section.lines[0], message)


def _unknown_relations(tree: Tree) -> Iterator[Problem]:
    nearest = _nearest_name(tree)
    for file in tree.files:
        for key, value in file.doc.front_matter.items():
            if key not in RELATION_FIELDS:
                continue
            # A path from the file, as links are written, names one too; a wiki link ("[[Ana Costa]]") its target.
            for name in names(value, numbers=False, as_written=True):
                if resolved_from(file.rel_path, link_target(name), tree.resolve) is None:
                    yield Problem(file.rel_path, file.value_line(key, name), _unknown_relation(key, name, nearest))


def _unknown_relation(key: str, name: str, nearest: Callable[[str], str | None]) -> str:
    """What to say of a relation name that matches no document: a list written as one text, a near miss, or none."""
    parts = listed(name)
    if len(parts) > 1:  # "attendees: A, B, C" is one name to YAML: it had become one made-up entity
        shown = ", ".join(parts[:4]) + (", …" if len(parts) > 4 else "")
        return f"`{key}` is one text holding commas, {name!r}; write it as a list, [{shown}], so each is a name"
    near = nearest(link_target(name))
    hint = f"did you mean {near!r}? " if near else ""
    return (
        f"`{key}` names {name!r}, which matches no document title, alias or path; {hint}fix the name, "
        "add it to the aliases of the document it means, or write that document"
    )


def _nearest_name(tree: Tree, budget: int = NEAREST_BUDGET) -> Callable[[str], str | None]:
    """The closest document title or alias to a name (``difflib``, as ``unknown-type`` does), for the first
    ``budget`` names asked of: a tree with thousands of dangling names is not compared name by name."""
    known = {n.casefold(): n for info in tree.memory.state.catalog.values() for n in (info.title, *info.aliases)}
    by_letter: dict[str, list[str]] = {}
    for key in sorted(known):  # compared only with names of the same first letter: 10,000 titles had cost seconds
        by_letter.setdefault(key[:1], []).append(key)
    asked = [0]

    def nearest(name: str) -> str | None:
        asked[0] += 1
        wanted = name.strip().casefold()
        if asked[0] > budget or not wanted:
            return None
        close = difflib.get_close_matches(wanted, by_letter.get(wanted[:1], []), n=1, cutoff=0.75)
        return known[close[0]] if close else None

    return nearest


def _supersession_cycles(tree: Tree) -> Iterator[Problem]:
    """Each ``supersedes``/``superseded_by`` link that a chain of such links leads back from: the retriever leaves
    a cycle's links out (``supersession.acyclic``), as they cannot say which record is newer.  Also each name that
    resolves to its own record, which the retriever passes over (often a title two documents share).  Names are read
    as the retriever reads them: numbers in a list too (``field-type`` reports those), the first ``MAX_NAMES``.
    Each distinct name is resolved once, for both."""
    resolve = supersession.resolving_once(tree.resolve)
    written = [  # ((superseded, successor), the file naming it, its key, the name written)
        (pair, file, key, name)
        for file in tree.files
        for pair, key, name in supersession.links(file.rel_path, file.doc.front_matter, resolve)
    ]
    kept = set(supersession.acyclic(sorted({pair for pair, *_ in written})))
    for pair, file, key, name in written:
        if pair not in kept:
            message = (
                f"`{key}` names {name!r}, and a chain of supersedes/superseded_by links leads back here: a cycle says "
                "nothing about which record is newer, so the retriever leaves these links out and ranks none of these "
                "records as superseded by them; fix the link that points the wrong way"
            )
            yield Problem(file.rel_path, file.value_line(key, name), message)
    yield from _names_of_themselves(tree, resolve)


def _names_of_themselves(tree: Tree, resolve: Callable[[str], str | None]) -> Iterator[Problem]:
    """Each supersession name that resolves to the record writing it."""
    for file in tree.files:
        for key, name in supersession.written(file.doc.front_matter):
            if resolve(name) == file.rel_path:
                message = (
                    f"`{key}` names {name!r}, which is this record itself (a title or alias another document shares?): "
                    "the retriever passes the name over; name the other record by its path"
                )
                yield Problem(file.rel_path, file.value_line(key, name), message)


RULES: Mapping[str, Rule] = {
    rule.id: rule
    for rule in (
        Rule(
            "unreadable",
            ERROR,
            _unreadable,
            "bad YAML, not UTF-8, binary, too large, a symlink leading outside, an unresolved merge conflict, or a "
            ".gitignore line git cannot read",
        ),
        Rule("field-type", ERROR, _field_types, "a known front-matter field has the wrong type"),
        Rule("unknown-type", WARNING, _unknown_types, "a `type` that is not a known document type"),
        Rule("broken-link", ERROR, broken_links, "a relative link or a [[wiki link]] that leads nowhere"),
        Rule("absolute-link", WARNING, absolute_links, "a site-absolute link (/path), which the retriever ignores"),
        Rule("duplicate-key", WARNING, _duplicate_keys, "a front-matter key set twice in a mapping: the last wins"),
        Rule("misspelled-key", WARNING, _misspelled_keys, "a key or status one slip from one the retriever reads"),
        Rule("front-matter", WARNING, _misplaced_front_matter, "front matter never closed, or not on line 1"),
        Rule("duplicate-name", WARNING, _duplicate_names, "a title or alias used by two documents"),
        Rule("empty-file", WARNING, _empty_files, "a file with nothing besides front matter"),
        Rule("empty-section", WARNING, _empty_sections, "a heading with nothing under it"),
        Rule("long-section", WARNING, _long_sections, f"a section of over {LONG_SECTION} statements, read in part"),
        Rule("unknown-relation", WARNING, _unknown_relations, "a relation field naming a document that does not exist"),
        Rule(
            "supersession-cycle",
            WARNING,
            _supersession_cycles,
            "supersedes/superseded_by links that lead back to where they start, or name their own record",
        ),
        Rule("addressed-to-ai", WARNING, hostile.addressed_to_ai, "text that speaks to an AI or of its instructions"),
        Rule("future-date", WARNING, hostile.future_dates, "a created or updated date later than tomorrow"),
        Rule("mojibake", WARNING, encoding.mojibake, "UTF-8 text read as Windows-1252 and saved again (donâ€™t)"),
        Rule(
            "control-characters",
            ERROR,
            hostile.control_characters,
            "control characters or direction overrides in a name, title, heading or field; a name holding a line break",
        ),
    )
}
