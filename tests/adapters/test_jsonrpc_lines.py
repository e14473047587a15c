"""Judging one stdio line: the message for the SDK, or the JSON-RPC error it earns (no process needed)."""

from __future__ import annotations

import json
from typing import Any

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.adapters.jsonrpc_lines import MAX_DEPTH, Rejection, classify


def _request(params: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": params}).encode()


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"hello", (None, -32700)),
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', (None, -32700)),  # cut short
        (b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"a": NaN}}', (None, -32700)),
        (b"\xc3\x28", (None, -32700)),  # not UTF-8
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
