"""``retriever mcp``: the ``retrieve_memory`` tool over stdio, for Claude Desktop, Claude Code, Cursor.

Built on the official MCP SDK's low-level server, which handles the handshake (either era) and
every valid message.  The line transport around it is ours, for three guarantees the SDK's
``stdio_server`` does not give:
- every line gets its answer: a line that is not a valid message (not JSON, not UTF-8, nested too
  deep, a lone surrogate, a wrong shape, over 1 MiB) is answered here with -32700 or -32600
  (``retriever.adapters.jsonrpc_lines``), under the request's id when it can be read (an over-long
  line's from its first 64 KiB), and the server keeps serving;
- when stdin closes, requests still being handled are answered before the process exits,
  waiting at most the retrieval deadline plus ``DRAIN_GRACE_SECONDS``;
- only JSON-RPC reaches stdout: while serving, fd 1 points at stderr and fd 0 at the null
  device (as the SDK's transport does), and the client's pipes are served from private duplicates.
A request sent before the ``initialize`` handshake (any but ``ping``) is answered -32602, the SDK's
code, with a message saying to send ``initialize`` first (``InitializeFirst``).
Logs go to stderr.  The tool itself is ``MemoryService.call_tool``, shared with HTTP.
"""

from __future__ import annotations

import logging
import os
import sys
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, BinaryIO

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware, ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.shared.dispatcher import coerce_request_id
from mcp.shared.exceptions import MCPError
from mcp.shared.jsonrpc_dispatcher import cancelled_request_id_from_params
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from retriever import __version__
from retriever.adapters import logs
from retriever.adapters.jsonrpc_lines import MAX_LINE_BYTES, Rejection, classify, overlong_id, too_long
from retriever.errors import RetrieverError
from retriever.service.service import MemoryService
from retriever.service.tools import SERVER_INSTRUCTIONS, SERVER_NAME, UnknownTool, tool_definitions
from retriever.text.safe import bounded, one_line

log = logging.getLogger(__name__)
DRAIN_GRACE_SECONDS = 5.0  # past the retrieval deadline: time to log the request and write the answer
ECHO_CHARS = 200  # of an unknown method's name, in its -32601 error
MAX_IN_FLIGHT = 64  # requests read and not yet answered; the next line is read once one is
TOOLS_CALL_SHAPE = "tools/call needs params.name (a string) and, optionally, params.arguments (an object)"
_SDK_GATE_MESSAGE = "Invalid request parameters"  # what the SDK answers a request sent before initialize


def _tool(definition: dict[str, Any]) -> types.Tool:
    hints = definition["annotations"]
    return types.Tool(
        name=definition["name"],
        title=definition["title"],
        description=definition["description"],
        input_schema=definition["inputSchema"],
        output_schema=definition.get("outputSchema"),
        annotations=types.ToolAnnotations(
            title=hints["title"],
            read_only_hint=hints["readOnlyHint"],
            destructive_hint=hints["destructiveHint"],
            idempotent_hint=hints["idempotentHint"],
            open_world_hint=hints["openWorldHint"],
        ),
    )


def internal_error(exc: BaseException) -> MCPError:
    """A fault in the server itself, as JSON-RPC's internal error (-32603): logged here with its traceback,
    answered without it (the SDK would send the exception's own text under code 0)."""
    log.error("tools/call failed", exc_info=exc)
    return MCPError(types.INTERNAL_ERROR, "internal error while answering; the server's log names the fault")


class InitializeFirst(ServerMiddleware[Any]):
    """Names what to do about a request sent before the ``initialize`` handshake.

    The SDK refuses such a request (every method but ``ping``) with -32602 and the bare message
    "Invalid request parameters", the one it gives malformed params.  This keeps the SDK's code
    (the MCP spec sets none for it; -32002 is its "resource not found") and says instead which
    request came too early and what to send first.  Any other error passes through unchanged.
    """

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if not _refused_before_initialize(exc, ctx):
                raise
            method = one_line(ctx.method)  # a method the server serves: the gate runs after the handler lookup
            raise MCPError(
                types.INVALID_PARAMS,
                f"send initialize first: {method} is answered only after the initialize handshake "
                "(initialize, then notifications/initialized)",
            ) from None


class ToolsCallShape(ServerMiddleware[Any]):
    """Says what a ``tools/call`` needs where its params have the wrong shape (``arguments`` a string, ``name`` a
    number): the SDK answers -32602 "Invalid request parameters" with no hint; HTTP's bare-POST path says this.
    Both of the SDK's checks of the params (the spec's surface, then the handler's model) raise pydantic's
    ``ValidationError`` through the middleware; it becomes the bare -32602 only after."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except ValidationError:
            if ctx.method != "tools/call":
                raise
            raise MCPError(types.INVALID_PARAMS, TOOLS_CALL_SHAPE) from None


class BoundedEcho(ServerMiddleware[Any]):
    """Cuts the method name the SDK echoes in a -32601 "Method not found" (its ``data``) to ``ECHO_CHARS``:
    a 500,000-character name came back whole, where nothing a client sends is echoed unbounded."""

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        try:
            return await call_next(ctx)
        except MCPError as exc:
            if exc.error.code != types.METHOD_NOT_FOUND or not isinstance(exc.error.data, str):
                raise
            name = bounded(exc.error.data, chars=ECHO_CHARS)
            raise MCPError(types.METHOD_NOT_FOUND, exc.error.message, data=name) from None


def _refused_before_initialize(exc: MCPError, ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether ``exc`` is the SDK's initialization gate: its error shape, on a connection with no handshake."""
    error = exc.error
    gate = (error.code, error.message, error.data) == (types.INVALID_PARAMS, _SDK_GATE_MESSAGE, "")
    return gate and ctx.session.client_params is None


def _sdk_result(result: dict[str, Any]) -> types.CallToolResult:
    """The service's tool result as the SDK's."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=block["text"]) for block in result["content"]],
        structured_content=result["structuredContent"],
        is_error=result["isError"],
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
            # The MCP spec lists unknown tools among protocol errors (-32602), not tool results;
            # HTTP answers the same (``http_mcp.run_tool``), so both transports agree.
            raise MCPError(types.INVALID_PARAMS, exc.message) from None
        except RetrieverError as exc:  # one the service does not answer as a result: its message, as HTTP gives it
            log.warning("tools/call failed (%s): %s", exc.code, one_line(exc.message[:300]))
            raise MCPError(types.INTERNAL_ERROR, exc.message) from None
        except Exception as exc:  # noqa: BLE001 - top-level handler: a fault is one call's error, not the session's end
            raise internal_error(exc) from None
        return _sdk_result(result)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        instructions=SERVER_INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    server.middleware.append(InitializeFirst())  # inside the SDK's tracing middleware: spans see our message
    server.middleware.append(ToolsCallShape())
    server.middleware.append(BoundedEcho())
    return server


class _EndOfInput:
    """stdin closed."""


_END = _EndOfInput()
_Item = types.JSONRPCMessage | Rejection | None | _EndOfInput


class _Outstanding:
    """Requests handed to the SDK and not yet answered, keyed as the SDK correlates ids ("7" is 7).  Past
    ``limit`` of them, the reader waits (``wait_room``) before reading another line: a client writing requests
    without reading the answers had grown the server by ~12 MB/s, each finished answer held in its task."""

    def __init__(self, limit: int = MAX_IN_FLIGHT) -> None:
        self._open: Counter[types.RequestId] = Counter()
        self._count, self._limit = 0, limit
        self._idle, self._room = anyio.Event(), anyio.Event()
        self._idle.set()
        self._room.set()

    def expect(self, request_id: types.RequestId) -> None:
        """Count in an answer that will be written (each answer written counts one out)."""
        if not self._open:
            self._idle = anyio.Event()
        self._open[coerce_request_id(request_id)] += 1
        self._count += 1
        if self._count >= self._limit and self._room.is_set():
            self._room = anyio.Event()

    def received(self, message: types.JSONRPCMessage) -> None:
        """Count a request in; a cancelled request is counted out: the SDK never answers it."""
        if isinstance(message, types.JSONRPCRequest):
            self.expect(message.id)
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/cancelled":
            cancelled = cancelled_request_id_from_params(message.params)
            if cancelled is not None:
                self.settled(cancelled)

    def settled(self, request_id: types.RequestId) -> None:
        """Count a request out: answered, or cancelled by the client."""
        key = coerce_request_id(request_id)
        if key not in self._open:
            return  # an answer to a rejected line, or an answer that raced the client's cancel
        self._open[key] -= 1
        self._count -= 1
        if not self._open[key]:
            del self._open[key]
        if not self._open:
            self._idle.set()
        if self._count < self._limit:
            self._room.set()

    def idle(self) -> bool:
        return not self._open

    async def wait_idle(self) -> None:
        await self._idle.wait()

    def has_room(self) -> bool:
        """Fewer than ``limit`` requests are in flight."""
        return self._room.is_set()

    async def wait_room(self) -> None:
        """Return once fewer than ``limit`` requests are in flight (``has_room``)."""
        await self._room.wait()


def _read_item(wire_in: BinaryIO) -> _Item:
    """The next line of stdin, judged (blocking: run in a worker thread).  An over-long line is read to
    its end without being held, and refused under its request's id when its head names one."""
    line = wire_in.readline(MAX_LINE_BYTES + 1)
    if not line:
        return _END
    if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
        return too_long(overlong_id(_rest_of_line(line, wire_in)))
    return classify(line)


def _rest_of_line(first: bytes, wire_in: BinaryIO) -> Iterator[bytes]:
    """``first``, then the rest of its line 64 KiB at a time, up to its newline or the end of input."""
    yield first
    while rest := wire_in.readline(1 << 16):
        yield rest
        if rest.endswith(b"\n"):
            return


async def _read_lines(
    wire_in: BinaryIO,
    to_server: MemoryObjectSendStream[SessionMessage | Exception],
    to_client: MemoryObjectSendStream[SessionMessage],
    outstanding: _Outstanding,
    drain_seconds: float,
) -> None:
    """Feed valid messages to the SDK and answer the rest; at end of input, drain, then close."""
    async with to_server, to_client:
        while True:
            await outstanding.wait_room()
            item = await anyio.to_thread.run_sync(_read_item, wire_in, abandon_on_cancel=True)
            if isinstance(item, _EndOfInput):
                break
            if isinstance(item, Rejection):
                log.warning("rejected a message line: %s", item.message)
                if item.id is not None:  # its answer must not count out a request in flight under the same id
                    outstanding.expect(item.id)
                await to_client.send(SessionMessage(item.reply()))
            elif item is not None:
                outstanding.received(item)
                await to_server.send(SessionMessage(item))
        with anyio.move_on_after(drain_seconds) as drain:
            await outstanding.wait_idle()
        if drain.cancelled_caught:
            log.warning("stdin closed; gave up waiting for requests after %g s", drain_seconds)


async def _write_lines(
    from_server: MemoryObjectReceiveStream[SessionMessage], wire_out: BinaryIO, outstanding: _Outstanding
) -> None:
    """Write each outgoing message as one line; count answers out.  A client gone (broken pipe)
    silences the wire, but messages are still consumed so that no handler blocks on a write."""
    connected = True
    async with from_server:
        async for session_message in from_server:
            message = session_message.message
            data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            if connected:
                connected = await anyio.to_thread.run_sync(_write_line, wire_out, data)
            if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
                outstanding.settled(message.id)


def _write_line(wire_out: BinaryIO, data: bytes) -> bool:
    try:
        wire_out.write(data)
        wire_out.flush()
    except OSError as exc:
        log.warning("stdout closed (%s); answers are dropped", exc.strerror or type(exc).__name__)
        return False
    return True


@contextmanager
def _claimed_stdio() -> Iterator[tuple[BinaryIO, BinaryIO]]:
    """The client's pipes on private descriptors; meanwhile fd 0 reads the null device and fd 1
    writes to stderr, so a child process cannot take the client's input and a stray print cannot
    corrupt the replies.  The private stdin stays open: an abandoned reader thread may hold it."""
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    try:
        with os.fdopen(wire_out, "wb", closefd=False) as out:
            yield os.fdopen(wire_in, "rb", closefd=False), out
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_out)


async def serve_lines(server: Server[Any], wire_in: BinaryIO, wire_out: BinaryIO, drain_seconds: float) -> None:
    """Serve ``server`` over newline-delimited JSON-RPC until ``wire_in`` ends and every request is answered."""
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    outstanding = _Outstanding()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_write_lines, from_server, wire_out, outstanding)
        tasks.start_soon(_read_lines, wire_in, to_server, to_client.clone(), outstanding, drain_seconds)
        await server.run(from_client, to_client, server.create_initialization_options())


def run_stdio(service: MemoryService) -> None:
    """Serve until stdin closes and every request read has been answered."""
    server = build_server(service)
    drain_seconds = service.retriever.settings.deadline_seconds + DRAIN_GRACE_SECONDS
    logs.to_stderr(logs.NAMED, service.retriever.settings.log_level)
    with _claimed_stdio() as (wire_in, wire_out):
        anyio.run(serve_lines, server, wire_in, wire_out, drain_seconds)
