"""Stage 1, validate: only ``prompt`` (1–8,000 characters) and ``session_id`` are accepted."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from retriever.config import MAX_PROMPT_CHARS
from retriever.context import Context, Run
from retriever.errors import InvalidArguments
from retriever.results import Request

ALLOWED = ("prompt", "session_id")
MAX_SESSION_ID_CHARS = 256


def _type_name(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number", list: "array", dict: "object"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def validate_arguments(arguments: Any) -> Request:
    """A ``Request`` from tool arguments, or ``InvalidArguments`` naming the bad value."""
    if not isinstance(arguments, Mapping):
        raise InvalidArguments(
            f"arguments must be an object with 'prompt' and optional 'session_id', got {_type_name(arguments)}"
        )
    unknown = sorted(str(k) for k in arguments if k not in ALLOWED)
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise InvalidArguments(f"unknown argument {names}: only 'prompt' and 'session_id' are accepted")
    return Request(prompt=_prompt(arguments.get("prompt")), session_id=_session_id(arguments.get("session_id")))


def _prompt(value: Any) -> str:
    if value is None:
        raise InvalidArguments("'prompt' is required: describe the company context you need")
    if not isinstance(value, str):
        raise InvalidArguments(f"'prompt' must be a string, got {_type_name(value)}")
    if not value.strip():
        raise InvalidArguments("'prompt' is empty: describe the company context you need")
    if len(value) > MAX_PROMPT_CHARS:
        raise InvalidArguments(f"'prompt' is {len(value):,} characters; the limit is {MAX_PROMPT_CHARS:,}: shorten it")
    return value.strip()


def _session_id(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArguments(f"'session_id' must be a string, got {_type_name(value)}")
    if len(value) > MAX_SESSION_ID_CHARS:
        raise InvalidArguments(f"'session_id' is {len(value)} characters; the limit is {MAX_SESSION_ID_CHARS}")
    return value.strip() or None


def run(state: Run, ctx: Context) -> Run:
    return dataclasses.replace(state, request=validate_arguments(state.arguments))
