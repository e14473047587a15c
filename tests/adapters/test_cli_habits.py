"""Command-line habits: prompts without quotes, "-" for stdin, --version, shell completion, an empty
request log that says so, and help that lists every exit code."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import TreeFactory, child_env
from fixtures import ACME

from retriever import __version__
from retriever.adapters.cli import cli


@pytest.fixture
def root(make_tree: TreeFactory) -> Path:
    return make_tree(ACME)


def test_a_prompt_of_several_unquoted_words_is_one_prompt(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "who", "owns", "the", "billing", "migration", "--root", str(root)])
    assert result.exit_code == 0, result.stderr
    assert "**Query:** who owns the billing migration\n" in result.stdout
    quoted = CliRunner().invoke(cli, ["query", "who owns the billing migration", "--root", str(root)])
    assert quoted.stdout.split("**Query:**")[1].splitlines()[0] == result.stdout.split("**Query:**")[1].splitlines()[0]


def test_options_may_follow_the_words(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "billing", "migration", "--root", str(root), "--top-k", "1", "--json"])
    assert result.exit_code == 0, result.stderr
    content = json.loads(result.stdout)
    assert len(content["retrieval"]["facts"]) == 1
    assert content["content_text"].split("\n")[2] == "**Query:** billing migration"


def test_a_lone_dash_reads_the_prompt_from_stdin(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "-", "--root", str(root)], input="Who owns the billing migration?\n")
    assert result.exit_code == 0, result.stderr
    assert "**Query:** Who owns the billing migration?\n" in result.stdout


def test_a_dash_followed_by_words_is_a_usage_error_naming_both_ways(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "-", "foo", "--root", str(root)], input="hi\n")
    assert result.exit_code == 2  # before: the prompt "- foo", stdin silently ignored
    assert result.stderr.startswith("Error (invalid_arguments): '-' reads the prompt from stdin: give it alone")
    quoted = CliRunner().invoke(cli, ["query", "--root", str(root), "--", "- foo"])
    assert quoted.exit_code == 0, quoted.stderr


def test_an_empty_stdin_is_an_empty_prompt(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "-", "--root", str(root)], input="")
    assert result.exit_code == 2
    assert result.stderr == "Error (invalid_arguments): 'prompt' is empty: describe the company context you need\n"


def test_an_endless_stdin_is_read_only_past_the_limit_and_named_too_long(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "-", "--root", str(root)], input="word " * 100_000)
    assert result.exit_code == 2
    assert result.stderr == "Error (invalid_arguments): 'prompt' read from stdin is over 8,000 characters: shorten it\n"


def test_a_byte_order_mark_on_stdin_is_not_part_of_the_prompt(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "-", "--root", str(root)], input="\ufeffWho owns billing?\n")
    assert result.exit_code == 0, result.stderr
    assert "**Query:** Who owns billing?\n" in result.stdout


def test_a_stdin_that_is_not_utf8_is_named_as_such(root: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "retriever", "query", "-", "--root", str(root)],
        input=b"caf\xe9 policy",
        capture_output=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    expected = "Error (invalid_arguments): 'prompt' read from stdin is not valid UTF-8: send the prompt as UTF-8 text\n"
    assert done.stderr.decode() == expected


def test_no_prompt_at_all_is_a_usage_error(root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", "--root", str(root)])
    assert result.exit_code == 2
    assert "Missing argument 'PROMPT...'" in result.stderr


def test_version_prints_the_package_version_and_the_commit_where_known() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert re.fullmatch(
        rf"retriever, version {re.escape(__version__)}( \(commit [0-9a-f]{{12}}( with uncommitted changes)?\))?\n",
        result.stdout,
    )


def test_python_m_retriever_goes_by_the_name_retriever() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "retriever", "--help"], capture_output=True, text=True, env=child_env(), timeout=60
    )
    assert done.stdout.startswith("Usage: retriever [OPTIONS] COMMAND [ARGS]...")


def test_bash_completion_script_and_completions_come_from_the_documented_variable() -> None:
    env = {**child_env(), "_RETRIEVER_COMPLETE": "bash_source"}
    script = subprocess.run([sys.executable, "-m", "retriever"], capture_output=True, text=True, env=env, timeout=60)
    assert script.returncode == 0
    assert "_retriever_completion()" in script.stdout and "complete -o nosort -F _retriever_completion retriever" in (
        script.stdout
    )
    env = {**child_env(), "_RETRIEVER_COMPLETE": "bash_complete", "COMP_WORDS": "retriever mcp-c", "COMP_CWORD": "1"}
    words = subprocess.run([sys.executable, "-m", "retriever"], capture_output=True, text=True, env=env, timeout=60)
    assert words.stdout.splitlines() == ["plain,mcp-config"]


def test_requests_on_an_empty_log_says_so_and_where_it_looked() -> None:
    result = CliRunner().invoke(cli, ["requests"])
    assert result.exit_code == 0
    assert result.stdout == ""
    store = Path(os.environ["RETRIEVER_STATE_DIR"]) / "state" / "store.sqlite"
    assert result.stderr.startswith(f"No requests logged yet in the sqlite store ({store}: it is not created yet).")
    assert "`retriever mcp` and `retriever serve` log every tool call" in result.stderr
    assert not store.exists()  # before: created, to say that it was empty
    from retriever import Settings
    from retriever.service.stores import open_store

    open_store(Settings.from_env()).close()  # a store that exists and holds nothing
    again = CliRunner().invoke(cli, ["requests"])
    assert again.stderr.startswith(f"No requests logged yet in the sqlite store ({store}).")


def test_requests_for_a_root_that_is_no_folder_says_so_not_that_nothing_is_logged_yet(tmp_path: Path) -> None:
    from retriever import Settings
    from retriever.service.stores import open_store

    open_store(Settings.from_env()).close()
    result = CliRunner().invoke(cli, ["requests", "--root", str(tmp_path / "nope")])
    assert result.exit_code == 0
    assert "for the memory at " in result.stderr and "nope, which is no folder: pass --root with" in result.stderr
    assert "yet" not in result.stderr  # the log of the memory meant may hold many


def test_requests_with_filters_that_match_nothing_names_the_filters() -> None:
    result = CliRunner().invoke(cli, ["requests", "--session-id", "thread-7", "--since", "2026-01-01T00:00:00Z"])
    assert result.exit_code == 0
    assert result.stderr.startswith("No requests match --session-id thread-7 and --since 2026-01-01T00:00:00Z in")


def test_requests_json_on_an_empty_log_is_an_empty_list() -> None:
    result = CliRunner().invoke(cli, ["requests", "--json"])
    assert (result.exit_code, result.stdout, result.stderr) == (0, "[]\n", "")


def test_check_help_lists_every_exit_code() -> None:
    text = " ".join(CliRunner().invoke(cli, ["check", "--help"]).stdout.split())
    assert "0 when the tree is clean, 1 when there are findings, 2 on usage errors" in text
