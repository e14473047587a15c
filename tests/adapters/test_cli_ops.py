"""``retriever status``, ``retriever cache list|prune`` and ``--config``, through CliRunner and real processes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import TreeFactory, answers, child_env, free_port, serve_process, wait_until
from fixtures import ACME
from llm_server import ScriptedLLM, serve

from retriever.adapters import status
from retriever.adapters.cli import cli
from retriever.config_files import user_config_path
from retriever.service.stores.sqlite import SQLiteStore


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def root(make_tree: TreeFactory) -> Path:
    return make_tree({**ACME, "broken.md": "---\ntitle: [unclosed\n---\n# Broken\n"})


@pytest.fixture
def llm(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    for server in serve():
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        yield server


def _status(runner: CliRunner, *args: str) -> tuple[Result, dict]:
    result = runner.invoke(cli, ["status", *args, "--json"])
    return result, json.loads(result.stdout) if result.stdout.startswith("{") else {}


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


# status


def test_status_reports_the_memory_its_skipped_files_cache_and_store(runner: CliRunner, root: Path) -> None:
    result, report = _status(runner, "--root", str(root))

    assert result.exit_code == 0, result.stderr
    assert report["root"] == {"path": str(root.resolve()), "source": "flag (--root)"}
    memory = report["memory"]
    assert (memory["state"], memory["files"], memory["skipped_files"]) == ("ready_sparse", 8, 1)
    assert memory["skipped_first"][0]["path"] == "memory/broken.md"
    assert memory["sections"] > 8 and memory["index"] == "built"
    cache = report["index_cache"]
    assert cache["exists"] and cache["size_bytes"] > 10_000 and 0 <= cache["index_age_seconds"] < 60
    assert report["store"]["kind"] == "sqlite" and report["store"]["path"].endswith("state/store.sqlite")
    assert report["llm"]["model"] is None and report["llm"]["probe"]["answers"] is None
    assert report["memory_identity"] == {"kind": "path", "value": str(root.resolve())}
    assert report["settings"]["top_k"] == {"value": 12, "source": "default", "variable": "RETRIEVER_TOP_K"}
    assert report["problems"] == []


def test_status_says_where_each_setting_came_from(
    runner: CliRunner, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = _write(user_config_path(), f'root = "{root}"\ntop_k = 4\n')
    _write(root / ".retriever.toml", "max_documents = 2\n[check]\ndisable = []\n")
    named = _write(tmp_path / "named.toml", "deadline_seconds = 30\n")
    monkeypatch.setenv("RETRIEVER_REFRESH_SECONDS", "7")

    result = runner.invoke(cli, ["--config", str(named), "status", "--root", str(root)])

    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert f"  top_k = 4  [user config ({user})]" in lines
    assert f"  max_documents = 2  [tree config ({root / '.retriever.toml'})]" in lines
    assert f"  deadline_seconds = 30.0  [--config ({named})]" in lines
    assert "  refresh_seconds = 7.0  [env (RETRIEVER_REFRESH_SECONDS)]" in lines
    assert f"Root:          {root.resolve()}  [flag (--root)]" in lines
    assert any(line.endswith("others at their defaults (--json lists every one)") for line in lines)


def test_config_works_before_or_after_the_command_and_from_the_environment(
    runner: CliRunner, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _write(tmp_path / "named.toml", f'root = "{root}"\ntop_k = 3\n')
    before = runner.invoke(cli, ["--config", str(named), "status", "--json"])
    after = runner.invoke(cli, ["status", "--config", str(named), "--json"])
    monkeypatch.setenv("RETRIEVER_CONFIG", str(named))
    variable = runner.invoke(cli, ["query", "Who leads the Platform Team?", "--json"])

    for result in (before, after):
        report = json.loads(result.stdout)
        assert report["settings"]["top_k"]["source"] == f"--config ({named})"
        assert report["root"]["path"] == str(root.resolve())
    assert variable.exit_code == 0, variable.stderr
    assert len(json.loads(variable.stdout)["retrieval"]["facts"]) <= 3


def test_status_probes_the_llm_endpoint_and_never_prints_the_key(
    runner: CliRunner, root: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-1234")

    result, report = _status(runner, "--root", str(root))
    text = runner.invoke(cli, ["status", "--root", str(root)])

    assert result.exit_code == 0, result.stderr
    probe = report["llm"]["probe"]
    assert probe["answers"] is True and probe["detail"] == "answers; lists test-model"
    assert report["llm"]["key"] == "set (env (OPENAI_API_KEY))"
    assert report["settings"]["llm_api_key"]["value"] == "(set)"
    assert llm.gets[0] == ("/v1/models", "Bearer sk-secret-1234")
    assert "GET /models answers; lists test-model in" in text.stdout
    for output in (result.stdout, result.stderr, text.stdout, text.stderr):
        assert "sk-secret-1234" not in output


def test_status_exits_1_naming_an_llm_endpoint_that_refuses_the_key_or_is_not_there(
    runner: CliRunner, root: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "test-model")
    llm.models_status = 401
    refused, report = _status(runner, "--root", str(root))
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    started = time.monotonic()
    absent, nowhere = _status(runner, "--root", str(root))

    assert refused.exit_code == 1
    assert report["llm"]["probe"]["detail"] == "HTTP 401 (the key was refused)"
    assert report["problems"] == [f"the LLM endpoint {llm.url} does not answer: HTTP 401 (the key was refused)"]
    assert absent.exit_code == 1 and nowhere["llm"]["probe"]["answers"] is False
    assert "ConnectError" in nowhere["llm"]["probe"]["detail"]
    assert time.monotonic() - started < 10


def test_status_probes_the_llm_endpoint_without_httpx_which_only_the_tests_install(
    runner: CliRunner, root: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "test-model")
    monkeypatch.setitem(sys.modules, "httpx", None)  # as on a plain install: importing it fails

    result, report = _status(runner, "--root", str(root))

    assert result.exit_code == 0, result.stderr
    assert report["llm"]["probe"]["detail"] == "answers; lists test-model"


def test_status_probe_of_an_endpoint_that_answers_a_byte_at_a_time_ends_within_its_bound(
    runner: CliRunner, root: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "test-model")
    monkeypatch.setattr(status, "PROBE_SECONDS", 1.0)
    llm.models_trickle = 0.2  # each byte well within a read's timeout, the whole reply far past the probe's bound
    started = time.monotonic()

    result, report = _status(runner, "--root", str(root))

    assert result.exit_code == 1
    assert report["llm"]["probe"] == {"answers": False, "detail": "no answer within 1 s"}
    assert time.monotonic() - started < 5


def test_status_reports_redis_reachable_or_not_with_its_password_masked(
    runner: CliRunner, root: Path, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_REDIS_URL", redis_url)
    up, report = _status(runner, "--root", str(root))
    monkeypatch.setenv("RETRIEVER_REDIS_URL", f"redis://:hunter2@127.0.0.1:{free_port()}/0")
    down, dead = _status(runner, "--root", str(root))

    assert up.exit_code == 0 and report["store"] == {"kind": "redis", "url": redis_url, "reachable": True}
    assert down.exit_code == 1 and dead["store"]["reachable"] is False
    assert dead["store"]["url"].startswith("redis://***@127.0.0.1:")
    assert "hunter2" not in down.stdout + down.stderr


def test_status_reads_an_existing_sqlite_store_and_exits_1_naming_one_that_is_not_a_database(
    runner: CliRunner, root: Path, tmp_path: Path
) -> None:
    _, before = _status(runner, "--root", str(root))
    store = Path(before["store"]["path"])
    SQLiteStore(store).close()  # as a server's first start makes it
    good, report = _status(runner, "--root", str(root))
    store.write_bytes(b"not a database " * 700)
    bad, broken = _status(runner, "--root", str(root))

    assert good.exit_code == 0 and report["store"]["readable"] is True
    assert bad.exit_code == 1 and broken["store"]["readable"] is False
    assert broken["problems"] == [
        f"the SQLite store at {store} cannot be read (file is not a database); move it aside and a new one is made"
    ]
    assert store.read_bytes() == b"not a database " * 700  # status only reads


def test_status_warns_of_a_graph_whose_folder_does_not_exist_and_still_reports(
    runner: CliRunner, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    team, missing = tmp_path / "team", tmp_path / "no-such-folder"
    team.mkdir()
    monkeypatch.setenv("RETRIEVER_GRAPHS", f"team={team},eng={missing}")

    result, report = _status(runner, "--root", str(root))

    assert result.exit_code == 0, result.stderr
    assert report["settings"]["graphs"]["value"] == {"team": str(team), "eng": str(missing)}
    assert result.stderr.splitlines() == [
        f"Warning: RETRIEVER_GRAPHS: graph 'eng' names {missing}, which is not a folder; /memories/retrieve "
        "reads nothing from that graph until it is: create the folder or fix the path"
    ]


def test_status_warns_of_a_users_trees_folder_that_does_not_exist(
    runner: CliRunner, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "no-users-here"
    monkeypatch.setenv("RETRIEVER_USER_TREES", str(missing))

    result, _ = _status(runner, "--root", str(root))

    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"Warning: RETRIEVER_USER_TREES: the users' trees folder {missing} is not a folder; no user's own tree is "
        "read until it is: create the folder or fix the path"
    ]


@pytest.mark.parametrize(
    "value",
    [
        "k1-secret=../etc",
        "k1-secret=alice,k1-secret=bob",
        "k1-secret=",
        "k\u200b-secret=*",
        "k\x01-secret=*",  # the HTTP server answers 400 to a header holding it: before, status said valid
        "ключ-secret=*",  # a header is read as Latin-1, so no client's can match: before, status said valid
        "k1-secret=alice k2-secret-SECRETSECRETSECRET",  # before: the second key was quoted
    ],
)
def test_status_exits_1_listing_api_keys_that_serve_would_refuse_to_start_with_never_the_key(
    runner: CliRunner, root: Path, value: str
) -> None:
    env = {"RETRIEVER_API_KEYS": value}
    serve = runner.invoke(cli, ["serve", "--port", "0", "--root", str(root)], env=env)
    assert serve.exit_code == 2 and serve.stderr.startswith("Error (invalid_config): ")
    refusal = serve.stderr.removeprefix("Error (invalid_config): ").strip()

    result = runner.invoke(cli, ["status", "--root", str(root), "--json"], env=env)
    text = runner.invoke(cli, ["status", "--root", str(root)], env=env)

    assert result.exit_code == 1 and text.exit_code == 1  # before: 0, and "api_keys = (set)" as if all were well
    report = json.loads(result.stdout)
    assert report["api_keys"] == {"valid": False, "error": refusal}
    assert report["problems"] == [f"API keys: {refusal}; `retriever serve` refuses to start until this is fixed"]
    assert "API keys:      INVALID" in text.stdout and f"  - API keys: {refusal}" in text.stdout
    assert "secret" not in result.stdout + text.stdout + result.stderr + text.stderr


def test_status_refuses_a_keys_path_that_is_a_fifo_at_once_as_serve_does(
    runner: CliRunner, root: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "keys.fifo"
    os.mkfifo(fifo)  # before: `retriever status` and `serve` waited for a writer, forever
    env = {"RETRIEVER_API_KEYS": str(fifo)}
    serve = runner.invoke(cli, ["serve", "--port", "0", "--root", str(root)], env=env)
    result = runner.invoke(cli, ["status", "--root", str(root), "--json"], env=env)
    refusal = f"{str(fifo)!r} is not a regular file"
    assert serve.exit_code == 2 and refusal in serve.stderr
    assert result.exit_code == 1 and refusal in json.loads(result.stdout)["api_keys"]["error"]


def test_an_llm_endpoint_that_is_no_url_is_a_problem_in_status_and_stops_query_naming_it(
    runner: CliRunner, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RETRIEVER_LLM_MODEL", "test-model")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://[::1:8080/v1")

    result, report = _status(runner, "--root", str(root))  # before: ValueError: Invalid IPv6 URL, from both
    query = runner.invoke(cli, ["query", "Who leads the Platform Team?", "--root", str(root)])
    serve = runner.invoke(cli, ["serve", "--port", "0", "--root", str(root)])

    refusal = (
        "the LLM endpoint 'http://[::1:8080/v1' is not a valid URL (Invalid IPv6 URL); set OPENAI_BASE_URL "
        "(llm_base_url in a config file) to one such as http://127.0.0.1:8080/v1, or unset it"
    )
    assert result.exit_code == 1 and report["llm"]["probe"] == {"answers": False, "detail": refusal}
    assert report["problems"] == [f"{refusal}; `retriever query` and `serve` stop until this is fixed"]
    for stopped in (query, serve):
        assert stopped.exit_code == 2 and stopped.stderr.endswith(f"Error (invalid_config): {refusal}\n")


def test_status_counts_the_api_keys_serve_accepts(runner: CliRunner, root: Path) -> None:
    env = {"RETRIEVER_API_KEY": "solo-secret", "RETRIEVER_API_KEYS": "k1-secret=alice|bob,k2-secret=*"}
    result = runner.invoke(cli, ["status", "--root", str(root), "--json"], env=env)
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["api_keys"] == {"valid": True, "keys": 3, "bound_to_users": 1}
    assert "secret" not in result.stdout


def test_status_of_a_missing_root_exits_1_and_says_how_to_fix_it(runner: CliRunner, tmp_path: Path) -> None:
    result, report = _status(runner, "--root", str(tmp_path / "nope"))
    assert result.exit_code == 1
    assert report["memory"] == {"state": "missing"}
    assert report["problems"] == [
        f"memory root {str(tmp_path / 'nope')!r} is not a folder: pass --root DIR or set root in a config file"
    ]


def test_a_secret_in_the_trees_config_stops_every_command_with_exit_2(runner: CliRunner, root: Path) -> None:
    _write(root / ".retriever.toml", 'llm_api_key = "sk-committed"\n')
    for command in (["status"], ["query", "who leads platform"], ["tree"], ["check"]):
        result = runner.invoke(cli, [*command, "--root", str(root)])
        assert result.exit_code == 2, (command, result.stdout)
        assert "llm_api_key holds a secret" in result.stderr and "sk-committed" not in result.stderr


def test_serve_takes_its_host_from_a_config_file(runner: CliRunner, root: Path, tmp_path: Path) -> None:
    named = _write(tmp_path / "serve.toml", f'root = "{root}"\nhost = "0.0.0.0"\nport = {free_port()}\n')
    result = runner.invoke(cli, ["serve", "--config", str(named)])
    assert result.exit_code == 2
    assert "0.0.0.0" in result.stderr and "RETRIEVER_API_KEY" in result.stderr


# cache list | prune


def _cache_of(runner: CliRunner, root: Path) -> Path:
    """Index ``root`` in a process of its own (which ends, closing its cache) and return the cache folder."""
    command = [sys.executable, "-m", "retriever", "tree", "--root", str(root)]
    subprocess.run(command, env=child_env(), capture_output=True, timeout=60, check=True)
    listed = json.loads(runner.invoke(cli, ["cache", "list", "--json"]).stdout)
    return Path(next(e["folder"] for e in listed if e["root"] == str(root.resolve())))


def _two_trees(make_tree: TreeFactory, tmp_path: Path) -> tuple[Path, Path]:
    kept = make_tree(ACME)
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "a.md").write_text("# Gone\n\nA tree that will be deleted.\n", encoding="utf-8")
    return kept, gone


def test_cache_list_shows_each_root_its_size_last_use_and_whether_it_still_exists(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path
) -> None:
    kept, gone = _two_trees(make_tree, tmp_path)
    _cache_of(runner, kept), _cache_of(runner, gone)
    for path in gone.iterdir():
        path.unlink()
    gone.rmdir()

    listed = json.loads(runner.invoke(cli, ["cache", "list", "--json"]).stdout)
    text = runner.invoke(cli, ["cache", "list"])

    assert {e["root"]: e["root_exists"] for e in listed} == {str(kept.resolve()): True, str(gone.resolve()): False}
    assert all(e["size_bytes"] > 1000 and time.time() - e["last_used"] < 60 and not e["in_use"] for e in listed)
    assert any(line.endswith(f"{gone.resolve()}  [root missing]") for line in text.stdout.splitlines())
    assert text.stderr.startswith("2 caches, ")


def test_cache_list_prints_a_root_whose_path_holds_a_newline_on_one_line(runner: CliRunner, tmp_path: Path) -> None:
    odd = tmp_path / "mem\n::warning::x"
    odd.mkdir()
    (odd / "a.md").write_text("# A\n\nText.\n", encoding="utf-8")
    _cache_of(runner, odd)
    lines = runner.invoke(cli, ["cache", "list"]).stdout.splitlines()
    assert len(lines) == 1 and "mem\\n::warning::x" in lines[0]


def test_cache_prune_missing_removes_only_the_caches_of_roots_that_are_gone(
    runner: CliRunner, make_tree: TreeFactory, tmp_path: Path
) -> None:
    kept, gone = _two_trees(make_tree, tmp_path)
    kept_cache, gone_cache = _cache_of(runner, kept), _cache_of(runner, gone)
    (gone / "a.md").unlink()
    gone.rmdir()

    for name in ("in-use", "lock"):
        (gone_cache / name).unlink(missing_ok=True)
    dry = runner.invoke(cli, ["cache", "prune", "--missing", "--dry-run"])
    assert dry.exit_code == 0 and gone_cache.is_dir()
    assert dry.stdout.startswith(f"would remove: {gone.resolve()}")
    assert not (gone_cache / "in-use").exists() and not (gone_cache / "lock").exists()  # a look leaves nothing
    pruned = runner.invoke(cli, ["cache", "prune", "--missing"])

    assert pruned.exit_code == 0, pruned.stderr
    assert pruned.stdout.startswith(f"removed: {gone.resolve()}")
    assert not gone_cache.exists() and kept_cache.is_dir()
    assert "1 matching cache; freed" in pruned.stderr


def test_cache_prune_older_than_goes_by_last_use(runner: CliRunner, make_tree: TreeFactory, tmp_path: Path) -> None:
    fresh, old = _two_trees(make_tree, tmp_path)
    fresh_cache, old_cache = _cache_of(runner, fresh), _cache_of(runner, old)
    recorded = json.loads((old_cache / "root.json").read_text())
    recorded["last_used"] = time.time() - 31 * 86400
    (old_cache / "root.json").write_text(json.dumps(recorded))

    result = runner.invoke(cli, ["cache", "prune", "--older-than", "30d"])

    assert result.exit_code == 0, result.stderr
    assert fresh_cache.is_dir() and not old_cache.exists()


def test_cache_prune_leaves_a_cache_a_running_server_has_open(runner: CliRunner, root: Path) -> None:
    with serve_process(root) as server:
        assert wait_until(lambda: answers(server.route("/healthz"))), "the server never loaded its memory"
        result = runner.invoke(cli, ["cache", "prune", "--all"])
        listed = json.loads(runner.invoke(cli, ["cache", "list", "--json"]).stdout)
        assert server.process.poll() is None
    after = runner.invoke(cli, ["cache", "prune", "--all"])

    assert result.exit_code == 0
    assert result.stdout.startswith(f"in use: {root.resolve()} (a process has it open; stop it first, or prune later)")
    assert [e["in_use"] for e in listed] == [True]
    assert after.stdout.startswith(f"removed: {root.resolve()}")
    assert json.loads(runner.invoke(cli, ["cache", "list", "--json"]).stdout) == []


def test_cache_prune_dry_run_reports_a_cache_in_use_as_a_real_prune_does(runner: CliRunner, root: Path) -> None:
    from retriever import Settings
    from retriever.memory.memory import Memory

    cache = Memory.open(root, Settings.from_env()).cache  # holds its in-use lock, as a running server does
    assert cache is not None
    try:
        dry = runner.invoke(cli, ["cache", "prune", "--older-than", "0", "--dry-run"])
        real = runner.invoke(cli, ["cache", "prune", "--older-than", "0"])
    finally:
        cache.close()

    in_use = f"in use: {root.resolve()} (a process has it open; stop it first, or prune later)"
    assert dry.exit_code == real.exit_code == 0
    assert dry.stdout.startswith(in_use) and real.stdout.startswith(in_use)
    assert "would free 0 B." in dry.stderr and "freed 0 B." in real.stderr
    assert [e["in_use"] for e in json.loads(runner.invoke(cli, ["cache", "list", "--json"]).stdout)] == [False]


def test_cache_prune_never_touches_anything_outside_the_cache_home(
    runner: CliRunner, root: Path, tmp_path: Path, isolated_state: Path
) -> None:
    cache = _cache_of(runner, root)
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("mine")
    os.symlink(outside, cache.parent / "precious-link")

    result = runner.invoke(cli, ["cache", "prune", "--all"])

    assert result.exit_code == 0
    assert (outside / "keep.txt").read_text() == "mine" and (cache.parent / "precious-link").is_symlink()
    assert not cache.exists()
    assert str(outside) not in result.stdout


def test_a_cache_from_before_roots_were_recorded_is_listed_and_pruned_only_by_all_or_age(
    runner: CliRunner, root: Path
) -> None:
    cache = _cache_of(runner, root)
    (cache / "root.json").unlink()

    listed = runner.invoke(cli, ["cache", "list"]).stdout
    missing = runner.invoke(cli, ["cache", "prune", "--missing"])
    everything = runner.invoke(cli, ["cache", "prune", "--all"])

    assert f"(root unknown: {cache.name})" in listed
    assert missing.stdout == "" and cache.name in everything.stdout and not cache.exists()


def test_cache_prune_needs_something_to_prune_and_a_valid_age(runner: CliRunner) -> None:
    nothing = runner.invoke(cli, ["cache", "prune"])
    bad_age = runner.invoke(cli, ["cache", "prune", "--older-than", "soon"])
    assert nothing.exit_code == 2 and "--missing, --older-than AGE or --all" in nothing.stderr
    assert bad_age.exit_code == 2 and "'soon' is not an age; write it like 30d, 12h, 90m or 2w" in bad_age.stderr


_HOSTILE_ROOT_FILES = {  # {root} is a folder that exists
    "far-future": '{{"root": "{root}", "last_used": 1e300}}',
    "not-a-number": '{{"root": "{root}", "last_used": NaN}}',
    "long-root": json.dumps({"root": "/" + "a" * 5000, "last_used": 1.0}).replace("{", "{{").replace("}", "}}"),
    "root-not-a-path": '{{"root": ["{root}"], "last_used": "yesterday"}}',
    "not-json": '{{"root": "{root}", ',
}


def test_cache_list_and_prune_take_a_malformed_root_json_as_unknown_and_say_why(
    runner: CliRunner, tmp_path: Path
) -> None:
    from retriever.config import Settings
    from retriever.memory.caches import index_home

    home = index_home(Settings.from_env())
    for name, content in _HOSTILE_ROOT_FILES.items():
        (home / name).mkdir(parents=True)
        (home / name / "root.json").write_text(content.format(root=tmp_path), encoding="utf-8")

    listed = runner.invoke(cli, ["cache", "list"])
    as_json = runner.invoke(cli, ["cache", "list", "--json"])
    missing = runner.invoke(cli, ["cache", "prune", "--missing"])
    dry = runner.invoke(cli, ["cache", "prune", "--older-than", "1d", "--dry-run"])
    old = runner.invoke(cli, ["cache", "prune", "--older-than", "1d"])
    everything = runner.invoke(cli, ["cache", "prune", "--all", "--dry-run"])

    assert all(r.exit_code == 0 for r in (listed, as_json, missing, dry, old, everything)), listed.output
    lines = listed.stdout.splitlines()
    assert len(lines) == 5 and all("[root.json" in line for line in lines)
    assert any("root.json's last_used 1e+300 is not a time" in line for line in lines)
    assert "5 of them with a root.json that could not be taken as written" in listed.stderr
    entries = {Path(e["folder"]).name: e for e in json.loads(as_json.stdout)}
    assert "root.json is unreadable (Expecting" in entries["not-json"]["problem"]
    assert entries["long-root"]["root"] is None and entries["long-root"]["root_exists"] is None
    assert missing.stdout == ""  # a root not known to be gone is never taken for gone (nor one that exists)
    # By age: a last use that is a time stands (1970: pruned); one that is not gives way to the files' (new: kept).
    assert dry.stdout.startswith(f"would remove: {home / 'long-root'}") and len(dry.stdout.splitlines()) == 1
    assert old.stdout.startswith(f"removed: {home / 'long-root'}") and len(old.stdout.splitlines()) == 1
    assert len(everything.stdout.splitlines()) == 4 and all(
        (home / name).is_dir() for name in entries if "long" not in name
    )


def test_a_last_use_no_calendar_can_show_is_listed_without_a_date() -> None:
    from retriever.adapters import cli_ops

    assert cli_ops._when(1e300) == "(no date)       " and len(cli_ops._when(0.0)) == 16


# requests


def test_requests_echoes_a_session_id_with_control_characters_escaped_on_one_line(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["requests", "--session-id", "\x1b]0;pwned\x07abc"])
    assert result.exit_code == 0
    assert result.stderr.startswith("No requests match --session-id \\x1b]0;pwned\\x07abc in the ")
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr


def test_requests_echoes_a_huge_session_id_cut_short(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["requests", "--session-id", "s" * 100_000])
    assert result.exit_code == 0
    assert f"--session-id {'s' * 80}…[cut: 99920 more characters] in the " in result.stderr
    assert len(result.stderr) < 1000


def test_requests_names_an_unreadable_since_briefly_and_escaped(runner: CliRunner) -> None:
    for since, shown in [("9" * 400, f"'{'9' * 80}…[cut: 320 more characters]'"), ("\x1b[31mred", "'\\x1b[31mred'")]:
        result = runner.invoke(cli, ["requests", "--since", since])
        assert result.exit_code == 2
        assert f"Invalid value for --since: {shown} is neither Unix seconds nor an ISO 8601 time" in result.stderr
        assert len(result.stderr) < 400
