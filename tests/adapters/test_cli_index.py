"""``retriever index``: builds or refreshes now and says what it did; the first query's diagnostics are truthful."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from conftest import TreeFactory, child_env
from fixtures import ACME

from retriever.adapters.cli import cli
from retriever.config import Settings, index_cache_dir


def test_index_builds_then_finds_the_index_up_to_date_then_updates_it(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    runner = CliRunner()
    first = runner.invoke(cli, ["index", "--root", str(root)])
    assert first.exit_code == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == f"memory: 8 files, 8 documents, {_sections(root)} sections"
    assert lines[1].startswith("index built in ") and lines[1].endswith(" s: 8 files parsed, 0 deleted")
    assert lines[2] == f"cache: {index_cache_dir(Settings.from_env(), root)}"

    again = runner.invoke(cli, ["index", "--root", str(root), "--json"])
    summary = json.loads(again.stdout)
    assert (summary["index"], summary["parsed"], summary["files"]) == ("hit", 0, 8)
    assert summary["cache_folder"] == str(index_cache_dir(Settings.from_env(), root))

    (root / "teams" / "platform.md").unlink()
    (root / "notes.md").write_bytes(b"\x00 binary")
    changed = json.loads(runner.invoke(cli, ["index", "--root", str(root), "--json"]).stdout)
    assert (changed["index"], changed["parsed"], changed["removed"], changed["skipped"]) == ("updated", 0, 1, 1)
    text = runner.invoke(cli, ["index", "--root", str(root)]).stdout.splitlines()
    assert text[0] == f"memory: 8 files, 7 documents, {_sections(root)} sections (1 skipped: `retriever tree` says why)"
    assert text[1].startswith("index up to date (loaded from the cache) in ")
    (root / "policies" / "leave.md").write_text("# Leave\n\nEmployees earn 12 sick days per year.\n")
    edited = runner.invoke(cli, ["index", "--root", str(root)]).stdout.splitlines()
    assert edited[1].endswith(" s: 1 file parsed, 0 deleted")  # before: "1 files parsed, 1 removed"


def test_index_of_a_missing_or_empty_root_is_a_usage_error(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["index", "--root", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and missing.stdout == ""
    assert missing.stderr.startswith("Error (memory_not_found): memory root ")
    (tmp_path / "empty").mkdir()
    empty = runner.invoke(cli, ["index", "--root", str(tmp_path / "empty"), "--json"])
    assert empty.exit_code == 2
    assert json.loads(empty.stdout)["error_code"] == "memory_empty"


def test_a_root_of_mdx_pages_alone_is_indexed(make_tree: TreeFactory) -> None:
    root = make_tree({"docs/faq.mdx": "# FAQ\n\nThe staging cluster is wiped every Sunday.\n"})
    result = CliRunner().invoke(cli, ["index", "--root", str(root), "--json"])
    assert (result.exit_code, json.loads(result.stdout)["documents"]) == (0, 1)


def test_the_first_query_of_a_process_says_built_and_the_next_process_says_hit(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    # The child lifts progress's threshold: on a busy machine even a small tree's first build can pass
    # SHOW_AFTER and print a progress line; stderr must still carry nothing else (no warning, no log).
    child = "import retriever.adapters.cli_progress as p; p.SHOW_AFTER = float('inf'); import retriever.__main__"
    command = [sys.executable, "-c", child, "query", "sick days", "--root", str(root), "--json"]
    for expected in ("built", "hit"):
        done = subprocess.run(command, env=child_env(), capture_output=True, text=True, timeout=60, check=True)
        assert json.loads(done.stdout)["diagnostics"]["index_cache"] == expected
        assert done.stderr == ""


def _sections(root: Path) -> int:
    from retriever.memory.memory import Memory

    return Memory.open(root, Settings.from_env()).sections_count


def test_index_prints_a_root_name_with_control_characters_escaped(tmp_path: Path) -> None:
    root = tmp_path / "me\x1b]0;pwned\x07m\nory"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nAna owns the launch.\n", encoding="utf-8")

    result = CliRunner().invoke(cli, ["index", "--root", str(root)])

    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    lines = result.stdout.splitlines()
    assert lines[0] == "me\\x1b]0;pwned\\x07m\\nory: 1 file, 1 document, 1 section"
    assert len(lines) == 3
    again = CliRunner().invoke(cli, ["index", "--root", str(root), "--json"])
    assert json.loads(again.stdout)["root"] == str(root)  # JSON keeps the name exact
