"""What the pipeline stages produce: frozen dataclasses handed from one stage to the next."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from retriever.memory.gitinfo import Revision
from retriever.memory.provenance import When
from retriever.text.models import Lines, Skipped, UnitKind

Decision = Literal["retrieve", "skip"]
Strategy = Literal["narrow", "moderate", "broad", "none"]
Coverage = Literal["comprehensive", "partial", "limited", "none"]
Mode = Literal["offline", "llm"]
CandidateKind = UnitKind | Literal["llm"]  # "llm": a fact the model extracted


@dataclass(frozen=True, slots=True)
class Request:
    """Validated tool arguments."""

    prompt: str
    session_id: str | None = None


@dataclass(frozen=True, slots=True)
class Triage:
    decision: Decision
    reasoning: str
    rewritten_query: str | None


@dataclass(frozen=True, slots=True)
class Target:
    """A section chosen in phase 1, with why."""

    section_id: int
    rel_path: str
    ordinal: int
    tree_path: str
    source_path: str
    lines: Lines
    score: float  # BM25F
    coverage: float  # share of the query's idf weight found anywhere in the section
    reason: str
    section_text: str = ""  # headings and body, for token estimates and LLM extraction


@dataclass(frozen=True, slots=True)
class Phase1:
    search_strategy: Strategy
    estimated_tokens: int
    targets: tuple[Target, ...]
    reasoning: str
    sections_scored: int = 0
    decided: tuple[int, ...] = ()  # decision sections evidence chose for a decision question (evidence.decisions)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A statement from a targeted section, before scoring."""

    statement: str
    target: Target
    lines: Lines
    kind: CandidateKind
    context: str = ""  # text that frames the statement (a parent list item)
    llm_relevance: float | None = None  # the model's own relevance, for facts it extracted
    cells: tuple[tuple[str, str], ...] = ()  # a table row's (column, value) pairs, to phrase it as a sentence
    speaker: str | None = None  # the transcript turn's speaker label (``speakers.turns``)
    shown: str = ""  # the statement as a fact shows it, when that differs (a continued turn names its speaker)
    # The statement's meaning vector, packed, when the index stored it (``Unit.vector``); b"": embed it.
    vector: bytes = field(default=b"", compare=False, repr=False)
    # The statement's terms and its context's, when its section's stored statements give them (``extract``): ()
    # and None, analyse the texts.
    terms: tuple[str, ...] = field(default=(), compare=False, repr=False)
    context_terms: frozenset[str] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate while the score stage ranks it (``score``)."""

    candidate: Candidate
    relevance: float  # the rank value until ``calibrate``, then the relevance score
    valid_at: str = ""  # the document's last change, for "among equals, the newer wins"
    evidence: float = 0.0  # answerability evidence of this fact (used when it ranks first)
    own: float = 0.0  # the query weight its own words cover, headings aside: breaks ties within a section


@dataclass(frozen=True, slots=True)
class Fact:
    statement: str
    relevance_score: float
    source_path: str
    tree_path: str
    lines: Lines
    rel_path: str
    section_heading: str | None  # the heading as written, for evaluation and citations
    source_title: str
    section_id: int
    when: When = field(default_factory=lambda: When())
    cells: tuple[tuple[str, str], ...] = ()  # a table row's (column, value) pairs, to phrase it as a sentence
    speaker: str | None = None  # the transcript turn's speaker label (``Candidate.speaker``)
    model_written: bool = False  # the model's wording of a statement (an LLM-extracted fact), not the memory's
    field: bool = False  # a front-matter field of its document, a summary or a reason (``text.field_statements``)


@dataclass(frozen=True, slots=True)
class Entity:
    label: str
    type: str
    properties: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Relationship:
    source: str
    target: str
    type: str


@dataclass(frozen=True, slots=True)
class Excerpt:
    source_path: str
    tree_path: str
    lines: Lines
    excerpt: str
    truncated: bool
    when: When = field(default_factory=lambda: When())


@dataclass(frozen=True, slots=True)
class Retrieval:
    context_summary: str
    facts: tuple[Fact, ...]
    entities: tuple[Entity, ...]
    relationships: tuple[Relationship, ...]
    documents: tuple[Excerpt, ...]
    avg_relevance_score: float
    coverage_assessment: Coverage
    answerability: float | None = None  # P(the facts answer the question); None when nothing was retrieved

    @property
    def total_items(self) -> int:
        return len(self.facts) + len(self.entities) + len(self.documents)


@dataclass(frozen=True, slots=True)
class LLMUse:
    """What the LLM did in one retrieval (offline: no ``LLMUse`` at all)."""

    model: str
    stages_guided: tuple[str, ...]
    calls: int
    tokens_in: int
    tokens_out: int
    cache_hits: int
    fallbacks: tuple[tuple[str, str], ...]  # (stage, reason)
    ungrounded_facts_dropped: int
    model_written_facts: int = 0  # facts returned in the model's wording (``Fact.model_written``)


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """How one retrieval went: request, timings, index state, LLM use, warnings."""

    request_id: str
    duration_ms: float
    estimated_tokens: int
    sections_searched: tuple[str, ...]
    avg_relevance_score: float
    gemini_calls_estimate: int
    mode: Mode
    warnings: tuple[str, ...]
    timings_ms: Mapping[str, float] = field(default_factory=dict)
    session_id: str | None = None
    sections_indexed: int = 0
    documents_indexed: int = 0
    index_cache: str = "disabled"  # RefreshStats.cache: "hit", "updated", "built" or "disabled"
    skipped_files: tuple[Skipped, ...] = ()
    llm: LLMUse | None = None
    revision: Revision | None = None  # the git revision answered from; None for the working tree
    answerability: float | None = None
