"""MCP over HTTP through the SDK's transport: client mistakes, sessions, versions, over a real loopback server."""

from __future__ import annotations

import http.client
import json
import unicodedata
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import TreeFactory, serving, wait_until
from fixtures import ACME

from retriever import Retriever, Settings
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "retrieve_memory", "arguments": {"prompt": "How many sick days do employees earn?"}},
}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
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
def mcp(service: MemoryService) -> Iterator[str]:
    with serving(service) as url:
        yield f"{url}/v1/mcp/memory"


def _post(url: str, body: Any, headers: Mapping[str, str | bytes] | None = None) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(url, content=content, headers={"Content-Type": "application/json", **(headers or {})}, timeout=30)


def _session(url: str, headers: dict[str, str] | None = None) -> str:
    opened = _post(url, INIT, headers)
    assert opened.status_code == 200, opened.text
    session = opened.headers["mcp-session-id"]
    assert (
        _post(
            url,
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {**(headers or {}), "Mcp-Session-Id": session},
        ).status_code
        == 202
    )
    return session


def test_an_initialize_over_16_kib_is_refused_and_opens_no_session(mcp: str) -> None:
    bulky = {**INIT, "params": {**INIT["params"], "capabilities": {"experimental": {"x": {"y": "z" * 900_000}}}}}
    refused = _post(mcp, bulky)
    assert refused.status_code == 200 and "mcp-session-id" not in refused.headers  # before: a session held 1.8 MB
    error = refused.json()["error"]
    assert error["code"] == -32602 and "initialize over 16,384 bytes" in error["message"]
    assert refused.json()["id"] == 1
    assert _post(mcp, INIT).status_code == 200


def test_http_introduces_the_server_with_the_same_name_and_instructions_as_stdio(mcp: str) -> None:
    from retriever.service.tools import SERVER_INSTRUCTIONS, SERVER_NAME

    result = _post(mcp, INIT, {"Accept": "application/json, text/event-stream"}).json()["result"]
    assert result["serverInfo"]["name"] == SERVER_NAME == "company-memory-retriever"
    assert result["instructions"] == SERVER_INSTRUCTIONS
    assert SERVER_INSTRUCTIONS.startswith("Call retrieve_memory before guessing")


# -- client mistakes are client errors, never -32603 --------------------------------------------


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"[" * 200_000 + b"]" * 200_000, -32700),  # Python's json raised RecursionError: -32603 before
        (b'{"jsonrpc": "2.0", "id": NaN, "method": "tools/list"}', -32700),  # NaN is not JSON
        (b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": Infinity}}', -32700),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": 1e999}}', -32700),  # overflows to inf
        (
            b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retrieve_memory", '
            b'"arguments": {"prompt": "\\ud800 lone"}}}',
            -32600,
        ),  # a lone surrogate cannot be stored or sent back: an invalid request, as on stdio
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', -32600),
        (b'{"jsonrpc": "2.0", "id": null, "method": "tools/list"}', -32600),
        (b'{"jsonrpc": "2.0", "id": 9007199254740993, "method": "tools/list"}', -32600),
        (b'{"jsonrpc": "2.0", "id": "' + b"i" * 900_000 + b'", "method": "tools/list"}', -32600),  # not echoed
        (b'\xff\xfe{"jsonrpc": "2.0"}', -32700),
    ],
)
def test_client_mistakes_answer_400_with_the_standard_code(mcp: str, body: bytes, code: int) -> None:
    response = _post(mcp, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == code
    assert len(error["message"]) < 300


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", ""])
def test_a_body_not_sent_as_json_is_a_json_rpc_invalid_request_under_its_id(mcp: str, content_type: str) -> None:
    # The SDK answered a plain-text 400, "Invalid Content-Type header", where every other refusal is JSON-RPC.
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}'
    response = _post(mcp, body, {"Content-Type": content_type})
    assert response.status_code == 400
    answer = response.json()
    assert answer["id"] == 7 and answer["error"]["code"] == -32600
    assert answer["error"]["message"].endswith("is not served: send application/json")


def test_a_lone_surrogate_is_an_invalid_request_answered_under_its_id_as_on_stdio(mcp: str) -> None:
    body = b'{"jsonrpc": "2.0", "id": 41, "method": "tools/call", "params": {"arguments": {"prompt": "a \\udfff"}}}'
    answer = _post(mcp, body).json()
    assert answer["id"] == 41 and answer["error"]["code"] == -32600
    assert "lone UTF-16 surrogate" in answer["error"]["message"]


def test_a_bare_post_without_an_accept_header_answers_json(mcp: str) -> None:
    # RFC 9110: no Accept means any type. httpx and curl send "Accept: */*", so use http.client.
    parts = urlsplit(mcp)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=30)
    body = json.dumps(CALL).encode()
    connection.putrequest("POST", parts.path, skip_accept_encoding=True)
    connection.putheader("Content-Type", "application/json")
    connection.putheader("Content-Length", str(len(body)))
    connection.endheaders(body)
    response = connection.getresponse()
    assert response.status == 200
    assert json.loads(response.read())["result"]["isError"] is False
    connection.close()


def test_delete_without_a_session_id_is_a_clear_400(mcp: str) -> None:
    response = httpx.delete(mcp)
    assert response.status_code == 400
    assert "Mcp-Session-Id" in response.json()["error"]["message"]


def test_the_sessionless_2026_era_is_refused_with_the_handshake_versions(mcp: str) -> None:
    probe = {"jsonrpc": "2.0", "id": 3, "method": "server/discover", "params": {}}
    response = _post(mcp, probe, {"MCP-Protocol-Version": "2026-07-28"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32022
    assert error["data"] == {
        "supported": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
        "requested": "2026-07-28",
    }


def test_the_short_mcp_path_serves_the_same_endpoint(service: MemoryService) -> None:
    with serving(service) as url:
        assert _post(f"{url}/mcp", CALL).json()["result"]["isError"] is False


# -- sessions ----------------------------------------------------------------------------------


def test_a_follow_up_with_only_the_handshake_session_is_rewritten_from_its_history(mcp: str) -> None:
    session = _session(mcp)
    first = {**CALL, "params": {"name": "retrieve_memory", "arguments": {"prompt": "billing migration project"}}}
    assert _post(mcp, first, {"Mcp-Session-Id": session}).json()["result"]["isError"] is False
    follow = {**CALL, "id": 2, "params": {"name": "retrieve_memory", "arguments": {"prompt": "and who owns it?"}}}
    content = _post(mcp, follow, {"Mcp-Session-Id": session}).json()["result"]["structuredContent"]
    assert content["diagnostics"]["session_id"] == session
    assert content["triage"]["rewritten_query"] == "and who owns it? (context: billing migration project)"
    bare = _post(mcp, follow).json()["result"]["structuredContent"]  # no session: nothing to rewrite from
    assert bare["triage"]["rewritten_query"] == "and who owns it?"


def test_an_unknown_session_answers_404_with_the_requests_id_and_how_to_start_a_new_one(
    service: MemoryService,
) -> None:
    with serving(service) as url:
        mcp = f"{url}/v1/mcp/memory"
        session = _session(mcp)
        assert httpx.delete(mcp, headers={"Mcp-Session-Id": session}).status_code == 200
        for headers in ({"Mcp-Session-Id": session}, {"Mcp-Session-Id": "never-issued"}):
            gone = _post(mcp, {**CALL, "id": 5}, headers)
            assert gone.status_code == 404
            assert gone.json()["id"] == 5 and gone.json()["error"]["code"] == -32600
            assert gone.json()["error"]["message"] == (
                "session not found: it was ended (DELETE), idled out, or opened on another server (route a session "
                "to the server that opened it); send initialize without an Mcp-Session-Id header to start a new one"
            )
        assert httpx.delete(mcp, headers={"Mcp-Session-Id": session}).status_code == 404


def test_an_idle_session_expires_and_then_answers_404(service: MemoryService) -> None:
    with serving(service, session_idle_seconds=0.3) as url:
        mcp = f"{url}/v1/mcp/memory"
        session = _session(mcp)
        assert _post(mcp, CALL, {"Mcp-Session-Id": session}).status_code == 200
        # Every poll is a request that restarts the idle clock, so polls come further apart than the timeout.
        expired = lambda: _post(mcp, CALL, {"Mcp-Session-Id": session}).status_code == 404  # noqa: E731
        assert wait_until(expired, timeout=10, interval=1.0)


def test_sessions_past_the_cap_are_refused_with_503_a_refusals_code_the_requests_id_and_retry_after(
    service: MemoryService,
) -> None:
    with serving(service, max_sessions=2) as url:
        mcp = f"{url}/v1/mcp/memory"
        first = _session(mcp)
        _session(mcp)
        refused = _post(mcp, {**INIT, "id": 7})
        assert refused.status_code == 503 and refused.headers["retry-after"] == "60"
        # the SDK's own answer was -32603 ("internal error"), a null id and no Retry-After
        assert refused.json() == {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {
                "code": -32000,
                "message": "the server holds 2 sessions, its limit (RETRIEVER_MAX_SESSIONS); end one (DELETE with "
                "its Mcp-Session-Id) or let one idle out, then retry",
            },
        }
        assert httpx.delete(mcp, headers={"Mcp-Session-Id": first}).status_code == 200
        assert _post(mcp, INIT).status_code == 200  # ending a session makes room


def test_with_several_keys_no_key_takes_more_than_its_share_of_the_sessions(service: MemoryService) -> None:
    with serving(service, max_sessions=4, api_keys="key-a-0123456789=*,key-b-0123456789=*") as url:
        mcp = f"{url}/v1/mcp/memory"
        a, b = {"Authorization": "Bearer key-a-0123456789"}, {"Authorization": "Bearer key-b-0123456789"}
        first = _session(mcp, a)
        _session(mcp, a)
        refused = _post(mcp, INIT, a)  # a's share of 4 is 2: before, a could take all 4 and lock b out
        assert refused.status_code == 503 and refused.headers["retry-after"] == "60"
        error = refused.json()["error"]
        assert error["code"] == -32000 and "holds 2 sessions, its share of the server's 4" in error["message"]
        _session(mcp, b)
        _session(mcp, b)
        assert httpx.delete(mcp, headers={**a, "Mcp-Session-Id": first}).status_code == 200
        _session(mcp, a)  # ending one of its sessions gives a key its share back


def test_initializes_sent_at_once_by_one_key_open_no_more_than_its_share(service: MemoryService) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with serving(service, max_sessions=4, api_keys="key-a-0123456789=*,key-b-0123456789=*") as url:
        mcp = f"{url}/v1/mcp/memory"
        a, b = {"Authorization": "Bearer key-a-0123456789"}, {"Authorization": "Bearer key-b-0123456789"}
        with ThreadPoolExecutor(max_workers=20) as pool:
            codes = list(pool.map(lambda _: _post(mcp, INIT, a).status_code, range(20)))
        # Before: each read the owners' count before the SDK recorded any, and a took all 4 slots, b none.
        assert sorted(codes) == [200, 200] + [503] * 18
        _session(mcp, b)
        _session(mcp, b)


def test_a_session_answers_only_the_key_that_opened_it(service: MemoryService) -> None:
    with serving(service, api_keys="key-a-0123456789=*,key-b-0123456789=*") as url:
        mcp = f"{url}/v1/mcp/memory"
        a, b = {"Authorization": "Bearer key-a-0123456789"}, {"Authorization": "Bearer key-b-0123456789"}
        session = _session(mcp, a)
        assert _post(mcp, CALL, {**a, "Mcp-Session-Id": session}).status_code == 200
        assert _post(mcp, CALL, {**b, "Mcp-Session-Id": session}).status_code == 404


def test_a_key_bound_to_users_has_its_own_sessions_even_under_a_shared_session_id(service: MemoryService) -> None:
    def ask(url: str, key: str, prompt: str) -> dict[str, Any]:
        arguments = {"prompt": prompt, "session_id": "shared-1"}
        call = {**CALL, "params": {"name": "retrieve_memory", "arguments": arguments}}
        reply = _post(url, call, {"Authorization": f"Bearer {key}"})
        assert reply.status_code == 200, reply.text
        content: dict[str, Any] = reply.json()["result"]["structuredContent"]
        return content

    with serving(service, api_keys="tenant-a-key=alice,tenant-b-key=bob") as url:
        mcp = f"{url}/v1/mcp/memory"
        ask(mcp, "tenant-a-key", "billing migration project")
        other = ask(mcp, "tenant-b-key", "and who owns it?")
        assert other["triage"]["rewritten_query"] == "and who owns it?"  # tenant A's question never reaches B
        own = ask(mcp, "tenant-a-key", "and who owns it?")
        assert own["triage"]["rewritten_query"] == "and who owns it? (context: billing migration project)"


def test_a_user_header_on_the_mcp_routes_must_name_a_user_the_key_may_act_for(service: MemoryService) -> None:
    with serving(service, api_keys="tenant-a-key=alice,admin-key-0=*") as url:
        mcp = f"{url}/v1/mcp/memory"
        tenant, admin = {"Authorization": "Bearer tenant-a-key"}, {"Authorization": "Bearer admin-key-0"}
        refused = _post(mcp, CALL, {**tenant, "X-External-User-Id": "bob"})
        assert refused.status_code == 403
        assert refused.json()["error"]["message"] == "this key may not act for the user 'bob'; name one of its users"
        assert _post(mcp, CALL, {**tenant, "X-On-Behalf-Of": "bob"}).status_code == 403
        assert _post(mcp, CALL, {**tenant, "X-External-User-Id": "alice"}).status_code == 200
        assert _post(mcp, CALL, tenant).status_code == 200  # no user named: the server's own memory, its own sessions
        assert _post(mcp, CALL, {**admin, "X-External-User-Id": "bob"}).status_code == 200


def _ask(url: str, prompt: str, headers: Mapping[str, str | bytes], session_id: str = "s2") -> str:
    """The rewritten query of a ``retrieve_memory`` call under ``session_id``: what triage made of it."""
    call = {**CALL, "params": {"name": "retrieve_memory", "arguments": {"prompt": prompt, "session_id": session_id}}}
    reply = _post(url, call, headers)
    assert reply.status_code == 200, reply.text
    return str(reply.json()["result"]["structuredContent"]["triage"]["rewritten_query"])


@pytest.mark.parametrize(
    ("api_keys", "key"),
    [("gw-key-0123456789=*,akey-0123456789=alice,bkey-0123456789=bob", "gw-key-0123456789"), ("", None)],
)
def test_users_named_behind_one_any_user_key_never_share_a_session_id(
    service: MemoryService, api_keys: str, key: str | None
) -> None:
    settings = {"api_keys": api_keys} if api_keys else {}
    gateway = {"Authorization": f"Bearer {key}"} if key else {}
    alice, bob = {**gateway, "X-External-User-Id": "alice"}, {**gateway, "X-External-User-Id": "bob"}
    with serving(service, **settings) as url:
        mcp = f"{url}/v1/mcp/memory"
        _ask(mcp, "billing migration project", alice)
        assert _ask(mcp, "and who owns it?", bob) == "and who owns it?"  # before: alice's words reached bob
        assert _ask(mcp, "and who owns it?", gateway) == "and who owns it?"  # no user: the server's own sessions
        assert _ask(mcp, "and who owns it?", alice) == "and who owns it? (context: billing migration project)"
        # The gateway's header spelling does not matter: X-On-Behalf-Of names the same user.
        on_behalf = {**gateway, "X-On-Behalf-Of": "alice"}
        assert _ask(mcp, "and who owns it?", on_behalf).startswith("and who owns it? (context:")


def test_a_key_bound_to_two_users_keeps_each_users_sessions_apart(service: MemoryService) -> None:
    with serving(service, api_keys="team-key-0123456789=alice|bob") as url:
        mcp, team = f"{url}/v1/mcp/memory", {"Authorization": "Bearer team-key-0123456789"}
        _ask(mcp, "billing migration project", {**team, "X-External-User-Id": "alice"})
        assert _ask(mcp, "and who owns it?", {**team, "X-External-User-Id": "bob"}) == "and who owns it?"
        assert _ask(mcp, "and who owns it?", team) == "and who owns it?"  # the key's own, user-less sessions
        own = _ask(mcp, "and who owns it?", {**team, "X-External-User-Id": "alice"})
        assert own == "and who owns it? (context: billing migration project)"
        # The log names the user, never the key's scope (before: '["key", "key-5b75…", "user", "alice"]').
        assert [row["user_id"] for row in service.requests(10)] == ["alice", None, "bob", "alice"]


def test_reordering_the_keys_never_hands_one_tenants_sessions_to_another(service: MemoryService) -> None:
    alice, bob = {"Authorization": "Bearer alice-key-0123"}, {"Authorization": "Bearer bob-key-0123"}
    with serving(service, api_keys="alice-key-0123=alice,bob-key-0123=bob") as url:
        _ask(f"{url}/v1/mcp/memory", "billing migration project", alice)
    # The operator lists the keys the other way round and restarts: each key keeps its own sessions.
    with serving(service, api_keys="bob-key-0123=bob,alice-key-0123=alice") as url:
        assert _ask(f"{url}/v1/mcp/memory", "and who owns it?", bob) == "and who owns it?"  # before: alice's context
    # Adding RETRIEVER_API_KEY (listed first) moves no key either.
    with serving(service, api_keys="alice-key-0123=alice,bob-key-0123=bob", api_key="solo-key-0123") as url:
        own = _ask(f"{url}/v1/mcp/memory", "and who owns it?", alice)
        assert own == "and who owns it? (context: billing migration project)"


def test_on_the_mcp_routes_conflicting_or_repeated_user_headers_are_a_json_rpc_422(service: MemoryService) -> None:
    with serving(service, api_keys="gateway-key-0123=*") as url:
        mcp, key = f"{url}/v1/mcp/memory", ("Authorization", "Bearer gateway-key-0123")
        content = json.dumps(CALL).encode()
        for headers, message in [
            ([("X-On-Behalf-Of", "alice"), ("X-External-User-Id", "bob")], "X-External-User-Id names 'bob' but"),
            ([("X-External-User-Id", "alice"), ("X-External-User-Id", "bob")], "X-External-User-Id is sent 2 times"),
        ]:
            sent = [key, ("Content-Type", "application/json"), *headers]
            refused = httpx.post(mcp, content=content, headers=sent, timeout=30)
            assert refused.status_code == 422, refused.text  # before: 200, answered for bob
            error = refused.json()["error"]
            assert error["code"] == -32600 and error["message"].startswith(message)


# -- user ids: one canonical form (NFC), as the user's folder is named ------------------------------------

JOSE_NFC, JOSE_NFD = unicodedata.normalize("NFC", "José"), unicodedata.normalize("NFD", "José")


def test_nfd_and_nfc_spellings_of_one_user_share_one_session_history(mcp: str) -> None:
    assert JOSE_NFC != JOSE_NFD
    _ask(mcp, "billing migration project", {"X-External-User-Id": JOSE_NFD.encode()})
    own = _ask(mcp, "and who owns it?", {"X-On-Behalf-Of": JOSE_NFC.encode()})
    assert own == "and who owns it? (context: billing migration project)"  # before: two users' histories
    assert _ask(mcp, "and who owns it?", {"X-External-User-Id": b"bob"}) == "and who owns it?"


@pytest.mark.parametrize(("bound", "sent"), [(JOSE_NFC, JOSE_NFD), (JOSE_NFD, JOSE_NFC)])
def test_a_key_bound_to_a_user_acts_for_them_in_either_unicode_spelling(
    service: MemoryService, bound: str, sent: str
) -> None:
    with serving(service, api_keys=f"jose-key-0123={bound},other-key-0123=bob") as url:
        mcp, key = f"{url}/v1/mcp/memory", {"Authorization": "Bearer jose-key-0123"}
        reply = _post(mcp, CALL, {**key, "X-External-User-Id": sent.encode()})
        assert reply.status_code == 200, reply.text  # before: 403, the key was bound to the other spelling
        _ask(mcp, "billing migration project", {**key, "X-External-User-Id": bound.encode()})
        own = _ask(mcp, "and who owns it?", {**key, "X-External-User-Id": sent.encode()})
        assert own == "and who owns it? (context: billing migration project)"
        other = {"Authorization": "Bearer other-key-0123", "X-External-User-Id": sent.encode()}
        assert _post(mcp, CALL, other).status_code == 403


@pytest.mark.parametrize(
    ("header", "user", "shown"),
    [
        ("X-External-User-Id", "../etc", "'../etc'"),
        ("X-On-Behalf-Of", "bad name", "'bad name'"),
        ("X-External-User-Id", "u" * 250, "'" + "u" * 40 + "…[cut: 210 more characters]'"),
    ],
)
def test_a_user_id_that_is_not_a_plain_name_is_a_json_rpc_422_naming_the_header(
    mcp: str, header: str, user: str, shown: str
) -> None:
    for body in (CALL, INIT):
        refused = _post(mcp, body, {header: user})
        assert refused.status_code == 422, refused.text  # before: 200, sessions kept under a name no folder has
        error = refused.json()["error"]
        assert error["code"] == -32600 and error["message"].startswith(f"{header}: the user id {shown} ")
        assert "letters, digits, '_', '.', '@' or '-'" in error["message"] and len(refused.text) < 400


class _Recording:
    """A loaded, model-less service that records which thread answered each call."""

    def __init__(self) -> None:
        self.threads: list[int] = []

    def answers_quickly(self) -> bool:
        return True

    def call_tool(self, name: str, arguments: dict[str, Any], **_: Any) -> dict[str, Any]:
        import threading

        self.threads.append(threading.get_ident())
        return {"content": [], "isError": False}


def test_a_short_call_is_answered_on_the_event_loop_and_a_long_prompt_in_a_worker_thread() -> None:
    import threading

    import anyio

    from retriever.adapters.http_mcp import INLINE_CHARS, run_tool

    service = _Recording()

    async def calls() -> None:
        for prompt in ("x" * INLINE_CHARS, "x" * (INLINE_CHARS + 1)):
            await run_tool(service, "retrieve_memory", {"prompt": prompt, "top_k": 3}, None, {})  # type: ignore[arg-type]
        await run_tool(service, "retrieve_memory", {"prompt": "x", "extra": ["a"]}, None, {})  # type: ignore[arg-type]

    anyio.run(calls)
    loop_thread = threading.get_ident()
    # Before: every call on the loop, so 50 prompts of 8,000 characters held /healthz for 12 s.
    assert [t == loop_thread for t in service.threads] == [True, False, False]
