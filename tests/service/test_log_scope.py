"""The request log is kept per memory: servers on different roots sharing one store never list each other's calls."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis
from click.testing import CliRunner
from conftest import serving

from retriever import Retriever, Settings
from retriever.adapters.cli import cli
from retriever.service.service import MemoryService
from retriever.service.stores.base import Store
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore
from retriever.service.tools import TOOL_NAME

ServiceFactory = Callable[[Path], MemoryService]
# A row as the previous version logged it: no memory named anywhere.
OLD_ROW = {
    "request_id": "old-1",
    "received_at": 1.0e12,
    "session_id": "s",
    "tool": TOOL_NAME,
    "transport": "http",
    "status": "ok",
    "duration_ms": 1.0,
    "arguments": {"prompt": "someone else's"},
    "response": {},
}


def _tree(folder: Path, text: str) -> Path:
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "n.md").write_text(f"# Notes\n\n{text}\n")
    return folder


@pytest.fixture(params=["sqlite", "redis"])
def open_service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ServiceFactory]:
    """Services on any root, each with its own connection to one shared store (as two processes have)."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    opened: list[MemoryService] = []

    def build(root: Path) -> MemoryService:
        store: Store = RedisStore(url) if url else SQLiteStore(tmp_path / "state" / "store.sqlite")
        service = MemoryService(Retriever(root, Settings.from_env()), store, watch=False)
        opened.append(service)
        return service

    yield build
    for service in opened:
        service.close()


def _prompts(rows: list[dict]) -> list[str]:
    return [str(r["prompt"]) for r in rows]


def test_a_memory_lists_only_its_own_requests_from_a_store_another_memory_shares(
    open_service: ServiceFactory, tmp_path: Path
) -> None:
    alpha = open_service(_tree(tmp_path / "alpha", "The alpha launch is in May."))
    beta = open_service(_tree(tmp_path / "beta", "The beta budget is secret."))
    alpha.call_tool(TOOL_NAME, {"prompt": "When is the alpha launch?", "session_id": "shared"})
    beta.call_tool(TOOL_NAME, {"prompt": "What is the beta budget?", "session_id": "shared"})
    beta.memories_retrieve({"query": "beta budget", "agent_id": "a"}, None)
    for service in (alpha, beta):
        assert service.store.flush()

    assert _prompts(alpha.requests()) == ["When is the alpha launch?"]
    assert _prompts(alpha.requests(session_id="shared")) == ["When is the alpha launch?"]
    assert [r["tool"] for r in beta.requests()] == ["memories/retrieve", TOOL_NAME]
    assert _prompts(beta.requests(session_id="shared")) == ["What is the beta budget?"]


def test_the_request_log_route_of_one_memorys_server_never_shows_anothers_prompt_or_response(
    open_service: ServiceFactory, tmp_path: Path
) -> None:
    alpha = open_service(_tree(tmp_path / "alpha", "The alpha launch is in May."))
    beta = open_service(_tree(tmp_path / "beta", "The beta budget is 42 million."))
    beta.call_tool(TOOL_NAME, {"prompt": "What is the beta budget?"}, handshake_session="b")
    assert beta.store.flush()

    with serving(alpha) as url:
        listed = httpx.get(f"{url}/v1/dev/mcp-requests", timeout=10).json()
        by_session = httpx.get(f"{url}/v1/dev/mcp-requests", params={"session_id": "b"}, timeout=10).json()

    assert listed == {"requests": [], "count": 0}
    assert by_session == {"requests": [], "count": 0}
    assert "42 million" in json.dumps(beta.requests(), ensure_ascii=False)


def test_the_requests_command_lists_only_the_requests_of_the_memory_at_its_root(tmp_path: Path) -> None:
    settings = Settings.from_env()  # the state folder the tests isolate: where `retriever requests` reads
    from retriever.service.stores import open_store

    roots = {name: _tree(tmp_path / name, f"The {name} plan.") for name in ("alpha", "beta")}
    for name, root in roots.items():
        service = MemoryService(Retriever(root, settings), open_store(settings), watch=False)
        service.call_tool(TOOL_NAME, {"prompt": f"What is the {name} plan?", "session_id": "s"})
        service.close()

    for name, root in roots.items():
        printed = CliRunner().invoke(cli, ["requests", "--json", "--root", str(root)])
        assert printed.exit_code == 0, printed.output
        assert _prompts(json.loads(printed.stdout)) == [f"What is the {name} plan?"]
        by_session = CliRunner().invoke(cli, ["requests", "--json", "--session-id", "s", "--root", str(root)])
        assert _prompts(json.loads(by_session.stdout)) == [f"What is the {name} plan?"]


def test_sqlite_rows_logged_before_the_log_was_kept_per_memory_are_listed_to_no_memory(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with sqlite3.connect(path) as db:  # the store as the previous version left it
        db.execute(
            "CREATE TABLE requests (request_id TEXT PRIMARY KEY, received_at REAL, session_id TEXT, record TEXT)"
        )
        db.execute("INSERT INTO requests VALUES (?, ?, ?, ?)", ("old-1", 1.0e12, "s", json.dumps(OLD_ROW)))
    db.close()
    service = MemoryService(Retriever(_tree(tmp_path / "m", "x"), Settings.from_env()), SQLiteStore(path), watch=False)

    assert service.requests() == [] and service.requests(session_id="s") == []
    service.close()


def test_redis_keys_logged_before_the_log_was_kept_per_memory_are_listed_to_no_memory(
    redis_url: str, tmp_path: Path
) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.set("retriever:request:old-1", json.dumps(OLD_ROW))  # the keys the previous version wrote
    client.zadd("retriever:requests", {"old-1": 1.0e12})
    client.zadd("retriever:session-requests:s", {"old-1": 1.0e12})
    client.close()
    store = RedisStore(redis_url)
    service = MemoryService(Retriever(_tree(tmp_path / "m", "x"), Settings.from_env()), store, watch=False)

    assert service.requests() == [] and service.requests(session_id="s") == []
    service.close()


def test_one_memorys_traffic_never_evicts_another_memorys_log(open_service: ServiceFactory, tmp_path: Path) -> None:
    quiet = open_service(_tree(tmp_path / "quiet", "Quiet."))
    busy = open_service(_tree(tmp_path / "busy", "Busy."))
    quiet.call_tool(TOOL_NAME, {"prompt": "anyone there?"})
    assert quiet.store.flush()
    for store in (quiet.store.inner, busy.store.inner):
        store.log_limit = 3  # type: ignore[attr-defined]
    for number in range(60):
        busy.call_tool(TOOL_NAME, {"prompt": f"busy {number}"})
    assert busy.store.flush()

    assert _prompts(quiet.requests()) == ["anyone there?"]
    assert _prompts(busy.requests()) == ["busy 59", "busy 58", "busy 57"]
