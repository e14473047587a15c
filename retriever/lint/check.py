"""``retriever check``: a linter for memory trees, for pre-commit hooks and CI.

Contract:
- Settings come from ``check_config.load_config(root)``; the output formats are in ``check_report``.
- ``check(memory, config)`` returns ``Finding``s sorted by file, line and rule.  ``file`` is the
  source path as the retriever shows it (root folder name first), ``line`` a 1-based file line,
  front matter included (1 for whole-file problems), and the message says how to fix it.
Memory files are read through ``reader`` only; each rule is one small generator.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

from markdown_it import MarkdownIt

from retriever.lint.config import LOCAL_CONFIG, RULES, CheckConfig
from retriever.memory.memory import Memory
from retriever.text import reader
from retriever.text.markup import LINK_TARGET
from retriever.text.models import Document
from retriever.text.parser import ParseError, split_front_matter
from retriever.text.vocabulary import DATE_FIELDS, NAME_FIELDS, RELATION_FIELDS, STRING_FIELDS, names

_ALL_TEXT = object()

_FM_KEY = re.compile(r"^([A-Za-z_][\w.-]*)\s*[:=]")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_AT_LINE = re.compile(r"\bat line (\d+)")
_INLINE_CODE = re.compile(r"(`+).+?\1")
_LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_WIKI_LINK = re.compile(r"\[\[([^\[\]|#\n]*)(?:#[^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_MARKDOWN = (".md", ".markdown")
_CODE_TOKENS = frozenset({"fence", "code_block"})
_MD = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"], ignoreInvalid=True)


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One problem in one file; ordering is by file, line, then rule."""

    file: str
    line: int
    rule: str
    severity: str
    message: str

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# -- the tree as the rules see it -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _File:
    """A readable document with its file lines (line N is ``lines[N - 1]``)."""

    rel_path: str
    doc: Document
    lines: list[str]
    body_start: int  # lines taken by front matter: body line i is file line body_start + i + 1
    keys: dict[str, tuple[int, int]]  # front-matter key -> (first, last) file line of its value

    def key_line(self, key: str) -> int:
        return self.keys.get(key, (1, 1))[0]

    def value_line(self, key: str, value: str) -> int:
        """The line that holds ``value`` of ``key`` (a block list item), else the key's line."""
        first, last = self.keys.get(key, (1, 1))
        return next((n for n in range(first, last + 1) if value in self.lines[n - 1]), first)

    @property
    def body(self) -> list[str]:
        return self.lines[self.body_start :]


@dataclass(slots=True)
class _Tree:
    memory: Memory
    config: CheckConfig
    files: list[_File] = field(default_factory=list)
    paths: frozenset[str] = frozenset()  # every markdown file in the tree, readable or not

    def finding(self, rel_path: str, line: int, rule: str, message: str) -> Finding:
        return Finding(self.memory.source_path(rel_path), line, rule, RULES[rule], message)

    def resolve(self, name: str) -> str | None:
        """The document a name refers to, exactly as the retriever resolves relation values."""
        return self.memory.resolve(name)


def _load(memory: Memory, config: CheckConfig) -> _Tree:
    tree = _Tree(memory, config)
    for rel_path in sorted(memory.state.catalog):
        loaded = _read(memory, rel_path)
        if loaded is not None:
            tree.files.append(loaded)
    tree.paths = frozenset([*memory.state.catalog, *(s.rel_path for s in memory.skipped)])
    return tree


def _read(memory: Memory, rel_path: str) -> _File | None:
    """The document and its lines; None if it changed into something unreadable meanwhile."""
    try:
        doc = memory.document(rel_path)
        text, _ = reader.read_text(memory.root, rel_path, memory.settings.max_file_bytes)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        _, _, front_lines = split_front_matter(text)
    except (KeyError, reader.Unreadable, ParseError):
        return None
    lines = text.split("\n")
    return _File(rel_path, doc, lines, front_lines, _front_matter_keys(lines, front_lines))


def _front_matter_keys(lines: list[str], front_lines: int) -> dict[str, tuple[int, int]]:
    """Top-level front-matter keys and the file lines their values span (fences excluded)."""
    keys: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for number in range(2, front_lines):  # line 1 and line ``front_lines`` are the fences
        match = _FM_KEY.match(lines[number - 1])
        if match:
            current = match.group(1)
            keys.setdefault(current, (number, number))
        elif current is not None:
            keys[current] = (keys[current][0], number)
    return keys


# -- rules ------------------------------------------------------------------------------------------


def _unreadable(tree: _Tree) -> Iterator[Finding]:
    for skipped in tree.memory.skipped:
        match = _AT_LINE.search(skipped.reason)
        line = int(match.group(1)) if match else 1
        if match and "TOML" in skipped.reason:
            line += 1  # tomllib counts from the block's first line, which is file line 2
        hint = "; fix the front matter block at the top of the file" if "front matter" in skipped.reason else ""
        message = f"the retriever skips this file: {skipped.reason}{hint}"
        yield tree.finding(skipped.rel_path, line, "unreadable", message)


def _field_types(tree: _Tree) -> Iterator[Finding]:
    for file in tree.files:
        for key, value in file.doc.front_matter.items():
            problem = _type_problem(key, value)
            if problem:
                yield tree.finding(file.rel_path, file.key_line(key), "field-type", f"`{key}` {problem}")


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
    try:
        dt.date.fromisoformat(value[:10])
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


def _unknown_types(tree: _Tree) -> Iterator[Finding]:
    known = tree.config.known_types
    for file in tree.files:
        value = file.doc.front_matter.get("type")
        if isinstance(value, str) and value.strip().lower() not in known:
            close = difflib.get_close_matches(value.strip().lower(), sorted(known), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            yield tree.finding(
                file.rel_path,
                file.key_line("type"),
                "unknown-type",
                f"type {value!r} is not a known document type; {hint}use one of {', '.join(sorted(known))}, "
                f"or list it under `types` in {LOCAL_CONFIG} [check]",
            )


def _broken_links(tree: _Tree) -> Iterator[Finding]:
    for file in tree.files:
        for line, text in _prose_lines(file):
            targets = [*LINK_TARGET.findall(text), *_LINK_DEFINITION.findall(text)]
            for target in targets:
                problem = _link_problem(tree, file.rel_path, target)
                if problem:
                    yield tree.finding(file.rel_path, line, "broken-link", problem)
            for name in _WIKI_LINK.findall(text):
                if name.strip() and tree.resolve(name) is None:
                    message = (
                        f"[[{name.strip()}]] matches no document title, alias or file name; "
                        "fix the name, or add it to the aliases of the document it means"
                    )
                    yield tree.finding(file.rel_path, line, "broken-link", message)


def _prose_lines(file: _File) -> Iterator[tuple[int, str]]:
    """(file line, text without inline code) for each body line outside code blocks."""
    body = file.body
    code: set[int] = set()
    for token in _MD.parse("\n".join(body)):
        if token.type in _CODE_TOKENS and token.map:
            code.update(range(token.map[0], token.map[1]))
    for index, text in enumerate(body):
        if index not in code:
            yield file.body_start + index + 1, _INLINE_CODE.sub("", text)


def _link_problem(tree: _Tree, rel_path: str, target: str) -> str | None:
    path = unquote(target.split("#", 1)[0].split("?", 1)[0])
    if not path or path.startswith("/") or _SCHEME.match(path):
        return None
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel_path), path))
    if resolved == ".." or resolved.startswith("../"):
        return f"link `{target}` leads outside the memory root; copy the file into the tree or link by URL"
    if _exists(tree, resolved):
        return None
    return f"link `{target}` points to {resolved}, which is not in the tree; fix the path or remove the link"


def _exists(tree: _Tree, resolved: str) -> bool:
    """A markdown target must be a file of the tree; anything else (an image, a folder) must exist."""
    if resolved.lower().endswith(_MARKDOWN):
        return resolved in tree.paths
    return (tree.memory.root / resolved).exists()


def _duplicate_names(tree: _Tree) -> Iterator[Finding]:
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
            yield tree.finding(file.rel_path, _name_line(file, name), "duplicate-name", message)


def _name_line(file: _File, name: str) -> int:
    """Where a document's title or alias is written: its front-matter key, else its first H1."""
    if name != file.doc.title:
        return file.value_line("aliases", name)
    if "title" in file.keys:
        return file.key_line("title")
    return next((s.lines[0] for s in file.doc.sections if s.level == 1), 1)


def _empty_files(tree: _Tree) -> Iterator[Finding]:
    for file in tree.files:
        if not "".join(file.body).strip():
            yield tree.finding(
                file.rel_path, 1, "empty-file", "the file has no content besides front matter; write it or delete it"
            )


def _empty_sections(tree: _Tree) -> Iterator[Finding]:
    for file in tree.files:
        sections = file.doc.sections
        for index, section in enumerate(sections):
            following = sections[index + 1] if index + 1 < len(sections) else None
            if section.heading is None or section.text.strip() or section.units:
                continue
            if following is None or following.level <= section.level:
                message = f"heading {section.title!r} has nothing under it; write the section or remove the heading"
                yield tree.finding(file.rel_path, section.lines[0], "empty-section", message)


def _unknown_relations(tree: _Tree) -> Iterator[Finding]:
    for file in tree.files:
        for key, value in file.doc.front_matter.items():
            if key not in RELATION_FIELDS:
                continue
            for name in names(value, numbers=False):
                if tree.resolve(name) is None:
                    message = (
                        f"`{key}` names {name!r}, which matches no document title, alias or path; fix the name, "
                        "add it to the aliases of the document it means, or write that document"
                    )
                    yield tree.finding(file.rel_path, file.value_line(key, name), "unknown-relation", message)


_RULES: dict[str, Callable[[_Tree], Iterator[Finding]]] = {
    "unreadable": _unreadable,
    "field-type": _field_types,
    "unknown-type": _unknown_types,
    "broken-link": _broken_links,
    "duplicate-name": _duplicate_names,
    "empty-file": _empty_files,
    "empty-section": _empty_sections,
    "unknown-relation": _unknown_relations,
}


def check(memory: Memory, config: CheckConfig | None = None) -> list[Finding]:
    """Every enabled rule's findings over the memory tree, sorted by file, line and rule."""
    config = config or CheckConfig()
    tree = _load(memory, config)
    return sorted(f for rule, run in _RULES.items() if config.enabled(rule) for f in run(tree))


def files_checked(memory: Memory) -> int:
    """Markdown files the linter looked at: readable documents plus skipped files."""
    return len(memory.state.catalog) + len(memory.skipped)
