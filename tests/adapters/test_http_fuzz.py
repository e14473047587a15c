"""Property: whatever a client sends to ``/memories/retrieve`` or the MCP endpoint, the server answers a client
error or a result, never a 500 or a -32603, and its request log stays readable (real loopback server)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import TreeFactory, serving
from fixtures import ACME
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

FUZZ = settings(
    max_examples=120,
    deadline=None,
    database=None,  # nothing written outside temp folders
    # One server serves every example on purpose: state carried between requests is part of what is tested.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
surrogate_text = st.text(st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF), min_size=1, max_size=3)
texts = st.text(max_size=60) | surrogate_text | st.sampled_from(["How many sick days?", "", "  ", "hi"])
request_ids = st.integers() | st.text(max_size=10) | st.floats() | st.none() | st.booleans()
methods = st.sampled_from(["tools/call", "tools/list", "ping", "initialize", "notifications/initialized"]) | st.text(
    max_size=20
)
tool_params = st.fixed_dictionaries(
    {"name": st.sampled_from(["retrieve_memory", "get_memory"]) | st.text(max_size=10)},
    optional={
        "arguments": json_values
        | st.fixed_dictionaries({"prompt": texts}, optional={"session_id": texts, "agent": texts, "query": texts})
    },
)
envelopes = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0"]) | json_values, "method": methods | json_values},
    optional={"id": request_ids, "params": tool_params | json_values},
)
retrieve_bodies = st.fixed_dictionaries(
    {},
    optional={
        "query": texts | json_values,
        "agent_id": texts | json_values,
        "display_name": texts,
        "email": texts,
        "graph_ids": st.lists(texts, max_size=3) | json_values,
    },
)
# What an HTTP client may put in a header value: tab, visible ASCII and any byte over 0x7f.
header_values = st.binary(max_size=300).map(lambda b: bytes(c for c in b if c == 9 or 32 <= c <= 126 or c >= 128))


def _encode(value: Any) -> bytes:
    # ensure_ascii turns lone surrogates into \\udxxx escapes, which is how a client sends them.
    return value if isinstance(value, bytes) else json.dumps(value).encode()


@pytest.fixture
def client(make_tree: TreeFactory, tmp_path: Path) -> Iterator[httpx.Client]:
    service = MemoryService(
        Retriever(make_tree(ACME), Settings.from_env(user_trees=tmp_path / "users")),
        SQLiteStore(tmp_path / "s.sqlite"),
        watch=False,
    )
    _ = service.retriever.memory
    with serving(service) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client
        _assert_readable_log(client, 1000)  # the whole log, once every example has run
    service.close()


def _assert_readable_log(client: httpx.Client, limit: int = 3) -> None:
    """The request log answers 200 with JSON; by default only the newest entries, the ones just written."""
    log = client.get("/v1/dev/mcp-requests", params={"limit": limit})
    assert log.status_code == 200
    assert log.json()["count"] >= 0


@FUZZ
@given(body=envelopes | json_values | st.binary(max_size=200) | surrogate_text)
@example(body=b"[" * 200_000)
@example(body=b'{"jsonrpc": "2.0", "id": NaN, "method": "ping"}')
@example(
    body={
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "retrieve_memory", "arguments": {"prompt": "\ud800"}},
    }
)
def test_the_mcp_endpoint_never_answers_an_internal_error_for_client_input(client: httpx.Client, body: Any) -> None:
    response = client.post("/v1/mcp/memory", content=_encode(body), headers={"Content-Type": "application/json"})
    assert response.status_code in (200, 202, 400, 404, 413), response.text[:300]
    if response.content:
        answer = response.json()
        assert answer.get("error", {}).get("code") != -32603, answer
    _assert_readable_log(client)


@FUZZ
@given(body=retrieve_bodies | json_values | st.binary(max_size=100), user=header_values)
@example(body={"query": "sick days", "agent_id": "a"}, user=b"u" * 5000)
@example(body={"query": " \t ", "agent_id": "a"}, user=b"")  # passed the model, then the retriever raised: 500
@example(body={"query": "sick days", "agent_id": "a"}, user=b"../../etc")
@example(body={"query": "sick days", "agent_id": "a"}, user="олена".encode())
def test_memories_retrieve_never_answers_500_for_client_input(client: httpx.Client, body: Any, user: bytes) -> None:
    headers: dict[str, Any] = {"Content-Type": "application/json"}
    if user.strip():
        headers["X-External-User-Id"] = user.strip()
    response = client.post("/memories/retrieve", content=_encode(body), headers=headers)
    assert response.status_code in (200, 413, 422), response.text[:300]
    assert isinstance(response.json(), dict)
    _assert_readable_log(client)
