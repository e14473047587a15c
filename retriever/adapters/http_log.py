"""What the HTTP server's log says of requests: those its guard refuses (``http_guard``), and, asked for, all.

A refusal (401, 403, 413, 421, …) is a client's mistake or a probe: the operator should see it, but a flood of them
must not flood the log.  Contract: ``Refusals.note`` logs a warning the first time a status is refused in each
``every`` seconds and counts the rest; the next line for that status says how many went unlogged.  Everything a
client sent is clipped before it is logged.

``AccessLog`` is the access log: one line a request on ``retriever.access`` at INFO (``RETRIEVER_LOG_LEVEL=info``):
method, path (no query string: it may carry what should not be kept), status, milliseconds and the key's name
(``access.key_name``, never the key). At the default level it is not written and costs one check a request.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from retriever.text.safe import one_line

log = logging.getLogger(__name__)
access = logging.getLogger("retriever.access")
EVERY_SECONDS = 60.0
PATH_CHARS = 100  # of a refused request's path, in the log
MESSAGE_CHARS = 300


class Refusals:
    """Rate-limited warnings of refused requests, one a status per ``every`` seconds (see the module docstring)."""

    def __init__(self, every: float = EVERY_SECONDS, clock: Callable[[], float] = time.monotonic) -> None:
        self.every = every
        self._clock = clock
        self._last: dict[int, float] = {}
        self._unlogged: Counter[int] = Counter()

    def note(self, status: int, method: str, path: str, message: str) -> None:
        now = self._clock()
        if now - self._last.get(status, -math.inf) < self.every:
            self._unlogged[status] += 1
            return
        self._last[status] = now
        unlogged = self._unlogged.pop(status, 0)
        more = f" ({unlogged} more refused with {status} since the last such line)" if unlogged else ""
        shown = path if len(path) <= PATH_CHARS else path[:PATH_CHARS] + "…"
        log.warning("refused %d %s %r: %s%s", status, method[:10], shown, message[:MESSAGE_CHARS], more)


class AccessLog:
    """ASGI middleware writing the access log (see the module docstring); outermost, so refusals are in it too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not access.isEnabledFor(logging.INFO):
            await self.app(scope, receive, send)
            return
        started, status = time.monotonic(), 0  # 0: the client left before an answer began

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:  # not a cancellation: a client that left before an answer keeps its 0
            status = status or 500  # what the server answers a request whose handler raised
            raise
        finally:
            _written(scope, status, time.monotonic() - started)


def _written(scope: Scope, status: int, seconds: float) -> None:
    grant: Any = scope.get("state", {}).get("grant")
    path = scope.get("path", "")
    shown = one_line(path if len(path) <= PATH_CHARS else path[:PATH_CHARS] + "…")
    method = one_line(str(scope.get("method", ""))[:10])
    key = one_line(grant.name) if grant is not None else "-"
    access.info("%s %s %d %.0f ms key=%s", method, shown, status, seconds * 1000, key)
