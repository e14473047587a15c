"""Packaged word tables: a terms file is used only where it was made from the table as it is."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from retriever.text import tables


def _load(table: Path, terms: Path) -> str:
    return tables.load(table, terms, lambda text: f"parsed {text}", lambda body: f"terms {body['x']}", "empty", "%s %s")


def test_a_terms_file_made_from_this_table_is_read_and_one_from_another_is_not(tmp_path: Path) -> None:
    table, terms = tmp_path / "t.tsv", tmp_path / "t.json"
    table.write_bytes(b"a\tb")
    terms.write_text(tables.terms_file({"x": 1}, b"a\tb"), encoding="utf-8")
    assert _load(table, terms) == "terms 1"
    terms.write_text(tables.terms_file({"x": 1}, b"another table"), encoding="utf-8")
    assert _load(table, terms) == "parsed a\tb"


@pytest.mark.parametrize("content", ["", "not json", "[1, 2]", '{"x": 1}'])
def test_a_missing_or_damaged_terms_file_leaves_the_table_parsed(tmp_path: Path, content: str) -> None:
    table, terms = tmp_path / "t.tsv", tmp_path / "t.json"
    table.write_bytes(b"a\tb")
    if content:
        terms.write_text(content, encoding="utf-8")
    assert _load(table, terms) == "parsed a\tb"


@pytest.mark.parametrize("table_bytes", [None, b"\xff\xfe not utf-8"])
def test_a_missing_or_unreadable_table_is_empty_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, table_bytes: bytes | None
) -> None:
    table = tmp_path / "t.tsv"
    if table_bytes is not None:
        table.write_bytes(table_bytes)
    with caplog.at_level(logging.WARNING):
        assert _load(table, tmp_path / "t.json") == "empty"
    assert str(table) in caplog.text


def test_a_terms_file_is_one_stable_line_with_the_tables_hash() -> None:
    text = tables.terms_file({"b": [2], "a": "é"}, b"source")
    assert text.endswith("\n") and text.count("\n") == 1
    body: dict[str, Any] = json.loads(text)
    assert list(body) == ["a", "b", "source_sha256"] and body["a"] == "é"


def test_a_lazy_map_makes_each_value_once_when_first_looked_up() -> None:
    made: list[int] = []

    def make(value: int) -> int:
        made.append(value)
        return value * 10

    lazy = tables.LazyMap({"a": 1, "b": 2}, make)
    assert made == [] and list(lazy) == ["a", "b"] and len(lazy) == 2
    assert lazy["a"] == lazy["a"] == 10
    assert made == [1]
    with pytest.raises(KeyError):
        lazy["c"]
