"""``retriever serve``'s app: MCP Streamable HTTP, ``/memories/retrieve``, ``/healthz`` and the request log.

- MCP at ``POST /v1/mcp/memory`` (aliases ``/v1/memory/mcp`` and ``/mcp``): the official SDK's
  transport behind a thin front (``http_mcp.py``).  ``initialize`` issues an ``Mcp-Session-Id``;
  a bare ``tools/call`` POST answers without a handshake, as the seed shows.
- ``POST /memories/retrieve`` (seed 003): 422 ``detail`` for bad bodies and bad user headers;
  a key bound to users (``RETRIEVER_API_KEYS``) reads only those users' trees (403).
- ``GET /healthz``: readiness; the full detail (counts, root folder) only with a valid key when
  keys are configured.
- ``GET /v1/dev/mcp-requests``: the request log, for keys that may act for any user.

Every request first passes the ``Guard`` (``http_guard.py``): Host allow-list, Origin, bearer
key, and a body read within size and time limits.  Connection-level limits (header deadline,
connection cap) live in ``http_server.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from retriever.adapters.http_guard import (
    MCP_PATHS,
    USER_HEADERS,
    Guard,
    HeaderProblem,
    HttpPolicy,
    clip,
    named_user,
    parse_json,
)
from retriever.adapters.http_log import AccessLog
from retriever.adapters.http_mcp import McpEndpoint
from retriever.service.access import KeyGrant
from retriever.service.service import MemoryService
from retriever.service.stores.base import StoreUnavailable, parse_since

log = logging.getLogger(__name__)

READINESS_ONLY = ("memory_ready", "readiness_state")


def _grant(request: Request) -> KeyGrant | None:
    """The guard's verdict on the request's key (None: no valid key, on an open route)."""
    grant = request.scope.get("state", {}).get("grant")
    return grant if isinstance(grant, KeyGrant) else None


class Routes:
    """The non-MCP routes over one service."""

    def __init__(self, service: MemoryService) -> None:
        self.service = service

    async def memories_retrieve(self, request: Request) -> Response:
        """Seed 003: ``POST /memories/retrieve``, validation errors as 422 ``detail``."""
        grant = _grant(request)
        assert grant is not None  # the guard lets no request without a grant reach this route
        try:
            body = parse_json(await request.body())
        except ValueError as exc:
            message = f"JSON decode error: {str(exc)[:200]}"
            detail = {"type": "json_invalid", "loc": ["body", 0], "msg": message, "input": {}}
            return JSONResponse({"detail": [detail]}, status_code=422)
        try:
            named = named_user(request.headers)
        except HeaderProblem as problem:
            return JSONResponse({"detail": [problem.entry]}, status_code=422)
        header, user = named if named is not None else (USER_HEADERS[0], None)  # a 422 names the header read
        status, response = await anyio.to_thread.run_sync(
            lambda: self.service.memories_retrieve(body, user, allowed_users=grant.users, user_header=header.lower())
        )
        return JSONResponse(response, status_code=status)

    async def healthz(self, request: Request) -> Response:
        """Readiness for probes; the detail (counts, root folder, load errors) only for a caller whose key may act
        for any user: an operator's, not one a user's client holds (server paths are the operator's business)."""
        health = await anyio.to_thread.run_sync(self.service.health)
        status = 200 if health["memory_ready"] else 503
        grant = _grant(request)
        if grant is None or not grant.any_user:
            health = {k: health[k] for k in READINESS_ONLY}
        return JSONResponse(health, status_code=status)

    async def requests(self, request: Request) -> Response:
        """The request log, newest first; it holds every user's prompts, so only any-user keys read it."""
        grant = _grant(request)
        if grant is None or not grant.any_user:
            return JSONResponse(
                {
                    "detail": "this key may act only for some users, and the request log holds every user's "
                    "requests: use a key bound to '*'"
                },
                status_code=403,
            )
        raw_limit, since = request.query_params.get("limit", "50"), request.query_params.get("since")
        limit = int(raw_limit) if raw_limit.isascii() and raw_limit.isdigit() and len(raw_limit) <= 4 else 0
        if not 1 <= limit <= 1000:  # as the CLI says it: the value, briefly, and what is accepted
            return JSONResponse({"detail": f"limit {clip(raw_limit)} is not a whole number from 1 to 1000"}, 400)
        try:
            since_value = parse_since(since) if since else None
        except (ValueError, OverflowError):
            message = f"since {clip(str(since))} is neither Unix seconds nor an ISO 8601 time"
            return JSONResponse({"detail": message}, status_code=400)
        session_id = request.query_params.get("session_id")
        try:
            rows = await anyio.to_thread.run_sync(lambda: self.service.requests(limit, session_id, since_value))
        except StoreUnavailable as exc:
            return JSONResponse({"detail": exc.message, "error_code": exc.code}, status_code=503)
        return JSONResponse({"requests": rows, "count": len(rows)})


def create_app(service: MemoryService, policy: HttpPolicy | None = None) -> ASGIApp:
    """The ASGI app: MCP (``MCP_PATHS``), ``/memories/retrieve``, ``/healthz``, the request log, all guarded.

    Serve it with lifespan on (``http_server.make_server`` does): the MCP session managers run in it.
    """
    policy = policy or HttpPolicy()
    mcp = McpEndpoint(service, policy)
    routes = Routes(service)
    app = Starlette(
        routes=[
            *(Route(path, mcp, methods=["GET", "POST", "DELETE"]) for path in MCP_PATHS),
            Route("/healthz", _catch(routes.healthz), methods=["GET"]),
            Route("/v1/dev/mcp-requests", _catch(routes.requests), methods=["GET"]),
            Route("/memories/retrieve", _catch(routes.memories_retrieve), methods=["POST"]),
        ],
        lifespan=lambda _: mcp.run(),
    )
    return AccessLog(Guard(app, policy))


def _catch(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Awaitable[Response]]:
    async def guarded(request: Request) -> Response:
        try:
            return await handler(request)
        except Exception:  # top-level handler: the server answers and goes on serving
            log.exception("request to %s failed", request.url.path)
            return JSONResponse({"detail": "internal error; see the server log"}, status_code=500)

    return guarded
