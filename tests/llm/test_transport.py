"""The LLM seam's transport: every network wait of a call ends by the call's deadline, in either HTTP library."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from llm_server import Reply, ScriptedLLM, serve

from retriever.llm.transport import WRITE_PIECE, DeadlineBackend, DeadlineStream, Http, _proxy_for, _wait, within


class Expired(Exception):
    pass


class _Recorded:
    """A network stream, and its backend, that only note the timeout each operation was given."""

    def __init__(self) -> None:
        self.waits: list[tuple[str, float | None]] = []

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self.waits.append(("read", timeout))
        return b"x"

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.waits.append((f"write {len(buffer)}", timeout))

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        self.waits.append(("tls", timeout))
        return self

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, *args: Any) -> Any:
        self.waits.append(("connect", timeout))
        return self


def _core(recorded: _Recorded) -> Any:
    """A stand-in for ``httpcore``: its backend records, its timeouts are ``Expired``."""
    return SimpleNamespace(
        SyncBackend=lambda: recorded, ReadTimeout=Expired, WriteTimeout=Expired, ConnectTimeout=Expired
    )


def test_outside_a_deadline_each_wait_keeps_its_own_timeout() -> None:
    recorded = _Recorded()
    stream = DeadlineBackend(_core(recorded)).connect_tcp("127.0.0.1", 80, timeout=5.0)
    stream.read(10, timeout=5.0)
    stream.write(b"x" * 10, timeout=None)
    assert recorded.waits == [("connect", 5.0), ("read", 5.0), ("write 10", None)]


def test_within_a_deadline_every_wait_is_cut_to_the_time_left_and_none_starts_after_it() -> None:
    recorded = _Recorded()
    with within(time.monotonic() + 2.0):
        stream = DeadlineBackend(_core(recorded)).connect_tcp("127.0.0.1", 80, timeout=600.0)
        stream = stream.start_tls(None, "example.org", timeout=600.0)
        stream.read(10, timeout=0.5)
        stream.write(b"x" * (2 * WRITE_PIECE + 1), timeout=None)  # in pieces, each cut to the time left
    names = [name for name, _ in recorded.waits]
    assert names == ["connect", "tls", "read", f"write {WRITE_PIECE}", f"write {WRITE_PIECE}", "write 1"]
    waits = [wait for _, wait in recorded.waits]
    assert all(wait is not None and 0 < wait <= 2.0 for wait in waits) and waits[2] == 0.5
    with within(time.monotonic() - 0.001), pytest.raises(Expired):
        stream.read(10, timeout=5.0)
    with within(time.monotonic() - 0.001), pytest.raises(Expired):
        DeadlineStream(recorded, _core(recorded)).write(b"x", timeout=5.0)


def test_a_deadline_holds_only_while_within_is_open_and_an_inner_one_only_in_its_block() -> None:
    outer = time.monotonic() + 10.0
    with within(outer):
        with within(time.monotonic() - 1.0), pytest.raises(Expired):
            _wait(5.0, Expired)
        wait = _wait(None, Expired)
        assert wait is not None and 9.0 < wait <= 10.0
    assert _wait(5.0, Expired) == 5.0 and _wait(None, Expired) is None


@given(
    timeout=st.none() | st.floats(min_value=0.0, max_value=1e6),
    left=st.floats(min_value=-1e6, max_value=1e6),
)
def test_no_wait_outlasts_its_own_timeout_or_the_deadline(timeout: float | None, left: float) -> None:
    before = time.monotonic()
    try:
        with within(before + left):
            wait = _wait(timeout, Expired)
    except Expired:
        assert left <= time.monotonic() - before
        return
    assert wait is not None and wait <= left and (timeout is None or wait <= timeout)


PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.mark.parametrize(
    ("environment", "endpoint", "proxy"),
    [
        ({}, "http://127.0.0.1:8080/v1", None),
        ({"HTTP_PROXY": "http://proxy:3128"}, "http://llm.example/v1", "http://proxy:3128"),
        ({"HTTP_PROXY": "http://proxy:3128"}, "https://llm.example/v1", None),
        ({"HTTPS_PROXY": "proxy:3128"}, "https://llm.example/v1", "http://proxy:3128"),
        ({"ALL_PROXY": "socks5://proxy:1080"}, "https://llm.example/v1", "socks5://proxy:1080"),
        ({"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "localhost,.example"}, "http://llm.example/v1", None),
        ({"HTTP_PROXY": "http://proxy:3128", "NO_PROXY": "*"}, "http://llm.example/v1", None),
    ],
)
def test_the_proxy_is_the_one_the_environment_names_for_the_endpoint(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], endpoint: str, proxy: str | None
) -> None:
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    assert _proxy_for(endpoint) == proxy


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    yield from serve()


@pytest.mark.parametrize("library", ["httpx", "httpx2"])  # older openai releases use httpx, newer ones httpx2
def test_either_http_librarys_client_ends_a_trickled_reply_at_the_deadline(llm: ScriptedLLM, library: str) -> None:
    client_class = pytest.importorskip(library).Client
    http = Http.of(client_class, llm.url)
    assert isinstance(http.client, client_class) and http.timeout_error.__module__.startswith(library)
    llm.script = lambda request: Reply(content=json.dumps({"summary": "late"}), trickle=0.25, trickle_head=True)
    started = time.monotonic()
    with within(started + 0.5), pytest.raises(http.timeout_error):
        http.client.post(f"{llm.url}/chat/completions", json={}, timeout=5.0)
    assert time.monotonic() - started < 2.5
    llm.script = lambda request: Reply(content=json.dumps({"summary": "on time"}))
    with within(time.monotonic() + 5.0):
        reply = http.client.post(f"{llm.url}/chat/completions", json={}, timeout=5.0)
    assert reply.json()["choices"][0]["message"]["content"] == json.dumps({"summary": "on time"})
