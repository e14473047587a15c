"""A missing or empty memory root is a set-up error to a tool caller: ``memory_not_found`` / ``memory_empty``
with ``isError: true`` on the service, over stdio and over HTTP, a warning on stderr as a server starts,
and exit 2 from ``retriever query``.  The library keeps answering ``memory_ready: false``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from conftest import TreeFactory, answers, child_env, serve_process, validate_tool_result, wait_until
from fixtures import ACME

from retriever import Retriever
from retriever.adapters.cli import cli
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import TOOL_NAME

QUESTION = "Who owns billing?"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(name: str = TOOL_NAME, request_id: int = 1, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments or {"prompt": QUESTION}}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.fixture
def empty_root(tmp_path: Path) -> Path:
    """A folder without markdown: notes in other formats only (a typo'd --root often looks like this)."""
    root = tmp_path / "not-the-memory"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "notes.txt").write_text("Billing is owned by Maria.\n", encoding="utf-8")
    return root


def _service(root: Path, tmp_path: Path) -> MemoryService:
    return MemoryService(Retriever(root), SQLiteStore(tmp_path / "store.sqlite"), watch=False)


def test_a_missing_root_answers_is_error_memory_not_found_naming_the_root(tmp_path: Path) -> None:
    service = _service(tmp_path / "nope", tmp_path)
    result = service.call_tool(TOOL_NAME, {"prompt": QUESTION})
    assert result["isError"] is True
    content = result["structuredContent"]
    assert (content["status"], content["error_code"]) == ("error", "memory_not_found")
    assert str(tmp_path / "nope") in content["error_message"] and "--root" in content["error_message"]
    validate_tool_result(result)
    [logged] = service.requests()
    assert (logged["status"], logged["error_code"]) == ("error", "memory_not_found")
    service.close()


def test_an_empty_root_answers_is_error_memory_empty_with_the_next_step(empty_root: Path, tmp_path: Path) -> None:
    service = _service(empty_root, tmp_path)
    result = service.call_tool(TOOL_NAME, {"prompt": QUESTION})
    assert result["isError"] is True
    assert result["structuredContent"]["error_code"] == "memory_empty"
    message = result["structuredContent"]["error_message"]
    assert str(empty_root) in message and "holds no markdown files" in message and "retriever init" in message
    validate_tool_result(result)
    service.close()


def test_bad_arguments_are_still_invalid_arguments_on_a_missing_root(tmp_path: Path) -> None:
    service = _service(tmp_path / "nope", tmp_path)
    result = service.call_tool(TOOL_NAME, {"prompt": ""})
    assert result["structuredContent"]["error_code"] == "invalid_arguments"
    service.close()


def test_the_library_still_says_memory_ready_false_for_an_empty_root(empty_root: Path) -> None:
    content = Retriever(empty_root).retrieve(QUESTION).structured
    assert (content["status"], content["memory_ready"], content["readiness_state"]) == ("ok", False, "empty")


def _stdio(root: Path, *messages: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """Run ``retriever mcp`` over ``messages``; it answers every request before exiting at end of input."""
    lines = "".join(json.dumps(m) + "\n" for m in (INITIALIZE, INITIALIZED, *messages))
    done = subprocess.run(
        [sys.executable, "-m", "retriever", "mcp", "--root", str(root)],
        input=lines,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()], done.stderr


@pytest.mark.parametrize("kind", ["missing", "empty"])
def test_retriever_mcp_warns_at_start_and_answers_is_error(kind: str, tmp_path: Path, empty_root: Path) -> None:
    root, code = (tmp_path / "nope", "memory_not_found") if kind == "missing" else (empty_root, "memory_empty")
    replies, stderr = _stdio(root, _call())
    assert stderr.startswith(f"Warning ({code}): memory root {str(root)!r}")
    assert f"every retrieve_memory call answers isError with {code}" in stderr
    assert stderr.count(f"memory root {str(root)!r}") == 1  # before: said again by the watcher's first round
    result = next(r for r in replies if r["id"] == 1)["result"]
    assert result["isError"] is True and result["structuredContent"]["error_code"] == code


def test_retriever_mcp_on_a_good_root_says_nothing_at_start(make_tree: TreeFactory) -> None:
    replies, stderr = _stdio(make_tree(ACME), _call())
    assert stderr == ""
    assert next(r for r in replies if r["id"] == 1)["result"]["isError"] is False


def test_retriever_serve_warns_at_start_and_answers_is_error_over_http(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with serve_process(missing) as served:
        assert served.lines[0].startswith(f"Warning (memory_not_found): memory root {str(missing)!r} is not a folder")
        assert wait_until(lambda: answers(served.route("/healthz"), 503), timeout=30)
        reply = httpx.post(served.url, json=_call(), headers={"Accept": "application/json"}, timeout=30).json()
        assert reply["result"]["isError"] is True
        assert reply["result"]["structuredContent"]["error_code"] == "memory_not_found"


def test_query_on_a_folder_without_markdown_exits_2_saying_so(empty_root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", QUESTION, "--root", str(empty_root)])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"Error (memory_empty): memory root {str(empty_root)!r} holds no markdown files")
    assert "--root DIR" in result.stderr


def test_query_json_on_a_folder_without_markdown_prints_the_seed_error_object(empty_root: Path) -> None:
    result = CliRunner().invoke(cli, ["query", QUESTION, "--json", "--root", str(empty_root)])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error_code"] == "memory_empty"


def test_query_names_skipped_files_when_every_markdown_file_was_skipped(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "broken.md").write_bytes(b"\xff\xfe not utf-8 \x00\x00")
    result = CliRunner().invoke(cli, ["query", QUESTION, "--root", str(root)])
    assert result.exit_code == 2
    assert f"1 file(s) were skipped, `retriever tree --root {root}` says why" in result.stderr  # before: "DIR"


def test_a_memory_that_failed_to_load_answers_is_error_with_what_stopped_it_on_every_call(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    import math

    from retriever import Settings

    # Infinite refresh: as under a server's watcher, which retries the load (the retrieval does not).
    retriever = Retriever(make_tree(ACME), Settings.from_env(max_files=2), refresh_interval=math.inf)
    service = MemoryService(retriever, SQLiteStore(tmp_path / "store.sqlite"), watch=False)
    for _ in range(2):  # the second had answered status "ok" with no facts: an agent read an empty memory
        result = service.call_tool(TOOL_NAME, {"prompt": QUESTION})
        assert result["isError"] is True
        content = result["structuredContent"]
        assert (content["status"], content["error_code"]) == ("error", "invalid_config")
        assert "RETRIEVER_MAX_FILES" in content["error_message"]
        validate_tool_result(result)
    service.close()


def test_a_load_that_fails_for_another_reason_answers_is_error_memory_unavailable_never_an_internal_error(
    make_tree: TreeFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import math
    import sqlite3

    from retriever.memory.memory import Memory

    def failing(*_: Any, **__: Any) -> Memory:
        raise sqlite3.OperationalError("disk I/O error")

    retriever = Retriever(make_tree(ACME), refresh_interval=math.inf)  # as under a server's watcher
    monkeypatch.setattr(Memory, "open", failing)
    with pytest.raises(sqlite3.OperationalError):
        _ = retriever.memory  # the watcher's first load: it records why
    service = MemoryService(retriever, SQLiteStore(tmp_path / "store.sqlite"), watch=False)
    result = service.call_tool(TOOL_NAME, {"prompt": QUESTION})  # it had raised: JSON-RPC -32603 over HTTP
    content = result["structuredContent"]
    assert (result["isError"], content["error_code"]) == (True, "memory_unavailable")
    assert "OperationalError: disk I/O error" in content["error_message"]
    service.close()
