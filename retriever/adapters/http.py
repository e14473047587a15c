"""``retriever serve``: MCP Streamable HTTP at ``POST /v1/mcp/memory``, plus health and request log.

A thin adapter of our own over starlette/uvicorn rather than the SDK's Streamable HTTP app,
because the seed's plain example (one ``tools/call`` POST with only ``Content-Type:
application/json``, no handshake) must answer JSON, which the SDK's stateful app refuses.

- ``initialize`` issues an ``Mcp-Session-Id``; later requests may carry it (an unknown one
  answers 404, as the spec asks, so the client re-initialises); requests without it work too.
- ``tools/list``, ``tools/call``, ``ping``; notifications answer 202; ``DELETE`` ends a session;
  ``GET`` answers 405 (no server-initiated stream).  ``server/discover`` is not implemented, so
  modern clients fall back to the ``initialize`` handshake.
- JSON-RPC errors: -32700 parse error and -32600 invalid request (HTTP 400), -32601 unknown
  method, -32602 invalid params or unknown tool.  Tool argument errors are tool results with
  ``isError: true``, never protocol errors.
- Security: binds 127.0.0.1 by default; ``Origin`` must be a loopback origin or one listed in
  ``RETRIEVER_ALLOWED_ORIGINS`` (DNS-rebinding protection, 403); with ``RETRIEVER_API_KEY`` every
  route but ``/healthz`` needs ``Authorization: Bearer <key>`` (401).
"""

from __future__ import annotations

import hmac
import json
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from retriever import __version__
from retriever.errors import RetrieverError
from retriever.service import MemoryService
from retriever.store import StoreUnavailable, parse_since
from retriever.tools import UnknownTool, tool_definitions

log = logging.getLogger(__name__)

MCP_PATHS = ("/v1/mcp/memory", "/v1/memory/mcp")  # the second ends in /mcp, as the MCP inspector expects
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MAX_BODY_BYTES = 1_000_000
SESSION_HEADER = "mcp-session-id"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = -32700, -32600, -32601, -32602, -32603
_LOOPBACK = frozenset({"localhost", "127.0.0.1", "::1"})


class RpcError(Exception):
    """A JSON-RPC error to send back."""

    def __init__(self, code: int, message: str, status: int = 200) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


def _rpc_error(code: int, message: str, request_id: Any = None, status: int = 200) -> JSONResponse:
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return JSONResponse(body, status_code=status)


class McpHttp:
    """The endpoint's state: the service, and the sessions ``initialize`` issued."""

    def __init__(self, service: MemoryService, api_key: str | None, allowed_origins: tuple[str, ...]) -> None:
        self.service = service
        self.api_key = api_key
        self.allowed_origins = frozenset(o.rstrip("/") for o in allowed_origins)
        self.sessions: dict[str, float] = {}

    # -- guards ------------------------------------------------------------------------------

    def rejected(self, request: Request, needs_key: bool = True) -> Response | None:
        """A 403 for a foreign Origin, a 401 without the bearer token, else None."""
        origin = request.headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return _rpc_error(
                INVALID_REQUEST, f"origin {origin!r} is not allowed; add it to RETRIEVER_ALLOWED_ORIGINS", status=403
            )
        if needs_key and self.api_key is not None:
            scheme, _, token = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), self.api_key.encode()):
                response = _rpc_error(
                    INVALID_REQUEST, "missing or wrong bearer token (Authorization: Bearer <key>)", status=401
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        return None

    def _origin_allowed(self, origin: str) -> bool:
        if origin.rstrip("/") in self.allowed_origins:
            return True
        parts = urlsplit(origin)
        return parts.scheme in ("http", "https") and (parts.hostname or "") in _LOOPBACK

    # -- the MCP endpoint -----------------------------------------------------------------------

    async def post(self, request: Request) -> Response:
        if (refusal := self.rejected(request)) is not None:
            return refusal
        session = request.headers.get(SESSION_HEADER)
        if session is not None and session not in self.sessions:
            return _rpc_error(
                INVALID_REQUEST, f"unknown or ended session {session!r}; send initialize again", status=404
            )
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            return _rpc_error(INVALID_REQUEST, f"request body over {MAX_BODY_BYTES:,} bytes", status=413)
        try:
            message = json.loads(body)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return _rpc_error(PARSE_ERROR, f"parse error: {exc}", status=400)
        return await self._dispatch(message, session)

    async def _dispatch(self, message: Any, session: str | None) -> Response:
        if (
            not isinstance(message, dict)
            or message.get("jsonrpc") != "2.0"
            or not isinstance(message.get("method"), str)
        ):
            request_id = message.get("id") if isinstance(message, dict) else None
            return _rpc_error(
                INVALID_REQUEST, "invalid request: expected a JSON-RPC 2.0 object with a method", request_id, status=400
            )
        if "id" not in message:  # a notification: nothing to answer
            return Response(status_code=202)
        request_id, method = message["id"], message["method"]
        params = message.get("params") or {}
        try:
            if not isinstance(params, dict):
                raise RpcError(INVALID_PARAMS, "params must be an object")
            result, headers = await self._handle(method, params, session)
        except RpcError as exc:
            return _rpc_error(exc.code, exc.message, request_id, exc.status)
        return JSONResponse({"jsonrpc": "2.0", "id": request_id, "result": result}, headers=headers)

    async def _handle(self, method: str, params: dict[str, Any], session: str | None) -> tuple[Any, dict[str, str]]:
        if method == "initialize":
            return self._initialize(params)
        if method == "ping":
            return {}, {}
        if method == "tools/list":
            return {"tools": tool_definitions()}, {}
        if method == "tools/call":
            return await self._call(params, session), {}
        raise RpcError(METHOD_NOT_FOUND, f"method not found: {method!r}")

    def _initialize(self, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        asked = params.get("protocolVersion")
        version = asked if asked in PROTOCOL_VERSIONS else PROTOCOL_VERSIONS[-1]
        session = uuid.uuid4().hex
        self.sessions[session] = time.time()
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "company-memory-retriever", "version": __version__},
            "instructions": "Call retrieve_memory before guessing about people, projects, decisions, processes, "
            "customers or internal terms of this company.",
        }
        return result, {"Mcp-Session-Id": session}

    async def _call(self, params: dict[str, Any], session: str | None) -> dict[str, Any]:
        name = params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call needs params.name (the tool's name)")
        arguments = params.get("arguments", {})

        def call() -> dict[str, Any]:
            return self.service.call_tool(name, arguments, handshake_session=session, transport="http")

        try:
            # A loaded memory answers in milliseconds of pure CPU: running that on the event loop avoids
            # the GIL hand-offs of a worker thread (p50 40 -> 26 ms with 8 clients). Work that may wait
            # (the first load of a large tree) goes to a worker thread so the loop keeps serving.
            return call() if self.service.answers_quickly() else await anyio.to_thread.run_sync(call)
        except UnknownTool as exc:
            raise RpcError(INVALID_PARAMS, exc.message) from exc
        except RetrieverError as exc:
            raise RpcError(INTERNAL_ERROR, exc.message) from exc

    async def memories_retrieve(self, request: Request) -> Response:
        """Seed 003: ``POST /memories/retrieve``, validation errors as 422 ``detail``."""
        if (refusal := self.rejected(request)) is not None:
            return refusal
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            detail = [{"type": "json_invalid", "loc": ["body", 0], "msg": f"JSON decode error: {exc}", "input": {}}]
            return JSONResponse({"detail": detail}, status_code=422)
        user = request.headers.get("x-external-user-id") or request.headers.get("x-on-behalf-of")
        status, response = await anyio.to_thread.run_sync(lambda: self.service.memories_retrieve(body, user))
        return JSONResponse(response, status_code=status)

    async def delete(self, request: Request) -> Response:
        if (refusal := self.rejected(request)) is not None:
            return refusal
        session = request.headers.get(SESSION_HEADER)
        if session is None or self.sessions.pop(session, None) is None:
            return _rpc_error(INVALID_REQUEST, "unknown or missing Mcp-Session-Id", status=404)
        return Response(status_code=204)

    async def get(self, request: Request) -> Response:
        return Response(status_code=405, headers={"Allow": "POST, DELETE"})

    # -- health and request log ----------------------------------------------------------------

    async def healthz(self, request: Request) -> Response:
        if (refusal := self.rejected(request, needs_key=False)) is not None:
            return refusal
        health = await anyio.to_thread.run_sync(self.service.health)
        return JSONResponse(health, status_code=200 if health["memory_ready"] else 503)

    async def requests(self, request: Request) -> Response:
        if (refusal := self.rejected(request)) is not None:
            return refusal
        try:
            limit = int(request.query_params.get("limit", "50"))
            since = request.query_params.get("since")
            since_value = parse_since(since) if since else None
        except ValueError as exc:
            return JSONResponse({"error": f"bad query parameter: {exc}"}, status_code=400)
        if not 1 <= limit <= 1000:
            return JSONResponse({"error": "limit must be between 1 and 1000"}, status_code=400)
        session_id = request.query_params.get("session_id")
        try:
            rows = await anyio.to_thread.run_sync(lambda: self.service.requests(limit, session_id, since_value))
        except StoreUnavailable as exc:
            return JSONResponse({"error": exc.message}, status_code=503)
        return JSONResponse({"requests": rows, "count": len(rows)})


def create_app(service: MemoryService, api_key: str | None = None, allowed_origins: tuple[str, ...] = ()) -> Starlette:
    """The ASGI app: MCP at ``/v1/mcp/memory`` (alias ``/v1/memory/mcp``), ``/healthz``, the request log."""
    endpoint = McpHttp(service, api_key, allowed_origins)
    routes = [Route(path, _catch(endpoint.post), methods=["POST"]) for path in MCP_PATHS]
    routes += [Route(path, endpoint.delete, methods=["DELETE"]) for path in MCP_PATHS]
    routes += [Route(path, endpoint.get, methods=["GET"]) for path in MCP_PATHS]
    routes += [
        Route("/healthz", endpoint.healthz, methods=["GET"]),
        Route("/v1/dev/mcp-requests", endpoint.requests, methods=["GET"]),
        Route("/memories/retrieve", _catch(endpoint.memories_retrieve), methods=["POST"]),
    ]
    return Starlette(routes=routes)


def _catch(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    async def guarded(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception:  # top-level handler: the server answers and goes on serving
            log.exception("request failed")
            return _rpc_error(INTERNAL_ERROR, "internal error; see the server log")

    return guarded
