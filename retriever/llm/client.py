"""The LLM seam: the one module that talks to a language model, over any OpenAI-compatible endpoint.

Contract:
- ``LLMClient(settings)`` uses the ``openai`` package, no retries, with ``settings.llm_api_key`` and
  ``settings.llm_base_url`` (which a config file may set), else its own ``OPENAI_API_KEY`` and
  ``OPENAI_BASE_URL`` (OpenAI, gateways, vLLM, llama.cpp's server, Ollama).
- ``complete(schema, system, user, timeout)`` returns ``(answer, Usage)`` where ``answer`` is a
  validated instance of the pydantic ``schema``, or raises ``LLMFailure`` naming why (timeout,
  rate limit, server error, refusal, malformed JSON).  Callers fall back; nothing here retries.
- Structured output: ``json_schema`` where the server accepts it, else ``json_object`` with the
  schema beside it (llama.cpp's server answers 500 to ``json_schema`` but honours that).  In
  ``auto`` mode a rejected ``json_schema`` request is retried once as ``json_object`` and the
  server's preference is remembered.  Either way the answer is validated with the model.
- Identical requests (model, mode, prompts: the prompts carry the sections' text, so their
  content) are answered from a small in-memory cache.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from retriever.config import Settings

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)
_CACHE_SIZE = 256


class LLMFailure(Exception):
    """An LLM call that produced no usable answer; ``reason`` is short and user-facing."""

    def __init__(self, reason: str, *, format_rejected: bool = False, calls: int = 1) -> None:
        super().__init__(reason)
        self.reason = reason
        self.format_rejected = format_rejected
        self.calls = calls  # HTTP calls made before giving up


@dataclass(frozen=True, slots=True)
class Usage:
    """What one call cost (a cache hit costs nothing)."""

    calls: int
    tokens_in: int
    tokens_out: int
    cached: bool = False


class LLMClient:
    """A configured model behind an OpenAI-compatible endpoint."""

    def __init__(self, settings: Settings) -> None:
        from openai import OpenAI

        if not settings.llm_model:
            raise ValueError("LLMClient needs settings.llm_model")
        self.model = settings.llm_model
        self.json_mode: str = settings.llm_json_mode
        # Local servers (llama.cpp, Ollama, vLLM) need no key, but the client insists on one.
        secret = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        key = secret or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client = OpenAI(
            api_key=key,
            base_url=settings.llm_base_url or os.environ.get("OPENAI_BASE_URL") or None,
            max_retries=0,
            timeout=settings.llm_timeout_seconds,
        )
        self._cache: OrderedDict[str, tuple[str, Usage]] = OrderedDict()
        self._lock = threading.Lock()

    def complete(
        self, schema: type[T], system: str, user: str, timeout: float, max_tokens: int = 1500
    ) -> tuple[T, Usage]:
        """One structured answer, validated against ``schema``."""
        mode = "json_schema" if self.json_mode in ("auto", "json_schema") else "json_object"
        key = _cache_key(self.model, schema, system, user)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return _parse(schema, hit[0]), Usage(0, 0, 0, cached=True)
        try:
            content, usage = self._call(schema, system, user, timeout, max_tokens, mode)
        except LLMFailure as failure:
            if not (failure.format_rejected and self.json_mode == "auto"):
                raise
            log.info("%s rejected json_schema (%s); using json_object from now on", self.model, failure.reason)
            self.json_mode = "json_object"
            try:
                content, usage = self._call(schema, system, user, timeout, max_tokens, "json_object")
            except LLMFailure as second:
                raise LLMFailure(second.reason, calls=2) from second
            usage = Usage(usage.calls + 1, usage.tokens_in, usage.tokens_out)
        answer = _parse(schema, content)
        with self._lock:
            self._cache[key] = (content, usage)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return answer, usage

    def _call(
        self, schema: type[BaseModel], system: str, user: str, timeout: float, max_tokens: int, mode: str
    ) -> tuple[str, Usage]:
        import openai

        json_schema = schema.model_json_schema()
        if mode == "json_schema":
            response_format: dict[str, Any] = {
                "type": "json_schema",
                "json_schema": {"name": schema.__name__, "schema": json_schema, "strict": False},
            }
        else:  # the schema rides along: llama.cpp honours it; others read it from the prompt
            response_format = {"type": "json_object", "schema": json_schema}
            system = f"{system}\n\nAnswer with one JSON object matching this JSON Schema:\n{json.dumps(json_schema)}"
        try:
            messages: Any = [{"role": "system", "content": system}, {"role": "user", "content": user}]
            response = self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                response_format=cast(Any, response_format),
                temperature=0,
                max_tokens=max_tokens,
                timeout=timeout,
            )
        except openai.APITimeoutError as exc:
            raise LLMFailure(f"timed out after {timeout:.1f} s") from exc
        except openai.RateLimitError as exc:
            raise LLMFailure("rate limited (HTTP 429)") from exc
        except openai.APIStatusError as exc:
            rejected = mode == "json_schema" and exc.status_code in (400, 422, 500, 501)
            raise LLMFailure(f"server error (HTTP {exc.status_code})", format_rejected=rejected) from exc
        except openai.APIConnectionError as exc:
            raise LLMFailure(f"cannot reach the LLM endpoint ({exc.__class__.__name__})") from exc
        except openai.OpenAIError as exc:
            raise LLMFailure(f"LLM call failed ({exc.__class__.__name__})") from exc
        return _content(response), _usage(response)


def _content(response: Any) -> str:
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise LLMFailure("empty answer")
    message = choices[0].message
    if getattr(message, "refusal", None):
        raise LLMFailure("the model refused")
    if choices[0].finish_reason == "length":
        raise LLMFailure("answer cut off at the token limit")
    if not message.content:
        raise LLMFailure("empty answer")
    return str(message.content)


def _usage(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
    tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
    return Usage(1, tokens_in, tokens_out)


def _parse(schema: type[T], content: str) -> T:
    match = _FENCE.match(content)
    text = match.group(1) if match else content
    try:
        return schema.model_validate(json.loads(text))
    except (json.JSONDecodeError, ValidationError, TypeError) as exc:
        raise LLMFailure(f"malformed JSON answer ({exc.__class__.__name__})") from exc


def _cache_key(model: str, schema: type[BaseModel], system: str, user: str) -> str:
    digest = hashlib.sha256()
    for part in (model, schema.__name__, system, user):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()
