"""The log of refused requests: one line a status a minute, the rest counted, what a client sent clipped."""

from __future__ import annotations

import logging

import pytest

from retriever.adapters.http_log import Refusals


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
