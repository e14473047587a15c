"""Connections for ``retriever serve``: uvicorn, plus the connection limits it lacks.

uvicorn closes idle keep-alive connections (``timeout_keep_alive``), but it has no deadline for
a request's headers, no cap on their size with httptools, and no cap on open connections
(``limit_concurrency`` answers 503 yet keeps accepting), so half-sent requests pile up until the
process runs out of file descriptors and even ``/healthz`` fails.  ``GuardedHttpTools`` adds
those three limits to uvicorn's httptools protocol:

- header deadline: a connection that has not sent a request's headers within ``header_timeout``
  seconds of connecting (or of the request's first byte) gets 408 and is closed;
- header size: more than ``max_header_bytes`` of headers gets 431 and is closed;
- trailers: the fields after a chunked body's last chunk are dropped, never merged into the headers (RFC 9110
  §6.5.1: a trailer "X-External-User-Id" had named the user), and count against the header size and deadline;
  a request's bytes after its headers (body, chunk framing, trailers) are capped at ``max_message_bytes``, also
  once it has been answered (a refused request's unread rest), so neither memory nor a slot is held for ever;
- connection cap: past ``max_connections`` open connections, a new one evicts the one idle the
  longest among those not being answered (half-sent headers, a body still arriving, idle
  keep-alive); when every one is being answered, the new one gets 503 and is closed.  The cap
  stays below the fd limit.  A request is being answered once its body is complete (or its
  response has begun): such a one is never evicted, however long the answer takes.

The body deadline and size limit are the guard's (``http_guard.py``), at the ASGI level.
``make_server`` builds the uvicorn server ``retriever serve`` and the tests run.
"""

from __future__ import annotations

import asyncio
import http
import resource
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import httptools
import uvicorn
from starlette.types import ASGIApp
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from retriever.adapters.http_guard import LINGER_BYTES
from retriever.config import Settings

FD_RESERVE = 128  # descriptors kept free for the store, the memory's files and the accept backlog


@dataclass(frozen=True)
class ConnectionLimits:
    """The per-connection limits ``GuardedHttpTools`` enforces."""

    header_timeout: float = 10.0
    max_connections: int = 1000
    max_header_bytes: int = 64 * 1024
    # A request's bytes after its headers: room for the largest body the guard reads and chunk framing, or for what
    # it reads of a refused one so that its 413 arrives (``http_guard.LINGER_BYTES``), plus the trailers' cap.
    max_message_bytes: int = 1_000_000 + LINGER_BYTES + 64 * 1024

    @classmethod
    def from_settings(cls, settings: Settings) -> ConnectionLimits:
        connections = fit_to_fd_limit(settings.max_connections)
        body = settings.max_body_bytes
        message = max(2 * body, body + LINGER_BYTES) + cls.max_header_bytes
        return cls(settings.header_timeout_seconds, connections, max_message_bytes=message)


def fit_to_fd_limit(wanted: int) -> int:
    """``wanted``, lowered to leave ``FD_RESERVE`` descriptors under the process's soft limit."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - FD_RESERVE))


class GuardedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline, a header size cap and a connection cap."""

    limits: ClassVar[ConnectionLimits] = ConnectionLimits()

    def _unsupported_upgrade_warning(self) -> None:
        """Say nothing: the server speaks no WebSocket (``ws="none"``), and the request is answered as plain HTTP.
        uvicorn logs two warnings for each "Upgrade: websocket", before any Host or key check, one telling the
        operator to install a WebSocket library: any client could fill the log with them."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.reading_headers, self.header_bytes, self.refused = True, 0, False
        self.message_bytes, self.trailer_bytes = 0, 0  # after the headers: all bytes, and the trailer fields'
        self.active_at = self.loop.time()
        self.deadline: asyncio.TimerHandle | None = None
        self._arm_deadline()
        self._enforce_cap()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_deadline()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self.active_at = self.loop.time()
        if self.reading_headers:
            self.header_bytes += len(data)
        else:
            self.message_bytes += len(data)
            if self._answered_yet_arriving():  # the app answered without reading it all: its rest gets a deadline
                self._arm_deadline()
        super().data_received(data)
        if self.reading_headers and self.header_bytes > self.limits.max_header_bytes:
            self.refuse(431, f"request headers over {self.limits.max_header_bytes:,} bytes")
        elif not self.reading_headers and self.message_bytes > self.limits.max_message_bytes:
            # A trailer line that never ends is buffered by the parser before ``on_header`` sees it: counted here.
            self.refuse(413, f"request over {self.limits.max_message_bytes:,} bytes after its headers")

    # -- parser callbacks ------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.reading_headers, self.message_bytes, self.trailer_bytes = True, 0, 0
        self._arm_deadline()

    def on_header(self, name: bytes, value: bytes) -> None:
        if self.reading_headers:
            super().on_header(name, value)
            return
        # A trailer field: dropped (nothing here reads trailers, and merged they would pass for headers the guard
        # checked), counted against the header cap and read within the header deadline.
        self.trailer_bytes += len(name) + len(value) + 4
        self._arm_deadline()
        if self.trailer_bytes > self.limits.max_header_bytes:
            self.refuse(431, f"request trailers over {self.limits.max_header_bytes:,} bytes")

    def on_headers_complete(self) -> None:
        self.reading_headers, self.header_bytes = False, 0
        self._disarm_deadline()
        # Headers that arrive whole in one read are parsed before data_received can count them: measured
        # here, before the request reaches the app (uvicorn holds the URL and the header pairs).
        size = len(self.url) + sum(len(name) + len(value) + 4 for name, value in self.headers)
        if size > self.limits.max_header_bytes:
            self.refused = True
            self.refuse(431, f"request headers over {self.limits.max_header_bytes:,} bytes")
            return
        if self.url[:8].lower().startswith((b"http://", b"https://")) and not self._authority_as_host():
            return
        super().on_headers_complete()

    def _authority_as_host(self) -> bool:
        """An absolute-form target ("GET http://name/path") names the host it asks for; RFC 9112 §3.2.2: its
        authority replaces any Host header, so the guard checks the host the request is really for (it had
        checked the Host header beside it).  False, the request refused, when the target is no URL."""
        try:
            parsed = httptools.parse_url(self.url)
        except httptools.HttpParserInvalidURLError:
            self.refused = True
            self.refuse(400, "the request target is not a URL")
            return False
        authority = (parsed.host or b"") + (b":%d" % parsed.port if parsed.port else b"")
        # In place: the request's scope holds this very list.
        self.headers[:] = [(name, value) for name, value in self.headers if name != b"host"] + [(b"host", authority)]
        return True

    def on_body(self, body: bytes) -> None:
        if not self.refused:
            super().on_body(body)

    def on_message_complete(self) -> None:
        self._disarm_deadline()  # a trailer's, or an answered request's rest
        self.message_bytes, self.trailer_bytes = 0, 0
        if self.refused:
            return
        super().on_message_complete()
        if self.cycle is not None and self.cycle.response_complete:
            # uvicorn leaves an answered request's ``more_body`` set: it would read as still arriving, and the next
            # request's 408 or 431 would close the connection without a word.
            self.cycle.more_body = False
        # What arrives next starts the next request's headers; until its first byte, idling is
        # uvicorn's keep-alive timeout's business, so the deadline is armed in on_message_begin.
        self.reading_headers, self.header_bytes = True, 0

    # -- limits ----------------------------------------------------------------------------------

    def _arm_deadline(self) -> None:
        if self.deadline is None:
            self.deadline = self.loop.call_later(self.limits.header_timeout, self._deadline_passed)

    def _disarm_deadline(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _deadline_passed(self) -> None:
        self.deadline = None
        if self.reading_headers:
            self.refuse(408, f"request headers not received within {self.limits.header_timeout:g} s")
        elif self.trailer_bytes or self._answered_yet_arriving():
            self.refuse(408, f"request trailers or rest not received within {self.limits.header_timeout:g} s")

    def _answered_yet_arriving(self) -> bool:
        """The app has answered the request on this connection while its body or trailers still arrive."""
        cycle = self.cycle
        return cycle is not None and cycle.response_complete and cycle.more_body

    def evictable(self) -> bool:
        """Open, and not being answered: waiting for headers, idle between requests, or still receiving a body.

        A body still arriving counts too: connections that send a ``Content-Length`` and then a byte at a
        time would otherwise hold every slot until the body timeout (30 s), and even ``/healthz`` got 503.
        Whichever candidate was silent the longest goes (``_enforce_cap``), so a body arriving at speed is
        the last one chosen, and a request whose body is complete is never one.
        """
        if self.transport.is_closing():
            return False
        busy = self.cycle is not None and not self.cycle.response_complete
        return (self.reading_headers and not busy) or self._receiving_body() or self._answered_yet_arriving()

    def _receiving_body(self) -> bool:
        """The one request on this connection is still sending its body and nothing has been answered yet.

        (With a pipelined request queued, ``cycle`` is the queued one and an earlier one is being answered.)
        """
        cycle = self.cycle
        return cycle is not None and cycle.more_body and not cycle.response_started and not self.pipeline

    def _enforce_cap(self) -> None:
        open_ones = [c for c in self.connections if isinstance(c, GuardedHttpTools) and not c.transport.is_closing()]
        if len(open_ones) <= self.limits.max_connections:
            return
        candidates = [c for c in open_ones if c is not self and c.evictable()]
        if candidates:
            min(candidates, key=lambda c: c.active_at).transport.close()
        else:
            self.refuse(503, "too many open connections; retry shortly")

    def refuse(self, status: int, message: str) -> None:
        """Answer ``status`` with a short text (unless a response is under way, or was given to this very request)
        and close."""
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or not cycle.response_started or (cycle.response_complete and not cycle.more_body):
            body = message.encode()
            head = (
                f"HTTP/1.1 {status} {http.HTTPStatus(status).phrase}\r\ncontent-type: text/plain; charset=utf-8\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
            )
            self.transport.write(head.encode() + body)
        self.transport.close()


class _Server(uvicorn.Server):
    """A uvicorn server that calls ``on_ready`` once its sockets accept connections."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None] | None) -> None:
        super().__init__(config)
        self.on_ready = on_ready

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        if self.started and self.on_ready is not None:
            self.on_ready()


def make_server(
    app: ASGIApp,
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[], None] | None = None,
) -> uvicorn.Server:
    """The uvicorn server for ``app``: guarded connections, lifespan on, logging left to the caller."""
    limits = ConnectionLimits.from_settings(settings)
    protocol = type("GuardedHttpTools", (GuardedHttpTools,), {"limits": limits})
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        ws="none",
        lifespan="on",
        log_config=None,
        log_level="warning",
        access_log=False,
        timeout_keep_alive=settings.keep_alive_seconds,
    )
    return _Server(config, on_ready)
