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
A line over ``MAX_LINE_BYTES`` is never parsed whole: ``overlong_id`` reads its request's id from its
first ``ID_PREFIX_BYTES`` while the rest streams past, and ``too_long`` answers -32600 under that id
(null when it cannot be read for certain), so a client waiting on the request is answered.
Messages name what is wrong and what to send instead; they never echo what the client sent.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Iterable
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
MAX_ID_CHARS = 256  # of a string id (``valid_id``)
MAX_ID_INT = 2**53  # of an integer id: what every JSON parser keeps exact
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_MESSAGE_CHARS = 300  # bounds a pydantic message quoted in a reply
ID_PREFIX_BYTES = 1 << 16  # an over-long line's id is read from this much of it (real clients send the id first)
# A JSON string token that decodes to "id" (each letter plain or \u-escaped): a key that may be the top-level id.
_ID_TOKEN = re.compile(rb'"(?:i|\\u0069)(?:d|\\u0064)"')
_ID_TOKEN_MAX = 14  # bytes: the longest match, so a carry of one less finds matches across chunks
_SPACE = re.compile(r"[ \t\n\r]*")


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


def too_long(request_id: RequestId | None = None) -> Rejection:
    """The answer to a line over ``MAX_LINE_BYTES``: -32600 under ``request_id`` (``overlong_id``'s reading)."""
    return Rejection(
        request_id,
        INVALID_REQUEST,
        f"Invalid Request: a message line is limited to {MAX_LINE_BYTES} bytes; send less",
    )


def overlong_id(chunks: Iterable[bytes], prefix: int = ID_PREFIX_BYTES) -> RequestId | None:
    """The id of the request on a line too long to parse, or None when it cannot be read for certain.

    ``chunks`` are the line's bytes in order; every one is consumed (the line is read to its end) and
    at most ``prefix`` bytes plus one chunk are held.  The id is read from the line's first ``prefix``
    bytes: the members of the top-level object are decoded one by one while each is whole; the id is
    the last top-level ``"id"`` among them, and is returned only when it is a request id (a string or
    an integer, no lone surrogate), a top-level ``"method"`` was read too, and nothing after the last
    whole member could be another top-level ``"id"`` (a string token spelling ``id``, escaped or not, is
    looked for in the rest, in bounded chunks), nor follow the object's end when it ends in the prefix.
    So when the whole line is one JSON object, the id returned is its ``"id"`` member.  The rest is not
    parsed: a line whose head reads as a request but which breaks down later still gives that id (its
    answer is an error either way).  Never raises; a head that is not such a request gives None.
    """
    head = bytearray()
    watch: _TailWatch | None = None
    for chunk in chunks:
        if watch is not None:
            watch.feed(chunk)
            continue
        head += chunk
        if len(head) >= prefix:
            watch = _TailWatch.after(bytes(head[:prefix]))
            watch.feed(bytes(head[watch.stop :]))
            head = bytearray()
    if watch is None:  # the whole line was shorter than the prefix
        watch = _TailWatch.after(bytes(head))
        watch.feed(bytes(head[watch.stop :]))
    return watch.request_id


class _TailWatch:
    """The id read from a line's head, dropped when the rest of the line may name another top-level id."""

    def __init__(self, request_id: RequestId | None, stop: int, closed: bool = False) -> None:
        self.request_id, self.stop = request_id, stop  # stop: the byte offset past the last member read whole
        self._closed = closed  # the object ended at ``stop``: only white space may follow
        self._carry = b""

    @classmethod
    def after(cls, head: bytes) -> _TailWatch:
        try:
            text = codecs.getincrementaldecoder("utf-8")().decode(head)  # a character cut at the end waits
        except UnicodeDecodeError:
            return cls(None, 0)
        members, stop, closed = _whole_members(text)
        return cls(_request_id(members), len(text[:stop].encode("utf-8")), closed)

    def feed(self, chunk: bytes) -> None:
        """Look at the next bytes after ``stop``: another id token, or anything past the object's end, drops the id."""
        if self.request_id is None:
            return
        if (self._closed and chunk.strip(b" \t\r\n")) or _ID_TOKEN.search(self._carry + chunk):
            self.request_id = None  # not one message, or another "id" may follow: the id would be a guess
        self._carry = chunk[-(_ID_TOKEN_MAX - 1) :]


def _whole_members(text: str) -> tuple[list[tuple[str, Any]], int, bool]:
    """The members of the top-level object ``text`` opens that end within it, the index past the last
    (past the closing brace when the object ends within ``text``), and whether it ended.

    Stops at the first member that is cut short or malformed."""
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    members: list[tuple[str, Any]] = []
    at = _skip_space(text, 0)
    if not text.startswith("{", at):
        return members, 0, False
    stop = at = at + 1
    try:
        while True:
            at = _skip_space(text, at)
            if text.startswith("}", at):
                return members, at + 1, True
            if members:
                if not text.startswith(",", at):
                    break
                at = _skip_space(text, at + 1)
            if not text.startswith('"', at):
                break
            key, at = decoder.raw_decode(text, at)  # a string: it opens with a quote
            at = _skip_space(text, at)
            if not text.startswith(":", at):
                break
            value, at = decoder.raw_decode(text, _skip_space(text, at + 1))
            if at == len(text):
                break  # a number may go on past the prefix: 12 of 1234, or 1 of 1.5
            members.append((key, value))
            stop = at
    except (ValueError, RecursionError):  # cut short, not JSON, NaN, an integer of over 4,300 digits, too deep
        pass
    return members, stop, False


def _skip_space(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]  # matches the empty string too


def valid_id(value: Any) -> RequestId | None:
    """``value`` as an id this server answers under, else None: a string of at most ``MAX_ID_CHARS`` characters
    (an answer echoes its id: a client's UUID or counter, never a payload) or an integer within ±``MAX_ID_INT``
    (beyond, JSON parsers round it, so the answer would name another request)."""
    request_id = as_request_id(value)
    if isinstance(request_id, str) and len(request_id) > MAX_ID_CHARS:
        return None
    if isinstance(request_id, int) and not -MAX_ID_INT <= request_id <= MAX_ID_INT:
        return None
    return request_id


def id_problem(value: Any) -> str:
    """Why ``value`` is no id (``valid_id``), naming its kind and size, never the value."""
    if isinstance(value, str):
        what = f"a string of {len(value):,} characters"
    elif isinstance(value, int) and not isinstance(value, bool):
        what = "an integer beyond ±2^53"
    else:
        what = _kind(value)
    return f"id must be a string of at most {MAX_ID_CHARS} characters or an integer within ±2^53, not {what}"


def _request_id(members: list[tuple[str, Any]]) -> RequestId | None:
    """The request id of a message with these top-level members (the last ``"id"`` wins, as in ``json``)."""
    found = dict(members)
    if "method" not in found or "id" not in found:
        return None
    request_id = valid_id(found["id"])
    if isinstance(request_id, str) and _SURROGATE.search(request_id):
        return None  # no reply could encode it
    return request_id


def classify(line: bytes) -> JSONRPCMessage | Rejection | None:
    """The message on ``line`` (one line of stdin, newline included or not), or why it is rejected."""
    if not line.strip():
        return None
    parsed = _parse(line)
    if isinstance(parsed, Rejection):
        return parsed
    return _message(*parsed)


def _parse_error(reason: str, line: bytes | None = None) -> Rejection:
    """A parse error; with the ``line`` of JSON that holds one number JSON has not (NaN, 1e400), the request's id
    where its head can be read for certain (``overlong_id``), as an answer over HTTP has it."""
    return Rejection(overlong_id([line]) if line is not None else None, PARSE_ERROR, f"Parse error: {reason}")


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
        value = json.loads(text, parse_constant=_reject_constant, parse_float=_finite)
    except json.JSONDecodeError as exc:
        return _parse_error(f"not JSON ({exc.msg} at column {exc.colno}); send one JSON-RPC message per line")
    except _NotJSON:
        return _parse_error("NaN and Infinity are not JSON numbers (nor is 1e400: it overflows); use finite ones", line)
    except ValueError:  # Python's cap on integer digits (4,300): parsing "1" and 5,000 zeros raises a plain ValueError
        return _parse_error("a number on the line has too many digits; send numbers of at most 4,300 digits", line)
    except RecursionError:  # the parser stops cleanly at Python's recursion limit (~1,000 levels)
        return deep
    # Each level opens with a bracket or brace, so a line with few of them needs no walk.
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(value, MAX_DEPTH):
        return deep
    return value, text


def _reject_constant(name: str) -> Any:
    raise _NotJSON(name)


def _finite(text: str) -> float:
    """A JSON fraction or exponent as a float; one that overflows to infinity ("1e400") is not a JSON number here."""
    value = float(text)
    if math.isinf(value):
        raise _NotJSON(text[:20])
    return value


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
    reply_id = valid_id(value.get("id")) if is_call else None  # a bad response is not answered by id
    if is_call and "id" in value and reply_id is None:
        return _invalid(None, id_problem(value["id"]))
    # A parsed string can hold a surrogate only through a \\uD800-\\uDFFF escape: UTF-8 cannot encode one.
    if _SURROGATE_ESCAPE.search(text) and _has_lone_surrogate(value):
        return _invalid(reply_id, LONE_SURROGATE)
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


LONE_SURROGATE = "a string holds a lone UTF-16 surrogate such as \\ud800; send valid Unicode"


def surrogate_escaped(body: bytes) -> bool:
    """Whether ``body`` writes a UTF-16 surrogate as an escape (``\\ud800``): where a strict parser refuses it,
    the request is invalid (-32600 with its id, as a line on stdio is), not unparseable."""
    return _SURROGATE_ESCAPE.search(body.decode("utf-8", "replace")) is not None


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
