"""MCP Streamable HTTP for ``retriever serve``: the official SDK's transport, with a thin front.

The SDK serves the protocol: two ``StreamableHTTPSessionManager``s in JSON-response mode over
one SDK ``Server`` (``build_server`` of the stdio adapter, with an HTTP ``tools/call``):

- a *stateful* one for ``initialize`` and requests carrying ``Mcp-Session-Id``: it issues the
  session id, answers 404 for an unknown or ended one, ends sessions on ``DELETE``, expires them
  after ``session_idle`` seconds and refuses more than ``max_sessions`` (503); ``http_sessions`` answers
  those refusals first, with a refusal's code, the request's id and the next step;
- a *stateless* one for the other requests without a session (``tools/list``, ``ping``,
  notifications, unknown methods), so no request needs a handshake.

The front (``McpEndpoint``) keeps only what the SDK does not do, each for a reason:

- it validates the JSON-RPC envelope first: the SDK's parser accepts what the guard's strict
  one refuses, a malformed envelope comes back as -32602 with pydantic's text (JSON-RPC says
  -32600), and ``{"id": NaN, ...}`` passes as a notification (202, silently dropped);
- it picks the manager (the SDK serves one mode per manager);
- it answers a session-less ``tools/call`` (the seed's bare POST, the hot path) itself, with the
  same checks and codes: through the SDK's stateless path it cost ~1 ms more server CPU per call,
  ~20% fewer calls/s in ``scripts/bench_server.py``; every other request goes to the SDK;
- a POST without ``Accept`` is treated as accepting JSON (RFC 9110 §12.5.1: no Accept means any
  type; the SDK answers 406);
- ``GET`` answers 405: the server sends nothing unprompted, and in stateless mode the SDK would
  hold an empty event stream open forever;
- versions of the sessionless 2026 era are refused with -32022 naming the handshake versions
  (SDK clients then fall back to ``initialize``): sessions, which give triage a client's earlier
  prompts, need the handshake's ``Mcp-Session-Id``;
- with API keys, a session is bound to the key that opened it (the SDK compares
  ``scope["user"]``): another key gets 404 for it;
- session history is scoped by who asks (``_principal``): a key bound to users has its own, and a
  user named in ``X-External-User-Id`` / ``X-On-Behalf-Of`` has their own under any key, so that
  users behind one gateway key never read each other's follow-ups; the user is named by the
  canonical id (``canonical_user_id``), so each spelling of one name is the same user.
"""

from __future__ import annotations

import asyncio
import json
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http import check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from retriever.adapters.http_guard import HeaderProblem, HttpPolicy, RpcRefusal, clip, named_user, parse_json, replay
from retriever.adapters.http_sessions import Admission
from retriever.adapters.jsonrpc_lines import LONE_SURROGATE, id_problem, overlong_id, surrogate_escaped, valid_id
from retriever.adapters.mcp_stdio import TOOLS_CALL_SHAPE, build_server, internal_error
from retriever.compat.users import InvalidUserId, canonical_user_id
from retriever.errors import RetrieverError
from retriever.service.access import OPEN, KeyGrant
from retriever.service.service import MemoryService
from retriever.service.tools import UnknownTool

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32602, -32603
UNSUPPORTED_PROTOCOL_VERSION = -32022
INITIALIZE_BYTES = 16 * 1024  # real clients send under 1 KiB
INLINE_CHARS = 400  # of a call's text arguments, answered on the event loop (``run_tool``)
CALL_THREADS = 16  # tool calls in worker threads at once; the rest wait their turn


def check_message(body: bytes) -> dict[str, Any]:
    """The request as a JSON-RPC 2.0 object, or ``RpcRefusal`` with the standard code for what is wrong."""
    try:
        message = parse_json(body)
    except ValueError as exc:
        if surrogate_escaped(body):  # valid JSON that no reply could encode: answered as stdio answers it
            raise RpcRefusal(INVALID_REQUEST, f"Invalid Request: {LONE_SURROGATE}", overlong_id([body])) from None
        raise RpcRefusal(PARSE_ERROR, f"parse error: {str(exc)[:200]}; send one JSON-RPC object as UTF-8") from None
    if not isinstance(message, dict):
        raise RpcRefusal(INVALID_REQUEST, "invalid request: expected one JSON-RPC 2.0 object (batches are not served)")
    request_id = message.get("id")
    if "id" in message and valid_id(request_id) is None:
        raise RpcRefusal(INVALID_REQUEST, f"invalid request: {id_problem(request_id)}")
    if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
        raise RpcRefusal(INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object with a method", request_id)
    if "params" in message and not isinstance(message["params"], dict):
        # A well-formed request with bad params gets a normal JSON-RPC answer (HTTP 200), as before.
        status = 200 if "id" in message else 400
        problem = f"params must be an object, not {_kind(message['params'])}"
        raise RpcRefusal(INVALID_PARAMS, problem, request_id, status)
    return message


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


async def run_tool(
    service: MemoryService, name: str, arguments: dict[str, Any], session: str | None, scope: Scope
) -> dict[str, Any]:
    """``tools/call`` over HTTP: the service's MCP result; ``MCPError`` for an unknown tool or a server fault.

    Session history is scoped by ``_principal`` (the key's scope and the named user), so that a
    ``session_id`` another tenant or user sends never feeds this caller's follow-ups (or the reverse).
    """
    principal, user = _principal(scope), scope.get("state", {}).get("user")

    def call() -> dict[str, Any]:
        return service.call_tool(
            name, arguments, handshake_session=session, transport="http", user_id=principal, logged_user=user
        )

    try:
        # A loaded memory answers a short question in milliseconds of pure CPU: running that on the event loop
        # avoids the GIL hand-offs of a worker thread.  Work that may wait (the first load of a large tree, an
        # LLM) or take longer (a long prompt: 0.2-0.45 s at 8,000 characters) goes to a worker thread, so the
        # loop keeps serving: 50 such prompts at once had held /healthz for 12 s.
        inline = service.answers_quickly() and _short(arguments)
        return call() if inline else await anyio.to_thread.run_sync(call, limiter=_call_threads())
    except UnknownTool as exc:
        raise MCPError(INVALID_PARAMS, exc.message) from None
    except RetrieverError as exc:
        raise MCPError(INTERNAL_ERROR, exc.message) from None
    except Exception as exc:  # noqa: BLE001 - top-level handler of a call, as on stdio
        raise internal_error(exc) from None


# One limiter per event loop (a server's, or a test's): its waiters are that loop's.
_CALL_THREADS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, anyio.CapacityLimiter] = weakref.WeakKeyDictionary()


def _call_threads() -> anyio.CapacityLimiter:
    """The worker threads tool calls share (``CALL_THREADS``): fewer than anyio's default 40, so /healthz and the
    request log, which take threads from the default pool, never queue behind calls."""
    loop = asyncio.get_running_loop()
    if loop not in _CALL_THREADS:
        _CALL_THREADS[loop] = anyio.CapacityLimiter(CALL_THREADS)
    return _CALL_THREADS[loop]


def _short(arguments: dict[str, Any]) -> bool:
    """Whether a call's arguments are small enough to answer on the event loop (``INLINE_CHARS`` of text; a
    number or a flag counts nothing, a list or an object as too much)."""
    size = 0
    for value in arguments.values():
        if isinstance(value, str):
            size += len(value)
        elif not (value is None or isinstance(value, int | float | bool)):
            return False
    return size <= INLINE_CHARS


def build_http_server(service: MemoryService) -> Server[Any]:
    """The stdio adapter's SDK server (tools, instructions), with ``tools/call`` taking the HTTP session."""
    server = build_server(service)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        request = ctx.request
        session = request.headers.get(SESSION_HEADER) if isinstance(request, Request) else None
        # The service's dict is already the wire form: the SDK validates it once against the spec's
        # result model; building a CallToolResult first would walk the ~40 KB result twice more.
        scope = request.scope if isinstance(request, Request) else {}
        return await run_tool(service, params.name, params.arguments or {}, session, scope)

    server.add_request_handler("tools/call", types.CallToolRequestParams, call_tool)
    return server


class McpEndpoint:
    """The ASGI app of the MCP paths (see the module docstring); ``run()`` must enclose serving."""

    def __init__(self, service: MemoryService, policy: HttpPolicy) -> None:
        self.service = service
        server = build_http_server(service)
        common: dict[str, Any] = {"json_response": True, "max_request_body_size": policy.max_body_bytes}
        self.stateless = StreamableHTTPSessionManager(server, stateless=True, **common)
        self.sessions = StreamableHTTPSessionManager(
            server, session_idle_timeout=policy.session_idle, max_sessions=policy.max_sessions, **common
        )
        self.admission = Admission(self.sessions, len(policy.keys.entries))

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        async with self.stateless.run(), self.sessions.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        try:
            # Kept in the request's state (shared by the copies of ``scope`` made below) for ``_principal``.
            scope.setdefault("state", {})["user"] = _check_user(scope, headers)
            app, scope, receive = await self._route(scope, headers, receive)
        except RpcRefusal as refusal:
            await refusal.response()(scope, receive, send)
            return
        await app(scope, receive, send)

    async def _route(self, scope: Scope, headers: Headers, receive: Receive) -> tuple[ASGIApp, Scope, Receive]:
        """What answers this request, with the scope and body to hand it."""
        version = headers.get(VERSION_HEADER)
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            raise _unsupported(version)
        if scope["method"] == "DELETE":
            if SESSION_HEADER not in headers:
                raise RpcRefusal(INVALID_REQUEST, "DELETE ends a session: send the session's Mcp-Session-Id")
            self.admission.check_known(headers[SESSION_HEADER], None)
            return self.sessions.handle_request, _bind_key(scope), receive
        if scope["method"] != "POST":
            return Response(status_code=405, headers={"Allow": "POST, DELETE"}), scope, receive
        body = await Request(scope, receive).body()  # the guard read it within limits; this is a copy
        message = check_message(body)
        if (content_type := _content_type(headers)) != "application/json":  # the SDK's refusal: a plain-text 400
            problem = f"Content-Type {clip(content_type or 'missing', 60)} is not served: send application/json"
            raise RpcRefusal(INVALID_REQUEST, problem, message.get("id"))
        scope = _accepting_json(scope, headers)
        if message["method"] == "initialize" and len(body) > INITIALIZE_BYTES:
            # The SDK keeps a session's initialize params for its life: 0.9 MB of capabilities a session, at up
            # to max_sessions sessions, was 1.8 GB held for half an hour.
            problem = f"initialize over {INITIALIZE_BYTES:,} bytes; a client's capabilities and info take far less"
            raise RpcRefusal(INVALID_PARAMS, problem, message.get("id"), status=200)
        if SESSION_HEADER not in headers and message["method"] == "initialize":
            return self.admission.opening(scope, message.get("id")), _bind_key(scope), replay(body, receive)
        if SESSION_HEADER in headers:
            self.admission.check_known(headers[SESSION_HEADER], message.get("id"))
            return self.sessions.handle_request, _bind_key(scope), replay(body, receive)
        if message["method"] == "tools/call" and "id" in message and _plain_json(scope):
            return await self._answer_call(message, scope), scope, receive
        return self.stateless.handle_request, scope, replay(body, receive)

    async def _answer_call(self, message: dict[str, Any], scope: Scope) -> Response:
        """A session-less ``tools/call`` (the seed's bare POST), answered without the SDK's stateless path.

        Measured: that path (a transport, a dispatcher and a task per request, then a validation and
        three serialisations of the ~40 KB result) cost ~1 ms more server CPU per call, ~20% fewer
        calls/s in ``scripts/bench_server.py``.  Same checks and answers as the SDK's (-32602 codes).
        """
        request_id, params = message["id"], message.get("params") or {}
        name, arguments = params.get("name"), params.get("arguments")
        if not isinstance(name, str) or not (arguments is None or isinstance(arguments, dict)):
            raise RpcRefusal(INVALID_PARAMS, TOOLS_CALL_SHAPE, request_id, status=200)
        try:
            result = await run_tool(self.service, name, arguments or {}, None, scope)
        except MCPError as exc:
            raise RpcRefusal(exc.code, exc.message, request_id, status=200) from None
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result})


def _plain_json(scope: Scope) -> bool:
    """A JSON POST that accepts JSON: anything else goes to the SDK, which answers it as it should (406)."""
    return _content_type(Headers(scope=scope)) == "application/json" and check_accept_headers(Request(scope))[0]


def _content_type(headers: Headers) -> str:
    return headers.get("content-type", "").split(";")[0].strip().lower()


def _unsupported(version: str) -> RpcRefusal:
    return RpcRefusal(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"protocol version {clip(version, 40)} is not served; use the initialize handshake with one of "
        f"{', '.join(HANDSHAKE_PROTOCOL_VERSIONS)}",
        data={"supported": list(HANDSHAKE_PROTOCOL_VERSIONS), "requested": version[:40]},
    )


def _accepting_json(scope: Scope, headers: Headers) -> Scope:
    if "accept" in headers:
        return scope
    return {**scope, "headers": [*scope["headers"], (b"accept", b"application/json")]}


def _check_user(scope: Scope, headers: Headers) -> str | None:
    """The user the request names, in canonical form (``canonical_user_id``; None: none), who must be
    one the request's key may act for, as on ``/memories/retrieve`` (403).  A malformed user header, or
    a user id that is not a plain name, is refused (422, the message naming the header, the id cut short).

    The canonical form is what sessions are scoped by (``_principal``), so two Unicode spellings of a
    name (NFD and NFC) are one user here, as they are one user's folder.  The MCP routes read the
    server's own memory, no user's tree, so a key bound to users may also send no user header here:
    its sessions are its own (``_principal``)."""
    grant = scope.get("state", {}).get("grant")
    try:
        named = named_user(headers)
    except HeaderProblem as problem:
        raise RpcRefusal(INVALID_REQUEST, str(problem), status=422) from None
    if named is None:
        return None
    header, raw = named
    try:
        user = canonical_user_id(raw)
    except InvalidUserId as exc:  # the message quotes at most 40 characters of the id
        raise RpcRefusal(INVALID_REQUEST, f"{header}: {exc.message}", status=422) from None
    if isinstance(grant, KeyGrant) and not grant.allows(user):
        raise RpcRefusal(
            INVALID_REQUEST, f"this key may not act for the user {clip(user)}; name one of its users", status=403
        )
    return user


def _principal(scope: Scope) -> str | None:
    """Whose sessions a call reads and writes: None for the server's own, else a name for (key scope, user).

    The key scope is the key's own for a key bound to users, and one shared scope for the keys that
    may act for any user (and for a server without keys): such a key may name any user anyway, so
    sharing a user's sessions between them grants nothing.  A named user always gets their own
    sessions within that scope, so users behind one gateway key never read each other's prompts;
    with neither a bound key nor a user, calls keep the server's own sessions, apart from every
    user's.  The name is a JSON array so that no user id can spell another scope's name.
    """
    state = scope.get("state", {})
    grant, user = state.get("grant"), state.get("user")
    bound = isinstance(grant, KeyGrant) and not grant.any_user
    if not bound and user is None:
        return None
    owner = ["key", grant.name] if bound else ["any-user keys"]
    return json.dumps([*owner, *([] if user is None else ["user", user])])


def _bind_key(scope: Scope) -> Scope:
    """With keys configured, name the request's key as its user: the SDK ties sessions to it."""
    grant = scope.get("state", {}).get("grant")
    if grant is None or grant is OPEN:
        return scope
    return {**scope, "user": AuthenticatedUser(AccessToken(token="", client_id=grant.name, scopes=[]))}
