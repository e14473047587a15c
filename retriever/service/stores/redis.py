"""The Redis store: sessions as capped lists with a native TTL, the request log as sorted sets.

Keys, every one with a TTL: ``retriever:session:<key>`` (list, newest first, 5 long, expiring 30
days after the last prompt; ``MemoryService`` makes ``<key>`` from a hash of the memory root and
the client's session id).  The request log is kept per scope (a memory: ``<scope>`` is 16 hex
digits, ``service.memory_scope``), all under ``retriever:log:<scope>:``: ``…:requests`` (sorted set
of request ids by time, capped at the log limit), ``…:request:<id>`` (the record as JSON,
``REQUEST_TTL``), ``…:session:<id>`` (a session's request ids by time, by the client's session id;
trimmed with the log and expiring ``REQUEST_TTL`` after the session's last request).  Keys the
previous version wrote (``retriever:requests``, ``retriever:request:<id>``,
``retriever:session-requests:<id>``) name no memory: they are never read, and expire on their own.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import redis

from retriever.errors import ConfigError
from retriever.redaction import mask_url
from retriever.service.stores.base import (
    REQUEST_TTL,
    SESSION_PROMPTS,
    SESSION_TTL,
    Clock,
    RequestRecord,
    StoreUnavailable,
    decode_record,
    encode_record,
    read_records,
)
from retriever.text.safe import clean_text

_PREFIX = "retriever"
_BATCH = 100  # records fetched at once by a read


def _requests_key(scope: str) -> str:
    return f"{_PREFIX}:log:{scope}:requests"


def _record_key(scope: str, request_id: object) -> str:
    return f"{_PREFIX}:log:{scope}:request:{request_id!s}"


def _session_requests_key(scope: str, session_id: str) -> str:
    return f"{_PREFIX}:log:{scope}:session:{session_id}"


# How Redis says a connection lacks or has the wrong credentials where redis-py raises no AuthenticationError.
_AUTH_REFUSED = ("noauth", "wrongpass", "invalid password", "authentication required")


def _next_step(exc: Exception) -> str:
    """What to do about a Redis server that refused the connection: the hint had been "start redis-server" for a
    wrong password or database number too."""
    said = str(exc).lower()
    if isinstance(exc, redis.AuthenticationError) or any(w in said for w in _AUTH_REFUSED):
        return "check the user name and password in RETRIEVER_REDIS_URL"
    if "db index" in said:
        return "choose a database number the server has in RETRIEVER_REDIS_URL (/0 to /15 by default)"
    return "start redis-server or unset RETRIEVER_REDIS_URL"


class RedisStore:
    """A thin wrapper over a ``redis.Redis`` connection pool (thread-safe)."""

    kind = "redis"

    def __init__(self, url: str, log_limit: int = 10_000, clock: Clock = time.time, timeout: float = 2.0) -> None:
        self.url, self.log_limit, self.clock = url, log_limit, clock
        self.shown_url = mask_url(url)  # messages reach logs, diagnostics and the request log: no password
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
            )
            self._redis.ping()
        except ValueError as exc:  # not a Redis URL at all: a setting to fix, not a server to start
            why = mask_url(str(exc))[:300]
            raise ConfigError(f"invalid setting: RETRIEVER_REDIS_URL {self.shown_url[:200]!r}: {why}") from exc
        except redis.RedisError as exc:
            raise StoreUnavailable(
                f"cannot reach Redis at {self.shown_url}: {mask_url(str(exc))}; {_next_step(exc)}"
            ) from exc

    def _fail(self, exc: Exception) -> StoreUnavailable:
        return StoreUnavailable(f"Redis at {self.shown_url} failed: {mask_url(str(exc))}")

    def add_prompt(self, session_id: str, prompt: str) -> None:
        key = f"{_PREFIX}:session:{session_id}"
        try:
            pipe = self._redis.pipeline()
            pipe.lpush(key, prompt)
            pipe.ltrim(key, 0, SESSION_PROMPTS - 1)
            pipe.expire(key, SESSION_TTL)  # the TTL runs from the session's last prompt
            pipe.execute()
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    def prompts(self, session_id: str) -> list[str]:
        try:
            values = self._redis.lrange(f"{_PREFIX}:session:{session_id}", 0, SESSION_PROMPTS - 1)
        except redis.RedisError as exc:
            raise self._fail(exc) from exc
        return [str(v) for v in reversed(values)]

    def log(self, record: RequestRecord, *, scope: str) -> None:
        """File ``record`` under ``scope``; past ``log_limit`` records of that scope the oldest go (0: none is kept, so
        none is written: an operator's way to keep no prompts and answers)."""
        if not self.log_limit:
            return
        cutoff = f"({self.clock() - REQUEST_TTL}"  # exclusive: older than the TTL
        log_key = _requests_key(scope)
        try:
            pipe = self._redis.pipeline()
            pipe.set(_record_key(scope, record.request_id), encode_record(record), ex=REQUEST_TTL)
            if record.session_id is not None:
                key = _session_requests_key(scope, record.session_id)
                pipe.zadd(key, {record.request_id: record.received_at})
                pipe.zremrangebyscore(key, "-inf", cutoff)
                pipe.zremrangebyrank(key, 0, -self.log_limit - 1)
                pipe.expire(key, REQUEST_TTL)
            pipe.zadd(log_key, {record.request_id: record.received_at})
            pipe.zremrangebyscore(log_key, "-inf", cutoff)  # their records expire on their own
            pipe.expire(log_key, REQUEST_TTL)
            pipe.zcard(log_key)
            excess = int(pipe.execute()[-1]) - self.log_limit
            if excess > 0:
                self._trim(scope, excess)
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    def _trim(self, scope: str, excess: int) -> None:
        """Past the retention cap the oldest records go, from the log and from their session's index."""
        log_key = _requests_key(scope)
        old = [str(i) for i in self._redis.zrange(log_key, 0, excess - 1)]
        if not old:
            return
        blobs = self._redis.mget([_record_key(scope, i) for i in old])
        pipe = self._redis.pipeline()
        pipe.zrem(log_key, *old)
        pipe.delete(*[_record_key(scope, i) for i in old])
        for request_id, blob in zip(old, blobs, strict=True):
            session = _session_of(blob)
            if session is not None:
                pipe.zrem(_session_requests_key(scope, session), request_id)
        pipe.execute()

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None, *, scope: str
    ) -> list[RequestRecord]:
        """The newest records filed under ``scope``."""
        key = _session_requests_key(scope, clean_text(session_id)) if session_id is not None else _requests_key(scope)
        try:
            ids = self._redis.zrevrangebyscore(key, "+inf", since or 0, start=0, num=limit)
            return read_records(self._blobs(scope, [str(i) for i in ids]))
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    def _blobs(self, scope: str, ids: list[str]) -> Iterator[str]:
        """The records' JSON, fetched ``_BATCH`` at a time (expired ones left out)."""
        for start in range(0, len(ids), _BATCH):
            batch = self._redis.mget([_record_key(scope, i) for i in ids[start : start + _BATCH]])
            yield from (str(blob) for blob in batch if blob is not None)

    def close(self) -> None:
        self._redis.close()


def _session_of(blob: Any) -> str | None:
    record = decode_record(blob) if isinstance(blob, str) else None
    return record.session_id if record is not None else None
