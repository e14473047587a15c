"""The log of refused requests: one line a status a minute, the rest counted, what a client sent clipped; and the
access log, one line a request at ``RETRIEVER_LOG_LEVEL=info`` (a real server on loopback)."""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import TreeFactory, serving, wait_until
from fixtures import ACME

from retriever import Retriever, Settings
from retriever.adapters.http_log import Refusals
from retriever.service.access import key_name
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

KEY = "k-access-log-test"


def test_one_line_a_status_per_interval_and_the_next_counts_the_unlogged(caplog: pytest.LogCaptureFixture) -> None:
    now = [0.0]
    refusals = Refusals(every=60.0, clock=lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="retriever.adapters.http_log"):
        for _ in range(3):
            refusals.note(421, "GET", "/healthz", "host 'x' is not served here")
        refusals.note(401, "POST", "/v1/mcp/memory", "missing or wrong bearer token")
        now[0] = 61.0
        refusals.note(421, "GET", "/healthz", "host 'y' is not served here")
    assert [r.getMessage() for r in caplog.records] == [
        "refused 421 GET '/healthz': host 'x' is not served here",
        "refused 401 POST '/v1/mcp/memory': missing or wrong bearer token",
        "refused 421 GET '/healthz': host 'y' is not served here (2 more refused with 421 since the last such line)",
    ]


def test_a_long_path_or_message_is_clipped_and_control_characters_are_escaped(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="retriever.adapters.http_log"):
        Refusals().note(404, "GET" * 100, "/a\n" + "x" * 10_000, "m" * 10_000)
    [line] = [r.getMessage() for r in caplog.records]
    assert len(line) < 500 and "\n" not in line and "\\n" in line


@pytest.fixture
def service(make_tree: TreeFactory, tmp_path: Path) -> Iterator[MemoryService]:
    running = MemoryService(Retriever(make_tree(ACME), Settings()), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    _ = running.retriever.memory  # loaded: /healthz answers 200
    yield running
    running.close()


def _access_lines(caplog: pytest.LogCaptureFixture, count: int) -> list[str]:
    """The access log's lines once ``count`` are written: each is written as its answer ends, in the server's thread."""
    lines = lambda: [r.getMessage() for r in caplog.records if r.name == "retriever.access"]  # noqa: E731
    assert wait_until(lambda: len(lines()) >= count), lines()
    return lines()


def test_at_info_each_request_is_one_line_with_its_status_time_and_keys_name_never_the_key_or_query(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="retriever.access"), serving(service, api_key=KEY) as base:
        assert httpx.get(f"{base}/healthz").status_code == 200
        _access_lines(caplog, 1)
        wrong = {"Authorization": "Bearer no"}
        assert httpx.get(f"{base}/v1/dev/mcp-requests?token=secret", headers=wrong).status_code == 401
        _access_lines(caplog, 2)
        body = {"query": "How many sick days?", "agent_id": "a"}
        answer = httpx.post(f"{base}/memories/retrieve", json=body, headers={"Authorization": f"Bearer {KEY}"})
        assert answer.status_code == 200
        lines = _access_lines(caplog, 3)

    assert re.fullmatch(r"GET /healthz 200 \d+ ms key=-", lines[0])
    assert re.fullmatch(r"GET /v1/dev/mcp-requests 401 \d+ ms key=-", lines[1])
    assert re.fullmatch(rf"POST /memories/retrieve 200 \d+ ms key={key_name(KEY)}", lines[2])
    assert not any(KEY in line or "secret" in line for line in lines)


def test_at_the_default_level_no_access_line_is_written(
    service: MemoryService, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), serving(service) as base:
        assert httpx.get(f"{base}/healthz").status_code == 200
    assert not [r for r in caplog.records if r.name == "retriever.access"]


def test_an_access_lines_path_is_clipped_and_escaped(service: MemoryService, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="retriever.access"), serving(service) as base:
        httpx.get(f"{base}/{'x' * 500}%0Aforged%1b[31m")
        [line] = _access_lines(caplog, 1)
    assert "\n" not in line and "\x1b" not in line
    assert line.startswith("GET /" + "x" * 99 + "… 404 ")


def test_a_request_whose_handler_raises_is_logged_as_the_500_the_server_answers(
    caplog: pytest.LogCaptureFixture,
) -> None:
    import anyio

    from retriever.adapters.http_log import AccessLog

    async def broken(scope: object, receive: object, send: object) -> None:
        raise RuntimeError("handler failed")

    async def call() -> None:
        scope = {"type": "http", "method": "POST", "path": "/memories/retrieve", "state": {}}
        with pytest.raises(RuntimeError):
            await AccessLog(broken)(scope, None, None)  # type: ignore[arg-type]

    with caplog.at_level(logging.INFO, logger="retriever.access"):
        anyio.run(call)
    [line] = [r.getMessage() for r in caplog.records if r.name == "retriever.access"]
    assert re.fullmatch(r"POST /memories/retrieve 500 \d+ ms key=-", line)
