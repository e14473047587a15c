"""``retriever serve`` over real HTTP on loopback: the MCP SDK client, plain POSTs, security."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import (
    TreeFactory,
    answers,
    child_env,
    free_port,
    serve_process,
    serving,
    validate_tool_result,
    wait_until,
)
from fixtures import ACME
from mcp import Client

from retriever import Retriever, Settings
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "retrieve_memory", "arguments": {"prompt": "How many sick days do employees earn?"}},
}


@pytest.fixture
def service(make_tree: TreeFactory, tmp_path: Path) -> Iterator[MemoryService]:
    running = MemoryService(
        Retriever(make_tree(ACME), Settings.from_env()), SQLiteStore(tmp_path / "s.sqlite"), watch=False
    )
    _ = running.retriever.memory
    yield running
    running.close()


@pytest.fixture
def base(service: MemoryService) -> Iterator[str]:
    with serving(service) as url:
        yield url


def _post(url: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url, content=content, headers={"Content-Type": "application/json", **(headers or {})}, timeout=30)


def _run(coroutine: Callable[[], Any]) -> Any:
    return anyio.run(coroutine)


# -- the official MCP client --------------------------------------------------------------------


def test_the_sdk_client_initializes_lists_and_calls_the_tool(base: str) -> None:
    async def session() -> tuple[Any, Any, Any]:
        async with Client(f"{base}/v1/mcp/memory") as client:
            tools = await client.list_tools()
            good = await client.call_tool("retrieve_memory", {"prompt": "How many sick days do employees earn?"})
            bad = await client.call_tool("retrieve_memory", {"prompt": "x", "limit": 5})
            return tools, good, bad

    tools, good, bad = _run(session)
    assert [t.name for t in tools.tools] == ["retrieve_memory", "get_memory", "read_memory_source"]
    assert tools.tools[0].annotations.read_only_hint is True
    result = good.model_dump(by_alias=True, exclude_none=True)
    assert result["isError"] is False
    assert result["structuredContent"]["retrieval"]["facts"][0]["statement"] == "Employees earn 10 sick days per year."
    assert len(result["structuredContent"]["diagnostics"]["session_id"]) == 32  # the handshake's Mcp-Session-Id
    validate_tool_result(result)
    error = bad.model_dump(by_alias=True, exclude_none=True)
    assert error["isError"] is True
    assert error["structuredContent"]["error_code"] == "invalid_arguments"
    validate_tool_result(error)


def test_the_alias_route_ending_in_mcp_serves_the_same_tool(base: str) -> None:
    async def session() -> Any:
        async with Client(f"{base}/v1/memory/mcp") as client:
            return await client.list_tools()

    assert [t.name for t in _run(session).tools] == ["retrieve_memory", "get_memory", "read_memory_source"]


# -- plain JSON-RPC, as the seed shows it ----------------------------------------------------


def test_a_bare_tools_call_post_answers_json(base: str) -> None:
    response = _post(f"{base}/v1/mcp/memory", CALL)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["id"] == 1 and body["jsonrpc"] == "2.0"
    assert body["result"]["structuredContent"]["retrieval"]["facts"][0]["statement"] == (
        "Employees earn 10 sick days per year."
    )
    validate_tool_result(body["result"])


def test_initialize_issues_a_session_id_that_later_requests_carry(base: str) -> None:
    init = _post(
        f"{base}/v1/mcp/memory",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
    )
    session = init.headers["mcp-session-id"]
    assert init.json()["result"]["protocolVersion"] == "2025-06-18"
    assert init.json()["result"]["capabilities"] == {"tools": {"listChanged": False}}
    assert (
        _post(
            f"{base}/v1/mcp/memory",
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"Mcp-Session-Id": session},
        ).status_code
        == 202
    )
    listed = _post(
        f"{base}/v1/mcp/memory", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, {"Mcp-Session-Id": session}
    )
    assert listed.json()["result"]["tools"][0]["name"] == "retrieve_memory"
    called = _post(f"{base}/v1/mcp/memory", CALL, {"Mcp-Session-Id": session})
    assert called.json()["result"]["structuredContent"]["diagnostics"]["session_id"] == session
    # The SDK answers 200 to DELETE (204 before): the MCP spec names no success status for it.
    assert httpx.delete(f"{base}/v1/mcp/memory", headers={"Mcp-Session-Id": session}).status_code == 200
    assert _post(f"{base}/v1/mcp/memory", CALL, {"Mcp-Session-Id": session}).status_code == 404


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        (b"{not json", 400, -32700),
        ([1, 2], 400, -32600),
        ({"jsonrpc": "1.0", "id": 1, "method": "tools/list"}, 400, -32600),
        ({"jsonrpc": "2.0", "id": 1}, 400, -32600),
        ({"jsonrpc": "2.0", "id": 1, "method": "resources/list"}, 200, -32601),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope", "arguments": {}}}, 200, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["x"]}, 200, -32602),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}}, 200, -32602),
    ],
)
def test_bad_json_rpc_gets_the_standard_error_codes(base: str, body: Any, status: int, code: int) -> None:
    response = _post(f"{base}/v1/mcp/memory", body)
    assert response.status_code == status
    assert response.json()["error"]["code"] == code


def test_bad_tool_arguments_are_a_tool_error_not_a_protocol_error(base: str) -> None:
    call = {**CALL, "params": {"name": "retrieve_memory", "arguments": {"prompt": "x" * 8001}}}
    result = _post(f"{base}/v1/mcp/memory", call).json()["result"]
    assert result["isError"] is True
    assert (
        result["structuredContent"]["error_message"] == "'prompt' is 8,001 characters; the limit is 8,000: shorten it"
    )
    validate_tool_result(result)


def test_get_is_not_allowed_and_ping_answers(base: str) -> None:
    assert httpx.get(f"{base}/v1/mcp/memory").status_code == 405
    assert _post(f"{base}/v1/mcp/memory", {"jsonrpc": "2.0", "id": 7, "method": "ping"}).json() == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {},
    }


# -- concurrency and the request log ----------------------------------------------------------


def test_fifty_concurrent_calls_all_answer_with_distinct_ids_all_logged(base: str) -> None:
    questions = [
        "How many sick days do employees earn?",
        "Who owns the billing migration?",
        "DEC-0054",
        "Skilky dniv?",
        "Northwind Retail client",
    ]

    def call(i: int) -> dict[str, Any]:
        body = {
            **CALL,
            "id": i,
            "params": {"name": "retrieve_memory", "arguments": {"prompt": questions[i % 5], "session_id": f"c{i % 3}"}},
        }
        response = _post(f"{base}/v1/mcp/memory", body)
        assert response.status_code == 200
        return dict(response.json())

    with ThreadPoolExecutor(max_workers=50) as pool:
        answers = list(pool.map(call, range(50)))
    assert sorted(a["id"] for a in answers) == list(range(50))
    ids = [a["result"]["structuredContent"]["diagnostics"]["request_id"] for a in answers]
    assert len(set(ids)) == 50
    logged = httpx.get(f"{base}/v1/dev/mcp-requests", params={"limit": 100}).json()
    assert logged["count"] == 50
    assert {r["request_id"] for r in logged["requests"]} == set(ids)


def test_the_request_log_filters_by_session_limit_and_since(base: str) -> None:
    for session in ("a", "b", "a"):
        body = {
            **CALL,
            "params": {"name": "retrieve_memory", "arguments": {"prompt": "billing", "session_id": session}},
        }
        _post(f"{base}/v1/mcp/memory", body)
    only_a = httpx.get(f"{base}/v1/dev/mcp-requests", params={"session_id": "a"}).json()["requests"]
    assert [r["session_id"] for r in only_a] == ["a", "a"]
    assert only_a[0]["received_at"] >= only_a[1]["received_at"]
    assert only_a[0]["prompt"] == "billing" and only_a[0]["response"]["isError"] is False
    assert len(httpx.get(f"{base}/v1/dev/mcp-requests", params={"limit": 1}).json()["requests"]) == 1
    assert httpx.get(f"{base}/v1/dev/mcp-requests", params={"since": "2999-01-01T00:00:00Z"}).json()["count"] == 0
    assert httpx.get(f"{base}/v1/dev/mcp-requests", params={"limit": 0}).status_code == 400
    # Each bad parameter is named as the CLI names it, never with Python's exception text.
    soon = httpx.get(f"{base}/v1/dev/mcp-requests", params={"since": "soon"})
    assert soon.status_code == 400
    assert soon.json() == {"detail": "since 'soon' is neither Unix seconds nor an ISO 8601 time"}
    for limit in ("abc", "1_0", "５", "1" * 5_000):  # 5,000 digits: Python's int refuses them (a 500 before)
        bad = httpx.get(f"{base}/v1/dev/mcp-requests", params={"limit": limit})
        assert bad.status_code == 400 and bad.json()["detail"].endswith("is not a whole number from 1 to 1000")


def test_healthz_reports_readiness(base: str) -> None:
    health = httpx.get(f"{base}/healthz")
    assert health.status_code == 200
    assert health.json() | {"root": None} == {
        "memory_ready": True,
        "readiness_state": "ready_sparse",
        "files": 8,
        "sections": 15,
        "skipped_files": 0,
        "store": "sqlite",
        "root": None,
        "error": None,
        "refresh_error": None,
    }


# -- security ---------------------------------------------------------------------------------


def test_an_api_key_is_required_when_configured(service: MemoryService) -> None:
    with serving(service, api_key="s3cret") as url:
        assert _post(f"{url}/v1/mcp/memory", CALL).status_code == 401
        assert _post(f"{url}/v1/mcp/memory", CALL, {"Authorization": "Bearer wrong"}).status_code == 401
        ok = _post(f"{url}/v1/mcp/memory", CALL, {"Authorization": "Bearer s3cret"})
        assert ok.status_code == 200 and ok.json()["result"]["isError"] is False
        assert httpx.get(f"{url}/v1/dev/mcp-requests").status_code == 401
        assert httpx.get(f"{url}/healthz").status_code == 200  # readiness stays open for probes


def test_foreign_origins_are_refused_and_loopback_or_listed_ones_accepted(service: MemoryService) -> None:
    with serving(service, allowed_origins=("https://agent.example.com",)) as url:
        assert _post(f"{url}/v1/mcp/memory", CALL, {"Origin": "http://evil.example"}).status_code == 403
        assert _post(f"{url}/v1/mcp/memory", CALL, {"Origin": "http://localhost:3000"}).status_code == 200
        assert _post(f"{url}/v1/mcp/memory", CALL, {"Origin": "https://agent.example.com"}).status_code == 200


def test_an_oversized_body_is_refused(base: str) -> None:
    assert _post(f"{base}/v1/mcp/memory", b"{" + b" " * 1_000_001 + b"}").status_code == 413


# -- the real command ---------------------------------------------------------------------------


def test_retriever_serve_as_a_process_answers_the_sdk_client_and_a_plain_post(make_tree: TreeFactory) -> None:
    with serve_process(make_tree(ACME)) as served:
        url = served.url
        assert wait_until(lambda: answers(served.route("/healthz")), timeout=30)

        async def session() -> Any:
            async with Client(url) as client:
                return await client.call_tool("retrieve_memory", {"prompt": "How many sick days do employees earn?"})

        result = _run(session).model_dump(by_alias=True, exclude_none=True)
        assert result["structuredContent"]["retrieval"]["facts"][0]["statement"] == (
            "Employees earn 10 sick days per year."
        )
        validate_tool_result(result)
        assert _post(url, CALL).json()["result"]["isError"] is False


def test_retriever_serve_stops_at_start_up_when_redis_is_unreachable(make_tree: TreeFactory) -> None:
    env = {**child_env(), "RETRIEVER_REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"}
    done = subprocess.run(
        [sys.executable, "-m", "retriever", "serve", "--port", "0", "--root", str(make_tree(ACME))],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("Error (store_unavailable): cannot reach Redis at redis://127.0.0.1:")
    assert "start redis-server or unset RETRIEVER_REDIS_URL" in done.stderr
