"""Stage 1, validate: only ``prompt`` (1–8,000 characters) and ``session_id`` are accepted.

Any value is answered: a valid ``Request`` or ``InvalidArguments`` naming the argument.  Text
UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``) is refused here, so that no later
stage, store or transport meets it.  Messages quote client text only as a bounded prefix.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from retriever.config import MAX_PROMPT_CHARS
from retriever.errors import InvalidArguments
from retriever.pipeline.context import Context, Run
from retriever.pipeline.results import Request
from retriever.pipeline.triage import HISTORY_FOR_TRIAGE
from retriever.text.safe import lone_surrogate, preview

ALLOWED = ("prompt", "session_id")
MAX_SESSION_ID_CHARS = 256
NAMES_SHOWN = 5  # unknown argument names quoted in a message; the rest are counted


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type ("integer", "array", "null"), as error messages name it."""
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def validate_arguments(arguments: Any) -> Request:
    """A ``Request`` from tool arguments, or ``InvalidArguments`` naming the bad value."""
    if not isinstance(arguments, Mapping):
        raise InvalidArguments(
            f"arguments must be an object with 'prompt' and optional 'session_id', got {json_type(arguments)}"
        )
    unknown = sorted(str(k) for k in arguments if k not in ALLOWED)
    if unknown:
        raise InvalidArguments(f"unknown argument {quote_names(unknown)}: only 'prompt' and 'session_id' are accepted")
    return Request(prompt=_prompt(arguments.get("prompt")), session_id=session_id_value(arguments.get("session_id")))


def quote_names(names: list[str]) -> str:
    """``'a', 'b'``: the first few names, each a bounded prefix, then how many more."""
    shown = ", ".join(preview(name, 40) for name in names[:NAMES_SHOWN])
    return shown if len(names) <= NAMES_SHOWN else f"{shown} and {len(names) - NAMES_SHOWN:,} more"


def check_text(name: str, value: str) -> None:
    """``InvalidArguments`` when ``value`` holds a lone surrogate, which no UTF-8 transport can carry."""
    position = lone_surrogate(value)
    if position is not None:
        raise InvalidArguments(
            f"'{name}' holds an unpaired surrogate (U+{ord(value[position]):04X}) at character {position}; "
            "send valid Unicode text"
        )


def validate_history(history: Any) -> tuple[str, ...]:
    """The session's earlier prompts as triage reads them: the last ``HISTORY_FOR_TRIAGE``, each cut to
    ``MAX_PROMPT_CHARS``; ``InvalidArguments`` naming the bad value when ``history`` is not a sequence of strings (a
    string alone is one prompt, not a list of them).  Unchecked, ``None`` or a number had raised a ``TypeError``,
    and 10 MB of history took triage 42 s."""
    if isinstance(history, str | bytes) or not isinstance(history, Sequence):
        raise InvalidArguments(
            f"'history' must be a list of the session's earlier prompts, got {json_type(history)}: pass [] for none"
        )
    kept = history[-HISTORY_FOR_TRIAGE:]
    for position, item in enumerate(kept, start=len(history) - len(kept)):
        if not isinstance(item, str):
            raise InvalidArguments(f"'history' item {position} must be a string, got {json_type(item)}: pass prompts")
        check_text(f"history[{position}]", item)
    return tuple(item[:MAX_PROMPT_CHARS] for item in kept)


def _prompt(value: Any) -> str:
    if value is None:
        raise InvalidArguments("'prompt' is required: describe the company context you need")
    if not isinstance(value, str):
        raise InvalidArguments(f"'prompt' must be a string, got {json_type(value)}: send the question as text")
    if not value.strip():
        raise InvalidArguments("'prompt' is empty: describe the company context you need")
    if len(value) > MAX_PROMPT_CHARS:
        raise InvalidArguments(f"'prompt' is {len(value):,} characters; the limit is {MAX_PROMPT_CHARS:,}: shorten it")
    check_text("prompt", value)
    return value.strip()


def session_id_value(value: Any) -> str | None:
    """A valid ``session_id`` (stripped; blank means none), or ``InvalidArguments``."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidArguments(f"'session_id' must be a string, got {json_type(value)}: send it as text, or omit it")
    if len(value) > MAX_SESSION_ID_CHARS:
        raise InvalidArguments(
            f"'session_id' is {len(value):,} characters; the limit is {MAX_SESSION_ID_CHARS:,}: send a shorter id"
        )
    check_text("session_id", value)
    return value.strip() or None


def run(state: Run, ctx: Context) -> Run:
    """The request, validated here unless the caller already validated it (a server, to find the session)."""
    if state.request is not None:
        return state
    return dataclasses.replace(state, request=validate_arguments(state.arguments))
