"""Session prompts and the request log, against both stores (SQLite and a real Redis)."""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from conftest import free_port, redis_process, wait_until

from retriever.config import Settings, state_home
from retriever.errors import ConfigError
from retriever.service.stores import open_store
from retriever.service.stores.base import (
    REQUEST_TTL,
    SESSION_PROMPTS,
    SESSION_TTL,
    RequestRecord,
    Store,
    StoreUnavailable,
    parse_since,
)
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore

START = 1_796_000_000.0
DAY = 24 * 3600
SCOPE = "0123456789abcdef"  # a memory's scope, as ``service.memory_scope`` makes them


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


StoreFactory = Callable[..., Store]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> Iterator[StoreFactory]:
    """Builds stores of the parametrised kind (any log limit), all sharing the fake clock; closes them."""
    url = request.getfixturevalue("redis_url") if request.param == "redis" else None
    opened: list[Store] = []

    def build(log_limit: int = 10_000) -> Store:
        store: Store
        if url is None:
            store = SQLiteStore(tmp_path / f"s{len(opened)}.sqlite", log_limit, clock)
        else:
            store = RedisStore(url, log_limit, clock)
        opened.append(store)
        return store

    yield build
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> Store:
    return make_store()


@pytest.fixture
def sqlite_store(tmp_path: Path, clock: FakeClock) -> Iterator[SQLiteStore]:
    store = SQLiteStore(tmp_path / "s.sqlite", 10_000, clock)
    yield store
    store.close()


def record(
    number: int,
    clock: FakeClock,
    session_id: str | None = "session-a",
    status: str = "ok",
    error_code: str | None = None,
) -> RequestRecord:
    """A request received now (by the fake clock), then the clock moves on one second."""
    made = RequestRecord(
        request_id=f"req-{number}",
        received_at=clock(),
        session_id=session_id,
        tool="retrieve",
        transport="stdio",
        status=status,
        duration_ms=10.5 + number,
        arguments={"prompt": f"prompt {number}", "top_k": 3},
        response={"status": status, "facts": [{"text": f"fact {number}", "score": 0.75}]},
        error_code=error_code,
    )
    clock.advance(1)
    return made


# Session prompts


def test_prompts_come_back_oldest_first(store: Store) -> None:
    for prompt in ["first", "second", "third"]:
        store.add_prompt("s1", prompt)

    assert store.prompts("s1") == ["first", "second", "third"]


def test_only_the_last_five_prompts_of_a_session_are_kept(store: Store, clock: FakeClock) -> None:
    for number in range(1, 8):
        store.add_prompt("s1", f"p{number}")
        clock.advance(1)

    assert SESSION_PROMPTS == 5
    assert store.prompts("s1") == ["p3", "p4", "p5", "p6", "p7"]


def test_prompts_added_in_the_same_instant_keep_their_order(store: Store) -> None:
    for number in range(1, 8):
        store.add_prompt("s1", f"p{number}")

    assert store.prompts("s1") == ["p3", "p4", "p5", "p6", "p7"]


def test_sessions_are_independent(store: Store) -> None:
    store.add_prompt("alpha", "a1")
    store.add_prompt("beta", "b1")
    store.add_prompt("alpha", "a2")
    for number in range(1, 7):
        store.add_prompt("gamma", f"g{number}")

    assert store.prompts("alpha") == ["a1", "a2"]
    assert store.prompts("beta") == ["b1"]
    assert store.prompts("gamma") == ["g2", "g3", "g4", "g5", "g6"]


def test_an_unknown_session_has_no_prompts(store: Store) -> None:
    store.add_prompt("known", "hello")

    assert store.prompts("unknown") == []


def test_a_prompt_is_kept_verbatim(store: Store) -> None:
    prompt = "Who owns billing?\nЛікарняні: 'sick days' — \"quoted\" ; DROP TABLE prompts; 🚀"
    store.add_prompt("s1", prompt)

    assert store.prompts("s1") == [prompt]


# Session expiry: SQLite applies the TTL with its clock


def test_a_sqlite_session_idle_past_the_ttl_has_no_prompts(sqlite_store: SQLiteStore, clock: FakeClock) -> None:
    sqlite_store.add_prompt("s1", "old")
    clock.advance(SESSION_TTL + 1)

    assert SESSION_TTL == 30 * DAY
    assert sqlite_store.prompts("s1") == []


def test_a_sqlite_session_within_the_ttl_keeps_its_prompts(sqlite_store: SQLiteStore, clock: FakeClock) -> None:
    sqlite_store.add_prompt("s1", "recent")
    clock.advance(SESSION_TTL - 1)

    assert sqlite_store.prompts("s1") == ["recent"]


def test_a_sqlite_session_ttl_runs_from_its_newest_prompt(sqlite_store: SQLiteStore, clock: FakeClock) -> None:
    sqlite_store.add_prompt("s1", "day 0")
    clock.advance(20 * DAY)
    sqlite_store.add_prompt("s1", "day 20")
    clock.advance(11 * DAY)  # 31 days after the first prompt, 11 after the newest

    assert sqlite_store.prompts("s1") == ["day 0", "day 20"]


def test_a_prompt_added_to_an_expired_sqlite_session_starts_it_afresh(
    sqlite_store: SQLiteStore, clock: FakeClock
) -> None:
    sqlite_store.add_prompt("s1", "old 1")
    sqlite_store.add_prompt("s1", "old 2")
    clock.advance(SESSION_TTL + 1)
    sqlite_store.add_prompt("s1", "new")

    # "A session idle for the TTL is forgotten as a whole" (as Redis does when the key expires).
    assert sqlite_store.prompts("s1") == ["new"]


# Session expiry: Redis uses the key's native TTL


def session_key(session_id: str) -> str:
    return f"retriever:session:{session_id}"


def test_a_redis_session_expires_thirty_days_after_a_prompt(redis_url: str, clock: FakeClock) -> None:
    store = RedisStore(redis_url, 10_000, clock)
    raw = redis.Redis.from_url(redis_url)
    try:
        store.add_prompt("s1", "hello")

        assert SESSION_TTL - 5 <= raw.ttl(session_key("s1")) <= SESSION_TTL
    finally:
        raw.close()
        store.close()


def test_a_later_prompt_renews_the_redis_session_ttl(redis_url: str, clock: FakeClock) -> None:
    store = RedisStore(redis_url, 10_000, clock)
    raw = redis.Redis.from_url(redis_url)
    try:
        store.add_prompt("s1", "first")
        raw.expire(session_key("s1"), 100)
        assert 0 < raw.ttl(session_key("s1")) <= 100

        store.add_prompt("s1", "second")

        assert SESSION_TTL - 5 <= raw.ttl(session_key("s1")) <= SESSION_TTL
        assert store.prompts("s1") == ["first", "second"]
    finally:
        raw.close()
        store.close()


def test_an_expired_redis_session_has_no_prompts(redis_url: str, clock: FakeClock) -> None:
    store = RedisStore(redis_url, 10_000, clock)
    raw = redis.Redis.from_url(redis_url)
    try:
        store.add_prompt("s1", "soon gone")
        raw.pexpire(session_key("s1"), 1)

        assert wait_until(lambda: raw.exists(session_key("s1")) == 0)
        assert store.prompts("s1") == []
    finally:
        raw.close()
        store.close()


# The request log


def test_requests_come_back_newest_first_with_every_field_intact(store: Store, clock: FakeClock) -> None:
    logged = [
        record(1, clock),
        record(2, clock, session_id=None, status="error", error_code="retrieval_timeout"),
        record(3, clock, session_id="session-b"),
    ]
    for item in logged:
        store.log(item, scope=SCOPE)

    got = store.requests(scope=SCOPE)

    assert [r.to_dict() for r in got] == [r.to_dict() for r in reversed(logged)]
    assert got == list(reversed(logged))
    assert got[1].to_dict() == {
        "request_id": "req-2",
        "received_at": START + 1,
        "session_id": None,
        "tool": "retrieve",
        "transport": "stdio",
        "status": "error",
        "duration_ms": 12.5,
        "arguments": {"prompt": "prompt 2", "top_k": 3},
        "response": {"status": "error", "facts": [{"text": "fact 2", "score": 0.75}]},
        "error_code": "retrieval_timeout",
        "user_id": None,
        "prompt": "prompt 2",
    }


def test_an_empty_request_log_has_no_requests(store: Store) -> None:
    assert store.requests(scope=SCOPE) == []


def test_the_limit_caps_how_many_requests_come_back(store: Store, clock: FakeClock) -> None:
    for number in range(1, 6):
        store.log(record(number, clock), scope=SCOPE)

    assert [r.request_id for r in store.requests(scope=SCOPE, limit=2)] == ["req-5", "req-4"]
    assert [r.request_id for r in store.requests(scope=SCOPE, limit=1)] == ["req-5"]


def test_the_session_filter_returns_only_that_sessions_requests(store: Store, clock: FakeClock) -> None:
    store.log(record(1, clock, session_id="a"), scope=SCOPE)
    store.log(record(2, clock, session_id="b"), scope=SCOPE)
    store.log(record(3, clock, session_id=None), scope=SCOPE)
    store.log(record(4, clock, session_id="a"), scope=SCOPE)

    assert [r.request_id for r in store.requests(scope=SCOPE, session_id="a")] == ["req-4", "req-1"]
    assert [r.request_id for r in store.requests(scope=SCOPE, session_id="b")] == ["req-2"]
    assert store.requests(scope=SCOPE, session_id="nobody") == []
    assert [r.request_id for r in store.requests(scope=SCOPE, session_id="a", limit=1)] == ["req-4"]


def test_since_keeps_requests_received_at_or_after_it(store: Store, clock: FakeClock) -> None:
    for number in range(1, 6):
        store.log(record(number, clock), scope=SCOPE)  # received at START, START + 1, ... START + 4

    assert [r.request_id for r in store.requests(scope=SCOPE, since=START + 2)] == ["req-5", "req-4", "req-3"]
    assert [r.request_id for r in store.requests(scope=SCOPE, since=START + 2.5)] == ["req-5", "req-4"]
    assert store.requests(scope=SCOPE, since=START + 10) == []
    assert [r.request_id for r in store.requests(scope=SCOPE, since=START + 2, limit=2)] == ["req-5", "req-4"]


def test_since_and_session_filters_combine(store: Store, clock: FakeClock) -> None:
    store.log(record(1, clock, session_id="a"), scope=SCOPE)
    store.log(record(2, clock, session_id="b"), scope=SCOPE)
    store.log(record(3, clock, session_id="a"), scope=SCOPE)
    store.log(record(4, clock, session_id="a"), scope=SCOPE)

    assert [r.request_id for r in store.requests(scope=SCOPE, session_id="a", since=START + 2)] == ["req-4", "req-3"]


def test_the_request_log_keeps_only_the_newest_records_past_its_limit(
    make_store: StoreFactory, clock: FakeClock
) -> None:
    store = make_store(log_limit=3)
    for number in range(1, 6):
        store.log(record(number, clock, session_id="a"), scope=SCOPE)

    assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-5", "req-4", "req-3"]
    assert [r.request_id for r in store.requests(scope=SCOPE, session_id="a")] == ["req-5", "req-4", "req-3"]


def test_a_request_log_limit_of_zero_keeps_no_request_but_still_the_sessions_prompts(
    make_store: StoreFactory, clock: FakeClock
) -> None:
    store = make_store(log_limit=0)
    store.log(record(1, clock, session_id="a"), scope=SCOPE)
    store.add_prompt("a", "Who owns billing?")

    assert store.requests(scope=SCOPE) == [] and store.requests(scope=SCOPE, session_id="a") == []
    assert store.prompts("a") == ["Who owns billing?"]


def test_the_store_is_safe_from_several_threads(store: Store, clock: FakeClock) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for number in range(25):
                store.log(
                    RequestRecord(
                        request_id=f"w{worker}-{number}",
                        received_at=START + worker * 100 + number,
                        session_id=f"worker-{worker}",
                        tool="retrieve",
                        transport="http",
                        status="ok",
                        duration_ms=1.0,
                    ),
                    scope=SCOPE,
                )
                store.add_prompt(f"worker-{worker}", f"prompt {number}")
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert errors == []
    got = store.requests(scope=SCOPE, limit=1000)
    assert len(got) == 200
    assert len({r.request_id for r in got}) == 200
    assert store.prompts("worker-3") == [f"prompt {n}" for n in range(20, 25)]


def test_a_record_survives_a_round_trip_through_its_dict() -> None:
    original = RequestRecord(
        request_id="req-1",
        received_at=START + 0.25,
        session_id="s1",
        tool="retrieve",
        transport="http",
        status="error",
        duration_ms=3.5,
        arguments={"prompt": "Who owns billing?", "top_k": 4},
        response={"status": "error", "error_code": "invalid_arguments"},
        error_code="invalid_arguments",
    )

    assert original.to_dict()["prompt"] == "Who owns billing?"
    assert RequestRecord.from_dict(original.to_dict()) == original


def test_a_record_of_a_call_asking_by_query_shows_the_query_as_its_prompt() -> None:
    asked = RequestRecord("r", START, None, "get_memory", "http", "ok", 1.0, arguments={"query": "Who owns Helix?"})
    assert asked.to_dict()["prompt"] == "Who owns Helix?"
    odd = RequestRecord("r", START, None, "get_memory", "http", "ok", 1.0, arguments={"query": ["not", "text"]})
    assert odd.to_dict()["prompt"] is None


# parse_since


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1796000000", 1796000000.0),
        ("1796000000.5", 1796000000.5),
        ("2026-11-30T10:00:00Z", 1796032800.0),
        ("2026-11-30T10:00:00+02:00", 1796025600.0),
        ("2026-11-30T10:00:00", 1796032800.0),  # naive means UTC
    ],
)
def test_parse_since_reads_unix_seconds_and_iso_times(text: str, expected: float) -> None:
    assert parse_since(text) == expected


def test_parse_since_rejects_words() -> None:
    with pytest.raises(ValueError):
        parse_since("yesterday")


# open_store


def test_open_store_without_a_redis_url_uses_sqlite_under_the_state_folder(isolated_state: Path) -> None:
    settings = Settings()
    store = open_store(settings)
    try:
        assert isinstance(store, SQLiteStore)
        assert store.kind == "sqlite"
        assert store.path == state_home(settings) / "store.sqlite"
        assert store.path == isolated_state / "xdg-state" / "company-memory-retriever" / "store.sqlite"
        assert store.path.is_file()
    finally:
        store.close()


def test_open_store_honours_the_state_dir_setting(isolated_state: Path) -> None:
    store = open_store(Settings.from_env())
    try:
        assert isinstance(store, SQLiteStore)
        assert store.path == isolated_state / "state" / "store.sqlite"
        assert store.path.is_file()
    finally:
        store.close()


def test_open_store_with_a_redis_url_uses_redis(redis_url: str, clock: FakeClock) -> None:
    store = open_store(Settings(redis_url=redis_url, request_log_limit=2), clock)
    try:
        assert isinstance(store, RedisStore)
        assert store.kind == "redis"
        for number in range(1, 4):
            store.log(record(number, clock), scope=SCOPE)
        assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-3", "req-2"]
    finally:
        store.close()


def test_open_store_with_an_unreachable_redis_says_what_to_do() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"

    with pytest.raises(StoreUnavailable) as caught:
        open_store(Settings(redis_url=url))

    message = str(caught.value)
    assert f"cannot reach Redis at {url}" in message
    assert "start redis-server or unset RETRIEVER_REDIS_URL" in message
    assert caught.value.code == "store_unavailable"
    assert caught.value.to_dict()["error_code"] == "store_unavailable"


# Failures at request time


STORE_CALLS: dict[str, Callable[[Store], object]] = {
    "add_prompt": lambda store: store.add_prompt("s1", "hello"),
    "prompts": lambda store: store.prompts("s1"),
    "log": lambda store: store.log(record(1, FakeClock()), scope=SCOPE),
    "requests": lambda store: store.requests(scope=SCOPE),
}


@pytest.mark.parametrize("call", list(STORE_CALLS))
def test_redis_going_away_raises_store_unavailable(call: str, tmp_path: Path, clock: FakeClock) -> None:
    with redis_process(tmp_path) as (process, url):
        store = RedisStore(url, 10_000, clock, timeout=1.0)
        try:
            store.add_prompt("s1", "before")
            store.log(record(0, clock), scope=SCOPE)
            process.terminate()
            process.wait(timeout=10)

            with pytest.raises(StoreUnavailable) as caught:
                STORE_CALLS[call](store)

            assert f"Redis at {url} failed" in str(caught.value)
            assert caught.value.code == "store_unavailable"
        finally:
            store.close()


def test_a_redis_password_never_appears_in_store_errors(tmp_path: Path, clock: FakeClock) -> None:
    with redis_process(tmp_path) as (process, url):
        secret_url = url.replace("redis://", "redis://:hunter2@")  # redis-server accepts any password without auth
        store = RedisStore(secret_url, 10_000, clock, timeout=1.0)
        try:
            process.terminate()
            process.wait(timeout=10)
            with pytest.raises(StoreUnavailable) as caught:
                store.prompts("s1")
        finally:
            store.close()
    assert "hunter2" not in str(caught.value)
    assert "redis://***@127.0.0.1" in str(caught.value)


def test_a_sqlite_store_that_cannot_be_created_names_its_path(tmp_path: Path, clock: FakeClock) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a regular file, not a folder", encoding="utf-8")
    path = blocker / "nested" / "store.sqlite"

    with pytest.raises(StoreUnavailable) as caught:
        SQLiteStore(path, 10_000, clock)

    assert f"cannot open the SQLite store at {path}" in str(caught.value)
    assert "RETRIEVER_STATE_DIR" in str(caught.value)
    assert caught.value.code == "store_unavailable"


def test_a_closed_sqlite_store_raises_store_unavailable(sqlite_store: SQLiteStore) -> None:
    sqlite_store.close()

    with pytest.raises(StoreUnavailable) as caught:
        sqlite_store.prompts("s1")

    assert str(sqlite_store.path) in str(caught.value)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_parse_since_refuses_values_that_are_not_times(value: str) -> None:
    with pytest.raises(ValueError, match="is not a time"):
        parse_since(value)


# Records a client could not read back before: NaN, lone surrogates, damaged rows


def test_a_record_holding_nan_and_lone_surrogates_reads_back_as_strict_json(store: Store, clock: FakeClock) -> None:
    odd = RequestRecord(
        request_id="req-odd",
        received_at=clock(),
        session_id="s1",
        tool="retrieve_memory",
        transport="http",
        status="error",
        duration_ms=1.0,
        arguments={"prompt": "hi", "x": "\ud800", "n": math.nan, "i": -math.inf},
        response={"score": math.nan},
        error_code="invalid_arguments",
    )
    store.log(odd, scope=SCOPE)

    (got,) = store.requests(scope=SCOPE)

    assert got.arguments == {"prompt": "hi", "x": "\ufffd", "n": None, "i": None}
    assert got.response == {"score": None}
    json.dumps([r.to_dict() for r in store.requests(scope=SCOPE)], ensure_ascii=False, allow_nan=False).encode("utf-8")


def test_sqlite_rows_written_with_nan_or_escaped_surrogates_or_damaged_still_read(
    sqlite_store: SQLiteStore, clock: FakeClock
) -> None:
    sqlite_store.log(record(1, clock), scope=SCOPE)
    rows = [
        (
            "old-nan",
            '{"request_id": "old-nan", "received_at": 1796000001.0, "session_id": null, "tool": "t", '
            '"transport": "http", "status": "ok", "duration_ms": NaN, "arguments": {"x": "\\ud800"}}',
        ),
        ("broken", "{not json"),
    ]
    db = sqlite3.connect(sqlite_store.path)
    with db:
        db.executemany("INSERT INTO requests VALUES (?, 1796000001.0, NULL, ?, ?)", [(*r, SCOPE) for r in rows])
    db.close()

    got = sqlite_store.requests(scope=SCOPE)

    assert [r.request_id for r in got] == ["old-nan", "req-1"]
    assert (got[0].duration_ms, got[0].arguments) == (None, {"x": "\ufffd"})
    json.dumps([r.to_dict() for r in got], allow_nan=False, ensure_ascii=False).encode("utf-8")


# Nothing grows without bound


def test_every_redis_key_has_a_ttl(redis_url: str, clock: FakeClock) -> None:
    store = RedisStore(redis_url, 3, clock)
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for number in range(6):
            store.add_prompt(f"root:s{number}", "hello")
            store.log(record(number, clock, session_id=f"s{number % 2}"), scope=SCOPE)

        keys = list(raw.scan_iter("retriever:*"))
        assert {k.split(":")[1] for k in keys} == {"session", "log"}
        assert {k.split(":")[3] for k in keys if k.startswith("retriever:log:")} == {"request", "requests", "session"}
        assert {k: raw.ttl(k) for k in keys if not 0 < raw.ttl(k) <= REQUEST_TTL} == {}
    finally:
        raw.close()
        store.close()


def test_redis_session_request_indexes_are_trimmed_with_the_log(redis_url: str, clock: FakeClock) -> None:
    store = RedisStore(redis_url, 3, clock)
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        for number in range(1, 7):
            store.log(record(number, clock, session_id=f"client-{number}"), scope=SCOPE)

        assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-6", "req-5", "req-4"]
        indexed = {k: raw.zrange(k, 0, -1) for k in raw.scan_iter(f"retriever:log:{SCOPE}:session:*")}
        assert {k: v for k, v in indexed.items() if v} == {
            f"retriever:log:{SCOPE}:session:client-{n}": [f"req-{n}"] for n in (4, 5, 6)
        }
        assert len(list(raw.scan_iter(f"retriever:log:{SCOPE}:request:*"))) == 3
    finally:
        raw.close()
        store.close()


def test_sqlite_keeps_at_most_session_limit_sessions_the_most_recent(tmp_path: Path, clock: FakeClock) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite", 10_000, clock, session_limit=100)
    try:
        for number in range(2_000):
            store.add_prompt(f"client-{number}", "hello")
            clock.advance(1)

        assert store.sessions_count() <= 100 + 50  # enforced every 50 prompts
        store.purge()
        assert store.sessions_count() == 100
        assert store.prompts("client-1999") == ["hello"]
        assert store.prompts("client-1900") == ["hello"]
        assert store.prompts("client-1899") == []
        assert _rows(store, "prompts") == 100
    finally:
        store.close()


def test_sqlite_purges_sessions_idle_past_the_ttl(tmp_path: Path, clock: FakeClock) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite", 10_000, clock)
    try:
        for number in range(30):
            store.add_prompt(f"old-{number}", "hello")
        clock.advance(SESSION_TTL + 1)
        for number in range(20):  # the 50th prompt purges
            store.add_prompt(f"new-{number}", "hello")

        assert store.sessions_count() == 20
        assert _rows(store, "prompts") == 20
    finally:
        store.close()


def test_sqlite_forgets_requests_older_than_the_request_ttl(tmp_path: Path, clock: FakeClock) -> None:
    store = SQLiteStore(tmp_path / "s.sqlite", 10_000, clock)
    try:
        store.log(record(1, clock), scope=SCOPE)
        clock.advance(REQUEST_TTL + 1)
        store.log(record(2, clock), scope=SCOPE)
        store.purge()

        assert [r.request_id for r in store.requests(scope=SCOPE)] == ["req-2"]
    finally:
        store.close()


def test_an_existing_sqlite_store_without_a_sessions_table_is_upgraded(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    with db:
        db.execute("CREATE TABLE prompts (session_id TEXT, at REAL, prompt TEXT)")
        db.execute("INSERT INTO prompts VALUES ('s1', ?, 'kept')", (clock(),))
    db.close()

    store = SQLiteStore(path, 10_000, clock)
    try:
        assert store.sessions_count() == 1
        assert store.prompts("s1") == ["kept"]
    finally:
        store.close()


def _rows(store: SQLiteStore, table: str) -> int:
    db = sqlite3.connect(store.path)
    try:
        return int(db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        db.close()


def test_a_redis_url_that_is_no_redis_url_is_an_invalid_setting_naming_it() -> None:
    with pytest.raises(ConfigError) as caught:
        open_store(Settings(redis_url="http://user:hunter2@127.0.0.1:6379"))
    assert caught.value.code == "invalid_config"
    assert caught.value.message.startswith("invalid setting: RETRIEVER_REDIS_URL 'http://user:***@127.0.0.1:6379': ")
    assert "hunter2" not in caught.value.message


def test_a_database_number_the_server_lacks_says_to_choose_another(redis_server: str) -> None:
    with pytest.raises(StoreUnavailable) as caught:
        open_store(Settings(redis_url=redis_server.rsplit("/", 1)[0] + "/99"))
    assert caught.value.message.endswith("DB index is out of range; choose a database number the server has in "
                                         "RETRIEVER_REDIS_URL (/0 to /15 by default)")


def test_a_refused_password_says_to_check_it_not_to_start_a_server() -> None:
    from retriever.service.stores import redis as store

    refused = store.redis.AuthenticationError("invalid username-password pair or user is disabled.")
    assert store._next_step(refused) == "check the user name and password in RETRIEVER_REDIS_URL"
    assert store._next_step(store.redis.ConnectionError("Connection refused.")).startswith("start redis-server")
