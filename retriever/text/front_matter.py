"""Front matter: the YAML (``---``) or TOML (``+++``) block at the top of a memory file, as JSON-safe fields.

Contract: ``split_front_matter(text)`` returns (fields, body, lines the block occupies) or raises
``ParseError`` with a reason a user can act on: invalid YAML or TOML, not a mapping, longer than
``MAX_FRONT_MATTER``, nested deeper than ``MAX_NESTING`` (5,000 TOML "[" once exhausted the stack),
more than ``MAX_VALUES`` values once YAML aliases and ``<<`` merge keys are expanded (a 600-byte alias
bomb is 9^9), or a number of more than ``MAX_DIGITS`` digits.

YAML is composed into nodes first and its expanded size counted on the node graph (``_expanded_values``,
linear in the graph) before anything is constructed: PyYAML copies every merged key into each mapping
that merges it, so 168 KB of ``<<: *a`` once took 74 s and 2.3 GB before the count after construction
could refuse it.  Front matter within the budget is constructed exactly as ``yaml.load`` would.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_YAML_FENCE = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*$\r?\n?", re.S | re.M)
_TOML_FENCE = re.compile(r"\A(?:\ufeff)?\+\+\+[ \t]*\r?\n(.*?)^\+\+\+[ \t]*$\r?\n?", re.S | re.M)

MAX_FRONT_MATTER = 256_000  # characters: YAML of this size takes ~50 MB to load
MAX_NESTING = 32  # levels of lists and mappings in the front matter
MAX_VALUES = 100_000  # front-matter values after YAML aliases are expanded (an alias bomb grows 9^9)

# The loader python-frontmatter's YAMLHandler used (libyaml's when installed): the same text reads the same.
_Base: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_Base):  # type: ignore[valid-type,misc]  # the C loader where libyaml is there
    """The safe loader, reading a date YAML cannot make ("2026-13-45", "…T25:00:00") as the text written: the
    document stays, and ``retriever check`` reports the field (it had dropped the whole file)."""


def _timestamp_or_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    try:
        return loader.construct_yaml_timestamp(node)
    except (ValueError, OverflowError):
        return loader.construct_scalar(node)


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_or_text)
_MERGE = "tag:yaml.org,2002:merge"
_SATURATED = 2 * MAX_VALUES  # counts stop growing here: any count past MAX_VALUES + 2 is refused alike


class ParseError(ValueError):
    """The file cannot be read as a memory document; the message says why."""


_TOO_DEEP = f"front matter is nested too deeply (more than {MAX_NESTING} levels); flatten it"
# A TOML key (or table header) of more than MAX_NESTING dotted parts, bare or quoted: at a line's start, or in an
# inline table (after "{" or ","); searched with multi-line strings left out (a string may hold dotted words).
_DOTTED_TOO_DEEP = re.compile(
    r"""(?:^|[{,])[ \t]*\[{0,2}[ \t]*(?:(?:"[^"\n]*"|'[^'\n]*'|[\w-]+)[ \t]*\.[ \t]*)""" + f"{{{MAX_NESTING}}}", re.M
)
_MULTILINE_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'')
MAX_DIGITS = 4_000  # Python refuses to turn an int of more than 4,300 digits into text, and no field needs one
_TOO_MANY_VALUES = (
    f"front matter holds more than {MAX_VALUES:,} values once YAML aliases are expanded; "
    "remove the aliases (&name, *name) or shorten it"
)
_TOO_LONG_NUMBER = f"front matter holds a number of more than {MAX_DIGITS:,} digits; quote it as text"
_MAX_BITS = int(MAX_DIGITS * 3.3219)  # log2(10): an int past this many bits has more than MAX_DIGITS digits


def _too_long_number(exc: ValueError) -> bool:
    """Whether ``exc`` is Python's refusal to convert an int of thousands of digits (a loader met one)."""
    return "int_max_str_digits" in str(exc)


def front_matter_end(text: str) -> int:
    """Where ``text``'s front matter block ends, its closing fence included (YAML "---" or TOML "+++", as
    ``split_front_matter`` reads them); 0 when it has none."""
    fenced = _fenced(text)
    return fenced[0].end() if fenced else 0


def _fenced(text: str) -> tuple[re.Match[str], Callable[[str], dict[str, Any]]] | None:
    """The front matter block's match and the loader of its language, YAML first; None without one."""
    for fence, loader in ((_YAML_FENCE, _load_yaml), (_TOML_FENCE, _load_toml)):
        if match := fence.match(text):
            return match, loader
    return None


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(metadata, body, number of lines the front matter block occupies)."""
    fenced = _fenced(text)
    if fenced is None:
        return {}, text.lstrip("\ufeff"), 0
    match, loader = fenced
    if len(match.group(1)) > MAX_FRONT_MATTER:
        raise ParseError(
            f"front matter is longer than {MAX_FRONT_MATTER:,} characters; keep fields short, move text into the body"
        )
    meta = loader(match.group(1))
    return meta, text[match.end() :], text[: match.end()].count("\n")


def _load_yaml(block: str) -> dict[str, Any]:
    try:
        data = _compose_then_construct(block)
    except ParseError:  # the expanded-size budget: a ValueError, but not the loader's
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # a file line: the block starts on line 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseError(f"invalid YAML front matter{where}: {problem}") from exc
    except (ValueError, OverflowError, TypeError) as exc:  # well-formed YAML, a value Python cannot hold
        if isinstance(exc, ValueError) and _too_long_number(exc):
            raise ParseError(_TOO_LONG_NUMBER) from exc
        raise ParseError(f"invalid YAML front matter: {exc}") from exc
    except RecursionError as exc:  # the pure-Python loader (no libyaml) recurses per level
        raise ParseError(_TOO_DEEP) from exc
    return _as_mapping(data)


def _compose_then_construct(block: str) -> Any:
    """``yaml.load(block, _Loader)`` split at its two steps, so that the node graph's expanded size is
    checked against ``MAX_VALUES`` before construction copies merged keys (``ParseError`` if it does not
    fit, ``_TOO_DEEP`` if a node contains itself).  Errors of either step propagate as ``yaml.load``'s."""
    loader = _Loader(block)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        if _expanded_values(root) - 1 > MAX_VALUES:  # the top mapping itself is no value
            raise ParseError(_TOO_MANY_VALUES)
        return loader.construct_document(root)
    finally:
        loader.dispose()


def _expanded_values(root: Node) -> int:
    """How many values ``root`` holds once aliases and merge keys are expanded, counted as ``_json_safe``
    counts them (each scalar, list and mapping one), merged pairs and repeated keys included: an upper
    bound on what construction copies and ``_json_safe`` visits.  Each node is counted once (memoised by
    identity) after its children, depth-first without recursion (a block may nest 100,000 levels), so the
    cost is linear in the graph.  Counts saturate at ``_SATURATED``; ``ParseError(_TOO_DEEP)`` on a
    cycle (an alias inside its own anchor expands without end)."""
    counts: dict[int, int] = {}
    path: list[Node] = []  # the nodes whose children are being counted, outermost first
    on_path: set[int] = set()  # their identities: meeting one of them again is a cycle
    stack: list[Node | None] = [root]  # None: the children of ``path[-1]`` are counted (no tuple per node)
    while stack:
        node = stack.pop()
        if node is None:
            done = path.pop()
            on_path.discard(id(done))
            counts[id(done)] = min(_own_count(done, counts), _SATURATED)
        elif id(node) in on_path:
            raise ParseError(_TOO_DEEP)
        elif id(node) not in counts:
            path.append(node)
            on_path.add(id(node))
            stack.append(None)
            stack.extend(_children(node))
    return counts[id(root)]


def _children(node: Node) -> list[Node]:
    """The lists and mappings ``node``'s count is made of (a scalar counts one, so none is walked): list
    items; a mapping's values, merge sources, and keys that are lists or mappings (``!!omap`` makes those)."""
    if isinstance(node, SequenceNode):
        return [item for item in node.value if not isinstance(item, ScalarNode)]
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair if not isinstance(n, ScalarNode)]
    return []


def _own_count(node: Node, counts: dict[int, int]) -> int:
    """``node``'s count from its children's: itself, plus each value (a merge key adds the values of the
    mapping, or of each mapping in the list, it merges); a scalar is one, and in no ``counts``."""
    if isinstance(node, SequenceNode):
        return 1 + sum(counts.get(id(item), 1) for item in node.value)
    if not isinstance(node, MappingNode):
        return 1
    total = 1
    for key, value in node.value:
        if not isinstance(key, ScalarNode):
            total += counts[id(key)]
        if key.tag != _MERGE:
            total += counts.get(id(value), 1)
        elif isinstance(value, SequenceNode):  # the values of each mapping merged, not the list's own
            total += sum(counts.get(id(item), 1) - 1 for item in value.value)
        else:
            total += counts.get(id(value), 1) - 1
    return total


def _load_toml(block: str) -> dict[str, Any]:
    if _DOTTED_TOO_DEEP.search(_MULTILINE_STRINGS.sub('""', block)):
        # tomllib keeps every prefix of a dotted key before any depth check: "a.a.…a = 1" of 45,000 parts (90 KB)
        # took 32 s and 7.8 GB, 120,000 parts were killed at 24 GB.  Such a key is too deep anyway.
        raise ParseError(_TOO_DEEP)
    try:
        data = tomllib.loads(block)
    except tomllib.TOMLDecodeError as exc:
        raise ParseError(f"invalid TOML front matter: {exc}") from exc
    except ValueError as exc:  # well-formed TOML, a number Python will not convert
        if _too_long_number(exc):
            raise ParseError(_TOO_LONG_NUMBER) from exc
        raise ParseError(f"invalid TOML front matter: {exc}") from exc
    except RecursionError as exc:  # tomllib recurses per nested array or table: 5,000 "[" exhaust the stack
        raise ParseError(_TOO_DEEP) from exc
    return _as_mapping(data)


def _as_mapping(data: Any) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise ParseError(f"front matter must be a mapping of fields, found {type(data).__name__}")
    budget = _Budget()
    return {str(k): _json_safe(v, 1, budget) for k, v in data.items()}


class _Budget:
    """Values left to convert: YAML aliases share one value many times, and a JSON-safe copy repeats it."""

    def __init__(self) -> None:
        self.left = MAX_VALUES

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise ParseError(_TOO_MANY_VALUES)


def _json_safe(value: Any, depth: int, budget: _Budget) -> Any:
    """YAML values made JSON-safe: dates become ISO strings, keys strings, ``!!binary`` its UTF-8 text.
    ``ParseError`` past ``MAX_NESTING`` levels (a YAML alias may even contain itself), ``MAX_VALUES``
    values, or for an int of more than ``MAX_DIGITS`` digits (YAML reads ``0xfff…`` without a limit,
    and the first ``str()`` of it would raise)."""
    budget.spend()
    if isinstance(value, dt.date | dt.datetime | dt.time):
        return value.isoformat()
    if isinstance(value, int) and value.bit_length() > _MAX_BITS:
        raise ParseError(_TOO_LONG_NUMBER)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if depth >= MAX_NESTING and isinstance(value, Mapping | list | tuple | set):
        raise ParseError(_TOO_DEEP)
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v, depth + 1, budget) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_json_safe(v, depth + 1, budget) for v in value]
    return str(value)
