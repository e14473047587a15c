"""What an OpenAI-compatible endpoint answers, read: a chat completion's body, its text, its token counts and the
JSON answer in it, each read so that nothing the server sends raises anything but an ``LLMFailure`` naming why.

Contract: ``completion(body)`` the completion; ``content(completion, usage)`` its answer's text (a refusal, a cut-off
or an empty answer is a failure that still counts the tokens); ``usage(completion)`` what the call cost, counts that
are no counts read as 0; ``parsed(schema, text)`` the answer validated against ``schema`` (a fenced block read inside
its fence).  ``LLMFailure`` is what every LLM call raises; ``Usage`` what one cost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


class LLMFailure(Exception):
    """An LLM call that produced no usable answer; ``reason`` is short and user-facing."""

    def __init__(
        self,
        reason: str,
        *,
        format_rejected: bool = False,
        transient: bool = False,
        calls: int = 1,
        timed_out: bool = False,
        unreachable: bool = False,
        refused: bool = False,
        tokens_in: int = 0,
        tokens_out: int = 0,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.format_rejected = format_rejected
        self.transient = transient  # a server error (HTTP 500) that may pass: a rejection it may or may not be
        self.calls = calls  # HTTP calls made before giving up
        self.timed_out = timed_out  # the client gave up waiting; the server may still be at work
        self.unreachable = unreachable  # no connection at all: the next call would fail the same way
        self.refused = refused  # the endpoint refused the key, the model or the rate: so would it the next call
        self.tokens_in = tokens_in  # what the server reported for an answer it gave but that was unusable
        self.tokens_out = tokens_out

    def after(self, calls: int, usage: Usage | None = None) -> LLMFailure:
        """This failure, counted as the last of ``calls`` calls, plus the tokens of earlier answers."""
        tokens_in, tokens_out = (usage.tokens_in, usage.tokens_out) if usage else (0, 0)
        return LLMFailure(
            self.reason,
            calls=calls,
            timed_out=self.timed_out,
            unreachable=self.unreachable,
            refused=self.refused,
            tokens_in=self.tokens_in + tokens_in,
            tokens_out=self.tokens_out + tokens_out,
        )


@dataclass(frozen=True, slots=True)
class Usage:
    """What one call cost (a cache hit costs nothing)."""

    calls: int
    tokens_in: int
    tokens_out: int
    cached: bool = False


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Message(_Reply):
    content: str | None = None
    refusal: str | None = None


class _Choice(_Reply):
    message: _Message | None = None
    finish_reason: str | None = None


# A count past this is no count of a real call (a context holds at most a few hundred thousand tokens).
MAX_COUNTED_TOKENS = 10_000_000


class _TokenCounts(_Reply):
    """The server's counts as sent: read leniently (``_count``), so that a count of the wrong type or sign loses
    only the count, never the answer it came with."""

    prompt_tokens: Any = None
    completion_tokens: Any = None


def _count(value: Any) -> int:
    """A token count the server sent, or 0 for one that is none: missing, negative, past ``MAX_COUNTED_TOKENS``, or
    not a whole number (``True`` included).  A negative count had failed the answer's own diagnostics: a traceback."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_COUNTED_TOKENS:
        return value
    return 0


class _Completion(_Reply):
    """The parts of an OpenAI-compatible chat completion read here (llama.cpp's server sends them too)."""

    choices: list[_Choice] = []
    usage: _TokenCounts | None = None


def completion(body: bytes) -> _Completion:
    """The completion in a response's body, or an ``LLMFailure`` saying why it cannot be read."""
    try:
        return _Completion.model_validate(json.loads(body))
    except (ValueError, ValidationError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise LLMFailure(f"unreadable response from the LLM endpoint ({exc.__class__.__name__})") from exc
    except RecursionError as exc:  # a body of "[[[[…": the JSON decoder gives up
        raise LLMFailure("unreadable response from the LLM endpoint (nested too deep)") from exc


def content(completion: _Completion, usage: Usage) -> str:
    """The answer's text, or an ``LLMFailure`` that still counts the tokens the server spent on it."""
    choice = completion.choices[0] if completion.choices else None
    message = choice.message if choice is not None else None
    if message is not None and message.refusal:
        reason = "the model refused"
    elif choice is not None and message is not None and choice.finish_reason == "length":
        reason = "answer cut off at the token limit"
    elif message is None or not message.content:
        reason = "empty answer"
    else:
        return message.content
    raise LLMFailure(reason, tokens_in=usage.tokens_in, tokens_out=usage.tokens_out)


def usage(completion: _Completion) -> Usage:
    counts = completion.usage or _TokenCounts()
    return Usage(1, _count(counts.prompt_tokens), _count(counts.completion_tokens))


def parsed(schema: type[T], content: str) -> T:
    match = _FENCE.match(content)
    text = match.group(1) if match else content
    try:
        return schema.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError, TypeError) as exc:
        raise LLMFailure(f"malformed JSON answer ({exc.__class__.__name__})") from exc
    except RecursionError as exc:  # an answer of "[[[[…": the JSON decoder gives up
        raise LLMFailure("malformed JSON answer (nested too deep)") from exc
