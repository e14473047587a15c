"""Replicas: two real ``retriever serve`` processes sharing one Redis and one memory folder act as one service."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import ServeProcess, answers, serve_process, wait_until
from fixtures import ACME
from git_memory import clone, commit, git, origin_with

NEW_FACT = "The Helix EU data residency project is owned by Maksym Shevchenko."
HELIX = "Who owns the Helix EU data residency project?"


@pytest.fixture
def replicas(tmp_path: Path, redis_url: str) -> Iterator[tuple[Path, ServeProcess, ServeProcess]]:
    """The memory folder (a clone of an origin), and two servers on it sharing Redis and the index cache."""
    origin = origin_with(tmp_path, ACME)
    memory = clone(origin, tmp_path / "srv" / "memory")
    env = {"RETRIEVER_REDIS_URL": redis_url, "RETRIEVER_REFRESH_SECONDS": "0.2"}
    with ExitStack() as stack:
        first = stack.enter_context(serve_process(memory, env=env))
        second = stack.enter_context(serve_process(memory, env=env))
        for server in (first, second):
            assert wait_until(lambda s=server: answers(s.route("/healthz")), timeout=30), "a replica never got ready"
        yield memory, first, second


def _call(server: ServeProcess, prompt: str, session_id: str | None = None, headers: dict | None = None) -> Any:
    arguments = {"prompt": prompt, **({"session_id": session_id} if session_id else {})}
    params = {"name": "retrieve_memory", "arguments": arguments}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    response = httpx.post(server.url, json=body, headers=headers or {}, timeout=30)
    return response if headers else response.json()["result"]["structuredContent"]


def _facts(server: ServeProcess, prompt: str) -> list[str]:
    return [f["statement"] for f in _call(server, prompt)["retrieval"]["facts"]]


def _log(server: ServeProcess, session_id: str) -> list[dict[str, Any]]:
    response = httpx.get(server.route("/v1/dev/mcp-requests"), params={"session_id": session_id}, timeout=10)
    return list(response.json()["requests"])


def test_a_follow_up_sent_to_one_replica_is_rewritten_from_history_written_through_the_other(
    replicas: tuple[Path, ServeProcess, ServeProcess],
) -> None:
    _, first, second = replicas

    _call(first, "Tell me about the billing migration project", "r-1")
    assert wait_until(lambda: len(_log(second, "r-1")) == 1), "the first call never reached the shared log"
    follow = _call(second, "and who owns it?", "r-1")

    assert "billing migration" in follow["triage"]["rewritten_query"]
    for server in (first, second):  # one request log: both calls, whichever replica is asked
        assert [r["prompt"] for r in _log(server, "r-1")] == [
            "and who owns it?",
            "Tell me about the billing migration project",
        ]


def test_each_replica_picks_up_a_git_pull_and_a_reset_in_the_memory_folder_without_restart(
    tmp_path: Path, replicas: tuple[Path, ServeProcess, ServeProcess]
) -> None:
    memory, first, second = replicas
    assert all(NEW_FACT not in _facts(server, HELIX) for server in (first, second))

    # An edit to a file both replicas have indexed (the case a shared index cache used to hide from
    # the slower replica), and a new file.
    edited = ACME["projects/billing_migration.md"] + f"\n## Related work\n\n{NEW_FACT}\n"
    added = "# Helix EU data residency\n\nThe residency project keeps patient data in Frankfurt.\n"
    commit(tmp_path / "author", {"projects/billing_migration.md": edited, "projects/helix.md": added}, "helix")
    git(memory, "pull", "-q", "--ff-only")
    assert wait_until(lambda: all(NEW_FACT in _facts(s, HELIX) for s in (first, second)), timeout=30, interval=0.1)
    where = "Where is the residency project's patient data?"
    assert all("Frankfurt" in " ".join(_facts(s, where)) for s in (first, second))

    git(memory, "reset", "-q", "--hard", "HEAD~1")
    assert wait_until(lambda: all(NEW_FACT not in _facts(s, HELIX) for s in (first, second)), timeout=30, interval=0.1)
    assert all(s.process.poll() is None for s in (first, second))


def test_a_handshake_session_lives_in_the_replica_that_opened_it_and_session_id_works_anywhere(
    replicas: tuple[Path, ServeProcess, ServeProcess],
) -> None:
    _, first, second = replicas
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    opened = httpx.post(first.url, json=init, headers={"Accept": "application/json"}, timeout=10)
    session = opened.headers["mcp-session-id"]

    elsewhere = _call(second, "Who leads the Platform Team?", headers={"Mcp-Session-Id": session})
    at_home = _call(first, "Who leads the Platform Team?", headers={"Mcp-Session-Id": session})

    # A replica answers 404 for a session it did not open: the SDK's client reports "Session terminated" and a
    # client must initialize again. Route by Mcp-Session-Id (sticky), or pass session_id instead.
    assert elsewhere.status_code == 404
    message = json.loads(elsewhere.text)["error"]["message"]
    assert message.startswith("session not found: it was ended (DELETE), idled out, or opened on another server")
    assert at_home.status_code == 200 and not at_home.json()["result"]["isError"]
