"""``retriever mcp-config``: each client's file, location and format; merging with a backup; the env block;
and a written configuration that really starts a working server."""

from __future__ import annotations

import dataclasses
import json
import os
import shlex
import stat
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner
from conftest import TreeFactory
from fixtures import ACME
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from retriever.adapters import client_config as clients
from retriever.adapters.cli import cli

COMMAND = [os.path.abspath(sys.executable), "-P", "-m", "retriever"]  # what a test process's retriever_command() gives


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: every client file lands under it (or under the project folder)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("APPDATA", str(home / "AppData" / "Roaming"))
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    for name in [n for n in os.environ if n.startswith("OPENAI_")]:
        monkeypatch.delenv(name)
    return home


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(cli, ["mcp-config", *args])


def test_claude_desktop_config_is_printed_with_absolute_command_root_and_settings(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("RETRIEVER_TOP_K", "3")
    monkeypatch.setenv("RETRIEVER_ROOT", "/elsewhere")  # passed as --root, never in env
    result = _invoke("claude-desktop", "--root", str(root))
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {
        "mcpServers": {
            "company-memory": {
                "command": COMMAND[0],
                "args": [*COMMAND[1:], "mcp", "--root", str(root)],
                "env": {"RETRIEVER_STATE_DIR": os.environ["RETRIEVER_STATE_DIR"], "RETRIEVER_TOP_K": "3"},
            }
        }
    }
    assert f"Merge this into {home / '.config' / 'Claude' / 'claude_desktop_config.json'}" in result.stderr
    assert not (home / ".config" / "Claude").exists()  # printing writes nothing


def test_a_relative_root_becomes_absolute(home: Path, make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    os.chdir(root.parent)
    result = _invoke("cursor", "--root", root.name)
    assert json.loads(result.stdout)["mcpServers"]["company-memory"]["args"][-1] == str(root)


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        ("darwin", "home/Library/Application Support/Claude/claude_desktop_config.json"),
        ("win32", "home/AppData/Roaming/Claude/claude_desktop_config.json"),
        ("linux", "home/.config/Claude/claude_desktop_config.json"),
    ],
)
def test_claude_desktop_keeps_its_file_where_each_os_puts_app_settings(
    tmp_path: Path, platform: str, expected: str
) -> None:
    home = tmp_path / "home"
    environ = {"HOME": str(home), "APPDATA": str(home / "AppData" / "Roaming")}
    path = clients.config_path(
        clients.CLIENTS["claude-desktop"], "user", platform=platform, environ=environ, cwd=tmp_path
    )
    assert path == tmp_path / expected


@pytest.mark.parametrize(
    ("client", "scope", "expected"),
    [
        ("cursor", "user", "home/.cursor/mcp.json"),
        ("cursor", "project", "project/.cursor/mcp.json"),
        ("vscode", "project", "project/.vscode/mcp.json"),
        ("vscode", "user", "home/.config/Code/User/mcp.json"),
        ("claude-code", "project", "project/.mcp.json"),
        ("claude-code", "user", None),
        ("claude-code", "local", None),
    ],
)
def test_each_client_and_scope_has_its_file(tmp_path: Path, client: str, scope: str, expected: str | None) -> None:
    environ = {"HOME": str(tmp_path / "home")}
    path = clients.config_path(
        clients.CLIENTS[client], scope, platform="linux", environ=environ, cwd=tmp_path / "project"
    )
    assert path == (tmp_path / expected if expected else None)


def test_vscode_entries_go_under_servers_with_type_stdio(home: Path, make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    result = _invoke("vscode", "--root", str(root))
    entry = json.loads(result.stdout)["servers"]["company-memory"]
    assert (entry["type"], entry["command"]) == ("stdio", COMMAND[0])
    assert "Merge this into" in result.stderr and ".vscode/mcp.json" in result.stderr


def test_claude_code_gets_the_claude_mcp_add_command_with_the_name_before_env(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "gpt-4.1-mini")
    result = _invoke("claude-code", "--root", str(root))
    assert result.exit_code == 0, result.stderr
    words = shlex.split(result.stdout)
    assert words[:8] == ["claude", "mcp", "add", "--transport", "stdio", "--scope", "local", "company-memory"]
    assert words[words.index("--") + 1 :] == [*COMMAND, "mcp", "--root", str(root)]
    assert "--env" in words and "RETRIEVER_LLM_MODEL=gpt-4.1-mini" in words
    assert words.index("company-memory") < words.index("--env")  # a variadic --env would swallow a later name
    assert not (home.parent / "project" / ".mcp.json").exists()


def test_secrets_are_included_only_when_set_and_stderr_says_so(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    quiet = _invoke("cursor", "--root", str(root))
    assert "OPENAI_API_KEY" not in quiet.stdout and "Note:" not in quiet.stderr
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    monkeypatch.setenv("RETRIEVER_REDIS_URL", "redis://:hunter2@127.0.0.1:6379/0")
    monkeypatch.setenv("RETRIEVER_API_KEY", "http-only")  # `retriever serve`'s key: a stdio server never needs it
    loud = _invoke("cursor", "--root", str(root))
    env = json.loads(loud.stdout)["mcpServers"]["company-memory"]["env"]
    assert env["OPENAI_API_KEY"] == "sk-test-123" and env["OPENAI_BASE_URL"] == "http://127.0.0.1:8080/v1"
    assert "RETRIEVER_API_KEY" not in env
    assert "holds secrets from your environment (OPENAI_API_KEY, RETRIEVER_REDIS_URL)" in loud.stderr


def test_a_redis_password_given_as_a_query_parameter_counts_as_a_secret(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_REDIS_URL", "redis://127.0.0.1:6379/0?password=hunter2")
    loud = _invoke("cursor", "--root", str(make_tree(ACME)))
    assert "holds secrets from your environment (RETRIEVER_REDIS_URL)" in loud.stderr


def test_write_creates_the_file_private_when_it_holds_secrets(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    result = _invoke("claude-desktop", "--root", str(root), "--write")
    assert result.exit_code == 0, result.stderr
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    assert result.stdout.splitlines()[0] == f"Added server 'company-memory' in {path}."
    assert json.loads(path.read_text())["mcpServers"]["company-memory"]["env"]["OPENAI_API_KEY"] == "sk-test-123"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"{path} holds secrets" in result.stderr


def test_write_merges_into_an_existing_file_keeping_other_servers_and_a_backup(
    home: Path, make_tree: TreeFactory
) -> None:
    root = make_tree(ACME)
    path = home / ".cursor" / "mcp.json"
    path.parent.mkdir()
    before = {"mcpServers": {"github": {"command": "gh-mcp", "args": []}}, "theme": "dark"}
    path.write_text(json.dumps(before))
    result = _invoke("cursor", "--root", str(root), "--write")
    assert result.exit_code == 0, result.stderr
    after = json.loads(path.read_text())
    assert after["theme"] == "dark" and after["mcpServers"]["github"] == before["mcpServers"]["github"]
    assert after["mcpServers"]["company-memory"]["args"][-1] == str(root)
    [backup] = path.parent.glob("mcp.json.bak-*")
    assert json.loads(backup.read_text()) == before
    assert f"The previous file is kept as {backup}." in result.stdout


def test_backups_made_within_one_second_never_overwrite_each_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(clients.time, "strftime", lambda fmt: "20261202-031500")  # one second, three writes
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {"precious": {}}}')
    backups = [clients.write_config(path, {"mcpServers": {name: {}}}, private=False) for name in "abc"]
    assert [b.name for b in backups if b] == [
        "mcp.json.bak-20261202-031500",
        "mcp.json.bak-20261202-031500-2",
        "mcp.json.bak-20261202-031500-3",
    ]
    assert [json.loads(b.read_text())["mcpServers"] for b in backups if b] == [{"precious": {}}, {"a": {}}, {"b": {}}]


def test_writing_again_replaces_the_entry_and_an_unchanged_one_is_left_alone(
    home: Path, make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    other = tmp_path / "other-memory"
    other.mkdir()
    (other / "a.md").write_text("# A\n\nText.\n")
    assert _invoke("vscode", "--root", str(root), "--write").exit_code == 0
    again = _invoke("vscode", "--root", str(root), "--write")
    assert again.stdout.startswith("Server 'company-memory' in ") and "already up to date" in again.stdout
    moved = _invoke("vscode", "--root", str(other), "--write")
    assert moved.stdout.startswith("Replaced server 'company-memory'")
    path = Path.cwd() / ".vscode" / "mcp.json"
    assert json.loads(path.read_text())["servers"]["company-memory"]["args"][-1] == str(other)
    assert len(list(path.parent.glob("mcp.json.bak-*"))) == 1  # the unchanged run wrote no backup


@pytest.mark.parametrize("content", ['// my servers\n{"servers": {}}', "[1, 2]", '{"servers": ["x"]}'])
def test_a_file_that_is_not_a_plain_json_object_is_left_untouched_with_exit_2(
    home: Path, make_tree: TreeFactory, content: str
) -> None:
    root = make_tree(ACME)
    path = Path.cwd() / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    result = _invoke("vscode", "--root", str(root), "--write")
    assert result.exit_code == 2
    assert str(path) in result.stderr and "merge the printed block by hand" in result.stderr
    assert path.read_text() == content
    assert list(path.parent.iterdir()) == [path]


def test_claude_code_writes_the_project_mcp_json_with_secrets_as_references(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    result = _invoke("claude-code", "--root", str(root), "--write")
    assert result.exit_code == 0, result.stderr
    entry = json.loads((Path.cwd() / ".mcp.json").read_text())["mcpServers"]["company-memory"]
    assert entry["type"] == "stdio" and entry["env"]["OPENAI_API_KEY"] == "${OPENAI_API_KEY}"
    assert "sk-test-123" not in (Path.cwd() / ".mcp.json").read_text()
    assert "written as ${NAME}" in result.stderr


def test_claude_code_user_scope_cannot_be_written_and_says_what_to_run(home: Path, make_tree: TreeFactory) -> None:
    result = _invoke("claude-code", "--root", str(make_tree(ACME)), "--scope", "user", "--write")
    assert result.exit_code == 2
    assert "run the command printed without --write" in result.stderr
    assert not (home / ".claude.json").exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["claude-desktop", "--scope", "project"], "--scope project is not a Claude Desktop scope; use one of: user"),
        (["cursor", "--name", "my server"], "--name 'my server' is not a server name every client accepts"),
    ],
)
def test_bad_options_are_usage_errors_naming_the_value(home: Path, args: list[str], message: str) -> None:
    result = _invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr


def test_a_missing_root_is_warned_about_but_the_config_is_still_printed(home: Path, tmp_path: Path) -> None:
    result = _invoke("cursor", "--root", str(tmp_path / "typo"))
    assert result.exit_code == 0
    assert "Warning (memory_not_found)" in result.stderr and str(tmp_path / "typo") in result.stderr
    assert json.loads(result.stdout)["mcpServers"]["company-memory"]["args"][-1] == str(tmp_path / "typo")


def test_the_installed_command_names_its_own_script_by_absolute_path(home: Path, make_tree: TreeFactory) -> None:
    script = Path(sys.executable).with_name("retriever")
    if not script.is_file():
        pytest.skip("the retriever script is not installed next to this interpreter")
    env = {**os.environ, "PATH": "/usr/bin:/bin"}  # not on PATH: the absolute path is what makes it work
    done = subprocess.run(
        ["retriever", "mcp-config", "cursor", "--root", str(make_tree(ACME))],
        executable=str(script),
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mcpServers"]["company-memory"]["command"] == str(script)


def test_a_written_config_starts_a_server_that_answers_with_the_settings_it_carries(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("RETRIEVER_TOP_K", "2")
    assert _invoke("claude-desktop", "--root", str(root), "--write").exit_code == 0
    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    entry = config["mcpServers"]["company-memory"]
    # As a client starts it: the SDK passes only its default variables (HOME, PATH, …) plus the env block.
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])

    async def call() -> Any:
        async with Client(params) as client:
            return await client.call_tool("retrieve_memory", {"prompt": "Who owns the billing migration?"})

    result = anyio.run(call).model_dump(by_alias=True)
    assert result["isError"] is False
    facts = result["structuredContent"]["retrieval"]["facts"]
    assert 0 < len(facts) <= 2  # RETRIEVER_TOP_K arrived through the env block


def test_a_config_file_named_with_config_reaches_the_server_as_an_absolute_argument(
    home: Path, make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    named = tmp_path / "project" / "retriever.toml"
    named.write_text(f'root = "{root}"\ntop_k = 3\n', encoding="utf-8")

    result = CliRunner().invoke(cli, ["--config", "retriever.toml", "mcp-config", "cursor"])  # relative to the cwd

    assert result.exit_code == 0, result.stderr
    entry = json.loads(result.stdout)["mcpServers"]["company-memory"]
    assert entry["args"] == [*COMMAND[1:], "mcp", "--root", str(root), "--config", str(named)]


@pytest.mark.parametrize(
    ("args", "relative", "servers"),
    [
        (["vscode"], ".vscode/mcp.json", "servers"),  # project is VS Code's default scope
        (["cursor", "--scope", "project"], ".cursor/mcp.json", "mcpServers"),
    ],
)
def test_a_project_file_gets_environment_references_never_a_secrets_value(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch, args: list[str], relative: str, servers: str
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-SECRET123")
    monkeypatch.setenv("RETRIEVER_TOP_K", "3")
    result = _invoke(*args, "--root", str(make_tree(ACME)), "--write")
    assert result.exit_code == 0, result.stderr
    path = Path.cwd() / relative
    assert "sk-live-SECRET123" not in path.read_text()
    env = json.loads(path.read_text())[servers]["company-memory"]["env"]
    assert env == {  # the client's documented syntax for its own environment; plain settings as they are
        "OPENAI_API_KEY": "${env:OPENAI_API_KEY}",
        "RETRIEVER_STATE_DIR": os.environ["RETRIEVER_STATE_DIR"],
        "RETRIEVER_TOP_K": "3",
    }
    assert "written as ${env:NAME}" in result.stderr and "Set OPENAI_API_KEY in the environment" in result.stderr
    assert "--scope user" in result.stderr and "only you can read it" not in result.stderr


def test_a_printed_project_configuration_shows_references_and_a_user_one_shows_values_with_a_note(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-SECRET123")
    project = _invoke("vscode", "--root", str(root))  # to be pasted into .vscode/mcp.json, a shared file
    assert "sk-live-SECRET123" not in project.stdout
    assert json.loads(project.stdout)["servers"]["company-memory"]["env"]["OPENAI_API_KEY"] == "${env:OPENAI_API_KEY}"
    assert "Set OPENAI_API_KEY in the environment VS Code starts from" in project.stderr
    user = _invoke("vscode", "--root", str(root), "--scope", "user")  # your own screen, for your own file
    assert json.loads(user.stdout)["servers"]["company-memory"]["env"]["OPENAI_API_KEY"] == "sk-live-SECRET123"
    assert "holds secrets from your environment (OPENAI_API_KEY); keep it private" in user.stderr


def test_a_client_without_a_reference_syntax_gets_no_secret_in_a_shared_file() -> None:
    entry = clients.Entry(
        "retriever", ("mcp",), (("OPENAI_API_KEY", "sk-1"), ("RETRIEVER_TOP_K", "3")), ("OPENAI_API_KEY",)
    )
    plain = dataclasses.replace(clients.CLIENTS["cursor"], env_reference=None)
    assert entry.as_json(plain, references=True)["env"] == {"RETRIEVER_TOP_K": "3"}
    assert entry.as_json(plain)["env"] == {"OPENAI_API_KEY": "sk-1", "RETRIEVER_TOP_K": "3"}


def test_an_up_to_date_user_file_holding_secrets_is_still_made_private(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(ACME)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    assert _invoke("cursor", "--root", str(root), "--write").exit_code == 0
    path = home / ".cursor" / "mcp.json"
    path.chmod(0o644)
    again = _invoke("cursor", "--root", str(root), "--write")
    assert "already up to date" in again.stdout
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert f"{path} holds secrets from your environment (OPENAI_API_KEY); only you can read it." in again.stderr


def test_a_symlinked_config_is_written_through_and_stays_a_link(home: Path, make_tree: TreeFactory) -> None:
    dotfiles = home / "dotfiles" / "cursor-mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {"github": {"command": "gh-mcp"}}}')
    link = home / ".cursor" / "mcp.json"
    link.parent.mkdir()
    link.symlink_to(dotfiles)
    result = _invoke("cursor", "--root", str(make_tree(ACME)), "--write")
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and link.resolve() == dotfiles
    assert set(json.loads(dotfiles.read_text())["mcpServers"]) == {"github", "company-memory"}
    [backup] = link.parent.glob("mcp.json.bak-*")  # beside the path the user knows, not in the dotfiles folder
    assert json.loads(backup.read_text()) == {"mcpServers": {"github": {"command": "gh-mcp"}}}


def test_parallel_writers_keep_every_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fcntl = pytest.importorskip("fcntl")
    path = tmp_path / "mcp.json"
    writers = 8
    together = threading.Barrier(writers, timeout=30)
    merge = clients.merge_into

    def merge_after_all_have_read(*args: Any) -> Any:
        # Between this writer's read and its write.  Unlocked, every writer gets here having read the same
        # file and waits for the rest, so all merge into that one file and each write drops the others'
        # servers.  Locked (the probe cannot share the folder's lock), the others are kept out: no one to
        # wait for.
        probe = os.open(tmp_path, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)
            together.wait()
        except BlockingIOError:
            pass
        finally:
            os.close(probe)
        return merge(*args)

    monkeypatch.setattr(clients, "merge_into", merge_after_all_have_read)
    client = clients.CLIENTS["cursor"]

    def write(number: int) -> str:
        change, _ = clients.update_config(path, client, f"s{number}", {"command": "x"}, private=False)
        return change

    with ThreadPoolExecutor(writers) as pool:
        changes = list(pool.map(write, range(1, writers + 1)))
    assert changes == ["added"] * writers
    assert sorted(json.loads(path.read_text())["mcpServers"]) == [f"s{n}" for n in range(1, writers + 1)]


def test_a_file_nested_too_deep_to_parse_is_not_plain_json_and_is_left_alone(
    home: Path, make_tree: TreeFactory
) -> None:
    path = Path.cwd() / ".vscode" / "mcp.json"
    path.parent.mkdir()
    content = '{"servers": {"x": ' + "[" * 100_000 + "]" * 100_000 + "}}"
    path.write_text(content)
    result = _invoke("vscode", "--root", str(make_tree(ACME)), "--write")
    assert result.exit_code == 2
    assert f"{path} is not plain JSON" in result.stderr and "merge the printed block by hand" in result.stderr
    assert "Traceback" not in result.stderr and path.read_text() == content


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"keep": "me", "x": "\\ud800"}', "lone surrogate"),
        ('{"keep": 1e400}', "'1e400' would not be written back exactly"),
        ('{"big": 123456789012345678901234567890.5}', "would not be written back exactly"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": [-Infinity]}', "-Infinity is not a JSON number"),
    ],
)
def test_a_file_a_rewrite_would_corrupt_is_left_alone_with_no_backup_beside_it(
    home: Path, make_tree: TreeFactory, content: str, reason: str
) -> None:
    path = Path.cwd() / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text(content)
    result = _invoke("vscode", "--root", str(make_tree(ACME)), "--write")
    assert result.exit_code == 2, result.output
    assert f"{path} is not plain JSON (or holds numbers we cannot write back exactly)" in result.stderr
    assert reason in result.stderr and "merge the printed block by hand" in result.stderr
    assert path.read_text() == content and list(path.parent.iterdir()) == [path]


def test_a_setting_that_is_not_utf8_is_refused_before_any_backup_or_write(
    home: Path, make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path.cwd() / ".vscode" / "mcp.json"
    path.parent.mkdir()
    path.write_text('{"servers": {}}')
    monkeypatch.setenv("OPENAI_ORG", "org-secret-\udcff-tail")  # os.environ's form of non-UTF-8 bytes
    result = _invoke("vscode", "--root", str(make_tree(ACME)), "--write")
    assert result.exit_code == 2, result.output
    assert f"cannot write {path}" in result.stderr and "is not valid UTF-8; nothing was changed" in result.stderr
    assert "OPENAI_ORG" in result.stderr  # the setting is named ...
    assert "secret" not in result.stderr and "tail" not in result.stderr  # ... its value is not shown
    assert path.read_text() == '{"servers": {}}' and list(path.parent.iterdir()) == [path]


def test_a_failed_write_leaves_the_file_as_it_was_and_no_backup(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": {}}')

    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(clients.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        clients.update_config(path, clients.CLIENTS["cursor"], "s", {"command": "x"}, private=False)
    assert path.read_text() == '{"mcpServers": {}}' and list(tmp_path.iterdir()) == [path]
