"""Packaged word tables (``lexicon``, ``thesaurus``): each shipped as its table and a terms file, the table as the
analyzer's terms, written by ``scripts/build_lexicon.py`` with the table's SHA-256.

Contract: ``terms_file(body, source)`` is the terms file's text for a table ``source``; ``load(...)`` is the
table's terms from that file where it was made from the table as it is (a few ms), else the table parsed (~100 ms),
else ``empty`` with a warning logged when the table is missing or not UTF-8.  ``LazyMap`` makes a terms file's
values when first looked up: a question looks up a few terms, and making all of a table's at load took most of it.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
V = TypeVar("V")
_STAMP = "source_sha256"


def terms_file(body: dict[str, Any], source: bytes) -> str:
    """A terms file's text: ``body`` and the hash of the table ``source`` it was made from, one stable line."""
    stamped = {**body, _STAMP: hashlib.sha256(source).hexdigest()}
    return json.dumps(stamped, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"


def load(
    table_path: Path,
    terms_path: Path,
    parse: Callable[[str], T],
    from_body: Callable[[dict[str, Any]], T],
    empty: T,
    unreadable: str,
) -> T:
    """The table at ``table_path``: ``from_body`` of its terms file where that was made from this table, else
    ``parse`` of the table, else ``empty`` with ``unreadable`` (a format taking the path and the error) logged."""
    try:
        source = table_path.read_bytes()
    except OSError as exc:
        log.warning(unreadable, table_path, exc)
        return empty
    try:
        body = json.loads(terms_path.read_text(encoding="utf-8"))
        if body.get(_STAMP) == hashlib.sha256(source).hexdigest():
            return from_body(body)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # missing or damaged: the table itself is parsed
    try:
        return parse(source.decode("utf-8"))
    except UnicodeDecodeError as exc:
        log.warning(unreadable, table_path, exc)
        return empty


class LazyMap(Mapping[str, V]):
    """``raw``'s values, each made by ``make`` when first looked up."""

    def __init__(self, raw: Mapping[str, Any], make: Callable[[Any], V]) -> None:
        self._raw, self._make = raw, make
        self._made: dict[str, V] = {}

    def __getitem__(self, key: str) -> V:
        made = self._made.get(key)
        if made is None:
            made = self._made[key] = self._make(self._raw[key])
        return made

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)
