"""Shared fixtures: every test gets its own state folder; trees are built from dicts."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis.configuration import set_hypothesis_home_dir

REPO = Path(__file__).resolve().parent.parent
COMPANY_CONTEXT = REPO / "company_context"
SHARED_SCHEMAS = REPO.parent / "shared" / "schemas"

# Hypothesis keeps caches under ./.hypothesis by default; tests write only in temporary folders.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="hypothesis-")
set_hypothesis_home_dir(_HYPOTHESIS_HOME)
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
# The suite must not be flaky: by default every property test draws the same examples on every run
# (a new failing example is a bug to fix, found by `HYPOTHESIS_PROFILE=explore pytest`, not by CI at random).
hypothesis.settings.register_profile("repeatable", derandomize=True, database=None)
hypothesis.settings.register_profile("explore", derandomize=False)
hypothesis.settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


@pytest.fixture(autouse=True)
def isolated_state(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Caches and stores go to a temporary folder, never the user's; no ambient settings leak in."""
    state = tmp_path_factory.mktemp("state")
    for name in list(os.environ):  # OPENAI_*: a developer's endpoint and key, which a model test would reach
        if name.startswith(("RETRIEVER_", "OPENAI_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("RETRIEVER_STATE_DIR", str(state))
    # Even code that ignores RETRIEVER_STATE_DIR (plain Settings()) must not reach the user's cache.
    monkeypatch.setenv("XDG_CACHE_HOME", str(state / "xdg-cache"))
    monkeypatch.setenv("XDG_STATE_HOME", str(state / "xdg-state"))
    # The user's own config file (~/.config/company-memory-retriever/config.toml) must not reach a test.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(state / "xdg-config"))
    yield state


TreeFactory = Callable[[Mapping[str, str | bytes]], Path]


@pytest.fixture
def make_tree(tmp_path: Path) -> TreeFactory:
    """Write ``{relative path: text or bytes}`` under ``tmp_path/memory`` and return that root."""

    def build(files: Mapping[str, str | bytes]) -> Path:
        root = tmp_path / "memory"
        root.mkdir(exist_ok=True)
        for rel, content in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return root

    return build


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(check: Callable[[], bool], timeout: float = 10.0, interval: float = 0.02) -> bool:
    """Poll ``check`` until it is true or ``timeout`` seconds pass (a bounded wait, not a sleep)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return check()


@contextmanager
def redis_process(folder: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A real redis-server on a free loopback port, its files in ``folder``; yields the process and its URL.

    Skips the test where redis-server is not installed (``.ci/run`` installs it with apt-get).
    The process may be stopped inside the block (to test a dead server); it is stopped on exit.
    """
    import redis

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server); Redis store tests skipped")
    port = free_port()
    process = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)

    def answers() -> bool:
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False

    try:
        assert wait_until(answers), f"redis-server did not answer on port {port}"
        yield process, url
    finally:
        client.close()
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One real redis-server for the whole test session; yields its URL."""
    with redis_process(tmp_path_factory.mktemp("redis")) as (_, url):
        yield url


@pytest.fixture
def redis_url(redis_server: str) -> Iterator[str]:
    """The session's Redis, emptied before each test."""
    import redis

    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    yield redis_server
    client.close()


@contextmanager
def serving(service: Any, **settings: Any) -> Iterator[str]:
    """``retriever serve``'s app for ``service`` on a free loopback port, in a thread; yields the base URL.

    ``settings`` are ``Settings`` fields for the HTTP policy and limits (``api_key="k"``,
    ``header_timeout_seconds=0.5``, ...); the server is built as ``retriever serve`` builds it.
    """
    import threading

    from retriever import Settings
    from retriever.adapters.http import create_app
    from retriever.adapters.http_guard import HttpPolicy
    from retriever.adapters.http_server import make_server

    port = free_port()
    config = Settings.from_env(**settings)
    server = make_server(create_app(service, HttpPolicy.from_settings(config)), config, port=port)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    assert wait_until(lambda: server.started or not thread.is_alive()), "server did not start"
    assert server.started, "server failed to start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def answers(url: str, status: int = 200) -> bool:
    """True when ``GET url`` answers ``status``; False while nothing listens (for bounded readiness waits)."""
    import httpx

    try:
        return httpx.get(url, timeout=5).status_code == status
    except httpx.TransportError:
        return False


def validate_shared(instance: Any, schema_name: str) -> None:
    """Validate against ``../shared/schemas/<schema_name>``; nothing to do in a clone without ``../shared``."""
    path = SHARED_SCHEMAS / schema_name
    if path.is_file():
        pytest.importorskip("jsonschema").validate(instance, json.loads(path.read_text()))


def validate_tool_result(result: dict[str, Any]) -> None:
    """A ``retrieve_memory`` result: our own models, then seed 000's schemas."""
    from retriever.pipeline.contracts import ErrorContent, StructuredContent

    (ErrorContent if result["isError"] else StructuredContent).model_validate(result["structuredContent"])
    validate_shared(result, "mcp_tool_result.schema.json")
    validate_shared(result["structuredContent"], "retrieve_memory.structured.schema.json")


def child_env() -> dict[str, str]:
    """The environment for a spawned ``retriever``: the test's isolated state folders, nothing else of ours."""
    return {k: v for k, v in os.environ.items() if k.startswith(("RETRIEVER_", "XDG_", "PATH", "HOME", "PYTHON"))}


def raw_connection(base: str, data: bytes = b"", timeout: float = 10.0) -> socket.socket:
    """A plain TCP connection to the server at ``base`` that has sent ``data`` (a request, or part of one)."""
    host, _, port = base.removeprefix("http://").partition(":")
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    if data:
        sock.sendall(data)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (``socket.timeout`` if it never does)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


@dataclass
class ServeProcess:
    """A ``retriever serve`` child process: its stderr lines up to the announcement, and the MCP URL."""

    process: subprocess.Popen[str]
    lines: list[str]
    url: str

    def route(self, path: str) -> str:
        return self.url.replace("/v1/mcp/memory", path)


@contextmanager
def serve_process(
    root: Path, *, seconds: float = 60, env: Mapping[str, str] | None = None
) -> Iterator[ServeProcess]:
    """Start ``retriever serve --port 0 --root ROOT``; yield once it has announced its URL (it listens by then).

    ``env`` adds variables to the child's environment.  A watchdog kills the child after ``seconds``,
    which bounds every blocking read of its stderr.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "retriever", "serve", "--port", "0", "--root", str(root)],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**child_env(), **(env or {})},
    )
    assert process.stderr is not None
    watchdog = threading.Timer(seconds, process.kill)
    watchdog.start()
    try:
        lines = [process.stderr.readline()]
        while lines[-1] and not lines[-1].startswith("Serving MCP at"):
            lines.append(process.stderr.readline())
        assert lines[-1].startswith("Serving MCP at http://127.0.0.1:"), lines
        yield ServeProcess(process, lines, lines[-1].split()[3])
    finally:
        watchdog.cancel()
        process.terminate()
        process.wait(timeout=15)
