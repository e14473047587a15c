"""A scripted OpenAI-compatible server on loopback: real HTTP for the real ``openai`` client.

A test gives it a ``Script``: a function from the request's JSON to a ``Reply`` (status,
assistant content or raw body, optional delay, or an event to wait for; its body, or all of it from
the status line on, may be sent a byte at a time).  Every request is recorded so tests can assert
what was sent: model, messages, ``response_format``, ``max_tokens``.
A ``serial`` server answers one request at a time, ``GET /v1/models`` included, as
llama-cpp-python's server does: a call the client abandoned keeps it busy until it is done.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    content: str | None = None  # the assistant message's content
    status: int = 200
    body: dict[str, Any] | None = None  # a raw body instead of a completion
    raw: bytes | None = None  # bytes sent as the JSON body, as they are (empty, cut off)
    delay: float = 0.0
    finish_reason: str = "stop"
    hold: threading.Event | None = None  # answer only once the test sets it (bounded wait)
    usage: dict[str, int] | None = None  # token counts to report instead of 100 in, 20 out
    trickle: float = 0.0  # seconds between the body's bytes, sent one at a time (a slow-drip endpoint)
    trickle_head: bool = False  # the status line and headers too, a byte every ``trickle`` seconds


Script = Callable[[dict[str, Any]], Reply]


def stage_of(request: dict[str, Any]) -> str:
    """Which answer model a request asks for: TriageAnswer, TargetAnswer, ExtractAnswer or SummaryAnswer."""
    fmt = request.get("response_format") or {}
    schema = fmt.get("json_schema", {}).get("schema") if fmt.get("type") == "json_schema" else fmt.get("schema")
    return str((schema or {}).get("title", ""))


def user_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def outline_ids(request: dict[str, Any]) -> dict[str, str]:
    """Outline id → tree path, from a target request."""
    return dict(re.findall(r"^(S\d+) \| ([^|]+?) \|", user_text(request), re.M))


def section_blocks(request: dict[str, Any]) -> dict[str, str]:
    """Section id → text, from an extract request."""
    pattern = r"<<<SECTION (S\d+) \| [^\n]*>>>\n(.*?)\n<<<END \1>>>"
    return {m[0]: m[1] for m in re.findall(pattern, user_text(request), re.S)}


def answer(payload: dict[str, Any]) -> Reply:
    return Reply(content=json.dumps(payload))


HOLD_LIMIT = 30.0  # seconds a held reply waits for its event at most


@dataclass
class ScriptedLLM:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    script: Script = lambda request: Reply(status=500)
    serial: bool = False
    probes: int = 0  # GET /v1/models requests received
    lock: threading.Lock = field(default_factory=threading.Lock)
    models: tuple[str, ...] = ("test-model",)  # GET /models lists these
    models_status: int = 200
    gets: list[tuple[str, str | None]] = field(default_factory=list)  # (path, Authorization) of each GET
    models_trickle: float = 0.0  # seconds between the bytes of GET /models' reply, headers included

    def stages(self) -> list[str]:
        return [stage_of(r) for r in self.requests]

    def wait_idle(self, timeout: float = 10.0) -> None:
        """Return once a serial server has finished what it was working on."""
        assert self.lock.acquire(timeout=timeout), "the scripted server stayed busy"
        self.lock.release()


def _handler(server: ScriptedLLM) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet
            return

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            with server.lock if server.serial else contextlib.nullcontext():
                server.requests.append(request)
                reply = server.script(request)
                if reply.delay:
                    time.sleep(reply.delay)
                if reply.hold is not None:
                    reply.hold.wait(HOLD_LIMIT)
                body = reply.body if reply.body is not None else _completion(request, reply)
                self._send(reply.status, body if reply.raw is None else reply.raw, reply.trickle, reply.trickle_head)

        def do_GET(self) -> None:
            server.probes += 1  # counted on arrival: a busy serial server answers it only later
            server.gets.append((self.path, self.headers.get("Authorization")))
            with server.lock if server.serial else contextlib.nullcontext():
                if not self.path.endswith("/models"):
                    self._send(404, {"error": "not found"})
                elif server.models_status != 200:
                    self._send(server.models_status, {"error": "scripted"})
                else:
                    listed = {"object": "list", "data": [{"id": m, "object": "model"} for m in server.models]}
                    self._send(200, listed, server.models_trickle, trickle_head=bool(server.models_trickle))

        def _send(
            self, status: int, body: dict[str, Any] | bytes, trickle: float = 0.0, trickle_head: bool = False
        ) -> None:
            data = body if isinstance(body, bytes) else json.dumps(body).encode()
            try:
                if trickle_head:
                    head = f"HTTP/1.0 {status} {HTTPStatus(status).phrase}\r\nContent-Type: application/json\r\n"
                    _drip(self.wfile, f"{head}Content-Length: {len(data)}\r\n\r\n".encode(), trickle)
                else:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                _drip(self.wfile, data, trickle)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    return Handler


def _drip(out: Any, data: bytes, seconds: float) -> None:
    """Write ``data``: at once, or a byte every ``seconds`` (until the client hangs up, or to the end)."""
    if not seconds:
        out.write(data)
        return
    for index in range(len(data)):
        out.write(data[index : index + 1])
        out.flush()
        time.sleep(seconds)


def _completion(request: dict[str, Any], reply: Reply) -> dict[str, Any]:
    if reply.status != 200:
        return {"error": {"message": f"scripted {reply.status}", "type": "scripted", "code": reply.status}}
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model"),
        "choices": [
            {
                "index": 0,
                "finish_reason": reply.finish_reason,
                "message": {"role": "assistant", "content": reply.content},
            }
        ],
        "usage": reply.usage or {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120},
    }


def serve() -> Iterator[ScriptedLLM]:
    """Start the server on a free loopback port; yields it; stops it after."""
    scripted = ScriptedLLM(url="")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(scripted))
    httpd.daemon_threads = True
    scripted.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield scripted
    finally:
        httpd.shutdown()
        httpd.server_close()


def serve_for(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLM]:
    """``serve``, with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY`` pointing the retriever at it for one test."""
    for scripted in serve():
        monkeypatch.setenv("OPENAI_BASE_URL", scripted.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        yield scripted
