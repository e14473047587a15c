"""``retriever mcp`` as a spawned process: the official MCP SDK client over stdio, and raw JSON-RPC lines."""

from __future__ import annotations

import itertools
import json
import queue
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from conftest import TreeFactory, child_env, validate_tool_result
from fixtures import ACME
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from llm_server import Reply, serve
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from retriever.adapters.jsonrpc_lines import MAX_DEPTH, MAX_LINE_BYTES, classify
from retriever.adapters.mcp_stdio import TOOLS_CALL_SHAPE, _Outstanding
from retriever.service.tools import GET_MEMORY_OUTPUT_SCHEMA

WAIT = 30.0  # seconds: the bound on every read from the server


def _command(root: Path) -> list[str]:
    return [sys.executable, "-m", "retriever", "mcp", "--root", str(root)]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _line(message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _ping(request_id: int | str) -> bytes:
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "ping"})


class Wire:
    """A spawned ``retriever mcp`` driven with raw bytes; replies are read by a thread, waited on with bounds."""

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            _command(root),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env or child_env(),
        )
        self.replies: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        self.stderr = b""
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.replies.put(json.loads(line))  # a line that is not JSON fails the test here
        self.replies.put(None)

    def _drain_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def reply(self) -> dict[str, Any]:
        reply = self.replies.get(timeout=WAIT)
        assert reply is not None, "the server closed stdout"
        self.seen.append(reply)
        return reply

    def replies_until(self, done: Callable[[list[dict[str, Any]]], bool]) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        while not done(got):
            got.append(self.reply())
        return got

    def initialize(self) -> None:
        self.send(_line(INITIALIZE) + _line(INITIALIZED))
        assert self.reply()["id"] == "init"

    def close(self) -> list[dict[str, Any]]:
        """Close stdin; the server must exit 0 on its own.  Returns the replies it wrote meanwhile."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.wait(timeout=WAIT) == 0
        self._stderr_reader.join(timeout=WAIT)
        rest = []
        while (reply := self.replies.get(timeout=WAIT)) is not None:
            rest.append(reply)
        self.seen.extend(rest)
        return rest


@pytest.fixture
def wire(make_tree: TreeFactory) -> Iterator[Wire]:
    wire = Wire(make_tree(ACME))
    try:
        yield wire
    finally:
        if wire.process.poll() is None:
            wire.process.kill()
            wire.process.wait(timeout=WAIT)


def test_the_sdk_client_lists_and_calls_the_tool_over_stdio(make_tree: TreeFactory) -> None:
    root = make_tree(ACME)
    params = StdioServerParameters(command=sys.executable, args=_command(root)[1:], env=child_env())

    async def session() -> tuple[Any, Any, Any, Any]:
        async with Client(params) as client:
            tools = await client.list_tools()
            first = await client.call_tool("retrieve_memory", {"prompt": "Tell me about the billing migration project"})
            follow = await client.call_tool("retrieve_memory", {"prompt": "and who owns it?"})
            bad = await client.call_tool("retrieve_memory", {"prompt": ""})
            await client.call_tool("get_memory", {"query": "pricing"})  # the client checks it against outputSchema
            cited = first.structured_content["retrieval"]["facts"][0]
            source = await client.call_tool("read_memory_source", {"source_path": cited["source_path"]})  # checked too
            assert source.structured_content["source_path"] == cited["source_path"]
            return tools, first, follow, bad

    tools, first, follow, bad = anyio.run(session)
    tool = tools.tools[0]
    assert [t.name for t in tools.tools] == ["retrieve_memory", "get_memory", "read_memory_source"]
    assert tools.tools[1].output_schema == GET_MEMORY_OUTPUT_SCHEMA
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


def _sick_days_over_stdio(root: Path, env: dict[str, str], tmp_path: Path) -> tuple[Any, str]:
    """One retrieve_memory call by the SDK's client to ``retriever mcp`` over stdio; its result, the server's stderr."""
    params = StdioServerParameters(command=sys.executable, args=_command(root)[1:], env=env)

    async def session(errlog: Any) -> Any:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            return await client.call_tool("retrieve_memory", {"prompt": "How many sick days do employees earn?"})

    with (tmp_path / "stderr.txt").open("w+") as errlog:
        result = anyio.run(session, errlog)
        errlog.seek(0)
        return result, errlog.read()


def test_an_unusable_cache_folder_indexes_in_memory_with_the_warning_on_stderr_only(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "cache").write_text("a file where the cache folder should be")  # the store, under state/, still opens
    env = {**child_env(), "RETRIEVER_STATE_DIR": str(state)}
    result, stderr = _sick_days_over_stdio(make_tree(ACME), env, tmp_path)

    assert result.is_error is False  # every reply on stdout parsed as JSON-RPC: nothing else was written there
    warning = f"index cache unavailable at {state / 'cache' / 'index'}"
    assert warning in stderr
    assert any(w.startswith(warning) for w in result.structured_content["diagnostics"]["warnings"])


def test_a_committed_trees_file_with_a_bad_value_is_left_out_and_the_server_still_starts(
    make_tree: TreeFactory, tmp_path: Path
) -> None:
    root = make_tree(ACME)
    (root / ".retriever.toml").write_text("top_k = 0\n", encoding="utf-8")  # pulled by a git pull before a restart
    result, stderr = _sick_days_over_stdio(root, child_env(), tmp_path)

    assert result.is_error is False
    assert result.structured_content["retrieval"]["facts"][0]["statement"] == "Employees earn 10 sick days per year."
    assert f"top_k = 0 in {root / '.retriever.toml'}" in stderr and "is left out until it is fixed" in stderr


def test_a_store_that_cannot_open_stops_start_up_with_a_clear_error(make_tree: TreeFactory) -> None:
    env = {**child_env(), "RETRIEVER_REDIS_URL": "redis://127.0.0.1:1/0"}
    done = subprocess.run(_command(make_tree(ACME)), input="", capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith("Error (store_unavailable): cannot reach Redis at redis://127.0.0.1:1/0")


def test_lines_that_are_not_messages_get_one_error_each_and_the_server_keeps_serving(wire: Wire) -> None:
    wire.initialize()
    lone_surrogate = b'{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"x": "\\ud800"}}\n'
    wire.send(
        b"not json at all\n"
        + lone_surrogate
        + b"[" * 200_000
        + b"\n"
        + b'{"jsonrpc": "2.0", "method": "notifications/x", "params": {"\\udfff": 1}}\n'
        + b"\xff\xfe not UTF-8\n"
        + b'[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]\n'
        + b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n'
        + b'{"jsonrpc": "2.0", "id": 9, "method": 42}\n'
        + b'{"jsonrpc": "2.0", "id": 1' + b"0" * 5_000 + b', "method": "ping"}\n'
        + b"\n"
        + _ping("still-here")
    )
    replies = wire.replies_until(lambda got: bool(got) and got[-1].get("id") == "still-here")
    errors = [(r["id"], r["error"]["code"], r["error"]["message"]) for r in replies[:-1]]
    assert [(i, code) for i, code, _ in errors] == [
        (None, -32700),  # not JSON
        (7, -32600),  # a lone surrogate in a request: its id is known, so the reply carries it
        (None, -32700),  # nested 200,000 deep
        (None, -32600),  # a lone surrogate in a notification
        (None, -32700),  # not UTF-8
        (None, -32600),  # a batch
        (None, -32600),  # an id that is not a string or an integer
        (9, -32600),  # a method that is not a string
        (None, -32700),  # an id of 5,001 digits (past Python's cap on parsing integers: it had ended the server)
    ]
    assert errors[0][2].startswith("Parse error: not JSON (Expecting value at column 1)")
    assert "lone UTF-16 surrogate" in errors[1][2] and f"deeper than {MAX_DEPTH} levels" in errors[2][2]
    assert "batches" in errors[5][2] and "not a non-integer number" in errors[6][2]
    assert replies[-1] == {"jsonrpc": "2.0", "id": "still-here", "result": {}}
    assert wire.close() == []
    assert b"-32700" not in wire.stderr and b"not json at all" not in wire.stderr  # logged, never echoed
    assert b"rejected a message line: Parse error: not JSON" in wire.stderr


def test_a_request_before_initialize_is_refused_saying_to_send_initialize_first(wire: Wire) -> None:
    call = {"name": "retrieve_memory", "arguments": {"prompt": "Who owns the billing migration?"}}
    wire.send(_line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
    wire.send(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) + _ping(3))
    early = sorted((wire.reply() for _ in range(3)), key=lambda reply: reply["id"])  # answered concurrently
    wire.initialize()
    wire.send(_line({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": call}))
    late = wire.reply()

    for reply, method in zip(early[:2], ("tools/call", "tools/list"), strict=True):
        assert reply["error"]["code"] == -32602  # the SDK's code for it, kept: clients may key on it
        assert reply["error"]["message"] == (
            f"send initialize first: {method} is answered only after the initialize handshake "
            "(initialize, then notifications/initialized)"
        )
    assert [r["id"] for r in early] == [1, 2, 3] and early[2]["result"] == {}  # ping needs no handshake
    assert late["id"] == 4 and late["result"]["isError"] is False


def test_a_tools_call_of_the_wrong_shape_is_told_what_it_needs_as_over_http(wire: Wire) -> None:
    wire.initialize()
    wire.send(_line({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x", "arguments": "hi"}}))
    wire.send(_line({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": 5}}))
    for reply in sorted((wire.reply() for _ in range(2)), key=lambda reply: reply["id"]):
        assert reply["error"] == {"code": -32602, "message": TOOLS_CALL_SHAPE}


def test_an_unknown_methods_name_is_echoed_cut_to_a_bounded_prefix(wire: Wire) -> None:
    wire.initialize()
    wire.send(_line({"jsonrpc": "2.0", "id": 9, "method": "m" * 300_000}) + _ping(10))
    unknown, ping = sorted((wire.reply() for _ in range(2)), key=lambda reply: reply["id"])
    assert unknown["error"]["code"] == -32601 and ping["result"] == {}
    assert unknown["error"]["data"].startswith("mmm") and len(json.dumps(unknown)) < 1_000


def test_an_over_long_line_is_refused_without_being_held_and_the_next_line_is_served(wire: Wire) -> None:
    wire.initialize()
    wire.send(b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"pad": "' + b"x" * MAX_LINE_BYTES + b'"}}\n')
    wire.send(b'{"jsonrpc": "2.0", "method": "ping", "params": {"pad": "' + b"x" * MAX_LINE_BYTES + b'"}, "id": 2}\n')
    wire.send(_ping(3))
    first, second, third = wire.reply(), wire.reply(), wire.reply()
    assert first["id"] == 1 and first["error"]["code"] == -32600  # the id, read from the line's head
    assert f"limited to {MAX_LINE_BYTES} bytes" in first["error"]["message"]
    assert second["id"] is None and second["error"]["code"] == -32600  # an id past the head is not guessed
    assert third == {"jsonrpc": "2.0", "id": 3, "result": {}}


def test_the_sdk_client_gets_an_error_for_an_over_long_request_instead_of_waiting_forever(
    make_tree: TreeFactory,
) -> None:
    root = make_tree(ACME)
    params = StdioServerParameters(command=sys.executable, args=_command(root)[1:], env=child_env())

    async def session() -> tuple[MCPError, Any]:
        async with Client(params) as client:
            with anyio.fail_after(WAIT), pytest.raises(MCPError) as caught:  # before: no answer ever came
                await client.call_tool("retrieve_memory", {"prompt": "é" * 600_000})
            after = await client.call_tool("retrieve_memory", {"prompt": "Tell me about the billing migration project"})
            return caught.value, after

    refused, after = anyio.run(session)
    assert refused.error.code == -32600 and f"limited to {MAX_LINE_BYTES} bytes" in refused.error.message
    assert after.is_error is False  # the session goes on


def test_requests_pending_when_stdin_closes_are_answered_before_the_server_exits(make_tree: TreeFactory) -> None:
    calls = [
        {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": "retrieve_memory", "arguments": {"prompt": f"Who owns the billing migration? ({n})"}},
        }
        for n in range(2, 6)
    ]
    lines = b"".join(_line(m) for m in [INITIALIZE, INITIALIZED, *calls])  # as `printf … | retriever mcp` sends them
    done = subprocess.run(_command(make_tree(ACME)), input=lines, capture_output=True, env=child_env(), timeout=60)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert sorted(str(r["id"]) for r in replies) == ["2", "3", "4", "5", "init"]
    for reply in replies[1:]:
        assert reply["result"]["isError"] is False
        assert reply["result"]["structuredContent"]["retrieval"]["facts"]


def test_a_request_the_client_cancels_does_not_hold_the_exit(make_tree: TreeFactory) -> None:
    gate = threading.Event()  # the model answers only once the test has seen the cancel processed

    def held(request: dict[str, Any]) -> Reply:
        gate.wait(WAIT)
        return Reply(status=500)  # retrieval falls back offline; the answer is not the point here

    for llm in serve():
        llm.script = held
        env = {**child_env(), "RETRIEVER_LLM_MODEL": "m", "OPENAI_BASE_URL": llm.url, "OPENAI_API_KEY": "k"}
        wire = Wire(make_tree(ACME), env)
        try:
            wire.initialize()
            call = {"name": "retrieve_memory", "arguments": {"prompt": "Who owns the billing migration?"}}
            wire.send(_line({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
            wire.send(_line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}))
            wire.send(_ping(3))
            assert wire.reply() == {"jsonrpc": "2.0", "id": 3, "result": {}}  # the cancel was read before it
            gate.set()
            # The SDK never answers a cancelled request; waiting for its answer would hold the exit for
            # the whole drain bound (deadline + grace), past the bound of close().
            assert [r for r in wire.close() if r.get("id") == 2] == []
        finally:
            gate.set()
            if wire.process.poll() is None:
                wire.process.kill()


def test_while_serving_stray_output_goes_to_stderr_and_child_processes_read_no_client_input() -> None:
    script = """
import subprocess, sys
from retriever.adapters.mcp_stdio import _claimed_stdio
with _claimed_stdio() as (wire_in, wire_out):
    print("a stray print", flush=True)
    subprocess.run([sys.executable, "-c", "import sys; print('child read', repr(sys.stdin.read()))"], check=True)
    wire_out.write(wire_in.readline())
print("fd 1 is stdout again")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], input=b"the client's line\n", capture_output=True, env=child_env(), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"the client's line\nfd 1 is stdout again\n"
    assert done.stderr == b"a stray print\nchild read ''\n"


def test_answers_are_awaited_per_request_even_when_a_rejected_line_or_a_cancel_reuses_an_id() -> None:
    def message(line: dict[str, Any]) -> Any:
        return classify(json.dumps(line).encode())

    async def scenario() -> list[bool]:
        outstanding, idle = _Outstanding(), []
        outstanding.received(message({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}}))
        outstanding.expect(2)  # then a rejected line under the same id: its error reply is written first
        outstanding.settled(2)
        idle.append(outstanding.idle())  # still waiting for the tools/call
        outstanding.settled("2")  # the SDK answers it ("2" and 2 are one id to the SDK)
        idle.append(outstanding.idle())
        outstanding.received(message({"jsonrpc": "2.0", "id": "r", "method": "ping"}))
        cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "r"}}
        outstanding.received(message(cancel))  # the SDK never answers a cancelled request
        idle.append(outstanding.idle())
        outstanding.settled("r")  # an answer that raced the cancel changes nothing
        idle.append(outstanding.idle())
        return idle

    assert anyio.run(scenario) == [False, True, True, True]


def test_past_the_in_flight_limit_the_reader_waits_until_an_answer_is_written() -> None:
    async def scenario() -> list[bool]:
        outstanding, room = _Outstanding(limit=2), []
        room.append(outstanding.has_room())
        outstanding.expect(1)
        room.append(outstanding.has_room())
        outstanding.expect(2)  # the limit: the reader reads no further line (before: without bound)
        room.append(outstanding.has_room())
        outstanding.settled(3)  # no such request: nothing changes
        room.append(outstanding.has_room())
        outstanding.settled(1)
        room.append(outstanding.has_room())
        with anyio.fail_after(5):
            await outstanding.wait_room()  # returns at once now
        return room

    assert anyio.run(scenario) == [True, True, False, False, True]


# -- random lines ---------------------------------------------------------------------------------
# Each drawn line is a template (kind, payload); ids are filled in when it is sent, unique over the whole run,
# so that "exactly one reply per request id" can be checked once the server has exited.

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_METHODS = st.sampled_from(["ping", "tools/list", "tools/call", "no/such/method", "resources/list"]) | st.text(
    max_size=12
)
_PARAMS = st.one_of(
    st.just(None),  # no params
    st.dictionaries(st.text(max_size=8).filter(lambda k: k != "_meta"), _JSON, max_size=3),
    st.builds(lambda p: {"name": "retrieve_memory", "arguments": {"prompt": p}}, st.text(max_size=40)),
    st.builds(lambda p: {"name": "retrieve_memory", "arguments": p}, _JSON),
    st.lists(_JSON, max_size=3),  # params must be an object: -32600 with the id
    st.just({"x": "\ud800"}),  # a lone surrogate: -32600 with the id
)
_LINES = st.one_of(
    st.tuples(st.just("garbage"), st.text(alphabet=st.characters(exclude_characters="\n"), max_size=40)),
    st.tuples(st.just("bytes"), st.binary(max_size=40).map(lambda b: b.replace(b"\n", b""))),
    st.tuples(st.just("blank"), st.sampled_from(["", " ", "\t", " \r"])),
    st.tuples(st.just("value"), _JSON.filter(lambda v: not isinstance(v, dict))),
    st.tuples(st.just("object"), st.dictionaries(st.sampled_from(["jsonrpc", "params", "x"]), _JSON, max_size=3)),
    st.tuples(st.just("request"), st.tuples(_METHODS, _PARAMS, st.booleans())),
    st.tuples(st.just("bad_id"), st.sampled_from([None, 1.5, True, [1], {"a": 1}])),
    st.tuples(st.just("notification"), st.sampled_from(["notifications/x", "notifications/cancelled"])),
    st.tuples(st.just("response"), st.sampled_from([{"result": {}}, {"error": {"code": 1, "message": "m"}}])),
    st.tuples(st.just("deep"), st.tuples(st.integers(MAX_DEPTH + 1, 5_000), st.booleans())),
)


def _render(kind: str, payload: Any, fresh: Callable[[], int | str]) -> tuple[bytes, int | str | bool | None]:
    """The line to send and what it must get: a reply with this id, one with ``None`` (id null), or ``False``."""
    if kind == "garbage":
        return b"#" + payload.encode("utf-8", "surrogatepass") + b"\n", None
    if kind == "bytes":
        return b"\xff" + payload + b"\n", None
    if kind == "blank":
        return payload.encode() + b"\n", False
    if kind in ("value", "object"):
        return _line(payload), None
    if kind == "request":
        method, params, string_id = payload
        request_id = fresh()
        request_id = f"r{request_id}" if string_id else request_id
        message = {"jsonrpc": "2.0", "id": request_id, "method": method}
        return _line(message if params is None else {**message, "params": params}), request_id
    if kind == "bad_id":
        return _line({"jsonrpc": "2.0", "id": payload, "method": "ping"}), None
    if kind == "notification":  # a cancel names an id never sent, so every sent request still gets its reply
        return _line({"jsonrpc": "2.0", "method": payload, "params": {"requestId": -1}}), False
    if kind == "response":
        return _line({"jsonrpc": "2.0", "id": -1, **payload}), False
    depth, in_request = payload
    nested = "[" * depth + "]" * depth
    if in_request:  # too deep even inside a request: a parse error, so the id cannot be read
        return f'{{"jsonrpc": "2.0", "id": {fresh()}, "method": "ping", "params": {{"a": {nested}}}}}\n'.encode(), None
    return nested.encode() + b"\n", None


def test_random_lines_get_exactly_one_reply_per_request_and_ping_still_answers(wire: Wire) -> None:
    wire.initialize()
    counter = itertools.count(1)
    fresh: Callable[[], int] = lambda: next(counter)  # noqa: E731
    expected_ids: list[int | str] = []
    expected_nulls = 0

    # No shrinking: the examples share one server process, and a missing reply costs a full WAIT per attempt.
    @settings(max_examples=60, deadline=None, database=None, phases=[Phase.explicit, Phase.generate])
    @given(st.lists(_LINES, min_size=1, max_size=6))
    def exchange(lines: list[tuple[str, Any]]) -> None:
        nonlocal expected_nulls
        rendered = [_render(kind, payload, fresh) for kind, payload in lines]
        ids = [want for _, want in rendered if want is not None and want is not False]
        nulls = sum(want is None for _, want in rendered)
        sentinel = f"ping-{fresh()}"
        wire.send(b"".join(data for data, _ in rendered) + _ping(sentinel))
        expected_ids.extend([*ids, sentinel])
        expected_nulls += nulls
        replies = wire.replies_until(lambda got: {sentinel, *ids} <= {r.get("id") for r in got})
        assert {"jsonrpc": "2.0", "id": sentinel, "result": {}} in replies

    exchange()
    wire.close()
    counts = Counter(json.dumps(r.get("id")) for r in wire.seen[1:])  # after the initialize reply
    assert counts.pop("null", 0) == expected_nulls
    assert counts == Counter(json.dumps(i) for i in expected_ids)  # each request id exactly once, nothing else


@pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminals")
def test_run_by_hand_on_a_terminal_it_says_what_it_waits_for(make_tree: TreeFactory) -> None:
    import os
    import pty

    root = make_tree(ACME)
    master, terminal = pty.openpty()
    command = [sys.executable, "-m", "retriever", "mcp", "--root", str(root)]
    process = subprocess.Popen(command, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    os.close(terminal)
    try:
        os.write(master, b"\x04")  # Ctrl-D: end of input, as a person would end it
        _, err = process.communicate(timeout=60)
    finally:
        os.close(master)
        process.kill()
    assert "retriever mcp: waiting for JSON-RPC on stdin" in err.decode()
    assert process.returncode == 0
