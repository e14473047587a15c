"""The tool service shared by the MCP transports: sessions, history, errors, the request log."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import TreeFactory, free_port, wait_until
from fixtures import ACME

from retriever import Retriever, Settings
from retriever.service import MemoryService
from retriever.store import Store
from retriever.store_redis import RedisStore
from retriever.store_sqlite import SQLiteStore
from retriever.tools import TOOL_NAME, UnknownTool, tool_definition


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "redis":
        built: Store = RedisStore(request.getfixturevalue("redis_url"))
    else:
        built = SQLiteStore(tmp_path / "store.sqlite")
    yield built


@pytest.fixture
def service(make_tree: TreeFactory, store: Store) -> Iterator[MemoryService]:
    running = MemoryService(Retriever(make_tree(ACME), Settings.from_env()), store, watch=False)
    yield running
    running.close()


def _facts(result: dict) -> list[str]:
    return [f["statement"] for f in result["structuredContent"]["retrieval"]["facts"]]


def test_the_tool_is_described_as_read_only_with_a_closed_input_schema() -> None:
    tool = tool_definition()
    assert tool["name"] == TOOL_NAME == "retrieve_memory"
    assert tool["annotations"]["readOnlyHint"] is True
    assert tool["annotations"]["destructiveHint"] is False
    assert tool["inputSchema"]["required"] == ["prompt"]
    assert tool["inputSchema"]["additionalProperties"] is False
    assert set(tool["inputSchema"]["properties"]) == {"prompt", "session_id"}
    assert tool["inputSchema"]["properties"]["prompt"]["maxLength"] == 8000
    assert "People, teams, and ownership" in tool["description"]


def test_a_call_answers_with_text_and_structured_content(service: MemoryService) -> None:
    result = service.call_tool(TOOL_NAME, {"prompt": "How many sick days do employees earn?"})
    assert result["isError"] is False
    assert result["content"][0]["text"] == result["structuredContent"]["content_text"]
    assert _facts(result)[0] == "Employees earn 10 sick days per year."


@pytest.mark.parametrize(
    ("arguments", "code"),
    [
        ({"prompt": ""}, "invalid_arguments"),
        ({"prompt": "x", "limit": 3}, "invalid_arguments"),
        ("nope", "invalid_arguments"),
    ],
)
def test_bad_arguments_are_an_error_result_not_an_exception(
    service: MemoryService, arguments: object, code: str
) -> None:
    result = service.call_tool(TOOL_NAME, arguments)
    assert result["isError"] is True
    assert result["structuredContent"]["status"] == "error"
    assert result["structuredContent"]["error_code"] == code
    assert result["content"][0]["text"].startswith("# Retrieval failed")


def test_a_timeout_is_an_error_result(make_tree: TreeFactory, store: Store) -> None:
    slow = MemoryService(Retriever(make_tree(ACME), Settings.from_env(deadline_seconds=0)), store, watch=False)
    result = slow.call_tool(TOOL_NAME, {"prompt": "billing"})
    assert result["structuredContent"]["error_code"] == "retrieval_timeout"
    assert slow.call_tool(TOOL_NAME, {"prompt": "billing"})["isError"] is True  # and it goes on serving


def test_an_unknown_tool_is_a_protocol_error(service: MemoryService) -> None:
    with pytest.raises(UnknownTool, match="unknown tool 'delete_memory'"):
        service.call_tool("delete_memory", {})


def test_a_follow_up_is_rewritten_with_the_sessions_earlier_prompt(service: MemoryService) -> None:
    service.call_tool(TOOL_NAME, {"prompt": "Tell me about the billing migration project", "session_id": "s1"})
    follow = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "s1"})
    triage = follow["structuredContent"]["triage"]
    assert triage["rewritten_query"] == "and who owns it? (context: billing migration project)"
    other = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "s2"})
    assert other["structuredContent"]["triage"]["rewritten_query"] == "and who owns it?"


def test_the_handshake_session_is_used_when_no_session_id_is_given(service: MemoryService) -> None:
    service.call_tool(TOOL_NAME, {"prompt": "Tell me about the billing migration project"}, handshake_session="h1")
    follow = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?"}, handshake_session="h1")
    assert follow["structuredContent"]["diagnostics"]["session_id"] == "h1"
    assert "billing migration" in follow["structuredContent"]["triage"]["rewritten_query"]
    explicit = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "t9"}, handshake_session="h1")
    assert explicit["structuredContent"]["diagnostics"]["session_id"] == "t9"


def test_the_session_keeps_the_last_five_prompts(service: MemoryService) -> None:
    for i in range(7):
        service.call_tool(TOOL_NAME, {"prompt": f"question number {i} about billing", "session_id": "cap"})
    assert service.store.prompts(service.session_key("cap")) == [f"question number {i} about billing" for i in range(2, 7)]


def test_every_call_is_logged_with_full_prompt_and_response(service: MemoryService) -> None:
    ok = service.call_tool(TOOL_NAME, {"prompt": "How many sick days?", "session_id": "log"}, transport="http")
    bad = service.call_tool(TOOL_NAME, {"prompt": ""}, handshake_session="log")
    rows = service.requests(limit=10, session_id="log")
    assert [r["status"] for r in rows] == ["error", "ok"]
    assert rows[1]["request_id"] == ok["structuredContent"]["diagnostics"]["request_id"]
    assert rows[1]["prompt"] == "How many sick days?"
    assert rows[1]["response"] == ok
    assert rows[1]["transport"] == "http"
    assert rows[0]["error_code"] == "invalid_arguments"
    assert rows[0]["response"] == bad
    assert rows[0]["duration_ms"] >= 0


def test_health_reports_readiness_counts_and_store(service: MemoryService) -> None:
    _ = service.retriever.memory
    assert service.health() | {"root": None} == {
        "memory_ready": True,
        "readiness_state": "ready_sparse",
        "files": 8,
        "sections": 15,
        "skipped_files": 0,
        "store": service.store.kind,
        "root": None,
    }


def test_a_missing_root_is_reported_by_health(tmp_path: Path) -> None:
    service = MemoryService(Retriever(tmp_path / "none"), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    assert service.health()["readiness_state"] == "missing"
    result = service.call_tool(TOOL_NAME, {"prompt": "billing"})
    assert result["structuredContent"]["memory_ready"] is False


def test_the_watcher_picks_up_an_edited_file_without_a_restart(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(ACME)
    retriever = Retriever(root, Settings.from_env(refresh_seconds=0.05))
    service = MemoryService(retriever, SQLiteStore(tmp_path / "s.sqlite"))
    try:
        assert wait_until(lambda: retriever.loaded)
        (root / "policies" / "remote.md").write_text("# Remote work\n\nRemote work is allowed from Madeira.\n")

        def found() -> bool:
            result = service.call_tool(TOOL_NAME, {"prompt": "Is remote work allowed from Madeira?"})
            return "Remote work is allowed from Madeira." in _facts(result)

        assert wait_until(found, timeout=10)
    finally:
        service.close()


def test_a_dead_redis_at_request_time_is_a_warning_and_retrieval_still_answers(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed")
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        store = _connect(f"redis://127.0.0.1:{port}/0")
        service = MemoryService(Retriever(make_tree(ACME), Settings.from_env()), store, watch=False)
        process.terminate()
        process.wait(timeout=10)
        result = service.call_tool(TOOL_NAME, {"prompt": "How many sick days?", "session_id": "gone"})
        assert result["isError"] is False
        assert _facts(result)[0] == "Employees earn 10 sick days per year."
        warnings = result["structuredContent"]["diagnostics"]["warnings"]
        assert any(w.startswith("session history unavailable: Redis at redis://127.0.0.1:") for w in warnings)
        # The log write is queued, not attempted in the call: the warning says the store is failing.
        assert any(w.startswith("request not logged yet: the redis store is failing (Redis at") for w in warnings)
    finally:
        if process.poll() is None:
            process.kill()


def _connect(url: str) -> RedisStore:
    store: list[RedisStore] = []

    def up() -> bool:
        try:
            store.append(RedisStore(url, timeout=0.5))
        except Exception:  # noqa: BLE001 - not up yet
            return False
        return True

    assert wait_until(up)
    return store[0]


def test_retrievals_keep_answering_while_files_change_and_the_index_compacts(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    retriever = Retriever(root, Settings.from_env())
    service = MemoryService(retriever, SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    _ = retriever.memory
    failures: list[str] = []
    stop = threading.Event()

    def ask() -> None:
        while not stop.is_set():
            result = service.call_tool(TOOL_NAME, {"prompt": "How many sick days do employees earn?"})
            if result["isError"] or not _facts(result)[0].startswith("Employees earn"):
                failures.append(json.dumps(result["structuredContent"])[:300])

    askers = [threading.Thread(target=ask) for _ in range(4)]
    for thread in askers:
        thread.start()
    try:
        leave = root / "policies" / "leave.md"
        for i in range(12):  # more refreshes than segments allowed, so the index compacts too
            leave.write_text(leave.read_text().replace(f"{10 + i} sick days", f"{11 + i} sick days"))
            (root / f"notes/n{i}.md").parent.mkdir(exist_ok=True)
            (root / f"notes/n{i}.md").write_text(f"# Note {i}\n\nInvoices batch {i} shipped.\n")
            stats = retriever.memory.refresh()
            assert stats.parsed == 2
    finally:
        stop.set()
        for thread in askers:
            thread.join(timeout=30)
        service.close()
    assert failures == []
    final = service.retriever.retrieve("How many sick days do employees earn?")
    assert final.facts[0].statement == "Employees earn 22 sick days per year."
