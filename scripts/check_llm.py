#!/usr/bin/env python3
"""Check LLM mode against the endpoint that is configured: measure it, then run a few retrievals.

    export RETRIEVER_LLM_MODEL=gemma-270m OPENAI_BASE_URL=http://127.0.0.1:8080/v1
    python scripts/check_llm.py                       # measure, then 3 retrievals over company_context
    python scripts/check_llm.py --root DIR --question "Who owns billing?" --no-measure
    python scripts/check_llm.py --use-measured        # retrieve with the measured speeds declared

Measures, twice, how fast the endpoint reads prompts (two calls of different prompt sizes, one
answer token each: the difference is reading alone) and writes JSON answers (tokens per second), and
how many characters its tokenizer puts in a token; prints the settings that declare those
speeds.  Then each retrieval prints its mode, the stages the model guided, the fallbacks and
why, calls, tokens, and the time of each stage.

Exit status: 0 when every retrieval completed, no stage was both guided and a fallback, and the
model answered at least one call; 1 when the endpoint cannot be reached; 2 when no model is
configured or an argument is wrong; 3 when a check failed (the output says which).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from retriever import Retriever, Settings
from retriever.errors import ConfigError
from retriever.llm.guided import EXTRACT_MAX_TOKENS, SUMMARY_MAX_TOKENS, TARGET_MAX_TOKENS
from retriever.llm.pace import pace_of, seconds_for, size_call

REPO = Path(__file__).resolve().parent.parent
QUESTIONS = (
    "Who owns the Helix EU data residency project?",
    "What is the expense policy for travel?",
    "How do we handle a severity 1 incident?",
)
SHORT, LONG = 1500, 6000  # characters of memory text in the two reading probes
ANSWER_TOKENS = 120  # the writing probe's answer, in JSON mode
ROUNDS = 2  # measurements; the slowest counts
PROBE_TIMEOUT = 300.0  # a CPU server can take a minute over the long probe; never forever


@dataclass(frozen=True)
class Measured:
    prompt_tps: float | None
    output_tps: float | None
    chars_per_token: float | None


def fail(code: int, message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return code


def client(timeout: float) -> Any:
    from openai import OpenAI

    key = os.environ.get("OPENAI_API_KEY") or "not-needed"
    return OpenAI(api_key=key, base_url=os.environ.get("OPENAI_BASE_URL") or None, max_retries=0, timeout=timeout)


def reachable(model: str) -> str | None:
    """None when the endpoint answers ``GET /models``, else why not (bounded wait)."""
    import openai

    try:
        client(10.0).models.list()
    except openai.APIStatusError:
        return None  # it answered; a server without /models can still serve completions
    except openai.OpenAIError as exc:
        where = os.environ.get("OPENAI_BASE_URL") or "the OpenAI API"
        return (
            f"cannot reach the LLM endpoint at {where} ({exc.__class__.__name__}); start the server "
            f"(any OpenAI-compatible server, e.g. llama.cpp's `llama-server -m MODEL.gguf --port 8080` with "
            f"OPENAI_BASE_URL=http://127.0.0.1:8080/v1) or fix OPENAI_BASE_URL, then check {model} again"
        )
    return None


def memory_text(root: Path) -> str:
    """Text to read in the probes: the memory's own markdown, so the tokenizer sees what retrieval sends."""
    parts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(root.rglob("*.md"))[:400]]
    text = " ".join(" ".join(parts).split())
    return (text * (1 + 3 * LONG // max(len(text), 1)))[: 20 * LONG]


def timed_call(model: str, user: str, max_tokens: int, json_mode: bool) -> tuple[float, int, int]:
    """Seconds, prompt tokens and answer tokens of one call."""
    extra: dict[str, Any] = {}
    system = "Repeat the first words of the text."
    if json_mode:
        extra["response_format"] = {"type": "json_object"}
        system = 'Answer in JSON: {"words": ["…", …]}, listing words of the text, as many as you can.'
    began = time.monotonic()
    response = client(PROBE_TIMEOUT).chat.completions.create(
        model=model,
        messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
        max_tokens=max_tokens,
        temperature=0,
        **extra,
    )
    usage = response.usage
    return time.monotonic() - began, int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0)


def measure(model: str, root: Path, rounds: int = ROUNDS) -> Measured:
    """The slowest of ``rounds`` measurements: a shared machine's speed varies, and a call must fit the slow moments."""
    text, rng = memory_text(root), random.Random()
    found = [measure_once(model, text, rng) for _ in range(rounds)]
    for number, one in enumerate(found, 1):
        print(f"  round {number}: {_speed(one.prompt_tps)} prompt, {_speed(one.output_tps)} answer tokens/s")
    return Measured(
        min((m.prompt_tps for m in found if m.prompt_tps), default=None),
        min((m.output_tps for m in found if m.output_tps), default=None),
        found[-1].chars_per_token,
    )


def _speed(value: float | None) -> str:
    return f"{value:,.1f}" if value else "?"


def measure_once(model: str, text: str, rng: random.Random) -> Measured:
    """Reading speed from two prompt sizes (different text each, so no prompt cache helps), then writing speed."""

    def part(size: int) -> str:
        start = rng.randrange(0, max(len(text) - size, 1))
        return text[start : start + size]

    short_s, short_in, _ = timed_call(model, part(SHORT), 1, False)
    long_user = part(LONG)
    long_s, long_in, _ = timed_call(model, long_user, 1, False)
    prompt_tps = (long_in - short_in) / (long_s - short_s) if long_s > short_s and long_in > short_in else None
    write_s, write_in, write_out = timed_call(model, part(SHORT), ANSWER_TOKENS, True)
    reading = write_in / prompt_tps if prompt_tps else short_s
    output_tps = write_out / (write_s - reading) if write_out and write_s > reading else None
    return Measured(prompt_tps, output_tps, len(long_user) / long_in if long_in else None)


def print_measured(found: Measured) -> None:
    def show(value: float | None, unit: str) -> str:
        return f"{value:,.1f} {unit}" if value else "not measurable (the server answered too fast or reported no usage)"

    print(f"prompt reading:  {show(found.prompt_tps, 'tokens/s')}")
    print(f"answer writing:  {show(found.output_tps, 'tokens/s in JSON mode')}")
    print(f"tokenizer:       {show(found.chars_per_token, 'characters/token')}")
    if found.prompt_tps and found.output_tps:
        print(
            "to declare them: export "
            f"RETRIEVER_LLM_PROMPT_TOKENS_PER_SECOND={found.prompt_tps * 0.8:.0f} "
            f"RETRIEVER_LLM_OUTPUT_TOKENS_PER_SECOND={found.output_tps * 0.8:.0f}   # 80%: room for a busier moment"
        )


def print_plan(settings: Settings) -> None:
    """What each call may hold at the pace the retrievals will assume, and how long it takes at most."""
    pace = pace_of(settings, os.environ.get("OPENAI_BASE_URL"))
    kind = "local (one call at a time)" if pace.serial else "remote"
    speeds = f"{pace.prompt_tps:,.0f} prompt / {pace.output_tps:,.0f} answer tokens/s" if pace.paced else "not limiting"
    print(f"endpoint:        {kind}; speeds {speeds}; {settings.llm_timeout_seconds:g} s per call")
    for stage, most in (
        ("target", TARGET_MAX_TOKENS),
        ("extract", EXTRACT_MAX_TOKENS),
        ("summary", SUMMARY_MAX_TOKENS),
    ):
        call = size_call(pace, settings.llm_timeout_seconds, most)
        if call.prompt_chars >= sys.maxsize // 2:
            print(f"  {stage:8} prompt within the token budget, answer ≤ {call.max_tokens} tokens")
            continue
        took = seconds_for(pace, call.prompt_chars, call.max_tokens)
        print(
            f"  {stage:8} prompt ≤ {call.prompt_chars:,} characters, answer ≤ {call.max_tokens} tokens: ≤ {took:.1f} s"
        )


def report(question: str, result: Any, seconds: float) -> list[str]:
    """Print one retrieval; return the problems found."""
    structured = result.structured
    if structured.get("status") != "ok":
        print(f"\n{question}\n  status: {structured.get('status')} {structured.get('error_code')}")
        return [f"{question!r} did not complete ({structured.get('error_code')})"]
    diagnostics = structured["diagnostics"]
    llm = diagnostics["llm"] or {}
    timings = ", ".join(f"{k} {v / 1000:.1f} s" for k, v in diagnostics["timings_ms"].items() if v >= 50)
    print(f"\n{question}\n  mode: {diagnostics['mode']}   {seconds:.1f} s" + (f" ({timings})" if timings else ""))
    print(f"  stages guided: {', '.join(llm.get('stages_guided', [])) or 'none'}")
    for fallback in llm.get("fallbacks", []):
        print(f"  fallback: {fallback['stage']}: {fallback['reason']}")
    print(
        f"  calls {llm.get('calls', 0)}, tokens in {llm.get('tokens_in', 0):,} / out {llm.get('tokens_out', 0):,}, "
        f"cache hits {llm.get('cache_hits', 0)}, ungrounded facts dropped {llm.get('ungrounded_facts_dropped', 0)}"
    )
    both = set(llm.get("stages_guided", [])) & {f["stage"] for f in llm.get("fallbacks", [])}
    return [f"{question!r}: {', '.join(sorted(both))} listed as guided and as a fallback"] if both else []


def run_checks(settings: Settings, root: Path, questions: Sequence[str]) -> list[str]:
    retriever = Retriever(root, settings)
    problems: list[str] = []
    answered = 0
    for question in questions:
        began = time.monotonic()
        result = retriever.retrieve(question)
        problems += report(question, result, time.monotonic() - began)
        llm = (result.structured.get("diagnostics") or {}).get("llm") or {}
        answered += int(llm.get("tokens_out", 0) > 0 or llm.get("cache_hits", 0) > 0)
    if not answered:
        problems.append("the model answered no call; the fallbacks above say why")
    return problems


def measured_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """Measure and print; with ``--use-measured``, the settings with 80% of the measured speeds declared."""
    import openai

    assert settings.llm_model
    try:
        found = measure(settings.llm_model, args.root)
    except openai.OpenAIError as exc:
        print(f"prompt reading:  not measured ({exc.__class__.__name__}: {str(exc)[:200]})")
        return settings
    print_measured(found)
    if not (args.use_measured and found.prompt_tps and found.output_tps):
        return settings
    speeds = {
        "llm_prompt_tokens_per_second": found.prompt_tps * 0.8,
        "llm_output_tokens_per_second": found.output_tps * 0.8,
    }
    return settings.model_copy(update=speeds)


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=REPO / "company_context", help="memory tree to retrieve from")
    parser.add_argument("--question", action="append", help="a question to ask (repeatable); default: three")
    parser.add_argument("--no-measure", action="store_true", help="skip measuring the endpoint's speed")
    parser.add_argument("--use-measured", action="store_true", help="retrieve with the measured speeds declared")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    try:
        settings = Settings.from_env()
    except ConfigError as exc:
        return fail(2, exc.message)
    if not settings.llm_model:
        return fail(
            2,
            "RETRIEVER_LLM_MODEL is not set, so there is no LLM to check; set it and OPENAI_BASE_URL "
            "(e.g. RETRIEVER_LLM_MODEL=gemma-270m OPENAI_BASE_URL=http://127.0.0.1:8080/v1)",
        )
    if not args.root.is_dir():
        return fail(2, f"--root {str(args.root)[:200]!r} is not a folder; name a memory tree")
    problem = reachable(settings.llm_model)
    if problem:
        return fail(1, problem)
    print(f"model:           {settings.llm_model} at {os.environ.get('OPENAI_BASE_URL') or 'the OpenAI API'}")
    if not args.no_measure:
        settings = measured_settings(settings, args)
    print_plan(settings)
    problems = run_checks(settings, args.root, args.question or QUESTIONS)
    for line in problems:
        print(f"check failed: {line}", file=sys.stderr)
    return 3 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
