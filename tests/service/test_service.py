"""The tool service shared by the MCP transports: sessions, history, errors, the request log."""

from __future__ import annotations

import functools
import json
import math
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TreeFactory, free_port, redis_process, wait_until
from fixtures import ACME
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.service.service import MemoryService, memory_scope
from retriever.service.stores.base import Store
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import TOOL_NAME, UnknownTool, tool_definition

# Hypothesis keeps its caches under ./.hypothesis unless told otherwise: tests write only in temp folders.


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
    slow = MemoryService(Retriever(make_tree(ACME), Settings.from_env(deadline_seconds=1e-9)), store, watch=False)
    result = slow.call_tool(TOOL_NAME, {"prompt": "billing"})
    assert result["structuredContent"]["error_code"] == "retrieval_timeout"
    assert slow.call_tool(TOOL_NAME, {"prompt": "billing"})["isError"] is True  # and it goes on serving


def test_a_timeout_on_memories_retrieve_is_a_504_naming_retrieval_timeout(make_tree: TreeFactory, store: Store) -> None:
    """It had escaped as an unhandled exception: HTTP 500 "internal error", a traceback in the server's log."""
    slow = MemoryService(Retriever(make_tree(ACME), Settings.from_env(deadline_seconds=1e-9)), store, watch=False)
    status, body = slow.memories_retrieve({"query": "billing", "agent_id": "a"}, None)
    assert (status, body["error_code"]) == (504, "retrieval_timeout")
    assert "deadline" in body["detail"] or "seconds" in body["detail"]
    assert slow.requests(10, None, None)[0]["error_code"] == "retrieval_timeout"


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
    assert service.store.prompts(service.session_key("cap")) == [
        f"question number {i} about billing" for i in range(2, 7)
    ]


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
        "error": None,
        "refresh_error": None,
    }


def test_a_missing_root_is_reported_by_health(tmp_path: Path) -> None:
    service = MemoryService(Retriever(tmp_path / "none"), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    assert service.health()["readiness_state"] == "missing"
    result = service.call_tool(TOOL_NAME, {"prompt": "billing"})
    assert (result["isError"], result["structuredContent"]["error_code"]) == (True, "memory_not_found")  # issue 12


def test_health_has_the_same_keys_missing_and_ready_with_the_root_and_error_in_both(
    service: MemoryService, tmp_path: Path
) -> None:
    missing = MemoryService(Retriever(tmp_path / "none"), SQLiteStore(tmp_path / "m.sqlite"), watch=False).health()
    _ = service.retriever.memory
    ready = service.health()
    assert list(missing) == list(ready)
    assert missing["root"] == str(tmp_path / "none") and "none" in missing["error"]
    assert ready["root"] == str(service.retriever.root) and ready["error"] is None


@pytest.mark.parametrize("tool", [TOOL_NAME, "get_memory"])
def test_both_tools_call_a_missing_or_empty_root_an_error_naming_the_clients_configuration(
    tool: str, tmp_path: Path
) -> None:
    """``get_memory`` had answered an empty root as "nothing recorded" and a missing one with the CLI's hint."""
    (tmp_path / "empty").mkdir()
    arguments = {"prompt": "billing"} if tool == TOOL_NAME else {"query": "billing"}
    for root, code in ((tmp_path / "none", "memory_not_found"), (tmp_path / "empty", "memory_empty")):
        service = MemoryService(Retriever(root), SQLiteStore(tmp_path / f"{code}.sqlite"), watch=False)
        result = service.call_tool(tool, arguments)
        content = result["structuredContent"]
        assert (result["isError"], content["error_code"]) == (True, code)
        if code == "memory_not_found":
            assert "in the client's configuration" in content["error_message"]


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
        assert any(w.startswith("request may not be logged: the redis store is failing (Redis at") for w in warnings)
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


# -- sessions belong to one memory (issue 9) --------------------------------------------------------


def test_the_same_session_id_sent_to_two_memories_is_two_sessions(
    make_tree: TreeFactory, tmp_path: Path, store: Store
) -> None:
    other = tmp_path / "other"
    (other / "notes").mkdir(parents=True)
    (other / "notes" / "n.md").write_text("# Notes\n\nNothing about billing here.\n")
    first = MemoryService(Retriever(make_tree(ACME), Settings.from_env()), store, watch=False)
    second = MemoryService(Retriever(other, Settings.from_env()), first.store, watch=False)
    first.call_tool(TOOL_NAME, {"prompt": "Tell me about the billing migration project", "session_id": "leak-1"})
    follow = second.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "leak-1"})

    assert follow["structuredContent"]["triage"]["rewritten_query"] == "and who owns it?"
    assert follow["structuredContent"]["diagnostics"]["session_id"] == "leak-1"
    same = first.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "leak-1"})
    assert "billing migration" in same["structuredContent"]["triage"]["rewritten_query"]
    # The log files every call under the client's own session id, in its own memory's log.
    assert [r["prompt"] for r in first.requests(session_id="leak-1")] == [
        "and who owns it?",
        "Tell me about the billing migration project",
    ]
    assert [r["prompt"] for r in second.requests(session_id="leak-1")] == ["and who owns it?"]
    first.close()


def test_the_same_session_id_of_two_users_is_two_sessions(service: MemoryService) -> None:
    service.call_tool(
        TOOL_NAME, {"prompt": "Tell me about the billing migration project", "session_id": "s"}, user_id="ann"
    )
    theirs = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "s"}, user_id="bob")
    mine = service.call_tool(TOOL_NAME, {"prompt": "and who owns it?", "session_id": "s"}, user_id="ann")

    assert theirs["structuredContent"]["triage"]["rewritten_query"] == "and who owns it?"
    assert "billing migration" in mine["structuredContent"]["triage"]["rewritten_query"]
    assert service.session_key("s", "ann") != service.session_key("s", "bob") != service.session_key("s")


# -- any string in: an answer or a documented error, and a log that reads back ------------------------


def _strict_json(value: object) -> bytes:
    """What an HTTP response or ``retriever requests --json`` writes: no NaN, valid UTF-8."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False).encode("utf-8")


@pytest.mark.parametrize(
    "arguments",
    [
        {"prompt": "hi", "x": "\ud800"},
        {"prompt": "hi", "x": math.nan},
        {"prompt": "hi", "x": [math.inf, {"y": -math.inf}]},
        {"prompt": "x \ud800 y"},
        {"prompt": "hi", "session_id": "\ud800"},
        {"\ud800": 1},
    ],
)
def test_odd_arguments_are_invalid_arguments_and_the_log_still_reads_back(
    service: MemoryService, arguments: dict[str, object]
) -> None:
    result = service.call_tool(TOOL_NAME, arguments, handshake_session="odd")

    assert result["structuredContent"]["error_code"] == "invalid_arguments"
    _strict_json(result)
    (row,) = service.requests(session_id="odd")
    assert row["error_code"] == "invalid_arguments"
    _strict_json(service.requests())


@pytest.mark.parametrize("kind", ["sqlite", "redis"])
def test_the_request_log_route_and_the_requests_command_read_back_odd_arguments(
    make_tree: TreeFactory, request: pytest.FixtureRequest, kind: str
) -> None:
    from click.testing import CliRunner
    from conftest import serving

    from retriever.adapters.cli import cli
    from retriever.service.stores import open_store

    env = {"RETRIEVER_REDIS_URL": request.getfixturevalue("redis_url")} if kind == "redis" else {}
    settings = Settings.from_env(redis_url=env.get("RETRIEVER_REDIS_URL"))
    root = make_tree(ACME)
    service = MemoryService(Retriever(root, settings), open_store(settings), watch=False)
    service.call_tool(TOOL_NAME, {"prompt": "hi", "x": "\ud800", "n": math.nan}, handshake_session="odd")
    service.memories_retrieve({"query": "sick days", "agent_id": "a", "x": math.inf, "y": "\udfff"}, None)
    with serving(service) as url:
        response = httpx.get(f"{url}/v1/dev/mcp-requests")
    service.close()

    assert response.status_code == 200
    assert response.json()["count"] == 2
    printed = CliRunner().invoke(cli, ["requests", "--json", "--root", str(root)], env=env)
    assert printed.exit_code == 0, printed.output
    rows = json.loads(printed.stdout)
    assert [r["tool"] for r in rows] == ["memories/retrieve", "retrieve_memory"]
    assert rows[1]["arguments"] == {"prompt": "hi", "x": "\ufffd", "n": None}


def test_every_logged_argument_is_a_bounded_prefix(service: MemoryService) -> None:
    def nest(depth: int) -> object:
        value: object = "bottom"
        for _ in range(depth):
            value = [value]
        return value

    huge = {"prompt": "p" * 50_000, "x": "x" * 1_000_000, "deep": nest(5_000), "wide": list(range(100_000))}
    result = service.call_tool(TOOL_NAME, huge, handshake_session="big")

    assert result["structuredContent"]["error_code"] == "invalid_arguments"
    (row,) = service.requests(session_id="big")
    logged = row["arguments"]
    assert logged["x"].startswith("x" * 8000) and logged["x"].endswith("…[cut: 992000 more characters]")
    assert logged["prompt"] == row["prompt"] and len(row["prompt"]) < 8100
    assert len(logged["wide"]) == 101 and "nested too deep" in json.dumps(logged["deep"])
    assert len(_strict_json(row)) < 40_000


# -- a stalled store is a warning, not an outage -----------------------------------------------------


def test_calls_keep_answering_while_redis_is_stopped(make_tree: TreeFactory, tmp_path: Path) -> None:
    with redis_process(tmp_path) as (process, url):
        service = MemoryService(Retriever(make_tree(ACME), Settings.from_env()), RedisStore(url), watch=False)
        _ = service.retriever.memory
        ask = {"prompt": "How many sick days do employees earn?", "session_id": "stall"}
        service.call_tool(TOOL_NAME, ask)
        process.send_signal(signal.SIGSTOP)
        try:
            slowest, results = _calls(service, ask, 40)
        finally:
            process.send_signal(signal.SIGCONT)
        assert slowest < 1.0  # the first read waits 250 ms; then the breaker skips the store
        assert all(_facts(r)[0] == "Employees earn 10 sick days per year." for r in results)
        warnings = results[-1]["structuredContent"]["diagnostics"]["warnings"]
        assert any(w.startswith("session history unavailable: skipped for") for w in warnings)
        assert any(w.startswith("request may not be logged: the redis store is failing") for w in warnings)
        last = service.call_tool(TOOL_NAME, ask)
        service.close()  # flushes what waited in the queue
        reopened = RedisStore(url)
        scope = memory_scope(service.retriever.root, service.retriever.settings)
        logged = [r.request_id for r in reopened.requests(limit=100, session_id="stall", scope=scope)]
        reopened.close()
        assert logged[0] == last["structuredContent"]["diagnostics"]["request_id"]


def test_calls_keep_answering_while_another_process_holds_an_exclusive_sqlite_lock(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    path = tmp_path / "s.sqlite"
    service = MemoryService(Retriever(make_tree(ACME), Settings.from_env()), SQLiteStore(path), watch=False)
    ask = {"prompt": "How many sick days do employees earn?", "session_id": "locked"}
    service.call_tool(TOOL_NAME, ask)
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_LOCK, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and select.select([holder.stdout], [], [], 10)[0], "no lock in 10 s"
        assert holder.stdout.readline().strip() == "locked"
        slowest, results = _calls(service, ask, 40)
    finally:
        holder.communicate("", timeout=10)  # releases the lock
    assert slowest < 1.0
    assert all(not r["isError"] for r in results)
    assert len(service.requests(limit=100, session_id="locked")) == 41  # the queued writes land once it is free
    service.close()


_HOLD_LOCK = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""


def _calls(service: MemoryService, arguments: dict[str, str], count: int) -> tuple[float, list[dict]]:
    results, slowest = [], 0.0
    for _ in range(count):
        began = time.monotonic()
        results.append(service.call_tool(TOOL_NAME, arguments))
        slowest = max(slowest, time.monotonic() - began)
    return slowest, results


# -- fuzz: whatever arrives, a documented answer and a log that reads back ----------------------------

_TEXT = st.text(alphabet=st.characters(exclude_categories=()), max_size=30)  # lone surrogates included
_HUGE = st.integers(8_000, 300_000).map(lambda n: "z" * n)
_DEEP = st.integers(50, 3_000).map(lambda n: functools.reduce(lambda inner, _: [inner], range(n), "bottom"))
_LEAF = st.none() | st.booleans() | st.integers() | st.floats() | _TEXT | _HUGE
_JSON = st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4))
_VALUE = _JSON | _DEEP
_ARGUMENTS = (
    st.fixed_dictionaries({"prompt": _TEXT | _VALUE}, optional={"session_id": _TEXT | _VALUE, "x": _VALUE})
    | st.fixed_dictionaries({}, optional={"agent": _TEXT | _VALUE, "query": _TEXT | _VALUE})
    | _VALUE
)
_FUZZ = settings(
    max_examples=120, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_FUZZ
@given(tool=st.sampled_from([TOOL_NAME, "get_memory"]), arguments=_ARGUMENTS, handshake=st.none() | _TEXT)
def test_call_tool_answers_any_arguments_with_a_result_and_the_log_reads_back(
    fuzz_service: MemoryService, tool: str, arguments: object, handshake: str | None
) -> None:
    result = fuzz_service.call_tool(tool, arguments, handshake_session=handshake)

    assert isinstance(result["isError"], bool)
    _strict_json(result)
    _strict_json(fuzz_service.requests(limit=5))


@_FUZZ
@given(
    body=st.fixed_dictionaries({"query": _TEXT | _VALUE, "agent_id": _TEXT | _VALUE}) | _VALUE, user=st.none() | _TEXT
)
def test_memories_retrieve_answers_any_body_and_user_with_a_status_and_the_log_reads_back(
    fuzz_service: MemoryService, body: object, user: str | None
) -> None:
    status, answer = fuzz_service.memories_retrieve(body, user, allowed_users=frozenset({"ann"}))

    assert status in (200, 403, 422)
    assert len(_strict_json(answer)) < 2_000_000
    _strict_json(fuzz_service.requests(limit=5))


@_FUZZ
@given(name=_TEXT.filter(lambda n: n not in (TOOL_NAME, "get_memory")))
def test_an_unknown_tool_of_any_name_is_unknown_tool_with_a_bounded_message(
    fuzz_service: MemoryService, name: str
) -> None:
    with pytest.raises(UnknownTool) as caught:
        fuzz_service.call_tool(name, {})
    assert len(caught.value.message) < 300
    caught.value.message.encode("utf-8")


@pytest.fixture(scope="module")
def fuzz_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryService]:
    from fixtures import ASSISTANT

    root = tmp_path_factory.mktemp("fuzz") / "memory"
    for rel, text in {**ACME, **ASSISTANT}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root.parent / "users" / "ann").mkdir(parents=True)  # beside the root: a root inside it is refused
    (root.parent / "users" / "ann" / "own.md").write_text("# Own\n\nAnn's on-call week starts on Monday.\n")
    settings_ = Settings.from_env(state_dir=root.parent / "state", user_trees=root.parent / "users")
    running = MemoryService(Retriever(root, settings_), SQLiteStore(root.parent / "s.sqlite"), watch=False)
    yield running
    running.close()


# -- one pass through the request (issue 10) ---------------------------------------------------------


def test_a_call_validates_its_arguments_once(service: MemoryService, monkeypatch: pytest.MonkeyPatch) -> None:
    from retriever.pipeline import validate
    from retriever.service import service as service_module

    seen: list[object] = []
    real = validate.validate_arguments

    def counting(arguments: object) -> object:
        seen.append(arguments)
        return real(arguments)

    monkeypatch.setattr(validate, "validate_arguments", counting)
    monkeypatch.setattr(service_module, "validate_arguments", counting)
    result = service.call_tool(TOOL_NAME, {"prompt": "How many sick days?", "session_id": "once"})

    assert result["isError"] is False
    assert len(seen) == 1



def test_the_request_log_tells_two_users_calls_under_one_session_id_apart(service: MemoryService) -> None:
    asked = {"prompt": "billing migration", "session_id": "thread-9"}
    service.call_tool(TOOL_NAME, asked, user_id='["scope", "alice"]', logged_user="alice")
    service.call_tool(TOOL_NAME, {**asked, "prompt": "and its risks?"}, user_id='["scope", "bob"]', logged_user="bob")
    service.call_tool(TOOL_NAME, {**asked, "prompt": "billing"}, user_id='["scope"]')  # a scope, but no user named
    # The user each call was made for, not the scope its sessions are kept under (a key's fingerprint).
    assert [row["user_id"] for row in service.requests(10, "thread-9", None)] == [None, "bob", "alice"]
