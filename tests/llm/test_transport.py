"""The LLM seam's transport: every network wait of a call ends by the call's deadline, in either HTTP library."""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from llm_server import Reply, ScriptedLLM, serve

from retriever.errors import ConfigError
from retriever.llm.transport import WRITE_PIECE, DeadlineBackend, DeadlineStream, Http, _wait, within


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


def _environment(monkeypatch: pytest.MonkeyPatch, **variables: str) -> None:
    """Exactly these proxy variables set (a developer's own HTTP_PROXY or no_proxy left out)."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def proxy() -> Iterator[ScriptedLLM]:
    yield from serve()  # answers GET .../models whether asked as a server or, with an absolute URL, as a proxy


@pytest.fixture
def direct(monkeypatch: pytest.MonkeyPatch, proxy: ScriptedLLM) -> Iterator[ScriptedLLM]:
    """A loopback server that every connection but the proxy's reaches: the endpoints' names and addresses
    (10.1.2.3, llm.corp.example, [::1]) stand for it, with no name looked up and no packet leaving the host."""
    for server in serve():
        monkeypatch.setattr(socket, "create_connection", _loopback(_port(proxy), _port(server)))
        yield server


def _port(server: ScriptedLLM) -> int:
    return int(server.url.rsplit(":", 1)[1].split("/")[0])


def _loopback(proxy_port: int, port: int) -> Any:
    """``socket.create_connection`` that connects to 127.0.0.1:``port`` wherever it is asked to, but the proxy."""
    connect = socket.create_connection

    def loopback(address: tuple[str, int], *args: Any, **kwargs: Any) -> socket.socket:
        at_proxy = tuple(address[:2]) == ("127.0.0.1", proxy_port)
        return connect(address if at_proxy else ("127.0.0.1", port), *args, **kwargs)

    return loopback


def _route(client: Any, endpoint: str, proxy: ScriptedLLM, direct: ScriptedLLM) -> str:
    """Which loopback server a GET of the endpoint's models reached: 'proxy' or 'direct'."""
    before = len(proxy.gets), len(direct.gets)
    assert client.get(f"{endpoint}/models", timeout=5.0).status_code == 200
    reached = len(proxy.gets) - before[0], len(direct.gets) - before[1]
    assert reached in ((1, 0), (0, 1))
    return "proxy" if reached[0] else "direct"


NO_PROXY_FORMS = [  # a NO_PROXY value, an endpoint it lists, one it does not
    ("10.0.0.0/8", "http://10.1.2.3:8080/v1", "http://11.1.2.3:8080/v1"),
    ("*.corp.example", "http://llm.corp.example:8080/v1", "http://llm.other.example:8080/v1"),
    ("[::1]", "http://[::1]:8080/v1", "http://[::2]:8080/v1"),
    ("http://llm.internal", "http://llm.internal:8080/v1", "http://llm.external:8080/v1"),
    ("127.0.0.0/8", "http://127.0.0.2:8080/v1", "http://10.1.2.3:8080/v1"),
    ("localhost,.corp.example", "http://llm.corp.example/v1", "http://corp.example.org/v1"),
]
CLIENTS = ["httpx", "httpx2", "openai"]  # each library's own client, and the openai package's (on httpx2 here)


def _client_class(name: str) -> tuple[type[Any], Any]:
    """The client class ``name`` stands for, and the library it is built on."""
    if name == "openai":
        from openai import DefaultHttpxClient

        return DefaultHttpxClient, pytest.importorskip("httpx2")
    library = pytest.importorskip(name)
    return library.Client, library


@pytest.mark.parametrize("name", CLIENTS)
@pytest.mark.parametrize(("no_proxy", "listed", "unlisted"), NO_PROXY_FORMS)
def test_an_endpoint_no_proxy_lists_is_called_directly_and_any_other_through_the_proxy_as_the_library_rules(
    monkeypatch: pytest.MonkeyPatch,
    proxy: ScriptedLLM,
    direct: ScriptedLLM,
    name: str,
    no_proxy: str,
    listed: str,
    unlisted: str,
) -> None:
    client_class, library = _client_class(name)
    _environment(monkeypatch, HTTP_PROXY=proxy.url.removesuffix("/v1"), NO_PROXY=no_proxy)
    try:
        own = client_class()  # the library's own reading of the same environment, with no deadline installed
    except library.InvalidURL:  # httpx 0.28 cannot read NO_PROXY=[::1]: neither can its openai client
        with pytest.raises(ConfigError, match="NO_PROXY"):
            Http.of(client_class, listed)
        return
    endpoints = (listed, unlisted)
    routes = {
        endpoint: _route(Http.of(client_class, endpoint).client, endpoint, proxy, direct) for endpoint in endpoints
    }
    assert routes == {endpoint: _route(own, endpoint, proxy, direct) for endpoint in endpoints}
    if library.__name__ == "httpx2":  # before: every listed endpoint but the last form's went through the proxy
        assert routes == {listed: "direct", unlisted: "proxy"}


@pytest.mark.parametrize("name", CLIENTS)
def test_every_pool_the_client_holds_waits_no_longer_than_the_deadline(
    monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    client_class, _ = _client_class(name)
    _environment(monkeypatch, HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9", NO_PROXY="x.test")
    client = Http.of(client_class, "http://127.0.0.1:8080/v1").client
    pools = [client._transport._pool, *(t._pool for t in client._mounts.values() if t is not None)]
    assert len(pools) == 3 and all(isinstance(pool._network_backend, DeadlineBackend) for pool in pools)


def test_a_transport_whose_pool_cannot_be_reached_is_named_in_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    library = pytest.importorskip("httpx2")

    class Mounted(library.Client):  # type: ignore[name-defined,misc]
        def __init__(self) -> None:
            super().__init__(mounts={"http://odd.test": library.MockTransport(lambda request: library.Response(200))})

    with caplog.at_level(logging.WARNING, logger="retriever.llm.transport"):
        client = Http.of(Mounted, "http://127.0.0.1:8080/v1").client
    assert "httpx2 keeps no network backend where expected" in caplog.text
    assert isinstance(client._transport._pool._network_backend, DeadlineBackend)  # the rest are bounded still


@pytest.mark.parametrize(
    ("environment", "shown"),
    [
        ({"ALL_PROXY": "socks5://127.0.0.1:1080"}, "socksio"),  # not installed here
        ({"HTTP_PROXY": "http://user:hunter2@[::1"}, "Invalid port"),
        ({"HTTP_PROXY": "ftp://user:hunter2@proxy.test"}, "Unknown scheme"),
    ],
)
def test_proxy_settings_the_library_cannot_read_are_a_config_error_naming_them_never_a_password(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], shown: str
) -> None:
    _environment(monkeypatch, **environment)
    from openai import DefaultHttpxClient

    with pytest.raises(ConfigError) as caught:
        Http.of(DefaultHttpxClient, "http://127.0.0.1:8080/v1")
    message = caught.value.message
    assert shown in message and "fix or unset HTTP_PROXY, HTTPS_PROXY, ALL_PROXY and NO_PROXY" in message
    assert "hunter2" not in message


@pytest.mark.parametrize(
    ("endpoint", "reason"),
    [
        ("http://[::1:8080/v1", "Invalid IPv6 URL"),  # before: ValueError from query and status
        ("http://127.0.0.1:99999/v1", "out of range"),
        ("http://127.0.0.1:port/v1", "ort"),
        ("127.0.0.1:8080/v1", "not an http(s) URL with a host"),
        ("ftp://llm.test/v1", "not an http(s) URL with a host"),
        ("http:///v1", "not an http(s) URL with a host"),
    ],
)
def test_an_endpoint_that_is_not_an_http_url_is_a_config_error_naming_it_and_the_setting(
    endpoint: str, reason: str
) -> None:
    from openai import DefaultHttpxClient

    with pytest.raises(ConfigError) as caught:
        Http.of(DefaultHttpxClient, endpoint)
    message = caught.value.message
    assert message.startswith(f"the LLM endpoint {endpoint!r} is not a valid URL (") and reason in message
    assert "set OPENAI_BASE_URL (llm_base_url in a config file)" in message


@settings(max_examples=150, deadline=None)
@given(
    st.text(max_size=40)
    | st.builds("http://{}:{}/v1".format, st.text(max_size=12), st.text(max_size=6))
    | st.builds("http://[{}]/v1".format, st.text(alphabet="0123456789abcdef:.%[]", max_size=16))
)
def test_any_endpoint_either_builds_a_client_that_can_address_it_or_is_a_config_error(endpoint: str) -> None:
    from openai import DefaultHttpxClient

    try:
        http = Http.of(DefaultHttpxClient, endpoint)
    except ConfigError as error:
        assert error.message.startswith("the LLM endpoint ") and len(error.message) < 600
        return
    assert http.client.build_request("GET", endpoint.rstrip("/") + "/models").url.host


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
