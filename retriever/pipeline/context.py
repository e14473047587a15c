"""The state that flows through the pipeline (``Run``) and what every stage may consult (``Context``)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from retriever.config import Settings
from retriever.errors import RetrievalTimeout
from retriever.memory.memory import Memory
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate, Fact, Phase1, Request, Retrieval, Triage
from retriever.pipeline.speakers import Speakers

if TYPE_CHECKING:  # the LLM modules load only when a model is configured (a CLI query without one skips them)
    from retriever.llm.guided import LLMRun


@dataclass(frozen=True)
class Context:
    """Read-only inputs of one retrieval: the memory, settings, session history and the deadline."""

    memory: Memory | None  # None when the root is missing: the result says "not ready"
    settings: Settings
    history: Sequence[str] = ()  # the session's prior prompts, oldest first
    deadline: float = float("inf")  # time.monotonic() value
    readiness: tuple[bool, str] = (False, "missing")
    session_id: str | None = None  # the session the caller resolved (argument, else handshake)
    llm: LLMRun | None = None  # None: offline
    warnings: tuple[str, ...] = ()  # the caller's own (a server's store failing), reported after the memory's

    def check_deadline(self) -> None:
        """Raise ``RetrievalTimeout`` once the deadline has passed."""
        if time.monotonic() > self.deadline:
            raise RetrievalTimeout(
                f"retrieval exceeded its {self.settings.deadline_seconds:g} s deadline; "
                "narrow the prompt or raise RETRIEVER_DEADLINE_SECONDS"
            )


@dataclass(frozen=True)
class Run:
    """One retrieval as it moves through the stages; each stage returns a new ``Run``."""

    arguments: Mapping[str, Any]
    request_id: str
    started: float
    request: Request | None = None
    query: Query | None = None  # the analysed query (set by triage)
    triage: Triage | None = None
    phase1: Phase1 | None = None
    candidates: tuple[Candidate, ...] = ()
    speakers: Speakers = field(default_factory=Speakers)  # the candidates' speakers the question names (extract)
    facts: tuple[Fact, ...] = ()
    retrieval: Retrieval | None = None
    text: str = ""  # the markdown report
    structured: Mapping[str, Any] = field(default_factory=dict)  # structuredContent
    timings_ms: Mapping[str, float] = field(default_factory=dict)

    @property
    def skipped(self) -> bool:
        return self.triage is not None and self.triage.decision == "skip"

    @property
    def query_text(self) -> str:
        """The query retrieval works on: triage's rewrite, else the prompt."""
        if self.triage and self.triage.rewritten_query:
            return self.triage.rewritten_query
        return self.request.prompt if self.request else ""
