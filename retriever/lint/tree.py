"""The memory tree as the lint rules see it: each readable document with its file lines.

Contract: ``load(memory, known_types)`` reads every document of the memory through ``reader``
(so a rule can point at a file line, front matter included) and names every markdown file of the
tree, readable or not.  A rule reports a ``Problem`` (file, line, message); ``check`` makes it a
``Finding`` with the rule's id and severity.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from retriever.memory.memory import Memory
from retriever.text import dialects, reader
from retriever.text.models import Document
from retriever.text.parser import ParseError, split_front_matter

LOCAL_CONFIG = ".retriever.toml"  # the tree's own settings file (``[check]`` and others)
# A top-level key: bare, or quoted as YAML and TOML allow ("owner": x); the group that matched is its name.
_FM_KEY = re.compile(r"""^(?:"([^"\\\n]*)"|'([^'\n]*)'|([A-Za-z_][\w.-]*))\s*[:=]""")
# A quoted item at the start of a line (each alternative starts with its own character: linear to match).
_QUOTED = re.compile(r""""([^"\\\n]*)"|'((?:[^'\n]|'')*)'""")


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


@dataclass(frozen=True, slots=True)
class Problem:
    """What a rule found: the file (rel_path), its 1-based line, and a message saying how to fix it."""

    rel_path: str
    line: int
    message: str


@dataclass(frozen=True, slots=True)
class File:
    """A readable document with its file lines (line N is ``lines[N - 1]``)."""

    rel_path: str
    doc: Document
    lines: list[str]
    body_start: int  # lines taken by front matter: body line i is file line body_start + i + 1
    keys: dict[str, tuple[int, int]]  # top-level front-matter key -> (first, last) file line of its last value
    # key -> {item text: its first line}, built on the first ``value_line`` of the key (a cache, not data)
    _items: dict[str, dict[str, int]] = field(default_factory=dict, compare=False, repr=False)
    # "lines" -> the body's prose lines, worked out by ``lint.prose`` on first use (a cache, not data)
    prose: dict[str, list[tuple[int, str]]] = field(default_factory=dict, compare=False, repr=False)

    def key_line(self, key: str) -> int:
        """The line of the top-level ``key`` the retriever reads: of a key written twice, the last; else 1."""
        return self.keys.get(key, (1, 1))[0]

    def value_line(self, key: str, value: str) -> int:
        """The line that holds ``value`` of ``key``: the first of the key's lines whose item (``- name``,
        ``name,``, the key's own ``key: name``; quotes and comments aside) is ``value``, else the first
        that contains it, else the key's line.  Amortised linear: the key's items are indexed once, so a
        list of 28,000 names costs one pass, not one scan per name."""
        first, last = self.keys.get(key, (1, 1))
        if first == last:  # one line: whatever it holds, it is the answer
            return first
        index = self._items.get(key)
        if index is None:
            index = self._items[key] = _item_lines(self.lines, first, last)
        found = index.get(value)
        if found is not None:
            return found
        # A name written otherwise (escaped, folded): a search in C of the key's lines, rare in practice.
        text = "\n".join(self.lines[first - 1 : last])
        at = -1 if "\n" in value else text.find(value)
        return first if at < 0 else first + text.count("\n", 0, at)

    @property
    def body(self) -> list[str]:
        return self.lines[self.body_start :]


@dataclass(slots=True)
class Tree:
    """The memory tree as the rules see it."""

    memory: Memory
    known_types: frozenset[str]  # document types the settings know
    files: list[File] = field(default_factory=list)
    paths: frozenset[str] = frozenset()  # every markdown file in the tree, readable or not

    def resolve(self, name: str) -> str | None:
        """The document a name refers to, exactly as the retriever resolves relation values."""
        return self.memory.resolve(name)


def load(memory: Memory, known_types: frozenset[str]) -> Tree:
    """Every readable document with its lines, and the paths of all markdown files."""
    tree = Tree(memory, known_types)
    for rel_path in sorted(memory.state.catalog):
        loaded = _read(memory, rel_path)
        if loaded is not None:
            tree.files.append(loaded)
    tree.paths = frozenset([*memory.state.catalog, *(s.rel_path for s in memory.skipped)])
    return tree


def _read(memory: Memory, rel_path: str) -> File | None:
    """The document and its lines; None if it changed into something unreadable meanwhile."""
    try:
        doc = memory.document(rel_path)
        text, _ = reader.read_text(memory.root, rel_path, memory.settings.max_file_bytes)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        _, _, front_lines = split_front_matter(text)
    except (KeyError, reader.Unreadable, ParseError):
        return None
    lines = text.split("\n")
    # Read as the parser reads it (MDX-only syntax blanked, MkDocs bodies moved left, lines kept): a link in an
    # admonition's body is checked, one in an MDX comment is not.
    lines[front_lines:] = dialects.readable(rel_path, "\n".join(lines[front_lines:])).split("\n")
    return File(rel_path, doc, lines, front_lines, _front_matter_keys(lines, front_lines))


def _front_matter_keys(lines: list[str], front_lines: int) -> dict[str, tuple[int, int]]:
    """Top-level front-matter keys and the file lines their values span (fences excluded).  A key written
    more than once maps to its last occurrence, whose value YAML keeps (TOML refuses a repeated key)."""
    keys: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for number in range(2, front_lines):  # line 1 and line ``front_lines`` are the fences
        match = _FM_KEY.match(lines[number - 1])
        if match:
            current = next(name for name in match.groups() if name is not None)
            keys[current] = (number, number)
        elif current is not None:
            keys[current] = (keys[current][0], number)
    return keys


def _item_lines(lines: list[str], first: int, last: int) -> dict[str, int]:
    """Each item written on lines ``first``..``last`` (the key's line after its ``key:``), mapped to the
    first line that writes it: a name listed twice is reported where it first is."""
    items: dict[str, int] = {}
    for number in range(first, last + 1):
        text = lines[number - 1]
        if number == first:
            key = _FM_KEY.match(text)
            text = text[key.end() :] if key else text
        item = _item(text)
        if item:
            items.setdefault(item, number)
    return items


def _item(text: str) -> str | None:
    """The item a line writes as YAML or TOML reads it, "- name", "'name'," or "name  # note" giving
    "name"; None for a quoted item followed by more than a comma or a comment.  String operations and
    an unambiguous pattern only: a line may be 256,000 characters."""
    text = text.strip()
    if text[:2] in ("- ", "-\t"):
        text = text[2:].lstrip()
    quoted = _QUOTED.match(text)
    if quoted is None:
        for comment in (" #", "\t#"):  # a comment needs a blank before its "#"
            text = text.split(comment, 1)[0]
        return text.rstrip().removesuffix(",").strip()
    rest = text[quoted.end() :].lstrip().removeprefix(",").lstrip()
    if rest and not rest.startswith("#"):
        return None
    double, single = quoted.groups()
    return (double if double is not None else single.replace("''", "'")).strip()
