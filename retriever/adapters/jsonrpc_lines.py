"""One line of the stdio wire, judged: a JSON-RPC message for the SDK, or the error reply it earns.

Contract: ``classify(line)`` never raises.  It returns
- ``None`` for a blank line (ignored, as newline-delimited JSON readers do);
- a ``JSONRPCMessage`` that the SDK's own message adapter accepts, for the SDK to handle;
- a ``Rejection``, answered here with exactly one JSON-RPC error:
  -32700 (parse error, ``id: null``) when the line is not UTF-8, not JSON, or nested deeper than
  ``MAX_DEPTH``; -32600 (invalid request) when it is JSON but not a valid message (a batch, not an
  object, an id that is not a string or an integer, a lone UTF-16 surrogate, a wrong shape).  An
  invalid request keeps its id when a request's id can be read, so the client can tell which request
  failed; otherwise the id is null, as JSON-RPC 2.0 says.
Messages name what is wrong and what to send instead; they never echo what the client sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mcp.shared.dispatcher import as_request_id
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    JSONRPCRequest,
    JSONRPCResponse,
    RequestId,
)
from pydantic import BaseModel, ValidationError

MAX_LINE_BYTES = 1 << 20  # a prompt is at most 8,000 characters; 1 MiB leaves room for any real message
MAX_DEPTH = 64  # MCP messages nest a few levels; deeper input only costs parser stack
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MESSAGE_CHARS = 300  # bounds a pydantic message quoted in a reply


@dataclass(frozen=True, slots=True)
class Rejection:
    """A line answered on the wire without reaching the SDK."""

    id: RequestId | None
    code: int
    message: str

    def reply(self) -> JSONRPCError:
        return JSONRPCError(jsonrpc="2.0", id=self.id, error=ErrorData(code=self.code, message=self.message))


class _NotJSON(ValueError):
    """NaN and Infinity: Python's json accepts them, JSON (and the SDK's parser) does not."""


def too_long() -> Rejection:
    return Rejection(
        None, INVALID_REQUEST, f"Invalid Request: a message line is limited to {MAX_LINE_BYTES} bytes; send less"
    )


def classify(line: bytes) -> JSONRPCMessage | Rejection | None:
    """The message on ``line`` (one line of stdin, newline included or not), or why it is rejected."""
    if not line.strip():
        return None
    parsed = _parse(line)
    if isinstance(parsed, Rejection):
        return parsed
    return _message(*parsed)


def _parse_error(reason: str) -> Rejection:
    return Rejection(None, PARSE_ERROR, f"Parse error: {reason}")


def _invalid(request_id: RequestId | None, reason: str) -> Rejection:
    return Rejection(request_id, INVALID_REQUEST, f"Invalid Request: {reason}")


def _parse(line: bytes) -> tuple[Any, str] | Rejection:
    """The JSON value on the line and its text, or a parse-error ``Rejection``."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _parse_error(f"the line is not UTF-8 (bad byte at offset {exc.start}); encode messages as UTF-8")
    deep = _parse_error(f"JSON nested deeper than {MAX_DEPTH} levels; send a flatter message")
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        return _parse_error(f"not JSON ({exc.msg} at column {exc.colno}); send one JSON-RPC message per line")
    except _NotJSON:
        return _parse_error("NaN and Infinity are not JSON; send numbers or strings")
    except RecursionError:  # the parser stops cleanly at Python's recursion limit (~1,000 levels)
        return deep
    # Each level opens with a bracket or brace, so a line with few of them needs no walk.
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        return deep
    return value, text


def _reject_constant(name: str) -> Any:
    raise _NotJSON(name)


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest more than ``limit`` levels in ``value``: level by level, no recursion."""
    level = [value] if isinstance(value, dict | list) else []
    for _ in range(limit):
        level = [
            child
            for item in level
            for child in (item.values() if isinstance(item, dict) else item)
            if isinstance(child, dict | list)
        ]
    return bool(level)


def _message(value: Any, text: str) -> JSONRPCMessage | Rejection:
    """``value`` as a JSON-RPC message of the shape its keys announce, or why it is not one."""
    if isinstance(value, list):
        return _invalid(None, "batches (JSON arrays) are not supported; send one message per line")
    if not isinstance(value, dict):
        return _invalid(None, f"a message must be a JSON object, not {_kind(value)}")
    is_call = "method" in value
    reply_id = as_request_id(value.get("id")) if is_call else None  # a bad response is not answered by id
    if is_call and "id" in value and reply_id is None:
        return _invalid(None, f"id must be a string or an integer, not {_kind(value['id'])}")
    # A parsed string can hold a surrogate only through a \\uD800-\\uDFFF escape: UTF-8 cannot encode one.
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        return _invalid(reply_id, "a string holds a lone UTF-16 surrogate such as \\ud800; send valid Unicode")
    model = _model_for(value)
    if model is None:
        return _invalid(None, "a message needs a method (request, notification) or a result or error (response)")
    try:
        message: JSONRPCMessage = model.model_validate(value, by_name=False)  # type: ignore[assignment]
    except ValidationError as exc:
        return _invalid(reply_id, _first_problem(exc))
    return message


def _model_for(value: dict[str, Any]) -> type[BaseModel] | None:
    """The one message type ``value`` claims to be, so a failure names that type's problem."""
    if "method" in value:
        return JSONRPCRequest if "id" in value else JSONRPCNotification
    if "error" in value:
        return JSONRPCError
    return JSONRPCResponse if "result" in value else None


def _first_problem(exc: ValidationError) -> str:
    error = exc.errors(include_url=False, include_input=False)[0]
    where = ".".join(str(part) for part in error["loc"]) or "message"
    return f"{where}: {error['msg']}"[:_MESSAGE_CHARS] + "; see the JSON-RPC 2.0 message shapes"


def _has_lone_surrogate(value: Any) -> bool:
    """Whether any string (key or value) holds a surrogate, which no reply could encode."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _kind(value: Any) -> str:
    """The JSON type of ``value``, for messages (never the value itself)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "an integer" if isinstance(value, int) else "a non-integer number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
