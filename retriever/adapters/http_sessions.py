"""Who may open an MCP session over HTTP, and what a request for an unknown one is told.

The SDK's ``StreamableHTTPSessionManager`` keeps the sessions; this front answers, before the SDK, what it
answers without a next step or with a fault's code:

- past ``max_sessions``: 503, -32000 (a refusal, not the SDK's -32603 "internal error"), the request's id and
  ``Retry-After``, saying how to make room;
- with several API keys, past a key's equal share of ``max_sessions``: the same, naming the share (one tenant
  could otherwise fill every slot and lock the others out of the handshake for the sessions' idle time);
- a session id the server does not hold (ended, idled out, never issued): 404 as the SDK answers, with the
  request's id and the next step (a new ``initialize``).

The SDK still enforces its own limit and 404 under its lock; these checks read its tables (a session's owner
is the key's name, ``http_mcp._bind_key``) and make the common, one-at-a-time case answer as documented.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import ASGIApp, Receive, Scope, Send

from retriever.adapters.http_guard import RpcRefusal
from retriever.service.access import OPEN, KeyGrant

INVALID_REQUEST = -32600
SERVER_ERROR = -32000  # implementation-defined: a refusal that is neither the client's mistake nor a fault
RETRY_AFTER = {"Retry-After": "60"}
_MAKE_ROOM = "end one (DELETE with its Mcp-Session-Id) or let one idle out, then retry"


class Admission:
    """The session checks in front of the SDK's manager ``sessions`` (see the module docstring)."""

    def __init__(self, sessions: StreamableHTTPSessionManager, keys: int) -> None:
        self.sessions = sessions
        cap = sessions.max_sessions
        # Each key's share of the sessions: with several keys, one key filling every slot had locked the others
        # out of the handshake until its sessions idled out (30 min), and pings kept them alive.
        self.share = max(1, cap // keys) if keys > 1 and cap is not None else None
        self._opened: Counter[str] = Counter()  # a key's initializes the SDK has not answered yet

    def opening(self, scope: Scope, request_id: Any) -> ASGIApp:
        """The SDK's handler for an ``initialize`` opening a session, once the server's cap and the key's share
        allow one more: counted as opening until the SDK has answered it, so initializes sent at once cannot all
        pass the count before the SDK records their sessions' owner."""
        self._check_room(request_id)
        grant = scope.get("state", {}).get("grant")
        name = grant.name if self.share is not None and isinstance(grant, KeyGrant) and grant is not OPEN else None
        if name is None:
            return self.sessions.handle_request
        self._check_share(name, request_id)
        self._opened[name] += 1

        async def opening(scope: Scope, receive: Receive, send: Send) -> None:
            try:
                await self.sessions.handle_request(scope, receive, send)
            finally:
                self._opened[name] -= 1

        return opening

    def check_known(self, session_id: str, request_id: Any) -> None:
        """404 with the next step for a session id the server does not hold (the SDK's says only "Session not
        found"); an SDK without that table answers for itself."""
        held = getattr(self.sessions, "_server_instances", None)
        if held is not None and session_id not in held:
            message = (
                "session not found: it was ended (DELETE), idled out, or opened on another server (route a session "
                "to the server that opened it); send initialize without an Mcp-Session-Id header to start a new one"
            )
            raise RpcRefusal(INVALID_REQUEST, message, request_id, status=404)

    def _check_room(self, request_id: Any) -> None:
        cap = self.sessions.max_sessions
        held = len(getattr(self.sessions, "_server_instances", {}))
        if cap is not None and held >= cap:
            message = f"the server holds {held:,} sessions, its limit (RETRIEVER_MAX_SESSIONS); {_MAKE_ROOM}"
            raise RpcRefusal(SERVER_ERROR, message, request_id, status=503, headers=RETRY_AFTER)

    def _check_share(self, name: str, request_id: Any) -> None:
        """Refuse a new session to the key ``name`` that holds its share (``self.share``) already.  What the SDK
        does not keep (an SDK without the owners' table) is no session of any key's, and its own limit holds."""
        owners = getattr(self.sessions, "_session_owners", {})
        held = sum(1 for owner in list(owners.values()) if owner.get("client_id") == name) + self._opened[name]
        if self.share is not None and held >= self.share:
            message = (
                f"this API key holds {held} sessions, its share of the server's {self.sessions.max_sessions}; "
                + _MAKE_ROOM
            )
            raise RpcRefusal(SERVER_ERROR, message, request_id, status=503, headers=RETRY_AFTER)
