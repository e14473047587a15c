"""What every request to ``retriever serve`` passes first, before any route sees it.

``Guard`` is a pure ASGI middleware around the whole app, so no route can forget a check:

1. ``Host`` must be a loopback name or one in ``RETRIEVER_ALLOWED_HOSTS`` (421): a page on
   ``rebind.evil.example`` that re-points its DNS to 127.0.0.1 cannot reach the server.
2. ``Origin``, when sent, must be a loopback origin or one in ``RETRIEVER_ALLOWED_ORIGINS`` (403).
3. With keys configured, ``Authorization: Bearer <key>`` on every route but ``/healthz`` (401); a second
   ``Host``, ``Origin`` or ``Authorization`` header is refused (400).
   The key's ``KeyGrant`` goes to the routes in ``scope["state"]["grant"]`` (None on an open
   route without a valid key).
4. The body is read here, as a stream: a ``Content-Length`` over ``max_body_bytes`` is refused
   before reading, a body that grows past it is refused at that point (413), a body not sent
   within ``body_timeout`` seconds answers 408, and bodies being read at once may hold at most
   ``BODY_BUDGET_FACTOR`` times the limit beyond each one's first ``SMALL_BODY_BYTES`` (or a
   ``BODY_BUDGET_FACTOR``-th of the limit, if less) (503 past it).  Routes then get the body in one message;
   a body cut off by the client going away (or by the connection cap evicting it) reaches no route.

Errors are JSON: the JSON-RPC error shape on MCP paths, ``{"detail": ...}`` elsewhere.  Nothing
a client sent is echoed beyond a short prefix.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pydantic_core
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from retriever.adapters.http_keys import KeysInForce
from retriever.adapters.http_log import Refusals
from retriever.config import Settings
from retriever.endpoints import is_loopback_name
from retriever.service.access import OPEN, ApiKeys, KeyGrant, keys_file, load_api_keys

MCP_PATHS = ("/v1/mcp/memory", "/v1/memory/mcp", "/mcp")  # seed path; aliases ending in /mcp for inspectors
OPEN_PATHS = frozenset({"/healthz"})
INVALID_REQUEST = -32600
ECHO_CHARS = 80
# After refusing an oversized body, read (and drop) up to this much more before closing: closing a
# socket with unread data makes the kernel send a reset, which can destroy the 413 on its way.
LINGER_BYTES, _LINGER_SECONDS = 4 * 1024 * 1024, 1.0  # what a refused body is read of, and for how long
BODY_BUDGET_FACTOR = 16  # bodies being read at once hold at most this many times max_body_bytes
SMALL_BODY_BYTES = 64 * 1024  # a body's first bytes, outside the budget: every real MCP or retrieve body fits


@dataclass(frozen=True)
class HttpPolicy:
    """What ``retriever serve`` enforces; defaults suit a loopback server without keys."""

    keys: ApiKeys = field(default_factory=ApiKeys)
    keys_file: Path | None = None  # re-read when it changes (``http_keys``), by ``reload``
    reload: Callable[[], ApiKeys] | None = field(default=None, compare=False)
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_body_bytes: int = 1_000_000
    body_timeout: float = 30.0
    session_idle: float = 1800.0
    max_sessions: int = 1000

    @classmethod
    def from_settings(cls, settings: Settings, extra_hosts: tuple[str, ...] = ()) -> HttpPolicy:
        """The policy ``settings`` describe; ``extra_hosts`` (the bound address) join the allowed hosts.

        Raises ``ConfigError`` for malformed ``RETRIEVER_API_KEYS``.
        """
        return cls(
            keys=load_api_keys(settings),
            keys_file=keys_file(settings),
            reload=lambda: load_api_keys(settings),
            allowed_hosts=(*settings.allowed_hosts, *extra_hosts),
            allowed_origins=settings.allowed_origins,
            max_body_bytes=settings.max_body_bytes,
            body_timeout=settings.body_timeout_seconds,
            session_idle=settings.session_idle_seconds,
            max_sessions=settings.max_sessions,
        )


class ClientGone(Exception):
    """The client went away before its body was complete: nothing to answer, and no route may see half a body."""


class RequestRefused(Exception):
    """A request the guard answers itself: HTTP status and a message for the client."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


USER_HEADERS = ("X-External-User-Id", "X-On-Behalf-Of")
MAX_USER_ID_CHARS = 256


class RpcRefusal(Exception):
    """A JSON-RPC error the front answers itself, before the SDK sees the request."""

    def __init__(
        self,
        code: int,
        message: str,
        request_id: Any = None,
        status: int = 400,
        data: Any = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.request_id, self.status, self.data = code, message, request_id, status, data
        self.headers = headers

    def response(self) -> JSONResponse:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        body = {"jsonrpc": "2.0", "id": self.request_id, "error": error}
        return JSONResponse(body, status_code=self.status, headers=self.headers)


class HeaderProblem(Exception):
    """A user header the server cannot use: answered as a 422 ``detail`` entry."""

    def __init__(self, header: str, kind: str, message: str, shown: str) -> None:
        super().__init__(message)
        self.entry = {"type": kind, "loc": ["header", header], "msg": message, "input": shown}


def named_user(headers: Headers) -> tuple[str, str] | None:
    """(the header read, the user id) from ``X-External-User-Id`` or ``X-On-Behalf-Of``, decoded as
    UTF-8 (None: neither).  The id is as sent, stripped: routes canonicalise it (``canonical_user_id``).

    HTTP header bytes reach starlette as latin-1 text; re-encoding gives the bytes back, which
    clients send as UTF-8.  Raises ``HeaderProblem`` for bytes that are not UTF-8, an id over
    ``MAX_USER_ID_CHARS``, a user header sent more than once, and the two headers naming different
    users; the routes check the id's form and canonicalise it, as ``/memories/retrieve`` does.

    A gateway sets the header and the server trusts it; a client that adds its own beside the
    gateway's must not choose which one counts.  So two headers that disagree are refused, not
    ranked, and so is a header sent twice, even with equal values: two copies mean the gateway
    added its header instead of replacing the client's, and the next request's copies may differ.
    """
    named = [(header, value) for header in USER_HEADERS if (value := _user_header(headers, header)) is not None]
    if len(named) == 2 and unicodedata.normalize("NFC", named[0][1]) != unicodedata.normalize("NFC", named[1][1]):
        (first, mine), (second, theirs) = named
        message = (
            f"{first} names {clip(mine, 40)} but {second} names {clip(theirs, 40)}; send one user (a gateway that "
            "sets one of these headers must remove the other from the client's request)"
        )
        raise HeaderProblem(first, "header_conflict", message, mine[:64])
    return named[0] if named else None


def _user_header(headers: Headers, header: str) -> str | None:
    """``header``'s one value as UTF-8 text, None when absent or blank; raises ``HeaderProblem``."""
    values = headers.getlist(header)
    if len(values) > 1:
        message = f"{header} is sent {len(values)} times; send it once (a gateway replaces the client's, never adds)"
        raise HeaderProblem(header, "header_repeated", message, values[0][:64])
    if not values or not values[0].strip():
        return None
    try:
        value = values[0].encode("latin-1").decode("utf-8").strip()
    except UnicodeDecodeError:
        raise HeaderProblem(
            header, "header_not_utf8", f"{header} is not valid UTF-8; send the user id encoded as UTF-8", ""
        ) from None
    if len(value) > MAX_USER_ID_CHARS:
        message = f"{header} is {len(value):,} characters; the limit is {MAX_USER_ID_CHARS}: send a shorter user id"
        raise HeaderProblem(header, "string_too_long", message, value[:64])
    return value


def clip(value: str, limit: int = ECHO_CHARS) -> str:
    """``value`` as ``repr``, cut to a bounded prefix: what error messages may echo of client input."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"… ({len(value):,} characters)"


def parse_json(body: bytes) -> Any:
    """Standard JSON only: raises ``ValueError`` (short message) for anything else.

    Rejects NaN/Infinity and numbers that overflow to them, lone surrogates, integers over
    4,300 digits and nesting deeper than 200 (pydantic-core's parser, which neither recurses
    in Python nor accepts the constants Python's ``json`` does).
    """
    value = pydantic_core.from_json(body, allow_inf_nan=False)
    if not _finite(value):
        raise ValueError("number out of range (JSON numbers must be finite)")
    return value


def _finite(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def error_response(path: str, status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    """A refusal in the path's shape: a JSON-RPC error (id null) on MCP paths, else ``{"detail": ...}``."""
    if path in MCP_PATHS:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    else:
        body = {"detail": message}
    return JSONResponse(body, status_code=status, headers=headers)


class Guard:
    """The ASGI middleware described in the module docstring."""

    def __init__(self, app: ASGIApp, policy: HttpPolicy) -> None:
        self.app = app
        self.policy = policy
        self.hosts = frozenset(h.lower().strip("[]") for h in policy.allowed_hosts)
        self.budget = BODY_BUDGET_FACTOR * policy.max_body_bytes
        self.small = min(SMALL_BODY_BYTES, policy.max_body_bytes // BODY_BUDGET_FACTOR)  # outside the budget
        self.buffered = 0  # bytes of bodies being read right now, across requests
        self.origins = frozenset(o.rstrip("/") for o in policy.allowed_origins)
        self.refusals = Refusals()  # the operator's log of refused requests, rate-limited
        self.keys = KeysInForce(policy.keys, policy.keys_file, policy.reload)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # lifespan: the MCP session managers start and stop with the app
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            scope.setdefault("state", {})["grant"] = self._admit(scope["path"], headers)
            body = await self._read_body(headers, receive)
        except ClientGone:
            return
        except RequestRefused as refused:
            self.refusals.note(refused.status, scope.get("method", ""), scope["path"], refused.message)
            await error_response(scope["path"], refused.status, refused.message, refused.headers)(scope, receive, send)
            return
        await self.app(scope, replay(body, receive), send)

    # -- headers ---------------------------------------------------------------------------------

    def _admit(self, path: str, headers: Headers) -> KeyGrant | None:
        """The request's grant after the Host, Origin and key checks; raises ``RequestRefused``."""
        # A second one would go unchecked (only the first is read): a proxy appending its own credential would
        # leave the client's in charge.
        for name in ("host", "origin", "authorization"):
            if len(headers.getlist(name)) > 1:
                raise RequestRefused(400, f"more than one {name.capitalize()} header; send one")
        host = headers.get("host", "")
        if not self._host_allowed(host):
            raise RequestRefused(
                421,
                f"host {clip(host)} is not served here (DNS rebinding protection); clients must use a loopback "
                "name, or the operator adds the name to RETRIEVER_ALLOWED_HOSTS",
            )
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            raise RequestRefused(403, f"origin {clip(origin)} is not allowed; add it to RETRIEVER_ALLOWED_ORIGINS")
        grant = self._grant(headers)
        if grant is None and path not in OPEN_PATHS:
            raise RequestRefused(
                401, "missing or wrong bearer token (Authorization: Bearer <key>)", {"WWW-Authenticate": "Bearer"}
            )
        return grant

    def _host_allowed(self, host: str) -> bool:
        if not host or any(c in host for c in "@/\\?# "):  # a Host is a name and a port, nothing more
            return False
        try:
            name = urlsplit(f"//{host}").hostname or ""
        except ValueError:  # an unbalanced '[' and the like
            return False
        return bool(name) and ("*" in self.hosts or name in self.hosts or is_loopback_name(name))

    def _origin_allowed(self, origin: str) -> bool:
        if origin.rstrip("/") in self.origins:
            return True
        try:
            parts = urlsplit(origin)
            return parts.scheme in ("http", "https") and is_loopback_name(parts.hostname or "")
        except ValueError:
            return False

    def _grant(self, headers: Headers) -> KeyGrant | None:
        keys = self.keys.current()
        if not keys.required:
            return OPEN
        scheme, _, token = headers.get("authorization", "").partition(" ")
        return keys.check(token.strip()) if scheme.lower() == "bearer" else None

    # -- the body --------------------------------------------------------------------------------

    async def _read_body(self, headers: Headers, receive: Receive) -> bytes:
        """The whole body, read within the size and time limits; raises ``RequestRefused``."""
        limit = self.policy.max_body_bytes
        declared = _content_length(headers)
        if declared is not None and declared > limit:
            if headers.get("expect", "").lower() != "100-continue":  # else the client waits: nothing to drain
                await _linger(receive, 0)
            raise _too_large(limit)
        chunks: list[bytes] = []
        try:
            with anyio.move_on_after(self.policy.body_timeout):
                await self._collect(receive, chunks)
                return b"".join(chunks)
        finally:
            self.buffered -= self._counted(sum(map(len, chunks)))
        raise RequestRefused(
            408,
            f"the request body did not arrive within {self.policy.body_timeout:g} s; send it faster or smaller",
            {"Connection": "close"},
        )

    async def _collect(self, receive: Receive, chunks: list[bytes]) -> None:
        """Append the body's chunks to ``chunks``, within this request's limit and every request's budget."""
        limit, size = self.policy.max_body_bytes, 0
        async for chunk in _chunks(receive):
            size += len(chunk)
            if size > limit:
                await _linger(receive, size)
                raise _too_large(limit)
            counted = self._counted(size) - self._counted(size - len(chunk))
            if counted and self.buffered + counted > self.budget:
                # Many slow bodies at once would each hold up to the limit: past the budget, refuse.
                raise RequestRefused(503, "too many request bodies in flight; retry shortly", {"Connection": "close"})
            self.buffered += counted
            chunks.append(chunk)

    def _counted(self, size: int) -> int:
        """The bytes of a body of ``size`` that count against the budget: those past its first ``small`` bytes.
        Stalled large bodies filling the budget had refused every other request, a 150-byte tools/call too; a
        small body's bytes are bounded by the connection cap instead."""
        return max(0, size - self.small)


def _content_length(headers: Headers) -> int | None:
    value = headers.get("content-length")
    if value is None:
        return None
    if not value.strip().isdigit():
        raise RequestRefused(400, f"Content-Length {clip(value)} is not a number of bytes", {"Connection": "close"})
    return int(value)


def _too_large(limit: int) -> RequestRefused:
    return RequestRefused(413, f"request body over {limit:,} bytes; send a smaller body", {"Connection": "close"})


async def _chunks(receive: Receive) -> AsyncIterator[bytes]:
    """The body's chunks as they arrive; stops at the last one; raises ``ClientGone`` when the client goes away."""
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientGone
        yield bytes(message.get("body", b""))
        if not message.get("more_body", False):
            return


async def _linger(receive: Receive, already: int) -> None:
    """Read and drop what the client is still sending, briefly, so that the refusal reaches it."""
    with anyio.move_on_after(_LINGER_SECONDS):
        try:
            async for chunk in _chunks(receive):
                already += len(chunk)
                if already > LINGER_BYTES:
                    return
        except ClientGone:  # gone already: the refusal is sent into the void, which is harmless
            return


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that yields the buffered body once, then defers to the server (disconnects)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive_buffered() -> Message:
        return pending.pop() if pending else await receive()

    return receive_buffered
