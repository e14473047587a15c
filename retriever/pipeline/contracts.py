"""The output contract: pydantic models of seed 000's ``structuredContent``.

These models *are* the project's schema (``StructuredContent.model_json_schema()``): the
report stage builds its output through them, so a field can neither go missing nor change
type unnoticed.  Fields beyond the seed's (``tree_path``, ``lines``, ``mode``…) are additions
the seed's consumers ignore.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

from retriever.pipeline.results import Coverage, Decision, Mode, Strategy
from retriever.text.safe import lone_surrogate

Score = float


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TriageOut(_Model):
    decision: Decision
    reasoning: str
    rewritten_query: str | None


class TargetedSectionOut(_Model):
    tree_path: str = Field(min_length=1)
    relevance_reason: str
    source_path: str
    lines: tuple[int, int]
    score: float = Field(
        ge=0,
        description="Fused evidence of the section (own BM25F, document, neighbours; each relative to the best): "
        "0..2, not calibrated.",
    )


class Phase1Out(_Model):
    search_strategy: Strategy
    estimated_tokens: int = Field(ge=0)
    targeted_sections: list[TargetedSectionOut]


class WhenOut(_Model):
    created_at: str | None = Field(description="First commit (git) or front-matter creation date.")
    valid_at: str | None = Field(description="Last commit (git) or front-matter update date.")
    author: str | None = Field(description="Author of the last commit, when git knows it.")
    uncommitted: bool = Field(description="Edited since the last commit.")
    superseded: bool = Field(
        description="The document says it was superseded (not by links on a supersession cycle, which say nothing)."
    )


class FactOut(WhenOut):
    statement: str = Field(min_length=1)
    relevance_score: Score = Field(ge=0, le=1)
    source_path: str = Field(min_length=1)
    tree_path: str
    lines: tuple[int, int]


class EntityOut(_Model):
    label: str = Field(min_length=1)
    type: str = Field(min_length=1)
    properties: dict[str, Any]


class RelationshipOut(_Model):
    source: str
    target: str
    type: str


class DocumentOut(WhenOut):
    source_path: str
    tree_path: str
    lines: tuple[int, int]
    excerpt: str
    truncated: bool


class RetrievalOut(_Model):
    context_summary: str
    facts: list[FactOut]
    entities: list[EntityOut]
    relationships: list[RelationshipOut]
    documents: list[DocumentOut]
    total_items: int = Field(ge=0)
    avg_relevance_score: Score = Field(ge=0, le=1)
    coverage_assessment: Coverage


class SkippedFileOut(_Model):
    path: str
    reason: str


class FallbackOut(_Model):
    stage: str
    reason: str


class LLMDiagnosticsOut(_Model):
    model: str
    stages_guided: list[str] = Field(description="Stages the model answered; the rest stayed offline.")
    calls: int = Field(ge=0)
    tokens_in: int = Field(ge=0)
    tokens_out: int = Field(ge=0)
    cache_hits: int = Field(ge=0)
    fallbacks: list[FallbackOut]
    ungrounded_facts_dropped: int = Field(ge=0)
    model_written_facts: int = Field(
        default=0, ge=0, description="Facts returned in the model's wording rather than a memory statement's."
    )


class RevisionOut(_Model):
    requested: str = Field(description="The commit, tag, branch or date asked for.")
    commit: str
    committed_at: str


class DiagnosticsOut(_Model):
    request_id: str = Field(min_length=1)
    duration_ms: float = Field(ge=0)
    estimated_tokens: int = Field(ge=0)
    sections_searched: list[str]
    avg_relevance_score: Score = Field(ge=0, le=1)
    gemini_calls_estimate: int = Field(ge=0, description="LLM calls made for this retrieval.")
    mode: Mode
    session_id: str | None
    sections_indexed: int = Field(ge=0)
    documents_indexed: int = Field(ge=0)
    index_cache: str
    skipped_files: list[SkippedFileOut]
    warnings: list[str]
    timings_ms: dict[str, float]
    llm: LLMDiagnosticsOut | None = Field(description="What the LLM did; null offline.")
    revision: RevisionOut | None = Field(default=None, description="The git revision answered from; null for now.")
    answerability: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Estimated probability that the facts answer the question (drives coverage_assessment); "
        "null when retrieval was skipped or the memory was not ready.",
    )


class StructuredContent(_Model):
    status: Literal["ok"] = "ok"
    memory_ready: bool
    readiness_state: str = Field(min_length=1)
    content_text: str = Field(min_length=1)
    triage: TriageOut
    phase1: Phase1Out
    retrieval: RetrievalOut
    diagnostics: DiagnosticsOut


def _encodable(value: str) -> str:
    """Text UTF-8 can carry: a lone surrogate (``"\\ud800"``) is a value error naming where it is."""
    position = lone_surrogate(value)
    if position is not None:
        raise ValueError(
            f"text holds an unpaired surrogate (U+{ord(value[position]):04X}) at character {position}; "
            "send valid Unicode text"
        )
    return value


Text = Annotated[str, AfterValidator(_encodable)]
Name = Annotated[str, StringConstraints(max_length=256), AfterValidator(_encodable)]  # an agent's or a person's
Email = Annotated[str, StringConstraints(max_length=320), AfterValidator(_encodable)]  # RFC 5321's longest address


MAX_GRAPH_IDS = 1000  # graph ids one /memories/retrieve request may list (a repeated id is read once)


class MemoriesRetrieveRequest(BaseModel):
    """Seed 003's ``POST /memories/retrieve`` body (unknown fields are ignored, as FastAPI does).

    Every string must be encodable as UTF-8 (no lone surrogates): the answer echoes them.  The seed
    bounds only ``query``; the echoed ``agent_id`` and ``display_name`` (256 characters), ``email`` (320) and
    ``graph_ids`` (``MAX_GRAPH_IDS`` ids) are bounded here, so no answer, log row or cache key grows with what a
    client sends.
    """

    model_config = ConfigDict(extra="ignore")

    query: Text = Field(min_length=1, max_length=5000, description="The user message to retrieve memories for")
    agent_id: Name
    display_name: Name | None = None
    email: Email | None = None
    # A graph id names a configured tree (an unknown one is quoted back cut short).  Unbounded, a 1 MB list of
    # 490,000 numbers drew one validation error each (a 52 MB reply, 730 MB and 25 s to build); past the cap
    # pydantic refuses the list before it reads its items.
    graph_ids: list[Text] | None = Field(default=None, max_length=MAX_GRAPH_IDS)


class ErrorContent(_Model):
    status: Literal["error"] = "error"
    error_code: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    error_message: str = Field(min_length=1)
