"""What one request-log row may cost: UTF-8 JSON, arguments and response each capped, reads within a budget."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.service.stores import base
from retriever.service.stores.base import RequestRecord, Store
from retriever.service.stores.limits import capped, size
from retriever.service.stores.redis import RedisStore
from retriever.service.stores.sqlite import SQLiteStore

SCOPE = "0123456789abcdef"
KIB = 1024
ARGUMENTS_CAP, RESPONSE_CAP = 64 * KIB, 128 * KIB  # what a row keeps of each, in bytes of UTF-8 JSON
ROW_SLACK = 4 * KIB  # the row's other fields, and the markers


class Stored:
    """A store and a way to read its raw rows, as the file or the server keeps them."""

    def __init__(self, store: Store, raw: redis.Redis | Path) -> None:
        self.store, self._raw = store, raw

    def rows(self) -> list[bytes]:
        if isinstance(self._raw, Path):
            with sqlite3.connect(self._raw) as db:
                return [str(text).encode("utf-8") for (text,) in db.execute("SELECT record FROM requests")]
        return [self._raw.get(key) for key in self._raw.scan_iter(f"retriever:log:{SCOPE}:request:*")]  # type: ignore[misc]


@pytest.fixture(params=["sqlite", "redis"])
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Stored]:
    if request.param == "sqlite":
        path = tmp_path / "store.sqlite"
        yield Stored(SQLiteStore(path), path)
        return
    url = request.getfixturevalue("redis_url")
    client = redis.Redis.from_url(url)
    yield Stored(RedisStore(url), client)
    client.close()


def _record(number: int, arguments: dict, response: dict) -> RequestRecord:
    return RequestRecord(f"req-{number}", 1_796_000_000.0 + number, "s", "retrieve_memory", "http", "error", 1.0,
                         arguments, response, "invalid_arguments")  # fmt: skip


def _emoji_body() -> dict[str, str]:
    """A 0.96 MB body of emoji argument names and values (each under the 8,000-character bound)."""
    return {"😀" * 100 + str(n): "🎉" * 7_900 for n in range(30)}


def test_a_row_is_stored_as_utf8_json_not_as_ascii_escapes(stored: Stored) -> None:
    stored.store.log(_record(1, {"prompt": "Хто відповідає за 😀?"}, {"text": "Київ 🎉"}), scope=SCOPE)

    (row,) = stored.rows()
    assert "Хто відповідає за 😀?".encode() in row and b"\\u" not in row
    (back,) = stored.store.requests(scope=SCOPE)
    assert back.arguments == {"prompt": "Хто відповідає за 😀?"} and back.response == {"text": "Київ 🎉"}


def test_a_huge_row_keeps_at_most_the_cap_of_its_arguments_and_of_its_response_with_markers(stored: Stored) -> None:
    body = _emoji_body()
    assert len(json.dumps(body, ensure_ascii=False).encode()) > 900_000
    stored.store.log(_record(1, body, {"echo": body}), scope=SCOPE)

    (row,) = stored.rows()
    assert len(row) <= ARGUMENTS_CAP + RESPONSE_CAP + ROW_SLACK
    (back,) = stored.store.requests(scope=SCOPE)
    arguments = json.dumps(back.arguments, ensure_ascii=False)
    assert len(arguments.encode()) <= ARGUMENTS_CAP and "more characters]" in arguments
    assert back.arguments["…"].startswith("[cut: ") and back.arguments["…"].endswith(" more keys]")
    response = json.dumps(back.response, ensure_ascii=False)
    assert len(response.encode()) <= RESPONSE_CAP and "[cut: " in response


def test_a_row_within_its_caps_is_kept_whole(stored: Stored) -> None:
    response = {"content": [{"type": "text", "text": "Київ " * 10_000}], "isError": False}  # 60 kB of UTF-8
    stored.store.log(_record(1, {"prompt": "п" * 8_000, "session_id": "s"}, response), scope=SCOPE)

    (back,) = stored.store.requests(scope=SCOPE)
    assert back.arguments == {"prompt": "п" * 8_000, "session_id": "s"} and back.response == response


def test_a_read_of_many_large_rows_stays_within_its_budget_and_says_what_it_left_out(
    stored: Stored, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(base, "READ_BYTES", 1_000_000, raising=False)
    for number in range(30):
        stored.store.log(_record(number, {"prompt": f"p{number}"}, {"text": "x" * 100_000}), scope=SCOPE)

    got = stored.store.requests(limit=30, scope=SCOPE)

    assert [r.request_id for r in got] == [f"req-{n}" for n in range(29, -1, -1)]  # every row, newest first
    assert len(json.dumps([r.to_dict() for r in got]).encode()) < 1_200_000
    assert got[0].response == {"text": "x" * 100_000}
    assert got[-1].to_dict()["prompt"] == "p0" and "fewer rows" in got[-1].response["…"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=8) | st.dictionaries(st.text(max_size=30), inner, max_size=8),
    max_leaves=30,
)


@settings(max_examples=150, deadline=None, database=None)
@given(value=st.dictionaries(st.text(max_size=300), _JSON, max_size=10), limit=st.integers(100, 3_000))
def test_a_capped_object_is_an_object_within_its_limit_and_unchanged_when_it_fits(value: dict, limit: int) -> None:
    cut = capped(value, limit)

    assert isinstance(cut, dict) and size(cut) <= limit
    assert (cut == value) is (size(value) <= limit)
