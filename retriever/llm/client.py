"""The LLM seam: the one module that talks to a language model, over any OpenAI-compatible endpoint.

Contract:
- ``LLMClient(settings)`` uses the ``openai`` package, no retries, with ``settings.llm_api_key`` and
  ``settings.llm_base_url`` (which a config file may set), else its own ``OPENAI_API_KEY`` and
  ``OPENAI_BASE_URL`` (OpenAI, gateways, vLLM, llama.cpp's server, Ollama).  An endpoint that is not an
  http(s) URL, or proxy settings its HTTP library cannot read, raise ``ConfigError`` here (``Http.of``),
  as an invalid setting does, so ``query`` and ``serve`` stop naming it and ``status`` lists it.
- ``complete(schema, system, user, timeout)`` returns ``(answer, Usage)`` where ``answer`` is a
  validated instance of the pydantic ``schema``, or raises ``LLMFailure`` naming why (timeout,
  rate limit, server error, refusal, malformed JSON, JSON nested too deep for the decoder, in the answer
  or in the response's body; ``retriever.llm.replies`` reads the reply).  Callers fall back; nothing here
  retries.
- Structured output: ``json_schema`` where the server accepts it, else ``json_object`` with the
  schema beside it (llama.cpp's server answers 500 to ``json_schema`` but honours that).  In
  ``auto`` mode a rejected ``json_schema`` request is retried once as ``json_object`` (when the
  caller allows one more call, within the same timeout) and the server's preference is remembered.
  Either way the answer is validated with the model.
- ``timeout`` bounds the whole call, not each read: connecting, sending, and the reply's status line,
  headers and body (an answer's or an error's) all end by the call's deadline (``retriever.llm.transport``),
  however slowly the endpoint sends them; past it the call fails as ``timed out``.
- A reply's body may hold ``REPLY_BYTES_PER_TOKEN`` bytes per answer token asked for, plus
  ``REPLY_ENVELOPE_BYTES``, at most ``MAX_REPLY_BYTES``; a larger one is refused ("reply larger than").
- Identical requests (model, mode, prompts: the prompts carry the sections' text, so their
  content) are answered from a small in-memory cache, which keeps only usable answers.
- Tokens are counted for every answer the server gave, usable or not: an ``LLMFailure`` after an
  answer (cut off at ``max_tokens``, malformed, refused) carries its ``tokens_in``/``tokens_out``.
- ``pace`` is the endpoint's speed (``retriever.llm.pace``).  On a serial (local) endpoint a call
  that times out is abandoned by the client but not by the server, which goes on working on it;
  until a probe (``GET /models``, which llama-cpp-python's server answers only when idle) answers
  within ``PROBE_SECONDS`` (in all, as a call within its timeout), ``ready()`` is False and callers
  should not send another call.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from retriever.config import Settings
from retriever.endpoints import OPENAI_URL, endpoint_and_key
from retriever.llm import replies
from retriever.llm.pace import Pace, pace_of
from retriever.llm.replies import LLMFailure, Usage
from retriever.llm.transport import Http, within
from retriever.redaction import mask_url

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
_CACHE_SIZE = 256
_SCHEMA_NOTE = "\n\nAnswer with one JSON object matching this JSON Schema:\n"
PROBE_SECONDS = 1.0  # how long ready() waits for a busy local server to answer its probe
# A remote endpoint whose calls time out this many times in a row gets none for REST_SECONDS (``resting``).
TIMEOUTS_BEFORE_REST, REST_SECONDS = 2, 60.0
# A reply's body may hold at most this many bytes a token of the answer asked for, plus the envelope, and
# never more than MAX_REPLY_BYTES: a JSON answer escapes a character in at most 6 bytes, a token is a few.
REPLY_BYTES_PER_TOKEN, REPLY_ENVELOPE_BYTES, MAX_REPLY_BYTES = 32, 64_000, 1_000_000
MIN_RETRY_SECONDS = 1.0  # of a call's time left, below which a rejected json_schema is not retried
_MODEL_AND_URL = "RETRIEVER_LLM_MODEL and OPENAI_BASE_URL (retriever status shows both)"


class LLMClient:
    """A configured model behind an OpenAI-compatible endpoint."""

    def __init__(self, settings: Settings) -> None:
        from openai import DefaultHttpxClient, OpenAI

        if not settings.llm_model:
            raise ValueError("LLMClient needs settings.llm_model")
        self.model = settings.llm_model
        self.json_mode: str = settings.llm_json_mode
        base_url, secret = endpoint_and_key(settings)
        key = secret or "not-needed"  # local servers (llama.cpp, Ollama, vLLM) need no key; the client insists on one
        self._http = Http.of(DefaultHttpxClient, base_url or OPENAI_URL)
        self.url = mask_url(base_url or OPENAI_URL)[:200]  # as messages name it: a password in it masked
        self._client = OpenAI(
            api_key=key,
            base_url=base_url,
            max_retries=0,
            timeout=settings.llm_timeout_seconds,
            http_client=self._http.client,
        )
        self.pace: Pace = pace_of(settings, base_url)
        self._cache: OrderedDict[str, tuple[str, Usage]] = OrderedDict()
        self._lock = threading.Lock()
        self._abandoned = False  # a serial endpoint may still be working on a call that timed out
        self._timeout = settings.llm_timeout_seconds  # a call's whole time, unless a deadline cuts it short
        self._timeouts = 0  # calls in a row a remote endpoint let time out (``resting``)
        self._rest_until = 0.0  # time.monotonic() until which it gets no calls
        self._failed = 0  # calls in a row that failed (``_outcome``): the log says when it starts and ends

    def close(self) -> None:
        """Close the endpoint's connections (``Retriever.close``)."""
        self._client.close()

    def schema_chars(self, schema: type[BaseModel]) -> int:
        """Prompt characters the answer's schema adds (in ``json_object`` mode it rides in the prompt;
        counted in every mode, since a ``json_schema`` request may be retried as one)."""
        return len(_SCHEMA_NOTE) + len(json.dumps(schema.model_json_schema()))

    def abandoned(self) -> bool:
        """Whether a call this client gave up on may still keep a serial endpoint busy (``ready`` probes it)."""
        with self._lock:
            return self._abandoned

    def resting(self) -> str:
        """Why a remote endpoint gets no calls now, or "": after ``TIMEOUTS_BEFORE_REST`` calls in a row timed out
        (each with its whole timeout: one the caller's deadline cut short says nothing of the endpoint), none for
        ``REST_SECONDS``; then the first call to go out tries it (``_claim``), while the others wait another rest; an
        answer ends the rest.  A hung endpoint had cost every retrieval three full timeouts (a minute by default)."""
        with self._lock:
            return self._rest_reason(time.monotonic())

    def _rest_reason(self, now: float) -> str:
        if self._timeouts < TIMEOUTS_BEFORE_REST or now >= self._rest_until:
            return ""
        left = math.ceil(self._rest_until - now)
        return f"the endpoint let {self._timeouts} calls in a row time out; none for another {left} s"

    def _claim(self) -> None:
        """Let a call go out, or refuse it (no call made) while the endpoint rests; the first call after a rest is the
        one that tries it, and the rest starts again for any other meanwhile.  Claimed as the call goes out, not when
        a retrieval starts: one that made no call had used the trial up."""
        with self._lock:
            now = time.monotonic()
            if reason := self._rest_reason(now):
                raise LLMFailure(f"skipped: {reason}", calls=0)
            if self._timeouts >= TIMEOUTS_BEFORE_REST:
                self._rest_until = now + REST_SECONDS

    def _cut_short(self, timed_out: bool, seconds: float) -> bool:
        """Whether a call timed out only because the caller's deadline gave it less than its whole timeout: that
        says nothing of the endpoint (neither toward a rest nor in the log)."""
        return timed_out and seconds < self._timeout - 0.05

    def _timed(self, timed_out: bool, seconds: float) -> None:
        """Count a remote call's outcome toward ``resting`` (a serial endpoint is probed instead: ``ready``)."""
        if self.pace.serial or self._cut_short(timed_out, seconds):
            return
        with self._lock:
            self._timeouts = self._timeouts + 1 if timed_out else 0
            self._rest_until = time.monotonic() + REST_SECONDS if self._timeouts >= TIMEOUTS_BEFORE_REST else 0.0

    def ready(self) -> bool:
        """False while a serial endpoint is still busy with a call this client abandoned (probed)."""
        import openai

        with self._lock:
            if not self._abandoned:
                return True
        try:
            with within(time.monotonic() + PROBE_SECONDS):
                self._client.models.list(timeout=PROBE_SECONDS)
        except openai.APITimeoutError:
            return False
        except openai.OpenAIError:
            pass  # it answered, or cannot be reached: either way not busy with our call
        with self._lock:
            self._abandoned = False
        return True

    def complete(
        self, schema: type[T], system: str, user: str, timeout: float, max_tokens: int = 1500, may_retry: bool = True
    ) -> tuple[T, Usage]:
        """One structured answer, validated against ``schema``, within ``timeout`` seconds in all.

        A ``json_schema`` request the server rejects (in ``auto`` mode) is retried as ``json_object``
        only when ``may_retry`` (the caller has a call and the tokens for it) and at least
        ``MIN_RETRY_SECONDS`` of the call's time are left; the retry gets only that time."""
        mode = "json_schema" if self.json_mode in ("auto", "json_schema") else "json_object"
        key = _cache_key(self.model, schema, system, user)
        with self._lock:
            hit = self._cache.get(key)
        if hit is not None:
            return replies.parsed(schema, hit[0]), Usage(0, 0, 0, cached=True)
        limits = _Limits.of(timeout, max_tokens)
        try:
            content, usage = self._attempt(schema, system, user, limits, max_tokens, mode)
        except LLMFailure as failure:
            if not (failure.format_rejected and self.json_mode == "auto"):
                raise
            content, usage = self._as_json_object(failure, schema, system, user, limits, max_tokens, may_retry)
        try:
            answer = replies.parsed(schema, content)
        except LLMFailure as failure:
            raise failure.after(usage.calls, usage) from failure
        with self._lock:
            self._cache[key] = (content, usage)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return answer, usage

    def _as_json_object(
        self,
        failure: LLMFailure,
        schema: type[BaseModel],
        system: str,
        user: str,
        limits: _Limits,
        max_tokens: int,
        may_retry: bool,
    ) -> tuple[str, Usage]:
        """The call again as ``json_object`` after the server rejected ``json_schema`` (``failure``), where the
        caller affords it; ``json_object`` remembered at once for a clear refusal (400, 422, 501), and after an
        HTTP 500, which may pass, only once the retry was answered (a server failing both keeps json_schema)."""
        if not failure.transient:
            self._use_json_object(failure)
        if not may_retry or limits.left() < MIN_RETRY_SECONDS:
            raise LLMFailure(f"{failure.reason}; not retried as json_object: no call or time left") from failure
        try:
            content, usage = self._attempt(schema, system, user, limits, max_tokens, "json_object")
        except LLMFailure as second:
            raise second.after(2) from second
        self._use_json_object(failure)
        return content, Usage(usage.calls + 1, usage.tokens_in, usage.tokens_out)

    def _use_json_object(self, failure: LLMFailure) -> None:
        if self.json_mode != "json_object":
            log.info("%s rejected json_schema (%s); using json_object from now on", self.model, failure.reason)
            self.json_mode = "json_object"

    def _attempt(
        self, schema: type[BaseModel], system: str, user: str, limits: _Limits, max_tokens: int, mode: str
    ) -> tuple[str, Usage]:
        """One call; a timeout on a serial endpoint leaves it marked busy until a probe answers, on a remote one
        counts toward a rest (``resting``)."""
        if not self.pace.serial:
            self._claim()
        try:
            answer = self._call(schema, system, user, limits, max_tokens, mode)
        except LLMFailure as failure:
            self._timed(failure.timed_out, limits.seconds)
            if failure.timed_out and self.pace.serial:
                with self._lock:
                    self._abandoned = True
            if not (failure.format_rejected or self._cut_short(failure.timed_out, limits.seconds)):
                self._outcome(failure)  # a rejected format is no failure of the endpoint either
            raise
        self._timed(False, limits.seconds)
        self._outcome(None)
        return answer

    def _outcome(self, failure: LLMFailure | None) -> None:
        """Log once when calls start failing and once when one is answered again: an operator's log had shown
        nothing while the endpoint failed 1,815 calls in a row (each retrieval says so only to its caller)."""
        with self._lock:
            failed, self._failed = self._failed, (self._failed + 1 if failure else 0)
        if failure and not failed:
            why = failure.reason
            log.warning("LLM endpoint %s failing (%s): retrievals answer offline until it answers", self.url, why)
        elif not failure and failed:
            log.warning("LLM endpoint %s answers again after %d failed call(s)", self.url, failed)

    def _call(
        self, schema: type[BaseModel], system: str, user: str, limits: _Limits, max_tokens: int, mode: str
    ) -> tuple[str, Usage]:
        """One HTTP call, over by ``limits.deadline`` however the endpoint sends its reply."""
        response_format, system = _response_format(schema, system, mode)
        if limits.left() <= 0:
            raise limits.timed_out()
        messages: Any = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        call = self._client.chat.completions.with_streaming_response.create(  # sent once entered
            model=self.model,
            messages=messages,
            response_format=cast(Any, response_format),
            temperature=0,
            max_tokens=max_tokens,
            timeout=limits.left(),
        )
        with self._failures(limits, mode), within(limits.deadline), call as response:
            body = _read(response, limits)
        completion = replies.completion(body)
        usage = replies.usage(completion)
        return replies.content(completion, usage), usage

    @contextlib.contextmanager
    def _failures(self, limits: _Limits, mode: str) -> Iterator[None]:
        """What goes wrong in the block (a call in ``mode``, and the reading of its reply), as an ``LLMFailure``."""
        import openai

        try:
            yield
        except (openai.APITimeoutError, self._http.timeout_error) as exc:
            raise limits.timed_out() from exc
        except openai.RateLimitError as exc:
            raise LLMFailure("rate limited (HTTP 429); the endpoint asks for fewer calls", refused=True) from exc
        except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
            why = f"the endpoint refused the API key (HTTP {exc.status_code}); check OPENAI_API_KEY"
            raise LLMFailure(why, refused=True) from exc
        except openai.NotFoundError as exc:
            why = f"the endpoint serves no model {self.model!r} at that URL (HTTP 404); check {_MODEL_AND_URL}"
            raise LLMFailure(why[:300], refused=True) from exc
        except openai.APIStatusError as exc:
            rejected = mode == "json_schema" and exc.status_code in (400, 422, 500, 501)
            why = f"server error (HTTP {exc.status_code})"
            raise LLMFailure(why, format_rejected=rejected, transient=exc.status_code == 500) from exc
        except openai.APIConnectionError as exc:
            why = f"cannot reach the LLM endpoint at {self.url} ({exc.__class__.__name__}); is its server running?"
            raise LLMFailure(why, unreachable=True) from exc
        except openai.OpenAIError as exc:
            raise LLMFailure(f"LLM call failed ({exc.__class__.__name__})") from exc
        except self._http.error as exc:  # the connection broke while a body (an answer's or an error's) was read
            raise LLMFailure(f"unreadable response from the LLM endpoint ({exc.__class__.__name__})") from exc


def _response_format(schema: type[BaseModel], system: str, mode: str) -> tuple[dict[str, Any], str]:
    """The ``response_format`` asking for ``schema`` in ``mode``, and the system prompt to send with it."""
    json_schema = schema.model_json_schema()
    if mode == "json_schema":
        strict = {"name": schema.__name__, "schema": json_schema, "strict": False}
        return {"type": "json_schema", "json_schema": strict}, system
    # json_object: the schema rides along: llama.cpp honours it; others read it from the prompt
    return {"type": "json_object", "schema": json_schema}, f"{system}{_SCHEMA_NOTE}{json.dumps(json_schema)}"


@dataclass(frozen=True, slots=True)
class _Limits:
    """What one call may take: until ``deadline`` (``time.monotonic()``), said as ``seconds`` when it is up."""

    deadline: float
    seconds: float
    max_bytes: int  # of a reply's body

    @classmethod
    def of(cls, seconds: float, max_tokens: int) -> _Limits:
        max_bytes = min(MAX_REPLY_BYTES, REPLY_ENVELOPE_BYTES + REPLY_BYTES_PER_TOKEN * max(max_tokens, 0))
        return cls(time.monotonic() + seconds, seconds, max_bytes)

    def too_large(self) -> LLMFailure:
        return LLMFailure(f"reply larger than {self.max_bytes} bytes")

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def timed_out(self) -> LLMFailure:
        return LLMFailure(f"timed out after {self.seconds:.1f} s", timed_out=True)


def _read(response: Any, limits: _Limits) -> bytes:
    """The response's body, at most ``limits.max_bytes`` of it (a larger one is refused, unread when its
    length is declared), read as it arrives: within the call's deadline, since ``_call`` reads it there."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limits.max_bytes:
        raise limits.too_large()
    body = bytearray()
    for chunk in response.iter_bytes():
        body += chunk
        if len(body) > limits.max_bytes:
            raise limits.too_large()
    return bytes(body)


def _cache_key(model: str, schema: type[BaseModel], system: str, user: str) -> str:
    digest = hashlib.sha256()
    for part in (model, schema.__name__, system, user):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()
