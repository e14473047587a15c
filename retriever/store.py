"""Session prompts and the request log: the contract every store meets, and the factory.

Contract (seed 000, "Session ID behavior" and "Request history"):
- ``add_prompt(session, prompt)`` keeps the session's last ``SESSION_PROMPTS`` prompts for
  ``SESSION_TTL`` seconds after the last one; ``prompts(session)`` returns them oldest first.
- ``log(record)`` keeps every counted call (full prompt, full response) up to a retention cap;
  ``requests(limit, session_id, since)`` returns them newest first.
- Store failures raise ``StoreUnavailable``; callers decide whether that stops them (start-up)
  or is logged while retrieval still answers (request time).
SQLite is the default (``store_sqlite``); Redis when a URL is configured (``store_redis``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from retriever.config import Settings, state_home
from retriever.errors import RetrieverError

SESSION_PROMPTS = 5
SESSION_TTL = 30 * 24 * 3600  # seconds
Clock = Callable[[], float]


class StoreUnavailable(RetrieverError):
    """The session and request store cannot be reached or written."""

    code = "store_unavailable"


@dataclass(frozen=True)
class RequestRecord:
    """One counted call, as the request log keeps it."""

    request_id: str
    received_at: float  # Unix time
    session_id: str | None
    tool: str
    transport: str
    status: str  # "ok" | "error"
    duration_ms: float
    arguments: Mapping[str, Any] = field(default_factory=dict)
    response: Mapping[str, Any] = field(default_factory=dict)
    error_code: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``prompt`` lifted out of the arguments); nested values are shared, not copied."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        out["prompt"] = self.arguments.get("prompt") if isinstance(self.arguments, Mapping) else None
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestRecord:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


class Store(Protocol):
    kind: str

    def add_prompt(self, session_id: str, prompt: str) -> None: ...

    def prompts(self, session_id: str) -> list[str]: ...

    def log(self, record: RequestRecord) -> None: ...

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None
    ) -> list[RequestRecord]: ...

    def close(self) -> None: ...


def parse_since(value: str) -> float:
    """A ``since`` filter: Unix seconds, or an ISO 8601 time ("2026-11-30T10:00:00Z"); ValueError if neither."""
    try:
        seconds = float(value)
    except ValueError:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a time")
    return seconds


def open_store(settings: Settings, clock: Clock = time.time) -> Store:
    """Redis when ``settings.redis_url`` is set, else SQLite under the state folder.

    Raises ``StoreUnavailable`` with a message naming the address when it cannot be used.
    """
    if settings.redis_url:
        from retriever.store_redis import RedisStore

        return RedisStore(settings.redis_url, settings.request_log_limit, clock)
    from retriever.store_sqlite import SQLiteStore

    return SQLiteStore(state_home(settings) / "store.sqlite", settings.request_log_limit, clock)
