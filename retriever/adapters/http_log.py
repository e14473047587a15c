"""What the HTTP server's log says of the requests its guard refuses (``http_guard``).

A refusal (401, 403, 413, 421, …) is a client's mistake or a probe: the operator should see it, but a flood of them
must not flood the log.  Contract: ``Refusals.note`` logs a warning the first time a status is refused in each
``every`` seconds and counts the rest; the next line for that status says how many went unlogged.  Everything a
client sent is clipped before it is logged.
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Callable

log = logging.getLogger(__name__)
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
