"""How fast the endpoint reads and writes, and how large a call may be to finish in its time.

Contract:
- ``pace_of(settings, base_url)`` is the endpoint's ``Pace``.  A *local* endpoint (declared with
  ``llm_endpoint=local``, or ``auto`` and a loopback ``OPENAI_BASE_URL``) is one model on this
  machine answering one call at a time: its speeds are the declared ones, else ``LOCAL_*`` below,
  and it is ``serial`` (a call the client abandons keeps it busy).  A remote endpoint is paced
  only by the speeds declared for it; undeclared, its speed does not limit a call.
- ``size_call(pace, seconds, max_tokens)`` is the largest call that finishes within ``seconds``
  at that pace: the answer gets at most ``OUTPUT_SHARE`` of the time, the prompt what is left of
  ``SAFETY`` of it.  Sizes are in characters of prompt (system, schema and user text together),
  since that is what the stages cut.  ``timeout_for`` is the timeout a call of a given size needs.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from urllib.parse import urlsplit

from retriever.config import Settings
from retriever.endpoints import is_loopback_name

# Measured on llama-cpp-python's server with Gemma 3 270M (Q4_K_M) on 2 shared CPU cores
# (scripts/check_llm.py): prompts of 1k-5.5k tokens read at 118-125 tokens/s (short ones ~200);
# answers under a JSON grammar written at 12-20 tokens/s (50-60 without one).  The defaults take
# the low end, so a local server of that class finishes in time; larger models are slower still and
# should declare their speed (RETRIEVER_LLM_PROMPT_TOKENS_PER_SECOND / _OUTPUT_TOKENS_PER_SECOND).
LOCAL_PROMPT_TPS = 100.0
LOCAL_OUTPUT_TPS = 12.0
# Gemma's tokenizer reads markdown at 2.7-3.8 characters a token (3.2 on average, measured on
# company_context); OpenAI's are nearer 4, which the token budget has always assumed.
LOCAL_CHARS_PER_TOKEN = 3.0
REMOTE_CHARS_PER_TOKEN = 4.0
LOCAL_OVERHEAD_SECONDS = 0.5  # per call: HTTP, template, grammar set-up
SAFETY = 0.85  # of a call's time planned for; the rest absorbs a slower moment of the machine
OUTPUT_SHARE = 0.4  # of a call's time the answer may take; the rest is for reading the prompt
UNLIMITED = sys.maxsize
DAY = 86_400  # seconds: the longest timeout ``timeout_for`` suggests


@dataclass(frozen=True, slots=True)
class Pace:
    """An endpoint's speeds (``math.inf`` when they do not limit a call) and whether it is serial."""

    prompt_tps: float
    output_tps: float
    chars_per_token: float
    overhead: float = 0.0
    serial: bool = False

    @property
    def paced(self) -> bool:
        return math.isfinite(self.prompt_tps) or math.isfinite(self.output_tps)


@dataclass(frozen=True, slots=True)
class CallSize:
    """One call's limits: its timeout, the prompt characters it may send and the answer tokens it may get."""

    timeout: float
    prompt_chars: int
    max_tokens: int


def is_loopback(base_url: str | None) -> bool:
    """Whether ``base_url`` names this machine (``endpoints.is_loopback_name``)."""
    return bool(base_url) and is_loopback_name(urlsplit(base_url or "").hostname or "")


def pace_of(settings: Settings, base_url: str | None) -> Pace:
    """The endpoint's pace from the settings (declared speeds first) and where it is."""
    local = settings.llm_endpoint == "local" or (settings.llm_endpoint == "auto" and is_loopback(base_url))
    prompt, output = settings.llm_prompt_tokens_per_second, settings.llm_output_tokens_per_second
    if local:
        return Pace(
            prompt or LOCAL_PROMPT_TPS, output or LOCAL_OUTPUT_TPS, LOCAL_CHARS_PER_TOKEN, LOCAL_OVERHEAD_SECONDS, True
        )
    return Pace(prompt or math.inf, output or math.inf, REMOTE_CHARS_PER_TOKEN)


def size_call(pace: Pace, seconds: float, max_tokens: int) -> CallSize:
    """The largest call that finishes within ``seconds`` at ``pace``; ``prompt_chars`` is 0 when none does."""
    tokens = max_tokens
    if math.isfinite(pace.output_tps):
        tokens = min(max_tokens, math.floor(pace.output_tps * seconds * OUTPUT_SHARE))
    if not math.isfinite(pace.prompt_tps):
        return CallSize(seconds, UNLIMITED, max(tokens, 0))
    reading = seconds * SAFETY - tokens / pace.output_tps - pace.overhead
    chars = math.floor(max(reading, 0.0) * pace.prompt_tps * pace.chars_per_token)
    return CallSize(seconds, chars, max(tokens, 0))


def timeout_for(pace: Pace, prompt_chars: int, max_tokens: int) -> int | None:
    """The fewest whole seconds of timeout with which ``size_call`` lets a prompt of ``prompt_chars`` through (the
    answer sized as it would be then, up to ``max_tokens``): what to set where a call does not fit.  None when a
    day would not do."""
    low, high = 0, 1
    while size_call(pace, high, max_tokens).prompt_chars < prompt_chars:  # room grows with the time: double, then halve
        if high >= DAY:
            return None
        low, high = high, min(2 * high, DAY)
    while high - low > 1:
        middle = (low + high) // 2
        fits = size_call(pace, middle, max_tokens).prompt_chars >= prompt_chars
        low, high = (low, middle) if fits else (middle, high)
    return high


def seconds_for(pace: Pace, prompt_chars: int, max_tokens: int) -> float:
    """How long a call of that size takes at ``pace`` at most (0 when the pace does not limit it)."""
    reading = prompt_chars / pace.chars_per_token / pace.prompt_tps if math.isfinite(pace.prompt_tps) else 0.0
    writing = max_tokens / pace.output_tps if math.isfinite(pace.output_tps) else 0.0
    return pace.overhead + reading + writing
