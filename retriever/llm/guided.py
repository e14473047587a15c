"""LLM guidance for the stages, within a per-retrieval budget, always with an offline fallback.

Contract: ``LLMRun`` wraps the client for one retrieval: it refuses calls past
``llm_max_calls``, the prompt-token budget or the deadline (a ``json_object`` retry of a rejected
``json_schema`` request is a call like any other, made only when both budgets allow it), and
records calls, tokens, cache hits, fallbacks (stage and reason) and ungrounded facts for
diagnostics.  The ``guide_*`` functions return the LLM's contribution or ``None``; the stage modules keep their offline
result whenever they get ``None``, so any failure degrades to offline retrieval, not to an error.
Facts are grounded before they are kept, and so is the summary (``retriever.llm.grounding``);
otherwise the offline result stands, and ``diagnostics.llm.fallbacks`` says why.  Each call is
sized to the endpoint (``LLMRun.size``): on a slow local server the outline, the sections and the
answers shrink to what it can read and write within the per-call timeout.  Each call is made without the memory's
read lock (``Memory.unlocked``): a refresh need not wait for the model; one that changed the memory meanwhile
raises ``MemoryChanged`` and the retrieval starts again, offline (``LLMRun.restarted``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from pydantic import BaseModel

from retriever.config import Settings
from retriever.llm import prompts
from retriever.llm.client import LLMClient
from retriever.llm.grounding import grounded, instructs, summary_problem
from retriever.llm.pace import CallSize, size_call, timeout_for
from retriever.llm.prompts import SectionText
from retriever.llm.replies import LLMFailure
from retriever.text import analyzer

T = TypeVar("T", bound=BaseModel)
MIN_CALL_SECONDS = 1.0  # not worth calling with less time than this left
# Answer tokens each stage may use at most, and what one item of an answer takes (measured on
# Gemma 3 270M's JSON answers: a pick with its reason ~30 tokens, a fact ~45): when a slow endpoint
# cuts the answer short, the prompt asks for fewer items, so the JSON is complete rather than cut off.
TARGET_MAX_TOKENS, EXTRACT_MAX_TOKENS, SUMMARY_MAX_TOKENS, TRIAGE_MAX_TOKENS = 800, 1500, 300, 300
TOKENS_PER_PICK, TOKENS_PER_FACT, MAX_PICKS = 30, 45, 10
MIN_OUTLINE = 3  # outline lines below which asking the model to choose is not worth a call
MIN_SECTION_CHARS = 400  # of each section sent for extraction


class Unlocking(Protocol):
    """What holds the read lock a retrieval takes on its memory (``memory.Memory``)."""

    def unlocked(self, call: str) -> AbstractContextManager[None]: ...


@dataclass
class LLMRun:
    """One retrieval's LLM budget and record.

    Each stage is either guided (its answer was used) or listed in ``fallbacks`` with the reason it
    kept its offline result, never both.  On a serial (local) endpoint, a call that times out ends
    the retrieval's use of the model: the server is still working on it, so the later stages are
    skipped and say so, and the next retrieval calls only once a probe finds the server idle.
    """

    client: LLMClient
    settings: Settings
    deadline: float  # time.monotonic()
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cached: int = 0
    prompt_tokens_used: int = 0
    guided: list[str] = field(default_factory=list)  # stages the LLM answered
    fallbacks: list[tuple[str, str]] = field(default_factory=list)  # (stage, reason)
    ungrounded: int = 0
    stopped: str = ""  # why the endpoint gets no more calls in this retrieval (busy, unreachable), once set
    lock: Unlocking | None = None  # the memory the retrieval holds the read lock of: given up during each call

    def _unlocked(self, call: str) -> AbstractContextManager[None]:
        """The read lock given up around a call to the endpoint (``Memory.unlocked``: may raise ``MemoryChanged``)."""
        return self.lock.unlocked(call) if self.lock is not None else contextlib.nullcontext()

    def restarted(self, why: str) -> LLMRun:
        """This run's record of calls and tokens, for the retrieval started again because ``why`` (the memory
        changed during a call): no further calls (another might meet another change), so each stage says it kept
        its offline result and why, after what the first run's stages said (a call that failed, say why)."""
        stopped = f"{why}; the answer was worked out again, offline, on the memory as it is now"
        return dataclasses.replace(self, guided=[], fallbacks=list(self.fallbacks), ungrounded=0, stopped=stopped)

    def __post_init__(self) -> None:
        self.stopped = self.stopped or self.client.resting()  # an endpoint that keeps timing out rests a while

    def enabled(self, stage: str) -> bool:
        return stage in self.settings.llm_stages

    def size(self, stage: str, schema: type[BaseModel], max_tokens: int) -> CallSize | None:
        """How large ``stage``'s call may be (prompt characters besides the schema, answer tokens,
        timeout) to fit the call budget, the token budget, the time left and the endpoint's pace;
        None, with the reason recorded, when no call should be made."""
        remaining = self.deadline - time.monotonic()
        if self.stopped:  # first: why the endpoint gets no calls says more than the time or budget left
            self.fall_back(stage, f"skipped: {self.stopped}")
            return None
        if self.calls >= self.settings.llm_max_calls:
            self.fall_back(stage, f"call budget of {self.settings.llm_max_calls} spent")
            return None
        if remaining < MIN_CALL_SECONDS:
            self.fall_back(stage, "too little time left before the deadline")
            return None
        if self.client.abandoned():  # only then a probe: the lock is given up around a call that goes out
            with self._unlocked(f"{stage} probe"):
                ready = self.client.ready()
            if not ready:
                self.stopped = "the endpoint is still busy with an earlier call that timed out"
                self.fall_back(stage, f"skipped: {self.stopped}")
                return None
        pace = self.client.pace
        call = size_call(pace, min(self.settings.llm_timeout_seconds, remaining - 0.5), max_tokens)
        budget = math.floor(self.remaining_prompt_tokens() * pace.chars_per_token)
        return CallSize(
            call.timeout, min(call.prompt_chars, budget) - self.client.schema_chars(schema), call.max_tokens
        )

    def ask(
        self,
        stage: str,
        schema: type[T],
        system: str,
        user: str,
        max_tokens: int = 1500,
        size: CallSize | None = None,
    ) -> T | None:
        """The model's answer, or None (with the reason recorded) when over budget or failed.

        ``size`` is the stage's ``size()``, when it built its prompt to fit; else it is worked out here."""
        size = size or self.size(stage, schema, max_tokens)
        if size is None:
            return None
        chars = len(system) + len(user)
        needed = math.ceil((chars + self.client.schema_chars(schema)) / self.client.pace.chars_per_token)
        if not self._fits(stage, chars, needed, size, max_tokens):
            return None
        retry = self._affords(2, needed)  # a json_schema the server rejects is retried as json_object
        with self._unlocked(stage):  # counted inside: a change of the memory raises at the end of the block
            try:
                answer, usage = self.client.complete(schema, system, user, size.timeout, size.max_tokens, retry)
            except LLMFailure as failure:
                self._failed(stage, failure, needed)
                return None
            self.calls += usage.calls
            self.cached += int(usage.cached)
            self.tokens_in += usage.tokens_in
            self.tokens_out += usage.tokens_out
            self.prompt_tokens_used += needed * usage.calls  # a cache hit makes no call
            self.guided.append(stage)
        return answer

    def _affords(self, calls: int, needed: int) -> bool:
        """Whether ``calls`` more calls of ``needed`` prompt tokens each fit the call and token budgets."""
        within_calls = self.calls + calls <= self.settings.llm_max_calls
        return within_calls and self.prompt_tokens_used + calls * needed <= self.settings.llm_token_budget

    def _fits(self, stage: str, chars: int, needed: int, size: CallSize, max_tokens: int) -> bool:
        """Whether a prompt of ``chars`` (``needed`` tokens) fits the token budget and the call's size;
        if not, the limit it exceeds is recorded as the stage's fallback (with the timeout that would fit it, where
        the per-call timeout is the limit: the stage's answer of up to ``max_tokens`` sized as it would be then)."""
        if self.prompt_tokens_used + needed > self.settings.llm_token_budget:
            self.fall_back(stage, f"prompt of ~{needed} tokens exceeds the remaining token budget")
            return False
        if chars > size.prompt_chars:
            pace = self.client.pace
            speed = f"the endpoint's ~{pace.prompt_tps:.3g} tokens/s"
            reason = f"prompt of ~{needed} tokens cannot be read in {size.timeout:.1f} s at {speed}"
            if size.timeout >= self.settings.llm_timeout_seconds:  # the per-call timeout limits it, not the deadline
                wanted = timeout_for(pace, math.ceil(needed * pace.chars_per_token), max_tokens)
                reason += f" (a timeout of {wanted} s would fit it: RETRIEVER_LLM_TIMEOUT_SECONDS)" if wanted else ""
            self.fall_back(stage, reason)
            return False
        return True

    def _failed(self, stage: str, failure: LLMFailure, needed: int) -> None:
        self.calls += failure.calls
        self.tokens_in += failure.tokens_in  # an answer cut off or malformed still cost its tokens
        self.tokens_out += failure.tokens_out
        self.prompt_tokens_used += needed * failure.calls
        # A serial server is still at work on a call that timed out; a remote one serves calls side by side, and a
        # later stage's smaller prompt may well be answered in time.
        if failure.timed_out and self.client.pace.serial:
            self.stopped = f"the endpoint is still busy with the {stage} call that timed out"
        self.stopped = self.stopped or self.client.resting()
        if failure.unreachable:
            self.stopped = f"the endpoint could not be reached by the {stage} call"
        if failure.refused:
            self.stopped = f"the endpoint refused the {stage} call: {failure.reason}"
        self.fall_back(stage, failure.reason)

    def remaining_prompt_tokens(self) -> int:
        return self.settings.llm_token_budget - self.prompt_tokens_used

    def fall_back(self, stage: str, reason: str) -> None:
        """Record that ``stage`` kept its offline result, and why.  An answer discarded after the call
        (ungrounded, unusable) means the stage was not guided, whatever the model said."""
        self.fallbacks.append((stage, reason))
        if stage in self.guided:
            self.guided.remove(stage)


# -- triage ---------------------------------------------------------------------------------------


def guide_triage(run: LLMRun, prompt: str, history: Sequence[str]) -> prompts.TriageAnswer | None:
    """A rewrite and reasoning from the model (the skip decision stays with the offline rules)."""
    if not run.enabled("triage") or not history:
        return None
    answer = run.ask("triage", prompts.TriageAnswer, *prompts.triage_prompt(prompt, history), TRIAGE_MAX_TOKENS)
    if answer is None:
        return None
    problem = _rewrite_problem(answer.rewritten_query, prompt, history)
    if problem:
        run.fall_back("triage", problem)
        return None
    return answer


MAX_REWRITE_CHARS = 1_000
_NEW_TERMS_SHARE = 0.5  # of a rewrite's terms, at most this share may be words neither the prompt nor history uses


def _rewrite_problem(rewrite: str, prompt: str, history: Sequence[str]) -> str | None:
    """Why the model's rewrite of a follow-up cannot stand in for the prompt, or None: it must be short and made of
    the words of the prompt and the session's prompts (a rewrite of other words had searched for something the
    user never asked, and answered nothing)."""
    if not rewrite.strip() or len(rewrite) > MAX_REWRITE_CHARS:
        return f"unusable rewrite (empty or over {MAX_REWRITE_CHARS:,} characters)"
    terms = analyzer.term_set(rewrite)
    asked = analyzer.term_set(" ".join([prompt, *history]))
    if not terms & asked or len(terms - asked) > _NEW_TERMS_SHARE * len(terms):
        return "unusable rewrite (mostly words neither the prompt nor the session used)"
    return None


# -- target ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OutlineEntry:
    """A BM25 candidate section as offered to the model in the outline."""

    id: str
    section_id: int
    tree_path: str
    score: float
    snippet: str


def outline_line(candidate: OutlineEntry) -> str:
    path, snippet = prompts.quote(candidate.tree_path), prompts.quote(candidate.snippet)
    return f"{candidate.id} | {path} | score {candidate.score:.1f} | {snippet}"


def guide_target(run: LLMRun, question: str, candidates: Sequence[OutlineEntry]) -> list[tuple[int, str]] | None:
    """(section id, reason) pairs the model picked from the candidates; None to keep BM25's choice.
    Each reason is the model's, bounded and on one line (``_reason``).

    The outline holds as many of the candidates, strongest first, as fit the call's size and half
    the remaining token budget (the rest is for extraction); fewer than ``MIN_OUTLINE`` is not worth
    asking about, so the call is then refused with the limit that bit."""
    if not run.enabled("target") or not candidates:
        return None
    size = run.size("target", prompts.TargetAnswer, TARGET_MAX_TOKENS)
    if size is None:
        return None
    picks = max(1, min(MAX_PICKS, (size.max_tokens - 10) // TOKENS_PER_PICK))
    frame = sum(map(len, prompts.target_prompt(question, [], picks)))
    room = min(size.prompt_chars, run.remaining_prompt_tokens() * run.client.pace.chars_per_token // 2) - frame
    lines: list[str] = []
    for candidate in candidates:
        line = outline_line(candidate)
        room -= len(line) + 1
        if room < 0 and len(lines) >= MIN_OUTLINE:
            break
        lines.append(line)
    answer = run.ask("target", prompts.TargetAnswer, *prompts.target_prompt(question, lines, picks), size=size)
    if answer is None:
        return None
    offered = candidates[: len(lines)]
    # Ids are asked for; a model that answers with the path instead is understood too. Anything else is invented.
    by_key = {**{c.tree_path: c for c in offered}, **{c.id: c for c in offered}}
    picked = [
        (by_key[p.id.strip()].section_id, _reason(p.relevance_reason))
        for p in answer.sections
        if p.id.strip() in by_key
    ]
    picked = list({sid: reason for sid, reason in reversed(picked)}.items())[::-1]  # first mention wins
    if not picked:
        run.fall_back("target", "the model picked no section from the outline")
        return None
    return picked


def _reason(said: str) -> str:
    """The model's reason for a pick as one bounded line said to be the model's ("the model: …"), or "" for
    none (the offline reason is then given): it is shown in the report and ``relevance_reason`` as data."""
    text = prompts.model_text(said)
    return f"the model: {text}" if text and not instructs(text) else ""


# -- extract --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroundedFact:
    statement: str
    section_key: str  # the SectionText id it was grounded in
    relevance: float


def fit(sections: Sequence[SectionText], room: int) -> list[SectionText]:
    """The strongest sections, cut to share ``room`` characters of prompt, markers included.

    Each section sent keeps at least its first ``MIN_SECTION_CHARS``; the weakest are left out
    when that many do not fit (at least one is always sent: the call's size check refuses it).  A section with no
    text (a heading alone) is not sent: on a local endpoint's small prompt it had taken one of two places."""
    sections = [s for s in sections if s.text.strip()]
    if not sections:
        return []
    frame = max(len(prompts.block(SectionText(s.id, s.tree_path, ""))) + 2 for s in sections)
    count = max(1, min(len(sections), room // (MIN_SECTION_CHARS + frame)))
    per = max(MIN_SECTION_CHARS, room // count - frame)
    return [SectionText(s.id, s.tree_path, s.text[:per]) for s in sections[:count]]


def guide_extract(run: LLMRun, question: str, sections: Sequence[SectionText]) -> list[GroundedFact] | None:
    """Facts the model extracted, grounded in the sections sent; ungrounded ones are counted and dropped.

    The stage counts as guided only when at least one fact is kept."""
    if not run.enabled("extract") or not sections:
        return None
    size = run.size("extract", prompts.ExtractAnswer, EXTRACT_MAX_TOKENS)
    if size is None:
        return None
    most = None if size.max_tokens >= EXTRACT_MAX_TOKENS else max(1, (size.max_tokens - 10) // TOKENS_PER_FACT)
    sent = fit(sections, size.prompt_chars - sum(map(len, prompts.extract_prompt(question, [], most))))
    if not sent:
        run.fall_back("extract", "no section read has text to send")
        return None
    answer = run.ask("extract", prompts.ExtractAnswer, *prompts.extract_prompt(question, sent, most), size=size)
    if answer is None:
        return None
    texts = {s.id: s.text for s in sent}
    kept = []
    for fact in answer.facts:
        text = texts.get(fact.source.strip())
        if text is None or not grounded(fact.statement, text):
            run.ungrounded += 1
            continue
        kept.append(GroundedFact(fact.statement.strip(), fact.source.strip(), fact.relevance))
    if not kept:
        given = len(answer.facts)
        run.fall_back(
            "extract",
            f"none of the model's {given} facts was found in the sections sent"
            if given
            else "the model found no fact in the sections sent",
        )
    return kept


# -- summary --------------------------------------------------------------------------------------


def guide_summary(run: LLMRun, question: str, facts: Sequence[str]) -> str | None:
    """Two or three sentences built only from the kept facts (``summary_problem`` finds none).

    The strongest facts that fit the call's size are sent, and the summary is judged against those."""
    if not run.enabled("summary") or not facts:
        return None
    size = run.size("summary", prompts.SummaryAnswer, SUMMARY_MAX_TOKENS)
    if size is None:
        return None
    room = size.prompt_chars - sum(map(len, prompts.summary_prompt(question, [])))
    sent: list[str] = []
    for fact in facts:
        room -= len(fact) + 3  # "- " and a newline
        if sent and room < 0:
            break
        sent.append(fact)
    answer = run.ask("summary", prompts.SummaryAnswer, *prompts.summary_prompt(question, sent), size=size)
    if answer is None:
        return None
    summary = " ".join(answer.summary.split())
    if not summary or len(summary) > 1200:
        run.fall_back("summary", "unusable summary")
        return None
    problem = summary_problem(summary, sent, question)
    if problem is not None:
        run.fall_back("summary", problem)
        return None
    return summary
