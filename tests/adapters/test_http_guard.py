"""The guard every request passes: Host, keys and their users, body limits, user headers (real loopback server)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TreeFactory, raw_connection, read_until_closed, serving, wait_until
from fixtures import ACME

from retriever import Retriever, Settings
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

OWN = {"notes/mine.md": "# My notes\n\nMy on-call week starts on Monday 7 December.\n"}
QUERY = {"query": "When does my on-call week start?", "agent_id": "agent_1"}
USERS = ("u-42", "u-7", "олена")


@pytest.fixture
def service(make_tree: TreeFactory, tmp_path: Path) -> Iterator[MemoryService]:
    users = tmp_path / "users"
    for user in USERS:
        for rel, text in OWN.items():
            (users / user / rel).parent.mkdir(parents=True, exist_ok=True)
            (users / user / rel).write_text(text.replace("Monday", f"Monday ({user})"))
    settings = Settings.from_env(user_trees=users)
    running = MemoryService(Retriever(make_tree(ACME), settings), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    _ = running.retriever.memory
    yield running
    running.close()


@pytest.fixture
def base(service: MemoryService) -> Iterator[str]:
    with serving(service) as url:
        yield url


def _retrieve(base: str, headers: dict[str, str | bytes] | None = None, body: object = QUERY) -> httpx.Response:
    return httpx.post(f"{base}/memories/retrieve", json=body, headers=headers or {}, timeout=30)


def _own_facts(response: httpx.Response) -> list[str]:
    return [f for f in response.json()["context"]["data"]["facts"] if "on-call week" in f]


# -- Host: DNS rebinding ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/dev/mcp-requests"),
        ("GET", "/healthz"),
        ("POST", "/memories/retrieve"),
        ("POST", "/v1/mcp/memory"),
        ("DELETE", "/v1/mcp/memory"),
        ("GET", "/no-such-route"),
    ],
)
def test_a_foreign_host_is_refused_on_every_route(base: str, method: str, path: str) -> None:
    port = base.rsplit(":", 1)[1]
    response = httpx.request(method, f"{base}{path}", headers={"Host": f"rebind.evil.example:{port}"}, json={})
    assert response.status_code == 421
    assert "RETRIEVER_ALLOWED_HOSTS" in response.text
    assert "requests" not in response.json()


def test_refused_requests_reach_the_operators_log_one_line_a_status_a_minute(
    base: str, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    port = base.rsplit(":", 1)[1]
    with caplog.at_level(logging.WARNING, logger="retriever.adapters.http_log"):
        for _ in range(3):
            assert httpx.get(f"{base}/healthz", headers={"Host": f"rebind.evil.example:{port}"}).status_code == 421
    [line] = [r.getMessage() for r in caplog.records if r.name == "retriever.adapters.http_log"]
    assert line.startswith(f"refused 421 GET '/healthz': host 'rebind.evil.example:{port}' is not served here")


def test_loopback_names_and_listed_hosts_are_served(service: MemoryService) -> None:
    with serving(service, allowed_hosts="memory.internal, Other.Example") as url:
        port = url.rsplit(":", 1)[1]
        for host in ("localhost", "127.0.0.1", "[::1]", "memory.internal", "MEMORY.INTERNAL", "other.example"):
            assert httpx.get(f"{url}/healthz", headers={"Host": f"{host}:{port}"}).status_code == 200, host
        for foreign in ("memory.internal.evil:1", "evil@127.0.0.1", "127.0.0.1.evil.example"):
            assert httpx.get(f"{url}/healthz", headers={"Host": foreign}).status_code == 421, foreign


@pytest.mark.parametrize(
    "extra",
    [
        "Host: 127.0.0.1\r\nHost: rebind.evil.example",
        "Host: 127.0.0.1\r\nOrigin: http://127.0.0.1\r\nOrigin: https://evil.example",
        "Host: 127.0.0.1\r\nAuthorization: Bearer a\r\nAuthorization: Bearer b",  # before: the first one won
    ],
)
def test_a_second_host_origin_or_authorization_header_is_refused_not_left_unchecked(base: str, extra: str) -> None:
    """Only the first of two was read: "Host: 127.0.0.1" then "Host: evil.example" was served."""
    sock = raw_connection(base, f"GET /healthz HTTP/1.1\r\n{extra}\r\nConnection: close\r\n\r\n".encode())
    answer = read_until_closed(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 400"), answer[:100]
    assert b"send one" in answer


@pytest.mark.parametrize(
    ("target", "status"),
    [("http://rebind.evil.example/healthz", b"421"), ("http://127.0.0.1/healthz", b"200"), ("http://[oops/x", b"400")],
)
def test_an_absolute_form_target_is_checked_by_the_host_it_names(base: str, target: str, status: bytes) -> None:
    """"GET http://evil.example/…" beside "Host: 127.0.0.1" had been checked against the Host header only."""
    sock = raw_connection(base, f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
    answer = read_until_closed(sock)
    sock.close()
    assert answer.startswith(b"HTTP/1.1 " + status), answer[:100]


# -- bodies: limits while reading ---------------------------------------------------------------------


def test_a_declared_oversized_body_is_refused_before_it_is_sent(base: str) -> None:
    head = (
        "POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        "Content-Length: 52428800\r\n"
    )
    for expect in ("", "Expect: 100-continue\r\n"):
        sock = raw_connection(base, f"{head}{expect}\r\n".encode() + b'{"query": "xxxx')
        answer = read_until_closed(sock)  # before: the server waited for all 50 MB (socket.timeout here)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 413"), answer[:100]
        assert b"request body over 1,000,000 bytes" in answer


def test_a_body_of_3_mb_sent_whole_gets_the_json_413_not_a_reset(base: str) -> None:
    head = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3000000\r\n\r\n"
    sock = raw_connection(base, head)
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        sock.sendall(b" " * 3_000_000)
    answer = read_until_closed(sock)
    sock.close()
    # The connection's cap on a request's bytes had cut the guard's drain short: a text/plain 413, then a reset.
    assert answer.startswith(b"HTTP/1.1 413") and b"application/json" in answer.split(b"\r\n\r\n")[0]


def test_a_big_query_is_refused_with_a_short_413_not_echoed_in_a_422(base: str) -> None:
    response = _retrieve(base, body={**QUERY, "query": "x" * 2_000_000})
    assert response.status_code == 413  # before: a 422 echoing the whole query
    assert len(response.content) < 300


def test_a_streamed_body_is_cut_at_the_limit(base: str) -> None:
    chunks = (b"x" * 65536 for _ in range(20))  # no Content-Length: chunked, 1.3 MB
    response = httpx.post(f"{base}/v1/mcp/memory", content=chunks, headers={"Content-Type": "application/json"})
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "request body over 1,000,000 bytes; send a smaller body"


def test_a_body_sent_too_slowly_answers_408(service: MemoryService) -> None:
    with serving(service, body_timeout_seconds=0.5) as url:
        head = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n"
        sock = raw_connection(url, head + b'{"query": ')
        answer = read_until_closed(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 408"), answer[:100]


SLOW_HEAD = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n"


def test_many_slow_bodies_at_once_are_capped_by_a_shared_budget(service: MemoryService) -> None:
    # Each body stays under the 1,000-byte limit, but 20 of them held at once pass the 16 KB budget: beyond
    # each one's first 62 bytes (a 16th of the limit), 17 bodies of 990 bytes fit in 16,000.
    with serving(service, max_body_bytes=1000, body_timeout_seconds=1.0) as url:
        held = [raw_connection(url, SLOW_HEAD + b" " * 990) for _ in range(20)]
        answers = [read_until_closed(sock)[:12] for sock in held]
        for sock in held:
            sock.close()
        assert answers.count(b"HTTP/1.1 503") == 3
        assert answers.count(b"HTTP/1.1 503") + answers.count(b"HTTP/1.1 408") == 20
        assert httpx.get(f"{url}/healthz").status_code == 200


def test_a_small_body_is_read_when_stalled_large_ones_fill_the_budget(service: MemoryService) -> None:
    with serving(service, max_body_bytes=1000, body_timeout_seconds=60.0) as url:
        held = [raw_connection(url, SLOW_HEAD + b" " * 990) for _ in range(17)]
        try:
            big = b'{"query": "x", "agent_id": "a", "pad": "' + b" " * 900 + b'"}'
            wait_until(lambda: _retrieve_raw(url, big).status_code == 503, timeout=10)  # the budget is full
            small = _retrieve_raw(url, b'{"query": "x", "agent_id": "a"}')
            assert small.status_code == 200  # before: 503, like every other request, for 30 s
        finally:
            for sock in held:
                sock.close()


def _retrieve_raw(url: str, body: bytes) -> httpx.Response:
    return httpx.post(f"{url}/memories/retrieve", content=body, headers={"Content-Type": "application/json"})


# -- keys, users and what unauthenticated callers see ----------------------------------------------


def test_healthz_without_a_valid_key_reports_only_readiness(service: MemoryService) -> None:
    with serving(service, api_key="s3cret-key") as url:
        bare = httpx.get(f"{url}/healthz")
        assert bare.status_code == 200
        assert bare.json() == {"memory_ready": True, "readiness_state": "ready_sparse"}  # before: also the root path
        wrong = httpx.get(f"{url}/healthz", headers={"Authorization": "Bearer nope"}).json()
        assert "root" not in wrong
        full = httpx.get(f"{url}/healthz", headers={"Authorization": "Bearer s3cret-key"}).json()
        assert full["root"] == str(service.retriever.root.resolve()) and full["files"] == 8


def test_healthz_shows_the_detail_only_to_a_key_that_may_act_for_any_user(service: MemoryService) -> None:
    with serving(service, api_keys="tenant-key-42=u-42,admin-key-000=*") as url:
        bound = httpx.get(f"{url}/healthz", headers={"Authorization": "Bearer tenant-key-42"}).json()
        assert bound == {"memory_ready": True, "readiness_state": "ready_sparse"}  # before: the server's root path
        admin = httpx.get(f"{url}/healthz", headers={"Authorization": "Bearer admin-key-000"}).json()
        assert admin["root"] == str(service.retriever.root.resolve())


def test_a_key_bound_to_users_reads_only_their_trees(service: MemoryService) -> None:
    with serving(service, api_keys="tenant-key-42=u-42|u-43,admin-key-000=*") as url:
        tenant, admin = {"Authorization": "Bearer tenant-key-42"}, {"Authorization": "Bearer admin-key-000"}
        own = _retrieve(url, {**tenant, "X-External-User-Id": "u-42"})
        assert own.status_code == 200 and _own_facts(own) == ["My on-call week starts on Monday (u-42) 7 December."]
        assert _retrieve(url, {**tenant, "X-External-User-Id": "u-7"}).status_code == 403
        assert _retrieve(url, {**tenant, "X-On-Behalf-Of": "u-7"}).status_code == 403
        assert _retrieve(url, tenant).status_code == 403  # a tenant key must name one of its users
        assert _own_facts(_retrieve(url, {**admin, "X-External-User-Id": "u-7"})) == [
            "My on-call week starts on Monday (u-7) 7 December."
        ]
        assert httpx.get(f"{url}/v1/dev/mcp-requests", headers=tenant).status_code == 403  # every user's log
        assert httpx.get(f"{url}/v1/dev/mcp-requests", headers=admin).status_code == 200
        assert _retrieve(url, {"X-External-User-Id": "u-42"}).status_code == 401


# -- user headers --------------------------------------------------------------------------------


def test_a_utf8_user_header_reaches_that_users_tree(base: str) -> None:
    response = _retrieve(base, {"X-External-User-Id": "олена".encode()})
    assert response.status_code == 200
    assert _own_facts(response) == ["My on-call week starts on Monday (олена) 7 December."]


@pytest.mark.parametrize(
    ("header", "value", "kind"),
    [
        ("X-External-User-Id", b"\xff\xfeuser", "header_not_utf8"),
        ("X-On-Behalf-Of", b"caf\xe9", "header_not_utf8"),
        ("X-External-User-Id", b"u" * 5000, "string_too_long"),  # before: 200 with -32603 (file name too long)
    ],
)
def test_a_bad_user_header_is_a_422_naming_the_header(base: str, header: str, value: bytes, kind: str) -> None:
    response = _retrieve(base, {header: value})
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["loc"] == ["header", header] and detail["type"] == kind
    assert header in detail["msg"]
    assert len(json.dumps(detail)) < 400


@pytest.mark.parametrize("header", ["X-External-User-Id", "X-On-Behalf-Of"])
def test_a_user_id_that_is_not_a_plain_name_is_a_422_naming_the_header_it_came_in(base: str, header: str) -> None:
    response = _retrieve(base, {header: "../u-42"})
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["loc"] == ["header", header.lower()]  # before: always x-external-user-id
    assert detail["msg"].startswith("the user id '../u-42' is not a plain name")


def _retrieve_as(url: str, headers: list[tuple[str, str]]) -> httpx.Response:
    """``/memories/retrieve`` with headers given as pairs, so that a header may be sent more than once."""
    return httpx.post(f"{url}/memories/retrieve", json=QUERY, headers=headers, timeout=30)


def test_a_client_header_naming_another_user_than_the_gateways_is_refused(service: MemoryService) -> None:
    with serving(service, api_keys="gateway-key-0123=*") as url:
        key = ("Authorization", "Bearer gateway-key-0123")
        # The gateway sets X-On-Behalf-Of; the client slipped in its own X-External-User-Id.
        response = _retrieve_as(url, [key, ("X-On-Behalf-Of", "u-42"), ("X-External-User-Id", "u-7")])
        assert response.status_code == 422  # before: 200 with u-7's tree
        (detail,) = response.json()["detail"]
        assert detail["loc"] == ["header", "X-External-User-Id"] and detail["type"] == "header_conflict"
        assert detail["msg"].startswith("X-External-User-Id names 'u-7' but X-On-Behalf-Of names 'u-42'")
        same = _retrieve_as(url, [key, ("X-On-Behalf-Of", "u-42"), ("X-External-User-Id", "u-42")])
        assert _own_facts(same) == ["My on-call week starts on Monday (u-42) 7 December."]  # agreeing: served


@pytest.mark.parametrize("values", [("u-42", "u-7"), ("u-42", "u-42")])
def test_a_user_header_sent_twice_is_refused_naming_it(base: str, values: tuple[str, str]) -> None:
    response = _retrieve_as(base, [("X-On-Behalf-Of", value) for value in values])
    assert response.status_code == 422  # before: the second one was silently dropped
    (detail,) = response.json()["detail"]
    assert detail["loc"] == ["header", "X-On-Behalf-Of"] and detail["type"] == "header_repeated"
    assert detail["msg"] == "X-On-Behalf-Of is sent 2 times; send it once (a gateway replaces the client's, never adds)"


def test_a_long_conflicting_user_is_echoed_only_in_part(base: str) -> None:
    response = _retrieve_as(base, [("X-External-User-Id", "u" * 250), ("X-On-Behalf-Of", "u-42")])
    assert response.status_code == 422
    (detail,) = response.json()["detail"]
    assert detail["type"] == "header_conflict"
    assert len(response.text) < 400


def test_a_body_cut_off_by_the_client_going_away_never_reaches_the_route(base: str) -> None:
    cut = b'{"query": "cut off", "agent_id": "a"}'  # valid JSON already: only the missing padding is unsent
    head = f"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {len(cut) + 500}\r\n\r\n"
    raw_connection(base, head.encode() + cut).close()
    assert _retrieve(base, body={"query": "marker", "agent_id": "a"}).status_code == 200
    logged = lambda: httpx.get(f"{base}/v1/dev/mcp-requests").json()["requests"]  # noqa: E731
    assert wait_until(lambda: any("marker" in json.dumps(r) for r in logged()))
    assert not any("cut off" in json.dumps(r) for r in logged())  # before: the half body was answered and logged
