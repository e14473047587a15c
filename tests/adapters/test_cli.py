"""The click adapter, through CliRunner: stdout and stderr apart, exit codes, JSON."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SHARED_SCHEMAS, TreeFactory, answers, free_port, serve_process, wait_until
from fixtures import ACME

from retriever.adapters import cli_progress
from retriever.adapters.cli import cli
from retriever.adapters.cli_query import terminal_markdown


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def root(make_tree: TreeFactory) -> Path:
    return make_tree(ACME)


def test_query_prints_the_markdown_report_when_piped(
    runner: CliRunner, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Indexing progress shows after SHOW_AFTER seconds: on a busy machine the first build can pass it, which is
    # not what this test is about (cli_progress's own tests drive its clock).
    monkeypatch.setattr(cli_progress, "SHOW_AFTER", float("inf"))
    result = runner.invoke(cli, ["query", "How many sick days do employees earn?", "--root", str(root)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "# Retrieved Company Context"
    assert "**Query:** How many sick days do employees earn?" in lines
    assert any(line.startswith("- [") and "**Employees earn 10 sick days per year.**" in line for line in lines)
    assert lines[-1].startswith("*Retrieved ") and lines[-1].endswith("*")
    assert result.stderr == ""


def test_query_json_prints_structured_content(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "How many sick days do employees earn?", "--root", str(root), "--json"])
    assert result.exit_code == 0
    content = json.loads(result.stdout)
    assert content["status"] == "ok"
    assert content["retrieval"]["facts"][0]["statement"] == "Employees earn 10 sick days per year."
    schema = SHARED_SCHEMAS / "retrieve_memory.structured.schema.json"
    if schema.is_file():
        jsonschema = pytest.importorskip("jsonschema")
        jsonschema.validate(content, json.loads(schema.read_text()))


def test_top_k_limits_facts(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing migration invoices", "--root", str(root), "--json", "--top-k", "1"])
    assert len(json.loads(result.stdout)["retrieval"]["facts"]) == 1


def test_top_k_out_of_range_is_a_usage_error(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing", "--root", str(root), "--top-k", "0"])
    assert result.exit_code == 2
    assert "--top-k" in result.stderr
    assert result.stdout == ""


def test_root_defaults_to_the_environment_variable(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "DEC-0054", "--json"], env={"RETRIEVER_ROOT": str(root)})
    assert result.exit_code == 0
    assert json.loads(result.stdout)["retrieval"]["facts"][0]["source_path"] == "memory/decisions/dec_0054.md"


def test_empty_prompt_fails_with_invalid_arguments_on_stderr(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "   ", "--root", str(root)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert (
        result.stderr.strip() == "Error (invalid_arguments): 'prompt' is empty: describe the company context you need"
    )


def test_error_with_json_prints_the_error_object_on_stdout_too(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "x" * 8001, "--root", str(root), "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {
        "status": "error",
        "error_code": "invalid_arguments",
        "error_message": "'prompt' is 8,001 characters; the limit is 8,000: shorten it",
    }
    assert result.stderr.startswith("Error (invalid_arguments):")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["query", "billing", "--top-k", "0"], "Invalid value for '--top-k': 0 is not in the range 1<=x<=100."),
        (["query", "billing", "--top-k", "abc"], "Invalid value for '--top-k': 'abc' is not a valid integer range."),
        (["query"], "Missing argument 'PROMPT...'."),
        (["query", "billing", "--foo"], "No such option '--foo'. Did you mean '--root'?"),
        (["cache", "list", "--bogus"], "No such option '--bogus'."),
    ],
)
def test_a_usage_mistake_with_json_prints_the_error_object_on_stdout_too(
    runner: CliRunner, root: Path, args: list[str], message: str
) -> None:
    # The same mistake made through RETRIEVER_TOP_K printed one; a script parsing stdout had read nothing.
    result = runner.invoke(cli, [*args, "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout) == {"status": "error", "error_code": "invalid_arguments", "error_message": message}
    assert "Usage: " in result.stderr
    assert runner.invoke(cli, args).stdout == ""  # without --json, stdout stays empty


def test_a_usage_mistakes_json_error_object_is_bounded(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing", "--top-k", "9" * 100_000, "--json"])  # echoed whole, 100 KB
    assert result.exit_code == 2 and len(result.stdout) < 1_000
    assert json.loads(result.stdout)["error_message"].startswith("Invalid value for '--top-k': '999")


def test_missing_root_is_a_clear_usage_error(
    runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-such-memory"
    result = runner.invoke(cli, ["query", "billing", "--root", str(missing)])
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error (memory_not_found): memory root {str(missing)!r} is not a folder (nothing is at {str(missing)!r}); "
        "pass --root DIR or set RETRIEVER_ROOT"
    )
    (tmp_path / "notes.md").write_text("# Notes\n")
    monkeypatch.chdir(tmp_path)
    relative = runner.invoke(cli, ["query", "billing", "--root", "notes.md"])  # a file, named as typed: where is it?
    assert relative.stderr.startswith("Error (memory_not_found): memory root 'notes.md' is not a folder (")
    assert f"{str(tmp_path / 'notes.md')!r} is a file); pass --root DIR" in relative.stderr


def test_a_root_that_is_a_file_is_memory_not_found_with_its_json_error_object(
    runner: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "notes.md").write_text("# Notes\n")
    result = runner.invoke(cli, ["query", "billing", "--json", "--root", str(tmp_path / "notes.md")])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error_code"] == "memory_not_found"  # not click's usage error, as from the env


def test_invalid_setting_in_the_environment_is_a_usage_error(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing", "--root", str(root)], env={"RETRIEVER_TOP_K": "lots"})
    assert result.exit_code == 2
    assert result.stderr.startswith("Error (invalid_config): invalid setting: RETRIEVER_TOP_K='lots'")


def test_timeout_exits_with_failure(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing", "--root", str(root)], env={"RETRIEVER_DEADLINE_SECONDS": "1e-9"})
    assert result.exit_code == 1
    assert result.stderr.startswith("Error (retrieval_timeout): retrieval exceeded its 1e-09 s deadline")


def test_a_deadline_of_zero_is_an_invalid_setting_not_a_timeout_of_every_query(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["query", "billing", "--root", str(root)], env={"RETRIEVER_DEADLINE_SECONDS": "0"})
    assert result.exit_code == 2  # before: accepted, then every query failed with retrieval_timeout
    assert result.stderr.startswith("Error (invalid_config): invalid setting: RETRIEVER_DEADLINE_SECONDS='0'")


def test_tree_prints_outline_with_section_counts_and_skipped_files(runner: CliRunner, make_tree: TreeFactory) -> None:
    root = make_tree({**ACME, "broken.md": "---\ntitle: [x\n---\n"})
    result = runner.invoke(cli, ["tree", "--root", str(root)])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "memory/  8 documents, 15 sections (ready_sparse)"
    assert "  policies/  Policies" in lines
    assert "    leave.md  Leave Policy [policy] · 3 sections" in lines
    assert lines[-2] == "Skipped files (1):"
    assert lines[-1].startswith("  memory/broken.md: invalid YAML front matter")


def test_tree_and_check_print_a_file_name_holding_a_newline_on_one_line(
    runner: CliRunner, make_tree: TreeFactory
) -> None:
    root = make_tree({"a\n::warning file=x::pwned.md": "# A\n\n[gone](missing.md)\n", "b.md": "# B\n\nBeta.\n"})
    tree = runner.invoke(cli, ["tree", "--root", str(root)]).stdout.splitlines()
    check = runner.invoke(cli, ["check", "--root", str(root)]).stdout.splitlines()
    assert tree[1:] == ["  a\\n::warning file=x::pwned.md  A · 1 section", "  b.md  B · 1 section"]
    assert not any(line.startswith("::warning") for line in tree + check)
    assert any("a\\n::warning file=x::pwned.md" in line for line in check)


def test_tree_json_lists_documents_and_skipped(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["tree", "--root", str(root), "--json"])
    outline = json.loads(result.stdout)
    assert outline["memory_ready"] is True
    assert outline["skipped"] == []
    leave = next(d for d in outline["documents"] if d["path"] == "memory/policies/leave.md")
    assert leave == {
        "path": "memory/policies/leave.md",
        "tree_path": "Memory > Policies > Leave Policy",
        "title": "Leave Policy",
        "type": "policy",
        "sections": 3,
    }


def test_requests_escapes_a_session_id_with_control_characters_and_refuses_an_empty_one(
    runner: CliRunner, root: Path
) -> None:
    from retriever import Retriever, Settings
    from retriever.service.service import MemoryService
    from retriever.service.stores import open_store

    service = MemoryService(Retriever(root, Settings.from_env()), open_store(Settings.from_env()), watch=False)
    service.call_tool("retrieve_memory", {"prompt": "How many sick days?"}, handshake_session="s\n::error::x")
    service.close()
    lines = runner.invoke(cli, ["requests", "--root", str(root)]).stdout.splitlines()
    assert len(lines) == 1 and "session=s\\n::error::x" in lines[0]
    empty = runner.invoke(cli, ["requests", "--session-id", ""])
    assert empty.exit_code == 2 and "--session-id: is empty; name a session" in empty.stderr


def test_version_and_help_need_no_memory(runner: CliRunner) -> None:
    assert runner.invoke(cli, ["--version"]).stdout.startswith("retriever, version ")
    help_text = runner.invoke(cli, ["query", "--help"]).stdout
    assert "--top-k" in help_text and "--json" in help_text and "--root" in help_text


def test_requests_prints_the_request_log_newest_first(runner: CliRunner, root: Path) -> None:
    from retriever import Retriever, Settings
    from retriever.service.service import MemoryService
    from retriever.service.stores import open_store

    service = MemoryService(Retriever(root, Settings.from_env()), open_store(Settings.from_env()), watch=False)
    service.call_tool("retrieve_memory", {"prompt": "How many sick days?", "session_id": "cli"})
    service.call_tool("retrieve_memory", {"prompt": ""}, handshake_session="other")
    service.close()
    text = runner.invoke(cli, ["requests", "--root", str(root)])
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert len(lines) == 2
    assert " error " in lines[0] and "session=other" in lines[0]
    assert " ok " in lines[1] and "session=cli" in lines[1] and lines[1].endswith("How many sick days?")
    assert all(" retrieve_memory  session=" in line for line in lines)  # which tool was called
    records = json.loads(runner.invoke(cli, ["requests", "--json", "--session-id", "cli", "--root", str(root)]).stdout)
    assert [r["prompt"] for r in records] == ["How many sick days?"]
    assert records[0]["response"]["isError"] is False
    assert runner.invoke(cli, ["requests", "--since", "whenever"]).exit_code == 2


# -- retriever serve -------------------------------------------------------------------------------


def test_serve_refuses_a_non_loopback_host_without_a_key(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["serve", "--host", "0.0.0.0", "--port", "0", "--root", str(root)])
    assert result.exit_code == 2  # before: a warning, then it served the memory to the network
    assert result.stderr.startswith("Error: refusing to serve on 0.0.0.0 without an API key")
    assert "RETRIEVER_API_KEY" in result.stderr and "--insecure" in result.stderr


@pytest.mark.parametrize(
    ("args", "env"),
    [(["--insecure"], {}), ([], {"RETRIEVER_API_KEY": "k-0123456789"}), ([], {"RETRIEVER_API_KEYS": "k-01234=*"})],
)
def test_serve_on_a_non_loopback_host_goes_ahead_with_a_key_or_insecure(
    runner: CliRunner, root: Path, args: list[str], env: dict[str, str]
) -> None:
    # 192.0.2.1 (TEST-NET-1) is never a local address: getting as far as binding it proves the check passed.
    result = runner.invoke(cli, ["serve", "--host", "192.0.2.1", "--port", "0", "--root", str(root), *args], env=env)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: cannot listen on 192.0.2.1:0:"), result.stderr


def test_serve_stops_on_malformed_api_keys_without_showing_them(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["serve", "--port", "0", "--root", str(root)], env={"RETRIEVER_API_KEYS": "topsecret="})
    assert result.exit_code == 2
    assert result.stderr.startswith("Error (invalid_config): RETRIEVER_API_KEYS entry 1:")
    assert "topsecret" not in result.stderr


def test_serve_masks_the_redis_password_in_its_start_up_error(runner: CliRunner, root: Path) -> None:
    url = f"redis://user:hunter2@127.0.0.1:{free_port()}/0"
    result = runner.invoke(cli, ["serve", "--port", "0", "--root", str(root)], env={"RETRIEVER_REDIS_URL": url})
    assert result.exit_code == 1
    assert "hunter2" not in result.stderr  # before: the whole URL, password included
    assert result.stderr.startswith("Error (store_unavailable): cannot reach Redis at redis://user:***@127.0.0.1:")


def test_serve_announces_only_once_it_accepts_connections(root: Path) -> None:
    with serve_process(root) as served:
        port = int(served.url.split(":")[2].split("/")[0])
        # Right after the line, with no retry: before, this was refused (the socket was bound, not listening).
        socket.create_connection(("127.0.0.1", port), timeout=10).close()
        assert wait_until(lambda: answers(served.route("/healthz")), timeout=30)


def test_serve_at_log_level_info_writes_a_line_a_request_to_stderr(root: Path) -> None:
    with serve_process(root, env={"RETRIEVER_LOG_LEVEL": "INFO"}) as served:
        assert wait_until(lambda: answers(served.route("/healthz")), timeout=30)
        assert served.process.stderr is not None
        line = served.process.stderr.readline()  # bounded: the watchdog ends the child
        while line and "retriever.access" not in line:
            line = served.process.stderr.readline()
    assert re.fullmatch(r"INFO retriever\.access: GET /healthz (200|503) \d+ ms key=open\n", line)  # no key is asked


def test_on_a_terminal_excerpt_lines_and_the_searched_sections_keep_their_own_lines() -> None:
    report = "**Reasoning:** r\n**Sections searched:** s\n\n> one.\n> two.\n\n> alone."
    assert terminal_markdown(report) == "**Reasoning:** r  \n**Sections searched:** s\n\n> one.  \n> two.\n\n> alone."


@pytest.mark.parametrize("command", [["tree"], ["query", "sick days"], ["index"], ["status"], ["check"]])
def test_a_root_too_long_for_the_system_is_memory_not_found_cut_short(
    runner: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    """Path.is_dir lets ENAMETOOLONG through: a 5,000-character root had ended each command in a traceback."""
    result = runner.invoke(cli, [*command, "--root", str(tmp_path / ("a" * 5_000))])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "not a folder" in result.output + result.stderr
    assert len(result.stderr) < 2_000


@pytest.mark.parametrize("command", [["tree"], ["status"], ["query", "sick days"]])
def test_a_root_that_is_a_looping_link_is_not_a_folder_not_a_traceback(
    runner: CliRunner, tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    result = runner.invoke(cli, [*command, "--root", str(tmp_path / "loop")])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "is not a folder" in result.output + result.stderr


def test_a_config_file_under_an_unknown_users_home_is_named_missing(runner: CliRunner, root: Path) -> None:
    result = runner.invoke(cli, ["--config", "~no-such-user-here/c.toml", "tree", "--root", str(root)])
    assert result.exit_code == 2 and "config file '~no-such-user-here/c.toml' does not exist" in result.stderr


def test_status_with_a_state_folder_too_long_for_the_system_reports_it(runner: CliRunner, root: Path) -> None:
    """Path.is_file let ENAMETOOLONG through: the store's line had ended `status` in a traceback."""
    long_state = "/tmp/" + "s" * 5_000
    result = runner.invoke(cli, ["status", "--root", str(root)], env={"RETRIEVER_STATE_DIR": long_state})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert "Store:" in result.output


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as probe:
            probe.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback here")
def test_serve_on_a_bracketed_ipv6_loopback_binds_and_announces_it_once_bracketed(root: Path) -> None:
    import subprocess
    import sys
    import threading

    import httpx
    from conftest import child_env

    command = [sys.executable, "-m", "retriever", "serve", "--host", "[::1]", "--port", "0", "--root", str(root)]
    process = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, env=child_env())
    assert process.stderr is not None
    watchdog = threading.Timer(60, process.kill)  # bounds every blocking read of its stderr
    watchdog.start()
    try:
        lines = [process.stderr.readline()]
        while lines[-1] and not lines[-1].startswith("Serving MCP at"):
            lines.append(process.stderr.readline())
        url = lines[-1].split()[3]
        assert url.startswith("http://[::1]:") and url.endswith("/v1/mcp/memory"), lines  # had failed to bind
        health = url.replace("/v1/mcp/memory", "/healthz")
        assert wait_until(lambda: httpx.get(health, timeout=10).status_code == 200)  # 503 while the index loads
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait(timeout=15)
