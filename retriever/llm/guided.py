"""LLM guidance for the stages, within a per-retrieval budget, always with an offline fallback.

Contract: ``LLMRun`` wraps the client for one retrieval: it refuses calls past
``llm_max_calls``, the prompt-token budget or the deadline, and records calls, tokens, cache
hits, fallbacks (stage and reason) and ungrounded facts for diagnostics.  The ``guide_*``
functions return the LLM's contribution or ``None``; the stage modules keep their offline
result whenever they get ``None``, so any failure degrades to offline retrieval, not to an error.
Facts are grounded before they are kept: their source must be a section that was sent, and
their words and numbers must be found in that section's text.  The summary is grounded in the
facts it summarises the same way (``summary_problem``): its numbers, links, addresses and
instruction-like phrases must all come from the facts, and no sentence of it may have more than
``SUMMARY_NEW_SHARE`` of its content words new; otherwise the offline summary stands, and
``diagnostics.llm.fallbacks`` says why.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel

from retriever.config import Settings
from retriever.llm import prompts
from retriever.llm.client import LLMClient, LLMFailure
from retriever.llm.prompts import SectionText
from retriever.text import analyzer

T = TypeVar("T", bound=BaseModel)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
GROUNDED_SHARE = 0.8  # of a fact's content terms that its section must contain
# Of each sentence of a summary, the share of content terms that may come from neither the facts,
# the question nor _SUMMARY_WORDS.  Per sentence, because an injection or an invention is a sentence
# of its own, while a faithful paraphrase spreads its new words thinly.  Measured with
# scripts/summary_grounding.py: 42 faithful summaries of real retrievals (32 plain, 10 loose
# paraphrases) reach at most 0.43; 16 injected or invented ones at least 0.62.
SUMMARY_NEW_SHARE = 0.5
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_MIN_SENTENCE_TERMS = 3  # shorter sentences are judged together with their neighbour
# Words a faithful summary adds about the facts rather than from them ("the facts do not say …").
_SUMMARY_WORDS = analyzer.term_set(
    "fact memory document source record say state mention note specify specific exact detail information give "
    "list name include cover describe answer question unclear directly explicitly however also both together "
    "overall total example yes instead regardless whether available provided based according appear seem "
    "summary otherwise plus still most make get go come take use need"
)
# Links and addresses, including spelled-out ones ("evil dot example").
_ADDRESS = re.compile(
    r"https?://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:[a-z0-9-]+\.)+[a-z]{2,24}\b"
    r"|\b[\w-]+\s*(?:\[\s*dot\s*\]|\(\s*dot\s*\)|\s+dot\s+)\s*[a-z]{2,24}\b",
    re.I,
)
# What an injected instruction says: to ignore, to whom, about which secrets, what to click.
_INSTRUCTION = re.compile(
    r"\b(?:ignor|disregard|forget|overrid)\w*"
    r"|\b(?:system|developer|admin)\w*\s+(?:notice|prompt|message|instruction)s?\b"
    r"|\b(?:previous|prior|above|new|hidden)\s+instructions?\b"
    r"|\b(?:the\s+)?(?:ai|model|assistant|agent|llm)s?\s*(?:must|should|needs?\s+to|has\s+to|:)"
    r"|\b(?:to|attention)\s+(?:the\s+)?(?:ai|model|assistant|agent|llm)s?\b"
    r"|\btell\s+(?:the\s+)?users?\b|\byou\s+are\s+now\b"
    r"|\b(?:api|access|secret|private|auth)[\s_-]*(?:keys?|tokens?)\b|\b(?:passwords?|credentials?|tokens?)\b"
    r"|\b(?:paste|click|download|execute|curl)\b",
    re.I,
)
MIN_CALL_SECONDS = 1.0  # not worth calling with less time than this left


@dataclass
class LLMRun:
    """One retrieval's LLM budget and record."""

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

    def enabled(self, stage: str) -> bool:
        return stage in self.settings.llm_stages

    def ask(self, stage: str, schema: type[T], system: str, user: str, max_tokens: int = 1500) -> T | None:
        """The model's answer, or None (with the reason recorded) when over budget or failed."""
        needed = math.ceil((len(system) + len(user)) / 4)
        remaining = self.deadline - time.monotonic()
        if self.calls >= self.settings.llm_max_calls:
            self.fall_back(stage, f"call budget of {self.settings.llm_max_calls} spent")
            return None
        if self.prompt_tokens_used + needed > self.settings.llm_token_budget:
            self.fall_back(stage, f"prompt of ~{needed} tokens exceeds the remaining token budget")
            return None
        if remaining < MIN_CALL_SECONDS:
            self.fall_back(stage, "too little time left before the deadline")
            return None
        try:
            answer, usage = self.client.complete(
                schema, system, user, min(self.settings.llm_timeout_seconds, remaining - 0.5), max_tokens
            )
        except LLMFailure as failure:
            self.calls += failure.calls
            self.prompt_tokens_used += needed
            self.fall_back(stage, failure.reason)
            return None
        self.calls += usage.calls
        self.cached += int(usage.cached)
        self.tokens_in += usage.tokens_in
        self.tokens_out += usage.tokens_out
        self.prompt_tokens_used += 0 if usage.cached else needed
        self.guided.append(stage)
        return answer

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
    answer = run.ask("triage", prompts.TriageAnswer, *prompts.triage_prompt(prompt, history), max_tokens=300)
    if answer is None:
        return None
    if not answer.rewritten_query.strip() or len(answer.rewritten_query) > 2000:
        run.fall_back("triage", "unusable rewrite")
        return None
    return answer


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
    """(section id, reason) pairs the model picked from the candidates; None to keep BM25's choice."""
    if not run.enabled("target") or not candidates:
        return None
    lines, budget = [], run.remaining_prompt_tokens() // 2  # leave room for extraction
    for candidate in candidates:
        line = outline_line(candidate)
        budget -= math.ceil(len(line) / 4)
        if budget < 0:
            break
        lines.append(line)
    answer = run.ask("target", prompts.TargetAnswer, *prompts.target_prompt(question, lines), max_tokens=800)
    if answer is None:
        return None
    offered = candidates[: len(lines)]
    # Ids are asked for; a model that answers with the path instead is understood too. Anything else is invented.
    by_key = {**{c.tree_path: c for c in offered}, **{c.id: c for c in offered}}
    picked = [
        (by_key[p.id.strip()].section_id, p.relevance_reason.strip()) for p in answer.sections if p.id.strip() in by_key
    ]
    picked = list({sid: reason for sid, reason in reversed(picked)}.items())[::-1]  # first mention wins
    if not picked:
        run.fall_back("target", "the model picked no section from the outline")
        return None
    return picked


# -- extract --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GroundedFact:
    statement: str
    section_key: str  # the SectionText id it was grounded in
    relevance: float


def grounded(statement: str, section_text: str) -> bool:
    """Whether ``section_text`` supports ``statement``: most of its terms, and all its numbers."""
    terms = analyzer.term_set(statement)
    if not terms:
        return False
    present = analyzer.term_set(section_text)
    if sum(t in present for t in terms) < GROUNDED_SHARE * len(terms):
        return False
    return grounded_numbers(statement, section_text)


def fit(sections: Sequence[SectionText], budget_tokens: int) -> list[SectionText]:
    """Sections cut to share the token budget (each keeps at least its first 400 characters)."""
    if not sections:
        return []
    per = max(400, budget_tokens * 4 // len(sections))
    return [SectionText(s.id, s.tree_path, s.text[:per]) for s in sections]


def guide_extract(run: LLMRun, question: str, sections: Sequence[SectionText]) -> list[GroundedFact] | None:
    """Facts the model extracted, grounded in the sections sent; ungrounded ones are counted and dropped."""
    if not run.enabled("extract") or not sections:
        return None
    system_size = len(prompts.extract_prompt(question, [])[0]) // 4
    sent = fit(sections, run.remaining_prompt_tokens() - system_size - 200)
    answer = run.ask("extract", prompts.ExtractAnswer, *prompts.extract_prompt(question, sent), max_tokens=1500)
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
    return kept


# -- summary --------------------------------------------------------------------------------------


def guide_summary(run: LLMRun, question: str, facts: Sequence[str]) -> str | None:
    """Two or three sentences built only from the kept facts (``summary_problem`` finds none)."""
    if not run.enabled("summary") or not facts:
        return None
    answer = run.ask("summary", prompts.SummaryAnswer, *prompts.summary_prompt(question, facts), max_tokens=300)
    if answer is None:
        return None
    summary = " ".join(answer.summary.split())
    if not summary or len(summary) > 1200:
        run.fall_back("summary", "unusable summary")
        return None
    problem = summary_problem(summary, facts, question)
    if problem is not None:
        run.fall_back("summary", problem)
        return None
    return summary


def summary_problem(summary: str, facts: Sequence[str], question: str) -> str | None:
    """Why ``summary`` cannot stand for ``facts``, or None when it is grounded in them.

    Grounded: every number, link, address and instruction-like phrase in it occurs in the facts, and
    in no sentence do more than ``SUMMARY_NEW_SHARE`` of the content terms come from neither the
    facts, the question nor the words summaries use about facts.  Reasons never quote the summary:
    it is untrusted text.
    """
    source = " ".join(facts)
    if not grounded_numbers(summary, source):
        return "summary states numbers the facts do not"
    if _foreign(_ADDRESS, summary, source):
        return "summary gives a link or address the facts do not"
    if _foreign(_INSTRUCTION, summary, source):
        return "summary gives instructions the facts do not"
    share = summary_new_share(summary, facts, question)
    if share > SUMMARY_NEW_SHARE:
        return f"summary uses words the facts do not ({share:.0%} of a sentence's terms)"
    return None


def summary_new_share(summary: str, facts: Sequence[str], question: str) -> float:
    """The largest share, over the summary's sentences, of content terms found in neither the facts,
    the question nor the words summaries use about facts (0 for a summary without terms)."""
    known = analyzer.term_set(" ".join(facts)) | analyzer.term_set(question) | _SUMMARY_WORDS
    return max((len(terms - known) / len(terms) for terms in _sentence_terms(summary)), default=0.0)


def _sentence_terms(summary: str) -> list[frozenset[str]]:
    """The content terms of each sentence; a sentence with few terms joins the next (or, last, the previous)."""
    groups: list[frozenset[str]] = []
    pending: frozenset[str] = frozenset()
    for sentence in _SENTENCE_END.split(summary):
        pending |= analyzer.term_set(sentence)
        if len(pending) >= _MIN_SENTENCE_TERMS:
            groups.append(pending)
            pending = frozenset()
    if pending and groups:
        groups[-1] |= pending
    elif pending:
        groups.append(pending)
    return groups


def _foreign(pattern: re.Pattern[str], summary: str, source: str) -> bool:
    """Whether ``summary`` has a match of ``pattern`` that ``source`` does not contain (ignoring case)."""
    haystack = " ".join(source.lower().split())
    return any(" ".join(m.group().lower().split()) not in haystack for m in pattern.finditer(summary))


def grounded_numbers(text: str, source: str) -> bool:
    squashed = source.replace(",", "")
    return all(n.replace(",", "") in squashed for n in _NUMBER.findall(text))
