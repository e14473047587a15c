"""Front matter: the YAML (``---``) or TOML (``+++``) block at the top of a memory file, as JSON-safe fields.

Contract: ``split_front_matter(text)`` returns (fields, body, lines the block occupies) or raises
``ParseError`` with a reason a user can act on: invalid YAML or TOML, not a mapping, longer than
``MAX_FRONT_MATTER``, nested deeper than ``MAX_NESTING`` (5,000 TOML "[" once exhausted the stack),
more than ``MAX_VALUES`` values once YAML aliases are expanded (a 600-byte alias bomb is 9^9), or a
number of more than ``MAX_DIGITS`` digits.
"""

from __future__ import annotations

import datetime as dt
import re
import tomllib
from collections.abc import Mapping
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

_YAML_FENCE = re.compile(r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)^(?:---|\.\.\.)[ \t]*$\r?\n?", re.S | re.M)
_TOML_FENCE = re.compile(r"\A(?:\ufeff)?\+\+\+[ \t]*\r?\n(.*?)^\+\+\+[ \t]*$\r?\n?", re.S | re.M)

MAX_FRONT_MATTER = 256_000  # characters: YAML of this size takes ~50 MB to load
MAX_NESTING = 32  # levels of lists and mappings in the front matter
MAX_VALUES = 100_000  # front-matter values after YAML aliases are expanded (an alias bomb grows 9^9)


class ParseError(ValueError):
    """The file cannot be read as a memory document; the message says why."""


_TOO_DEEP = f"front matter is nested too deeply (more than {MAX_NESTING} levels); flatten it"
MAX_DIGITS = 4_000  # Python refuses to turn an int of more than 4,300 digits into text, and no field needs one
_TOO_LONG_NUMBER = f"front matter holds a number of more than {MAX_DIGITS:,} digits; quote it as text"
_MAX_BITS = int(MAX_DIGITS * 3.3219)  # log2(10): an int past this many bits has more than MAX_DIGITS digits


_DATE_LIKE = re.compile(r"(?<![\w.-])(\d{4})-(\d{1,2})-(\d{1,2})(?:[Tt ](\d{1,2}):(\d{2})(?::(\d{2}))?)?(?![\w.-])")


def _impossible_date_line(block: str) -> int | None:
    """The file line of the first date-like value that is no date or time of day (YAML's loader names
    none), if any."""
    for number, text in enumerate(block.splitlines(), start=2):  # the block starts on the file's line 2
        for match in _DATE_LIKE.finditer(text):
            year, month, day, hour, minute, second = match.groups()
            try:
                dt.date(int(year), int(month), int(day))
                if hour is not None:
                    dt.time(int(hour), int(minute), int(second or 0))
            except ValueError:
                return number
    return None


def _too_long_number(exc: ValueError) -> bool:
    """Whether ``exc`` is Python's refusal to convert an int of thousands of digits (a loader met one)."""
    return "int_max_str_digits" in str(exc)


def split_front_matter(text: str) -> tuple[dict[str, Any], str, int]:
    """(metadata, body, number of lines the front matter block occupies)."""
    match = _YAML_FENCE.match(text)
    loader = _load_yaml
    if match is None:
        match = _TOML_FENCE.match(text)
        loader = _load_toml
    if match is None:
        return {}, text.lstrip("\ufeff"), 0
    if len(match.group(1)) > MAX_FRONT_MATTER:
        raise ParseError(
            f"front matter is longer than {MAX_FRONT_MATTER:,} characters; keep fields short, move text into the body"
        )
    meta = loader(match.group(1))
    return meta, text[match.end() :], text[: match.end()].count("\n")


def _load_yaml(block: str) -> dict[str, Any]:
    try:
        data = YAMLHandler().load(block)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 2}" if mark is not None else ""  # a file line: the block starts on line 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ParseError(f"invalid YAML front matter{where}: {problem}") from exc
    except (ValueError, OverflowError, TypeError) as exc:  # well-formed YAML, impossible value (2023-13-45)
        if isinstance(exc, ValueError) and _too_long_number(exc):
            raise ParseError(_TOO_LONG_NUMBER) from exc
        line = _impossible_date_line(block)
        where = f" at line {line}" if line is not None else ""
        raise ParseError(f"invalid YAML front matter{where}: {exc}") from exc
    except RecursionError as exc:  # the pure-Python loader (no libyaml) recurses per level
        raise ParseError(_TOO_DEEP) from exc
    return _as_mapping(data)


def _load_toml(block: str) -> dict[str, Any]:
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
            raise ParseError(
                f"front matter holds more than {MAX_VALUES:,} values once YAML aliases are expanded; "
                "remove the aliases (&name, *name) or shorten it"
            )


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
