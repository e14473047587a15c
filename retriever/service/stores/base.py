"""Session prompts and the request log: the contract every store meets.

Contract (seed 000, "Session ID behavior" and "Request history"):
- ``add_prompt(session, prompt)`` keeps the session's last ``SESSION_PROMPTS`` prompts for
  ``SESSION_TTL`` seconds after the last one; ``prompts(session)`` returns them oldest first.
  The caller scopes the session key (``MemoryService`` prefixes a hash of the memory root).
- ``log(record, scope=…)`` keeps every counted call (full prompt, full response) up to a retention
  cap and for at most ``REQUEST_TTL`` seconds; ``requests(limit, session_id, since, scope=…)`` returns
  them newest first.  The log is kept per ``scope`` (``MemoryService`` passes a hash of the memory's
  identity, ``service.memory_scope``): a read lists only rows written under its own scope, and the
  retention cap counts each scope's rows on its own, so servers of two memories sharing one store
  never see, nor evict, each other's calls.  Rows written before the log had scopes belong to none:
  no memory lists them (nothing says which memory they came from), and they age out with the TTL.
  A record is stored as UTF-8 JSON a client can always read back (``encode_record``: no NaN, no lone
  surrogates), its arguments and response each capped (``ARGUMENTS_BYTES``, ``RESPONSE_BYTES``), so the
  log's size is bounded by its rows times that cap; reading never fails on an old or damaged row
  (``decode_record``) and one read stays within ``READ_BYTES`` (``read_records``).
- Nothing grows without bound: every Redis key has a TTL, SQLite purges expired sessions and
  keeps at most ``session_limit`` of them.
- Store failures raise ``StoreUnavailable``; callers decide whether that stops them (start-up)
  or is logged while retrieval still answers (request time).  ``QueuedStore``
  (``stores.queue``) keeps a stalled store from holding up a call.
SQLite is the default (``stores.sqlite``); Redis when a URL is configured (``stores.redis``);
``stores.open_store`` picks one.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any, Protocol

from retriever.errors import RetrieverError
from retriever.service.stores.limits import capped, dumps
from retriever.text.safe import json_safe, lone_surrogate

log = logging.getLogger(__name__)

SESSION_PROMPTS = 5
SESSION_TTL = 30 * 24 * 3600  # seconds
REQUEST_TTL = 30 * 24 * 3600  # seconds a request-log record is kept at most
ARGUMENTS_BYTES = 64 * 1024  # what a row keeps of a call's arguments (UTF-8 JSON); more is cut
RESPONSE_BYTES = 128 * 1024  # and of its response: retrieve_memory's are 40-60 kB, kept whole
READ_BYTES = 32 * 1024 * 1024  # rows one read returns whole; later rows come back without their bodies
Clock = Callable[[], float]
# An escaped high surrogate not followed by a low one, or a low one not preceded by a high one.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class StoreUnavailable(RetrieverError):
    """The session and request store cannot be reached or written."""

    code = "store_unavailable"


@dataclass(frozen=True)
class RequestRecord:
    """One counted call, as the request log keeps it."""

    request_id: str
    received_at: float  # Unix time
    session_id: str | None
    tool: str
    transport: str
    status: str  # "ok" | "error"
    duration_ms: float
    arguments: Mapping[str, Any] = field(default_factory=dict)
    response: Mapping[str, Any] = field(default_factory=dict)
    error_code: str | None = None
    user_id: str | None = None  # the user the call was made for, where the transport names one (rows before: None)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (``prompt`` lifted out of the arguments: a tool's ``prompt``, or the ``query`` that
        ``/memories/retrieve`` and ``get_memory`` take); nested values are shared, not copied."""
        out = {name: getattr(self, name) for name in self.__dataclass_fields__}
        asked = self.arguments if isinstance(self.arguments, Mapping) else {}
        out["prompt"] = next((asked[k] for k in ("prompt", "query") if isinstance(asked.get(k), str)), None)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RequestRecord:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def encode_record(record: RequestRecord) -> str:
    """The record as compact UTF-8 JSON (no ASCII escapes) that reads back anywhere: NaN becomes null, lone
    surrogates U+FFFD.  Its arguments and response are each cut to ``ARGUMENTS_BYTES`` and ``RESPONSE_BYTES``
    (``limits.capped``, with markers saying what was cut), so a row holds at most their sum plus its few
    other fields.  The prompt is not stored beside the arguments: ``to_dict`` lifts it from them."""
    data = {name: getattr(record, name) for name in record.__dataclass_fields__}
    try:
        text = dumps(data)
        if lone_surrogate(text) is not None:
            raise ValueError("a lone surrogate")
    except (TypeError, ValueError, RecursionError):  # NaN, a foreign object or deep nesting: the safe copy has none
        data = json_safe(data)
        text = dumps(data)
    if len(text.encode("utf-8")) <= min(ARGUMENTS_BYTES, RESPONSE_BYTES):
        return text  # each part is smaller than the whole
    data["arguments"] = capped(data["arguments"], ARGUMENTS_BYTES)
    data["response"] = capped(data["response"], RESPONSE_BYTES)
    return dumps(data)


def decode_record(text: str | bytes) -> RequestRecord | None:
    """A stored record, made JSON-safe again (rows written before ``encode_record`` may hold NaN or
    escaped lone surrogates); None, with a warning, for a row that is not a record at all."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    try:
        data = json.loads(raw, parse_constant=lambda _: None)
        if "\\u" in raw and _LONE_SURROGATE.search(raw):  # an escaped lone surrogate
            data = json_safe(data)
        return RequestRecord.from_dict(data)
    except (TypeError, ValueError, RecursionError) as exc:
        log.warning("skipping a request-log row that cannot be read: %s", str(exc)[:200])
        return None


def read_records(rows: Iterable[str | bytes]) -> list[RequestRecord]:
    """Stored rows, newest first as given, decoded (unreadable ones skipped).  Once the rows read pass
    ``READ_BYTES``, each further row keeps its fields and prompt but its arguments and response become a
    marker saying so: one read builds at most about ``READ_BYTES`` plus a few hundred bytes a row."""
    out: list[RequestRecord] = []
    total = 0
    for raw in rows:
        record = decode_record(raw)
        if record is None:
            continue
        total += len(raw)
        out.append(record if total <= READ_BYTES else _left_out(record, len(raw)))
    return out


def _left_out(record: RequestRecord, row_size: int) -> RequestRecord:
    """``record`` without its arguments (but its prompt) and response, which a read had no room for."""
    marker = (
        f"[cut: this row's {row_size:,} bytes; the read passed its budget of {READ_BYTES:,} bytes: "
        "ask for fewer rows (limit), a later since, or one session]"
    )
    prompt = record.arguments.get("prompt") if isinstance(record.arguments, Mapping) else None
    arguments = {"prompt": prompt, "…": marker} if isinstance(prompt, str) else {"…": marker}
    return replace(record, arguments=arguments, response={"…": marker})


class Store(Protocol):
    kind: str

    def add_prompt(self, session_id: str, prompt: str) -> None: ...

    def prompts(self, session_id: str) -> list[str]: ...

    def log(self, record: RequestRecord, *, scope: str) -> None: ...

    def requests(
        self, limit: int = 50, session_id: str | None = None, since: float | None = None, *, scope: str
    ) -> list[RequestRecord]: ...

    def close(self) -> None: ...


def parse_since(value: str) -> float:
    """A ``since`` filter: Unix seconds, or an ISO 8601 time ("2026-11-30T10:00:00Z"); ValueError if neither."""
    try:
        seconds = float(value)
    except ValueError:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()
    if not math.isfinite(seconds):
        raise ValueError(f"{value!r} is not a time")
    return seconds
