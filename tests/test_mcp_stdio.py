"""``retriever mcp`` as a spawned process: the official MCP SDK client over stdio, and raw JSON-RPC."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import anyio
from conftest import TreeFactory, child_env, validate_tool_result
from fixtures import ACME
from mcp import Client
from mcp.client.stdio import StdioServerParameters


def _command(root: Path) -> list[str]:
    return [sys.executable, "-m", "retriever", "mcp", "--root", str(root)]


def test_the_sdk_client_lists_and_calls_the_tool_over_stdio(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    params = StdioServerParameters(command=sys.executable, args=_command(root)[1:], env=child_env())

    async def session() -> tuple[Any, Any, Any, Any]:
        async with Client(params) as client:
            tools = await client.list_tools()
            first = await client.call_tool("retrieve_memory", {"prompt": "Tell me about the billing migration project"})
            follow = await client.call_tool("retrieve_memory", {"prompt": "and who owns it?"})
            bad = await client.call_tool("retrieve_memory", {"prompt": ""})
            return tools, first, follow, bad

    tools, first, follow, bad = anyio.run(session)
    tool = tools.tools[0]
    assert [t.name for t in tools.tools] == ["retrieve_memory", "get_memory"]
    assert all(t.annotations.read_only_hint for t in tools.tools)
    assert (tool.name, tool.annotations.read_only_hint) == ("retrieve_memory", True)
    assert tool.input_schema["additionalProperties"] is False
    result = first.model_dump(by_alias=True, exclude_none=True)
    assert result["isError"] is False
    assert result["structuredContent"]["retrieval"]["facts"][0]["source_path"] == "memory/projects/billing_migration.md"
    validate_tool_result(result)
    # One stdio connection is one session: the follow-up is rewritten with the earlier prompt.
    rewritten = follow.model_dump(by_alias=True)["structuredContent"]["triage"]["rewritten_query"]
    assert rewritten == "and who owns it? (context: billing migration project)"
    error = bad.model_dump(by_alias=True, exclude_none=True)
    assert error["isError"] is True and error["structuredContent"]["error_code"] == "invalid_arguments"
    validate_tool_result(error)


def test_only_json_rpc_reaches_stdout_and_the_server_exits_when_stdin_closes(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "retrieve_memory", "arguments": {"prompt": "How many sick days do employees earn?"}},
        },
    ]
    process = subprocess.Popen(
        _command(root),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert process.stdin is not None and process.stdout is not None
    watchdog = threading.Timer(60, process.kill)  # bounds the blocking reads below
    watchdog.start()
    try:
        for message in messages:
            process.stdin.write(json.dumps(message) + "\n")
        process.stdin.flush()
        lines = [json.loads(process.stdout.readline()) for _ in range(2)]  # replies to ids 1 and 2
        process.stdin.close()  # the client goes away: the server must exit on its own, cleanly
        assert process.wait(timeout=30) == 0
        lines += [json.loads(line) for line in process.stdout.read().splitlines()]
    finally:
        watchdog.cancel()
        if process.poll() is None:
            process.kill()
    assert all(line["jsonrpc"] == "2.0" for line in lines)
    answers = {line["id"]: line for line in lines if "id" in line}
    assert answers[1]["result"]["serverInfo"]["name"] == "company-memory-retriever"
    facts = answers[2]["result"]["structuredContent"]["retrieval"]["facts"]
    assert facts[0]["statement"] == "Employees earn 10 sick days per year."


def test_a_store_that_cannot_open_stops_start_up_with_a_clear_error(make_tree: TreeFactory) -> None:
    env = {**child_env(), "RETRIEVER_REDIS_URL": "redis://127.0.0.1:1/0"}
    done = subprocess.run(_command(make_tree(ACME)), input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("Error (store_unavailable): cannot reach Redis at redis://127.0.0.1:1/0")
