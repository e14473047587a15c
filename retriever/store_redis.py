"""The Redis store: sessions as capped lists with a native TTL, the request log as a sorted set.

Keys: ``retriever:session:<id>`` (list, newest first, 5 long, expiring 30 days after the last
prompt), ``retriever:requests`` (sorted set of request ids by time), ``retriever:request:<id>``
(the record as JSON), ``retriever:session-requests:<id>`` (a session's request ids by time).
"""

from __future__ import annotations

import json
import time

import redis

from retriever.store import SESSION_PROMPTS, SESSION_TTL, Clock, RequestRecord, StoreUnavailable

_PREFIX = "retriever"


class RedisStore:
    """A thin wrapper over a ``redis.Redis`` connection pool (thread-safe)."""

    kind = "redis"

    def __init__(self, url: str, log_limit: int = 10_000, clock: Clock = time.time, timeout: float = 2.0) -> None:
        self.url, self.log_limit, self.clock = url, log_limit, clock
        try:
            self._redis = redis.Redis.from_url(
                url, socket_timeout=timeout, socket_connect_timeout=timeout, decode_responses=True
            )
            self._redis.ping()
        except (redis.RedisError, ValueError) as exc:
            raise StoreUnavailable(
                f"cannot reach Redis at {url}: {exc}; start redis-server or unset RETRIEVER_REDIS_URL"
            ) from exc

    def _fail(self, exc: Exception) -> StoreUnavailable:
        return StoreUnavailable(f"Redis at {self.url} failed: {exc}")

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

    def log(self, record: RequestRecord) -> None:
        try:
            pipe = self._redis.pipeline()
            pipe.set(f"{_PREFIX}:request:{record.request_id}", json.dumps(record.to_dict()))
            pipe.zadd(f"{_PREFIX}:requests", {record.request_id: record.received_at})
            if record.session_id is not None:
                pipe.zadd(f"{_PREFIX}:session-requests:{record.session_id}", {record.request_id: record.received_at})
            pipe.execute()
            self._trim()
        except redis.RedisError as exc:
            raise self._fail(exc) from exc

    def _trim(self) -> None:
        # Past the retention cap the oldest records go; session indexes drop ids that no longer resolve.
        excess = int(self._redis.zcard(f"{_PREFIX}:requests")) - self.log_limit
        if excess > 0:
            old = self._redis.zrange(f"{_PREFIX}:requests", 0, excess - 1)
            self._redis.zremrangebyrank(f"{_PREFIX}:requests", 0, excess - 1)
            self._redis.delete(*[f"{_PREFIX}:request:{i!s}" for i in old])

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None
    ) -> list[RequestRecord]:
        key = f"{_PREFIX}:session-requests:{session_id}" if session_id is not None else f"{_PREFIX}:requests"
        try:
            ids = self._redis.zrevrangebyscore(key, "+inf", since or 0, start=0, num=limit)
            blobs = self._redis.mget([f"{_PREFIX}:request:{i!s}" for i in ids]) if ids else []
        except redis.RedisError as exc:
            raise self._fail(exc) from exc
        return [RequestRecord.from_dict(json.loads(b)) for b in blobs if b is not None]

    def close(self) -> None:
        self._redis.close()
