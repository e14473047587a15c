"""``retriever mcp``: the ``retrieve_memory`` tool over stdio, for Claude Desktop, Claude Code, Cursor.

Built on the official MCP SDK's low-level server, which handles the handshake (either era)
and the transport.  Nothing but JSON-RPC reaches stdout; logs go to stderr; the process
exits when stdin closes.  The tool itself is ``MemoryService.call_tool``, shared with HTTP.
"""

from __future__ import annotations

import logging
import sys
import uuid
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server

from retriever import __version__
from retriever.service import MemoryService
from retriever.tools import UnknownTool, tool_definitions

log = logging.getLogger(__name__)


def _tool(definition: dict[str, Any]) -> types.Tool:
    hints = definition["annotations"]
    return types.Tool(
        name=definition["name"],
        title=definition["title"],
        description=definition["description"],
        input_schema=definition["inputSchema"],
        annotations=types.ToolAnnotations(
            title=hints["title"],
            read_only_hint=hints["readOnlyHint"],
            destructive_hint=hints["destructiveHint"],
            idempotent_hint=hints["idempotentHint"],
            open_world_hint=hints["openWorldHint"],
        ),
    )


def build_server(service: MemoryService) -> Server[Any]:
    """An SDK server with the ``retrieve_memory`` and ``get_memory`` tools."""
    tools = [_tool(definition) for definition in tool_definitions()]
    # A stdio connection is one client: its session, unless a call names its own session_id.
    connection_session = f"stdio-{uuid.uuid4().hex}"

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments if params.arguments is not None else {}
        try:
            result = await anyio.to_thread.run_sync(
                lambda: service.call_tool(
                    params.name, arguments, handshake_session=connection_session, transport="stdio"
                )
            )
        except UnknownTool as exc:
            result = {
                "content": [{"type": "text", "text": exc.message}],
                "isError": True,
                "structuredContent": exc.to_dict(),
            }
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=block["text"]) for block in result["content"]],
            structured_content=result["structuredContent"],
            is_error=result["isError"],
        )

    return Server(
        "company-memory-retriever",
        version=__version__,
        instructions="Call retrieve_memory before guessing about people, projects, decisions, processes, "
        "customers or internal terms of this company.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def run_stdio(service: MemoryService) -> None:
    """Serve until stdin closes."""
    server = build_server(service)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    anyio.run(main)
