"""Judging one stdio line: the message for the SDK, or the JSON-RPC error it earns, and the id of a line too
long to parse (no process needed)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.adapters.jsonrpc_lines import (
    ID_PREFIX_BYTES,
    MAX_DEPTH,
    MAX_LINE_BYTES,
    Rejection,
    classify,
    overlong_id,
    too_long,
)


def _request(params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": params}).encode()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"hello", (None, -32700)),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', (None, -32700)),  # cut short
        # one number JSON has not, after a readable head: the id is answered, as over HTTP
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": NaN}}', (1, -32700)),
        (b"\xc3\x28", (None, -32700)),  # not UTF-8
        (b'{"jsonrpc": "2.0", "id": 1' + b"0" * 5_000 + b', "method": "ping"}', (None, -32700)),  # over 4,300 digits
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": 1e400}}', (1, -32700)),  # overflows
        (b'{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}', (None, -32700)),
        (b"[" * 200_000, (None, -32700)),
        (b"42", (None, -32600)),
        (b"[1, 2]", (None, -32600)),
        (b'{"jsonrpc": "2.0"}', (None, -32600)),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', (None, -32600)),
        (b'{"jsonrpc": "2.0", "id": false, "method": "ping"}', (None, -32600)),
        (b'{"jsonrpc": "1.0", "id": "a", "method": "ping"}', ("a", -32600)),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 5}', (3, -32600)),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"k": "\\ud83d"}}', (3, -32600)),
        (b'{"jsonrpc": "2.0", "id": 3, "result": 5}', (None, -32600)),  # a bad response is not answered by id
        (b'{"jsonrpc": "2.0", "id": "' + b"i" * 257 + b'", "method": "ping"}', (None, -32600)),  # before: echoed
        (b'{"jsonrpc": "2.0", "id": 18446744073709551616, "method": "ping"}', (None, -32600)),  # 2**64, as HTTP
    ],
)
def test_each_kind_of_bad_line_earns_its_code_and_the_id_only_when_a_request_names_one(
    line: bytes, expected: tuple[Any, int]
) -> None:
    judged = classify(line)
    assert isinstance(judged, Rejection)
    assert (judged.id, judged.code) == expected


def test_valid_messages_pass_through_as_the_sdk_types() -> None:
    assert isinstance(classify(b'{"jsonrpc": "2.0", "id": "x", "method": "ping"}\n'), types.JSONRPCRequest)
    assert isinstance(classify(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}'), types.JSONRPCNotification)
    assert isinstance(classify(b'{"jsonrpc": "2.0", "id": 4, "result": {}}'), types.JSONRPCResponse)
    assert classify(b"  \r\n") is None  # blank lines are skipped, not answered


def test_nesting_up_to_the_limit_is_accepted_and_brackets_inside_strings_do_not_count() -> None:
    def nested(levels: int) -> Any:  # params of a request nested ``levels`` deep in all
        value: Any = {}
        for _ in range(levels - 3):  # the message, params and the innermost {} are the other three
            value = [value]
        return {"a": value}

    assert isinstance(classify(_request(nested(MAX_DEPTH))), types.JSONRPCRequest)
    judged = classify(_request(nested(MAX_DEPTH + 1)))
    assert isinstance(judged, Rejection) and judged.code == -32700
    assert isinstance(classify(_request({"text": "[" * 10_000 + '\\"{' * 100})), types.JSONRPCRequest)


def test_messages_name_the_problem_without_echoing_the_line() -> None:
    secret = "sk-live-0123456789"
    for line in [f"{secret} is not json", f'{{"jsonrpc": "2.0", "id": 1, "method": 5, "x": "{secret}"}}']:
        judged = classify(line.encode())
        assert isinstance(judged, Rejection)
        assert secret not in judged.message and "; " in judged.message  # what is wrong; what to do


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.binary(max_size=200)
    | st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(st.characters(), max_size=10),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), inner, max_size=4
            )
        ),
        max_leaves=10,
    ).map(lambda v: json.dumps(v).encode())
)
def test_any_line_is_judged_without_raising_and_every_rejection_serialises(line: bytes) -> None:
    judged = classify(line)
    if isinstance(judged, Rejection):
        json.loads(judged.reply().model_dump_json(by_alias=True, exclude_unset=True))
        assert judged.code in (-32700, -32600) and len(judged.message) < 400


# -- an over-long line: its request's id, read from a bounded prefix ---------------------------------


def _sdk_request(request_id: Any, prompt: str, *, id_last: bool = False) -> bytes:
    """A tools/call line as SDK clients write it: the id before the params (or after, with ``id_last``)."""
    params = {"name": "retrieve_memory", "arguments": {"prompt": prompt}}
    fields = {"method": "tools/call", "params": params, "jsonrpc": "2.0"}
    message = {**fields, "id": request_id} if id_last else {"jsonrpc": "2.0", "id": request_id, **fields}
    return json.dumps(message, ensure_ascii=False).encode() + b"\n"


def test_an_id_of_256_characters_or_within_2_to_the_53_is_answered_under_and_a_longer_one_is_named_not_echoed() -> None:
    for request_id in ("i" * 256, 2**53, -(2**53)):
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}).encode()
        assert not isinstance(classify(line), Rejection)
    judged = classify(json.dumps({"jsonrpc": "2.0", "id": "i" * 900_000, "method": "ping"}).encode())
    assert isinstance(judged, Rejection) and "a string of 900,000 characters" in judged.message
    assert len(judged.message) < 200
    judged = classify(json.dumps({"jsonrpc": "2.0", "id": 2**53 + 1, "method": "ping"}).encode())
    assert isinstance(judged, Rejection) and "an integer beyond ±2^53" in judged.message


def _chunks(line: bytes, size: int = 1 << 16) -> list[bytes]:
    return [line[start : start + size] for start in range(0, len(line), size)]


@pytest.mark.parametrize("request_id", [7, -3, "call-9", "é" * 50, 0])
def test_an_over_long_requests_id_is_read_from_its_head(request_id: Any) -> None:
    line = _sdk_request(request_id, "é" * 2_000_000)
    assert len(line) > 2 * MAX_LINE_BYTES
    assert overlong_id(_chunks(line)) == request_id  # before: every over-long line was answered with id null
    assert too_long(overlong_id(_chunks(line))).reply().id == request_id


@pytest.mark.parametrize(
    "line",
    [
        _sdk_request(7, "x" * 2_000_000, id_last=True),  # the id lies past the prefix
        _sdk_request(7, "x" * 2_000_000)[:-2] + b', "id": 8}\n',  # a second top-level id: which one counts?
        _sdk_request(7, "x" * 2_000_000)[:-2] + b', "\\u0069d": 8}\n',  # the same, escaped
        _sdk_request(7.5, "x" * 2_000_000),  # not a request id
        _sdk_request(True, "x" * 2_000_000),
        _sdk_request("lone", "x" * 2_000_000).replace(b'"lone"', b'"\\ud800"', 1),  # no reply could encode it
        json.dumps({"jsonrpc": "2.0", "params": {"id": 7, "pad": "x" * 2_000_000}, "method": "m"}).encode(),
        json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"pad": "x" * 2_000_000}}).encode(),  # a response
        b'{"jsonrpc": "2.0", "id": 7, "method": "m", "x": "\xff' + b"x" * 2_000_000,  # not UTF-8
        b"x" * 2_000_000,
    ],
)
def test_an_over_long_line_keeps_id_null_when_its_id_cannot_be_read_for_certain(line: bytes) -> None:
    assert overlong_id(_chunks(line)) is None


@pytest.mark.parametrize("value", [b"1234", b"12.5", b"12e3", b'"12"'])
def test_a_value_the_prefix_cuts_short_is_not_read_as_a_shorter_one(value: bytes) -> None:
    line = b'{"method": "m", "id": ' + value + b"}"
    cut = len(b'{"method": "m", "id": 12')
    assert overlong_id([line], prefix=cut) is None  # not 12
    whole = overlong_id([line], prefix=len(line))
    assert whole == (json.loads(value) if value in (b"1234", b'"12"') else None)  # 12.5, 12e3: not request ids


def test_reading_an_over_long_lines_id_holds_a_bounded_amount_of_it() -> None:
    head = _sdk_request(7, "")[: -len(b'""}}\n')] + b'"'
    chunk = b"x" * (1 << 16)

    def line() -> Iterator[bytes]:
        yield head
        for _ in range(512):  # 32 MiB in all, never whole
            yield chunk
        yield b'"}}\n'

    tracemalloc.start()
    try:
        assert overlong_id(line()) == 7
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4 * ID_PREFIX_BYTES


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["id", "method", "a"]), inner),
    max_leaves=6,
)
_IDS = st.integers() | st.text(max_size=8) | _VALUES


@st.composite
def _members(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """Top-level members in order, most often with a method and an id among them, a key at times repeated."""
    names = st.sampled_from(["id", "method", "jsonrpc", "params", "pad"])
    members = draw(st.lists(st.tuples(names, _VALUES), max_size=4))
    for name, value in (("method", st.just("m")), ("id", _IDS)):
        if draw(st.integers(0, 9)):
            members.insert(draw(st.integers(0, len(members))), (name, draw(value)))
    return members




def _object(members: list[tuple[str, Any]], escape: bool, ascii_only: bool, space: str) -> bytes:
    """An object's JSON text with its members in order (a key may repeat), keys escaped or not."""

    def key(name: str) -> str:
        return '"\\u0069d"' if escape and name == "id" else json.dumps(name)

    parts = [f"{key(name)}:{space}{json.dumps(value, ensure_ascii=ascii_only)}" for name, value in members]
    return ("{" + space + ("," + space).join(parts) + space + "}").encode("utf-8", "surrogatepass")


@settings(max_examples=400, deadline=None, database=None)
@given(
    _members(),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["", " ", "\n "]),
    st.integers(1, 400),
    st.integers(1, 50),
    st.sampled_from([b"", b"\n", b" \n", b"x"]) | st.binary(max_size=3),
)
def test_the_id_read_from_a_prefix_is_only_ever_the_lines_own_top_level_request_id(
    members: list[tuple[str, Any]], escape: bool, ascii_only: bool, space: str, prefix: int, size: int, tail: bytes
) -> None:
    line = _object(members, escape, ascii_only, space) + tail
    found = overlong_id(_chunks(line, size), prefix=prefix)
    try:
        message = json.loads(line)
    except ValueError:
        return  # not JSON past the head: no id to be true to (the answer is an error under either id)
    if found is None:
        return
    assert isinstance(message, dict) and "method" in message
    assert found == message["id"] and type(found) is type(message["id"]) and not isinstance(found, bool)


@settings(max_examples=300, deadline=None, database=None)
@given(st.binary(max_size=300), st.integers(1, 400), st.integers(1, 50))
def test_reading_an_id_never_raises_on_any_bytes(line: bytes, prefix: int, size: int) -> None:
    found = overlong_id(_chunks(line, size), prefix=prefix)
    assert found is None or isinstance(found, int | str)
