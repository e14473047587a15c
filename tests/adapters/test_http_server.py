"""Connection limits of ``retriever serve``: half-sent requests, the connection cap, header size (real sockets)."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TreeFactory, raw_connection, read_until_closed, serving, wait_until
from fixtures import ACME

from retriever import Retriever, Settings
from retriever.adapters.http_server import FD_RESERVE, fit_to_fd_limit
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

HALF_SENT = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: appl"


@pytest.fixture
def service(make_tree: TreeFactory, tmp_path: Path) -> Iterator[MemoryService]:
    running = MemoryService(
        Retriever(make_tree(ACME), Settings.from_env()), SQLiteStore(tmp_path / "s.sqlite"), watch=False
    )
    _ = running.retriever.memory
    yield running
    running.close()


def _healthz_within(url: str, seconds: float) -> float:
    began = time.monotonic()
    assert httpx.get(f"{url}/healthz", timeout=seconds).status_code == 200
    return time.monotonic() - began


def _closed(sock: socket.socket) -> bool:
    """True when the server has closed ``sock`` (anything it sent first is read and dropped)."""
    sock.settimeout(0.0)
    try:
        while sock.recv(65536):
            pass
        return True
    except BlockingIOError:
        return False
    except ConnectionResetError:
        return True


def test_half_sent_requests_are_closed_after_the_header_timeout_and_healthz_still_answers(
    service: MemoryService,
) -> None:
    with serving(service, header_timeout_seconds=1.0) as url:
        held = [raw_connection(url, HALF_SENT) for _ in range(100)]
        assert _healthz_within(url, 5.0) < 5.0
        try:
            answers = [read_until_closed(sock) for sock in held]  # before: held open for ever (socket.timeout)
        finally:
            for sock in held:
                sock.close()
        assert all(a.startswith(b"HTTP/1.1 408") for a in answers), {a[:40] for a in answers}


def test_a_client_that_never_sends_a_byte_is_closed_too(service: MemoryService) -> None:
    with serving(service, header_timeout_seconds=0.5) as url:
        sock = raw_connection(url)
        assert read_until_closed(sock).startswith(b"HTTP/1.1 408")
        sock.close()


def test_past_the_connection_cap_the_longest_waiting_connection_makes_room(service: MemoryService) -> None:
    with serving(service, max_connections=20, header_timeout_seconds=60) as url:
        held = [raw_connection(url, HALF_SENT) for _ in range(40)]
        try:
            assert _healthz_within(url, 5.0) < 5.0  # before: no cap; at the fd limit this failed
            wait_until(lambda: sum(_closed(s) for s in held) >= 21, timeout=10)
            closed = [_closed(s) for s in held]
        finally:
            for sock in held:
                sock.close()
        assert sum(closed) >= 21  # 40 half-sent + /healthz's connection, 20 kept
        # Eviction goes by last activity, which follows the order of connecting only roughly.
        assert sum(closed[:20]) > sum(closed[20:])


def test_oversized_headers_are_refused_with_431(service: MemoryService) -> None:
    with serving(service) as url:
        sock = raw_connection(url, HALF_SENT + b"\r\nX-Padding: " + b"a" * 100_000)
        answer = read_until_closed(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 431"), answer[:60]
        assert _healthz_within(url, 5.0) < 5.0


def test_oversized_headers_sent_whole_with_a_body_are_refused_with_431_before_the_app(service: MemoryService) -> None:
    body = b'{"query": "Who owns billing?", "agent_id": "a"}'
    request = (
        b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + b"X-Padding: " + b"a" * 100_000 + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )
    with serving(service) as url:
        sock = raw_connection(url, request)
        answer = read_until_closed(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 431"), answer[:60]
        assert _healthz_within(url, 5.0) < 5.0


def test_keep_alive_connections_serve_many_requests(service: MemoryService) -> None:
    with serving(service, header_timeout_seconds=0.5) as url, httpx.Client() as client:
        for _ in range(3):
            assert client.get(f"{url}/healthz").status_code == 200


def test_the_connection_cap_stays_under_the_file_descriptor_limit() -> None:
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert fit_to_fd_limit(10) == 10
    if soft != resource.RLIM_INFINITY:
        assert fit_to_fd_limit(10**9) == soft - FD_RESERVE


SLOW_BODY = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{"


def test_past_the_connection_cap_a_stalled_body_makes_room_and_healthz_answers(service: MemoryService) -> None:
    with serving(service, max_connections=20, header_timeout_seconds=60, body_timeout_seconds=60) as url:
        held = [raw_connection(url, SLOW_BODY) for _ in range(25)]  # one byte of a 1,000-byte body each
        try:
            assert _healthz_within(url, 5.0) < 5.0  # before: 503 until the body timeout let them go
            full = httpx.post(f"{url}/memories/retrieve", json={"query": "billing", "agent_id": "a"}, timeout=5)
            assert full.status_code == 200  # a whole request, sent at once, is served too
            # 25 held + /healthz's connection, 20 kept (the POST came after /healthz's connection had closed).
            assert wait_until(lambda: sum(_closed(s) for s in held) >= 6, timeout=10)
        finally:
            for sock in held:
                sock.close()


def test_a_websocket_upgrade_is_answered_as_http_and_logs_nothing(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    """uvicorn had logged two warnings per request, before any check, one saying to install a WebSocket library."""
    upgrade = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
    with serving(service) as url, caplog.at_level(logging.WARNING, logger="uvicorn.error"):
        sock = raw_connection(url, upgrade + b"Sec-WebSocket-Version: 13\r\nConnection: close\r\n\r\n")
        answer = read_until_closed(sock)
        sock.close()
        assert answer.startswith(b"HTTP/1.1 200"), answer[:60]
    assert not [r for r in caplog.records if "upgrade" in r.getMessage().lower() or "WebSocket" in r.getMessage()]


CHUNKED = b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"


def test_trailers_past_the_header_cap_close_the_connection_and_healthz_still_answers(service: MemoryService) -> None:
    with serving(service) as url:
        sock = raw_connection(url, CHUNKED)
        try:
            for _ in range(100):  # 100 KB of trailer fields, never ended: before, each kept, for ever
                sock.sendall(b"X-T: " + b"a" * 1000 + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed while sending: the cap held
        read_until_closed(sock)  # before: socket.timeout, the server reading on
        sock.close()
        assert _healthz_within(url, 5.0) < 5.0


def test_one_endless_trailer_line_is_cut_off_at_the_message_cap(service: MemoryService) -> None:
    with serving(service, max_body_bytes=1000) as url:
        sock = raw_connection(url, CHUNKED + b"X-T: ")
        try:
            for _ in range(5_000):  # 5 MB in one trailer value that never ends: the parser buffers it unseen
                sock.sendall(b"a" * 1000)
        except (BrokenPipeError, ConnectionResetError):
            pass
        read_until_closed(sock)
        sock.close()


def test_trailers_that_stop_coming_get_408_at_the_header_timeout(service: MemoryService) -> None:
    with serving(service, header_timeout_seconds=0.5) as url:
        # Two trailers, then nothing: no end of the request (the parser reads a field once the next one begins).
        sock = raw_connection(url, CHUNKED + b"X-A: a\r\nX-B: b\r\n")
        assert read_until_closed(sock).startswith(b"HTTP/1.1 408")  # before: the body timeout's (30 s)
        sock.close()


def _read_response(sock: socket.socket) -> bytes:
    """One response (headers and a Content-Length body), leaving the connection open."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    lengths = [line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")]
    length = int(lengths[0])
    while len(body) < length:
        body += sock.recv(65536)
    return head


def test_after_a_request_answered_before_its_body_came_the_next_requests_timeout_is_still_answered(
    service: MemoryService,
) -> None:
    with serving(service, api_key="s3cret-key", header_timeout_seconds=0.5) as url:
        head = b"POST /memories/retrieve HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 10\r\n\r\n"
        sock = raw_connection(url, head)
        assert _read_response(sock).startswith(b"HTTP/1.1 401")  # answered before its body was sent
        sock.sendall(b"0123456789" + HALF_SENT)  # its body, then half of the next request
        assert read_until_closed(sock).startswith(b"HTTP/1.1 408")  # before: closed without a word
        sock.close()
