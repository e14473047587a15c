"""Keys written more than once in one mapping of YAML front matter, found without loading the values.

PyYAML keeps the last value of a repeated key (``owner: A`` then ``owner: B`` reads as ``B``), so an edit
that adds a field already present silently loses the first.  This module only reports; the retriever
reads front matter through ``text.front_matter`` as before.

Contract:
- ``front_matter_block(lines, front_lines)`` is the YAML block between the fences of a file whose lines
  are ``lines`` and whose front matter takes its first ``front_lines`` lines, else None (no front
  matter, or TOML: ``tomllib`` refuses a repeated key, and the ``unreadable`` rule reports that).
  Block line N is file line N + 1.
- ``repeated_keys(block)`` lists every key set more than once in one mapping, nested mappings
  included, with the block lines (1-based) of each occurrence.  It never raises: text that is not
  valid YAML, or longer than ``MAX_FRONT_MATTER`` (the reader refuses both), gives no repeats.
- Bounded by the block's size, with the guarantees ``text.front_matter`` keeps against alias bombs:
  the block is composed into nodes (``yaml.compose``'s step, libyaml's when installed), never
  constructed, so aliases are not expanded; a node that aliases share is searched once, a node that
  contains itself ends the search there, and nothing deeper than ``MAX_NESTING`` levels (which the
  reader refuses) is searched.  Only scalar keys are constructed, to compare them as the retriever's
  fields do: by their value as text (``yes`` and ``true`` are one key, ``True``).  ``<<`` merge keys
  are not repeats: a key written beside a merge overrides the merged one on purpose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from retriever.text.front_matter import MAX_FRONT_MATTER, MAX_NESTING
from retriever.text.safe import preview

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
_OPEN = re.compile(r"\ufeff?---[ \t]*")
_CLOSE = re.compile(r"(?:---|\.\.\.)[ \t]*")
_NAME_CHARS = 40  # of each key in a reported path


@dataclass(frozen=True, slots=True)
class Repeat:
    """A key set ``len(lines)`` times in one mapping: its path (``team.owner``, ``items[0].name``), the
    block lines of its occurrences in order, and the last value (the one the retriever keeps) described."""

    path: str
    lines: tuple[int, ...]
    last_value: str


@dataclass(frozen=True, slots=True)
class _Step:
    """One step of a path, linked to its parent: a node's path costs one step, not a copy of its parent's."""

    parent: _Step | None
    name: str
    index: bool = False  # a list item's position, written ``[i]``


def front_matter_block(lines: list[str], front_lines: int) -> str | None:
    """The YAML front matter's text between its fences, else None (see the module's contract)."""
    if front_lines < 2 or not lines or not _OPEN.fullmatch(lines[0]):
        return None
    for index in range(1, min(front_lines + 1, len(lines))):  # the first fence-like line closes the block
        if _CLOSE.fullmatch(lines[index]):
            return "\n".join(lines[1:index])
    return None


def repeated_keys(block: str) -> list[Repeat]:
    """Every key set more than once in one mapping of ``block``, in the order the search meets them."""
    if len(block) > MAX_FRONT_MATTER:
        return []
    try:
        loader = _Loader(block)
    except (yaml.YAMLError, ValueError):  # text UTF-8 cannot encode (a lone surrogate)
        return []
    try:
        root = loader.get_single_node()
        return [] if root is None else _search(loader, root)
    except (yaml.YAMLError, RecursionError):  # the pure-Python composer recurses per level
        return []
    finally:
        loader.dispose()


def _search(loader: yaml.SafeLoader, root: Node) -> list[Repeat]:
    """Depth-first over the node graph, each node once, down to ``MAX_NESTING`` levels."""
    found: list[Repeat] = []
    seen: set[int] = set()
    stack: list[tuple[Node, int, _Step | None]] = [(root, 1, None)]
    while stack:
        node, depth, step = stack.pop()
        if id(node) in seen or depth > MAX_NESTING:
            continue
        seen.add(id(node))
        children: list[tuple[Node, _Step]] = []
        if isinstance(node, MappingNode):
            found.extend(_repeats_in(loader, node, step))
            children = [(v, _Step(step, k.value)) for k, v in node.value if isinstance(k, ScalarNode)]
        elif isinstance(node, SequenceNode):
            children = [(item, _Step(step, f"[{i}]", index=True)) for i, item in enumerate(node.value)]
        stack.extend((child, depth + 1, child_step) for child, child_step in reversed(children))
    return found


def _repeats_in(loader: yaml.SafeLoader, mapping: MappingNode, step: _Step | None) -> list[Repeat]:
    """The repeated scalar keys of one mapping (merge keys aside), in the order of their second occurrence."""
    groups: dict[str, list[tuple[ScalarNode, Node]]] = {}
    for key, value in mapping.value:
        if isinstance(key, ScalarNode) and key.tag != _MERGE:
            groups.setdefault(_key_text(loader, key), []).append((key, value))
    repeats = [pairs for pairs in groups.values() if len(pairs) > 1]
    repeats.sort(key=lambda pairs: pairs[1][0].start_mark.index)
    return [
        Repeat(
            _path(_Step(step, pairs[-1][0].value)),
            tuple(key.start_mark.line + 1 for key, _ in pairs),
            _describe(pairs[-1][1]),
        )
        for pairs in repeats
    ]


def _key_text(loader: yaml.SafeLoader, key: ScalarNode) -> str:
    """A scalar key as the retriever's fields name it (``str`` of its value), else as written."""
    try:
        return str(loader.construct_object(key))
    except (yaml.YAMLError, ValueError, TypeError, OverflowError):  # 2023-13-45, an int of 5,000 digits
        return str(key.value)


def _path(step: _Step | None) -> str:
    parts: list[str] = []
    while step is not None:
        parts.append(step.name if step.index else f".{_short(step.name)}")
        step = step.parent
    return "".join(reversed(parts)).removeprefix(".")


def _short(name: str) -> str:
    return name if len(name) <= _NAME_CHARS else name[:_NAME_CHARS] + "…"


def _describe(value: Node) -> str:
    """The kept value for a message: a scalar as written (quoted, bounded), else what kind of value it is."""
    if isinstance(value, MappingNode):
        return "a mapping"
    if isinstance(value, SequenceNode):
        return "a list"
    return preview(str(value.value), _NAME_CHARS)
