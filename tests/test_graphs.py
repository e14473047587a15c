"""Seed 003's POST /memories/retrieve and seed 002's get_memory, through the real HTTP server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import TreeFactory, serving, validate_shared
from fixtures import ACME, ASSISTANT
from mcp import Client

from retriever import Retriever, Settings
from retriever.service import MemoryService
from retriever.store_sqlite import SQLiteStore

TEAM = {
    "eng/oncall.md": "---\ntype: process\ntitle: On-call\ncreated: 2026-01-05\nupdated: 2026-11-01\n---\n"
    "# On-call\n\nThe on-call engineer answers pages within 15 minutes, day and night.\n",
}
OWN = {"notes/mine.md": "# My notes\n\nMy on-call week starts on Monday 7 December.\n"}


@pytest.fixture
def trees(tmp_path: Path, make_tree: TreeFactory) -> dict[str, Path]:
    root = make_tree({**ACME, **ASSISTANT})
    team = tmp_path / "team"
    users = tmp_path / "users"
    for rel, text in TEAM.items():
        (team / rel).parent.mkdir(parents=True, exist_ok=True)
        (team / rel).write_text(text)
    for rel, text in OWN.items():
        (users / "u-42" / rel).parent.mkdir(parents=True, exist_ok=True)
        (users / "u-42" / rel).write_text(text)
    return {"root": root, "team": team, "users": users}


@pytest.fixture
def service(trees: dict[str, Path], tmp_path: Path) -> Iterator[MemoryService]:
    settings = Settings.from_env(graphs={"team-eng": trees["team"]}, user_trees=trees["users"])
    running = MemoryService(Retriever(trees["root"], settings), SQLiteStore(tmp_path / "s.sqlite"), watch=False)
    yield running
    running.close()


@pytest.fixture
def base(service: MemoryService) -> Iterator[str]:
    with serving(service) as url:
        yield url


def _retrieve(base: str, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.post(f"{base}/memories/retrieve", json=body, headers=headers or {}, timeout=30)


# -- POST /memories/retrieve -----------------------------------------------------------------------


def test_a_retrieval_answers_in_the_seeds_shape(base: str) -> None:
    response = _retrieve(
        base,
        {
            "query": "How many sick days do employees earn?",
            "agent_id": "agent_tanya7k",
            "display_name": "Ana",
            "email": "ana@acme.test",
        },
    )
    assert response.status_code == 200
    body = response.json()
    validate_shared(body, "memories_retrieve.response.schema.json")
    assert (body["query"], body["agent_id"], body["user_id"]) == (
        "How many sick days do employees earn?",
        "agent_tanya7k",
        "anonymous",
    )
    first = body["retrieval"]["results"][0]
    assert first["name"] == "Sick leave"
    assert first["content"].startswith("Employees earn 10 sick days per year.")
    assert (first["scope"], first["graph_id"]) == ("graph", "default")
    assert first["source_descriptions"] == [
        "Memory > Policies > Leave Policy > Sick leave",
        "memory/policies/leave.md:9-9",
    ]
    assert body["context"]["data"]["facts"][0] == "Employees earn 10 sick days per year."
    assert body["prompt"].startswith("<memory>\nUser: Ana <ana@acme.test>\nRelevant facts:\n- Employees earn 10")
    assert body["retrieval"]["result_count"] == len(body["retrieval"]["results"])


def test_result_ids_are_stable_across_runs(base: str, service: MemoryService) -> None:
    body = {"query": "sick days", "agent_id": "a"}
    first = [r["id"] for r in _retrieve(base, body).json()["retrieval"]["results"]]
    service.graphs._cache.clear()  # force a fresh retrieval, not a cache hit
    second = [r["id"] for r in _retrieve(base, body).json()["retrieval"]["results"]]
    assert first == second and len(set(first)) == len(first)


def test_the_users_tree_and_shared_graphs_blend_into_one_ranking(base: str) -> None:
    body = {
        "query": "When does my on-call week start and how fast are pages answered?",
        "agent_id": "a",
        "graph_ids": ["team-eng", "default"],
    }
    results = _retrieve(base, body, {"X-External-User-Id": "u-42"}).json()["retrieval"]["results"]
    scopes = {(r["name"], r["scope"], r["graph_id"]) for r in results if r["source_name"] is None}
    assert ("My notes", "user", None) in scopes
    assert ("On-call", "graph", "team-eng") in scopes
    oncall = next(r for r in results if r["name"] == "On-call")
    assert (oncall["created_at"], oncall["valid_at"]) == ("2026-01-05", "2026-11-01")
    mine = next(r for r in results if r["name"] == "My notes")
    assert mine["created_at"] is not None and mine["created_at"].startswith("20")  # the file's own time


def test_x_on_behalf_of_also_names_the_user(base: str) -> None:
    body = {"query": "on-call week", "agent_id": "a"}
    response = _retrieve(base, body, {"X-On-Behalf-Of": "u-42"}).json()
    assert response["user_id"] == "u-42"
    assert any(r["scope"] == "user" for r in response["retrieval"]["results"])


def test_relationship_edges_come_back_with_their_names(base: str) -> None:
    results = _retrieve(base, {"query": "Who owns the billing migration?", "agent_id": "a"}).json()
    edges = {
        (r["source_name"], r["name"], r["target_name"]) for r in results["retrieval"]["results"] if r["source_name"]
    }
    assert ("Billing Migration", "owner", "Olena Marchenko") in edges


def test_chit_chat_is_gated(base: str) -> None:
    body = _retrieve(base, {"query": "thanks!", "agent_id": "a"}).json()
    assert body["retrieval"]["low_info_skipped"] is True
    assert body["retrieval"]["results"] == [] and body["prompt"] is None
    validate_shared(body, "memories_retrieve.response.schema.json")


def test_a_repeat_is_a_cache_hit_and_an_edit_invalidates_it(
    base: str, service: MemoryService, trees: dict[str, Path]
) -> None:
    body = {"query": "How many sick days do employees earn?", "agent_id": "a"}
    first = _retrieve(base, body).json()["context"]
    second = _retrieve(base, body).json()["context"]
    assert (first["cache_hit"], first["source"], first["cache_age_seconds"]) == (False, "live", None)
    assert (second["cache_hit"], second["source"]) == (True, "cache")
    assert second["cache_age_seconds"] >= 0 and second["cache_size"] == 1
    leave = trees["root"] / "policies" / "leave.md"
    leave.write_text(leave.read_text().replace("10 sick days", "12 sick days"))
    service.retriever.refresh()
    third = _retrieve(base, body).json()
    assert third["context"]["cache_hit"] is False
    assert third["context"]["data"]["facts"][0] == "Employees earn 12 sick days per year."


@pytest.mark.parametrize(
    ("body", "loc", "kind"),
    [
        ({"query": "sick days"}, ["body", "agent_id"], "missing"),
        ({"query": "", "agent_id": "a"}, ["body", "query"], "string_too_short"),
        ({"query": "x" * 5001, "agent_id": "a"}, ["body", "query"], "string_too_long"),
        ({"query": 7, "agent_id": "a"}, ["body", "query"], "string_type"),
        ({"query": "x", "agent_id": "a", "graph_ids": "team-eng"}, ["body", "graph_ids"], "list_type"),
        ({"query": "x", "agent_id": "a", "graph_ids": ["nope"]}, ["body", "graph_ids", 0], "value_error"),
    ],
)
def test_invalid_bodies_answer_422_in_the_seeds_detail_shape(base: str, body: Any, loc: list[Any], kind: str) -> None:
    response = _retrieve(base, body)
    assert response.status_code == 422
    detail = response.json()["detail"]
    assert any(d["loc"] == loc and d["type"] == kind and d["msg"] and "input" in d for d in detail)


def test_a_body_that_is_not_json_answers_422(base: str) -> None:
    response = httpx.post(f"{base}/memories/retrieve", content=b"{oops", headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json()["detail"][0]["type"] == "json_invalid"


def test_the_bearer_token_is_enforced_when_configured(service: MemoryService) -> None:
    with serving(service, api_key="k3y") as url:
        body = {"query": "sick days", "agent_id": "a"}
        assert _retrieve(url, body).status_code == 401
        assert _retrieve(url, body, {"Authorization": "Bearer k3y"}).status_code == 200


# -- get_memory through the MCP client ------------------------------------------------------------


def _call(url: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async def session() -> Any:
        async with Client(f"{url}/v1/mcp/memory") as client:
            return await client.call_tool("get_memory", arguments)

    return dict(anyio.run(session).model_dump(by_alias=True, exclude_none=True))


def test_get_memory_answers_structured_content_and_the_same_json_as_text(base: str) -> None:
    result = _call(base, {"agent": "Tanya", "query": "pricing"})
    assert result["isError"] is False
    structured = result["structuredContent"]
    assert json.loads(result["content"][0]["text"]) == structured
    validate_shared(structured, "get_memory.output.schema.json")
    validate_shared(result, "mcp_tool_result.schema.json")
    assert (structured["facts"], structured["episodes"], structured["decisions"], structured["floor"]) == (
        1,
        1,
        1,
        False,
    )
    assert structured["business"] == "Acme Analytics"


def test_get_memory_floors_to_recent_entries_and_rejects_unknown_arguments(base: str) -> None:
    floor = _call(base, {"query": "zebra"})
    assert floor["structuredContent"]["floor"] is True
    bad = _call(base, {"agent": "Tanya", "limit": 3})
    assert bad["isError"] is True
    assert bad["structuredContent"]["error_message"] == (
        "unknown argument 'limit': get_memory accepts only 'agent' and 'query'"
    )
    wrong = _call(base, {"query": 5})
    assert wrong["structuredContent"]["error_message"] == "'query' must be a string, got int"
