"""An unknown tool is the same protocol error on both transports: JSON-RPC -32602 with one message;
a fault inside a call is -32603 on both, its text logged and not sent (the SDK sent it under code 0).

The MCP spec lists unknown tools among protocol errors (not ``isError`` tool results); stdio used
to answer an ``isError`` result while HTTP answered -32602.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import TreeFactory, child_env, serving
from fixtures import ACME
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import MCPError

from retriever import Retriever
from retriever.adapters.mcp_stdio import build_server
from retriever.service.service import MemoryService
from retriever.service.stores.sqlite import SQLiteStore

UNKNOWN = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "delete_memory", "arguments": {}}}
EXPECTED = {
    "code": -32602,
    "message": "unknown tool 'delete_memory'; this server has 'retrieve_memory', 'get_memory' and 'read_memory_source'",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


def _stdio_reply(root: Path) -> dict[str, Any]:
    lines = [INITIALIZE, {"jsonrpc": "2.0", "method": "notifications/initialized"}, UNKNOWN]
    done = subprocess.run(
        [sys.executable, "-m", "retriever", "mcp", "--root", str(root)],
        input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return next(r for r in map(json.loads, done.stdout.splitlines()) if r.get("id") == 7)


def test_an_unknown_tool_is_error_32602_over_stdio_as_over_http(make_tree: TreeFactory, tmp_path: Path) -> None:
    root = make_tree(ACME)
    stdio = _stdio_reply(root)
    service = MemoryService(Retriever(root), SQLiteStore(tmp_path / "store.sqlite"))
    try:
        with serving(service) as base:
            http = httpx.post(f"{base}/v1/mcp/memory", json=UNKNOWN, timeout=30).json()
    finally:
        service.close()
    assert "result" not in stdio and "result" not in http
    assert stdio["error"] == http["error"] == EXPECTED


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_the_sdk_client_sees_an_unknown_tool_as_an_mcp_error_on_either_transport(
    transport: str, make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)

    async def call(target: Any) -> int:
        async with Client(target) as client:
            try:
                await client.call_tool("delete_memory", {})
            except MCPError as exc:
                return exc.error.code
        return 0

    if transport == "stdio":
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "retriever", "mcp", "--root", str(root)], env=child_env()
        )
        assert anyio.run(call, params) == -32602
        return
    service = MemoryService(Retriever(root), SQLiteStore(tmp_path / "store.sqlite"))
    try:
        with serving(service) as base:
            assert anyio.run(call, f"{base}/mcp") == -32602
    finally:
        service.close()


class _FaultyRetriever(Retriever):
    """A retriever with a bug: every retrieval raises what no handler below the adapter expects."""

    def call(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom at /srv/secret/path")


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_fault_inside_a_call_is_internal_error_32603_and_the_session_goes_on(
    transport: str, make_tree: TreeFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    service = MemoryService(_FaultyRetriever(make_tree(ACME)), SQLiteStore(tmp_path / "store.sqlite"))

    async def call(target: Any) -> tuple[int, str, int]:
        async with Client(target) as client:
            with pytest.raises(MCPError) as caught:
                await client.call_tool("retrieve_memory", {"prompt": "Who owns billing?"})
            tools = await client.list_tools()  # the same session still answers
            return caught.value.error.code, caught.value.error.message, len(tools.tools)

    try:
        if transport == "stdio":  # the stdio adapter's server, in-process
            code, message, tools = anyio.run(call, build_server(service))
        else:
            with serving(service) as base:
                code, message, tools = anyio.run(call, f"{base}/mcp")
    finally:
        service.close()
    assert (code, tools) == (-32603, 3)
    assert message == "internal error while answering; the server's log names the fault"
    assert "boom" not in message and "boom at /srv/secret/path" in caplog.text
