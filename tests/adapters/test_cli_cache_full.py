"""``retriever query`` and ``retriever index`` when the index cache fills up during the first build.

A full disk is raised where it surfaces (the real cache's write, as SQLite raises it): filling a disk is
not portable in a test.  The commands answer from an index built in memory and say why; the next run,
with room again, builds the cache.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from click.testing import CliRunner
from conftest import TreeFactory
from fixtures import ACME

from retriever.adapters.cli import cli
from retriever.config import Settings, index_cache_dir
from retriever.memory.cache import IndexCache

FULL = "database or disk is full"


def _full(*_: Any, **__: Any) -> None:
    raise sqlite3.OperationalError(FULL)


def test_query_and_index_answer_in_memory_with_a_warning_when_the_cache_fills_up(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    runner = CliRunner()
    query = ["query", "how many sick days", "--root", str(root), "--json"]
    warning = f"index cache unavailable at {index_cache_dir(Settings.from_env(), root)} ({FULL}); indexing in memory"
    with monkeypatch.context() as patch:
        patch.setattr(IndexCache, "put_encoded", _full)
        answered = runner.invoke(cli, query)
        indexed = runner.invoke(cli, ["index", "--root", str(root), "--json"])

    assert answered.exit_code == 0, answered.output
    diagnostics = json.loads(answered.stdout)["diagnostics"]
    assert diagnostics["index_cache"] == "disabled" and warning in diagnostics["warnings"]
    assert "policies/leave.md" in answered.stdout
    assert indexed.exit_code == 0, indexed.output
    summary = json.loads(indexed.stdout)
    assert (summary["index"], summary["files"], summary["cache_folder"]) == ("disabled", 8, None)
    assert summary["warnings"] == [warning]

    again = runner.invoke(cli, query)
    assert json.loads(again.stdout)["diagnostics"]["index_cache"] == "built"
    assert json.loads(runner.invoke(cli, query).stdout)["diagnostics"]["index_cache"] == "hit"
