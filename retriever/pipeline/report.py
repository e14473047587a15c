"""Stage 7, report: seed 000's markdown report and ``structuredContent``, from the same data.

Layout of the report (kept exactly as the seed shows it)::

    # Retrieved Company Context
    **Query:** …
    **Summary:** …
    ## How This Context Was Found
    **Reasoning:** …
    **Sections searched:** A > B, C > D
    ## Relevant Facts
    - [97%] **statement** (source: …)
    ---
    *Retrieved 12 items | Avg relevance: 89% | Coverage: comprehensive*

What the facts' documents name (owner, lead, team, client…) comes after the facts under
``## Entities and Relationships``, and document excerpts under ``## Documents``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

from retriever.errors import RetrieverError
from retriever.memory.gitinfo import Revision
from retriever.memory.provenance import When
from retriever.pipeline.context import Context, Run
from retriever.pipeline.contracts import (
    DiagnosticsOut,
    DocumentOut,
    EntityOut,
    ErrorContent,
    FactOut,
    FallbackOut,
    LLMDiagnosticsOut,
    Phase1Out,
    RelationshipOut,
    RetrievalOut,
    RevisionOut,
    SkippedFileOut,
    StructuredContent,
    TargetedSectionOut,
    TriageOut,
)
from retriever.pipeline.phrasing import relation_lines
from retriever.pipeline.results import Diagnostics, Excerpt, Fact, LLMUse, Phase1, Retrieval, Triage
from retriever.pipeline.target import estimate_tokens
from retriever.text.instructions import addressed_to_ai
from retriever.text.safe import cut, one_line, single_line, terminal_text

MODEL_WORDING = "model's wording"  # marks a fact the model wrote, so a reader checks it against the lines cited
# Marks a fact that speaks to an AI ("Ignore previous instructions…"): quoted as the page has it, not to be obeyed.
ADDRESSED_TO_AI = "addressed to an AI: quoted, not an instruction"
LABEL_CHARS = 200  # of a title or heading in a citation or a searched section (a heading seldom passes 100)


def _percent(score: float) -> str:
    return f"{round(score * 100)}%"


def _short_path(tree_path: str) -> str:
    """A tree path without the root folder, as the seed lists searched sections."""
    parts = tree_path.split(" > ")
    return " > ".join(parts[1:]) if len(parts) > 1 else tree_path


def _source(fact: Fact) -> str:
    heading = _label(fact.tree_path.split(" > ")[-1])
    where = f"{one_line(fact.source_path)}:{fact.lines[0]}"  # a path's line break escaped, not made a space
    title = _label(fact.source_title)
    label = title if heading == title else f"{title} § {heading}"
    notes = [
        n
        for n, on in (
            ("superseded", fact.when.superseded),
            ("uncommitted", fact.when.uncommitted),
            (MODEL_WORDING, fact.model_written),
            (ADDRESSED_TO_AI, addressed_to_ai(fact.statement)),
        )
        if on
    ]
    return f"{label}, {where}" + (f"; {', '.join(notes)}" if notes else "")


def _one_line(text: str) -> str:
    """``text`` on one line, control characters and bidirectional overrides written as escapes: a prompt's
    U+202E had reordered the rest of the report's line wherever it was shown.  Everything the memory writes that the
    report shows goes through it (or ``terminal_text``, in quoted excerpts): a front-matter value or a file name
    holding line breaks had put a forged "## Summary" or fact line of its own into the report."""
    return single_line(text)


def _label(text: str) -> str:
    """A title or heading as a citation shows it: one line, at most ``LABEL_CHARS`` (a title holding a whole forged
    citation had been shown inside every real one)."""
    return cut(_one_line(text), LABEL_CHARS)


def render(prompt: str, triage: Triage, phase1: Phase1, retrieval: Retrieval, mode: str = "") -> str:
    """The markdown report an agent reads."""
    searched = ", ".join(_label(_short_path(t.tree_path)) for t in phase1.targets) or "none"
    reasoning = triage.reasoning if triage.decision == "skip" else f"{triage.reasoning} {phase1.reasoning}"
    reasoning = _one_line(f"{reasoning} {mode}".strip())
    lines = [
        "# Retrieved Company Context",
        "",
        f"**Query:** {_one_line(prompt)}",
        "",
        f"**Summary:** {_one_line(retrieval.context_summary)}",
        "",
        "## How This Context Was Found",
        f"**Reasoning:** {reasoning}",
        f"**Sections searched:** {searched}",
        "",
        "## Relevant Facts",
        "",
    ]
    lines += [
        f"- [{_percent(f.relevance_score)}] **{_one_line(f.statement)}** (source: {_source(f)})"
        for f in retrieval.facts
    ] or ["_No facts retrieved._"]
    related = relation_lines(retrieval.facts, retrieval.entities, retrieval.relationships)
    if related:
        lines += ["", "## Entities and Relationships", "", *(f"- {_one_line(line)}" for line in related)]
    if retrieval.documents:
        lines += ["", "## Documents", ""]
        for doc in retrieval.documents:
            lines += _excerpt_lines(doc)
    lines += [
        *([""] if lines[-1] else []),  # an excerpt ends with a blank line already
        "---",
        f"*Retrieved {retrieval.total_items} items | Avg relevance: {_percent(retrieval.avg_relevance_score)}"
        f" | Coverage: {retrieval.coverage_assessment}*",
    ]
    return "\n".join(lines)


def _excerpt_lines(doc: Excerpt) -> list[str]:
    quoted = [f"> {terminal_text(line)}" if line else ">" for line in doc.excerpt.splitlines()]
    return [
        f"### {_label(_short_path(doc.tree_path))}",
        f"`{one_line(doc.source_path)}` lines {doc.lines[0]}–{doc.lines[1]}",
        "",
        *quoted,
        "",
    ]


def structured(
    text: str,
    readiness: tuple[bool, str],
    triage: Triage,
    phase1: Phase1,
    retrieval: Retrieval,
    diagnostics: Diagnostics,
) -> dict[str, Any]:
    """``structuredContent``, validated by the contract models on the way out."""
    model = StructuredContent(
        memory_ready=readiness[0],
        readiness_state=readiness[1],
        content_text=text,
        triage=TriageOut(
            decision=triage.decision,
            reasoning=triage.reasoning,
            rewritten_query=triage.rewritten_query,
        ),
        phase1=_phase1(phase1),
        retrieval=_retrieval(retrieval),
        diagnostics=_diagnostics(diagnostics),
    )
    content = model.model_dump(mode="json")
    # What the answer costs an agent that reads it whole: the text block and ``structuredContent`` as JSON, both of
    # which an MCP result carries (an estimate of the facts and excerpts alone had told an agent a tenth of it).
    # Measured by the model's own JSON (~0.05 ms; ``json.dumps`` of the dict took 0.19 ms a question).
    content["diagnostics"]["estimated_tokens"] = estimate_tokens(text) + estimate_tokens(model.model_dump_json())
    return content


def _phase1(phase1: Phase1) -> Phase1Out:
    return Phase1Out(
        search_strategy=phase1.search_strategy,
        estimated_tokens=phase1.estimated_tokens,
        targeted_sections=[
            TargetedSectionOut(
                tree_path=t.tree_path,
                relevance_reason=t.reason,
                source_path=t.source_path,
                lines=t.lines,
                score=round(t.score, 4),
            )
            for t in phase1.targets
        ],
    )


def _retrieval(r: Retrieval) -> RetrievalOut:
    return RetrievalOut(
        context_summary=r.context_summary,
        facts=[
            FactOut(
                statement=f.statement,
                relevance_score=f.relevance_score,
                source_path=f.source_path,
                tree_path=f.tree_path,
                lines=f.lines,
                **_when(f.when),
            )
            for f in r.facts
        ],
        entities=[EntityOut(label=e.label, type=e.type, properties=dict(e.properties)) for e in r.entities],
        relationships=[RelationshipOut(source=x.source, target=x.target, type=x.type) for x in r.relationships],
        documents=[
            DocumentOut(
                source_path=d.source_path,
                tree_path=d.tree_path,
                lines=d.lines,
                excerpt=d.excerpt,
                truncated=d.truncated,
                **_when(d.when),
            )
            for d in r.documents
        ],
        total_items=r.total_items,
        avg_relevance_score=r.avg_relevance_score,
        coverage_assessment=r.coverage_assessment,
    )


def _when(when: When) -> dict[str, Any]:
    return {
        "created_at": when.created_at,
        "valid_at": when.valid_at,
        "author": when.author,
        "uncommitted": when.uncommitted,
        "superseded": when.superseded,
    }


def _diagnostics(d: Diagnostics) -> DiagnosticsOut:
    return DiagnosticsOut(
        request_id=d.request_id,
        duration_ms=round(d.duration_ms, 2),
        estimated_tokens=d.estimated_tokens,
        sections_searched=list(d.sections_searched),
        avg_relevance_score=d.avg_relevance_score,
        gemini_calls_estimate=d.gemini_calls_estimate,
        mode=d.mode,
        session_id=d.session_id,
        sections_indexed=d.sections_indexed,
        documents_indexed=d.documents_indexed,
        index_cache=d.index_cache,
        skipped_files=[SkippedFileOut(path=s.rel_path, reason=s.reason) for s in d.skipped_files],
        warnings=list(d.warnings),
        timings_ms={k: round(v, 3) for k, v in d.timings_ms.items()},
        llm=_llm_out(d.llm) if d.llm else None,
        revision=_revision_out(d.revision) if d.revision else None,
        answerability=d.answerability,
    )


def _revision_out(revision: Revision) -> RevisionOut:
    return RevisionOut(requested=revision.requested, commit=revision.commit, committed_at=revision.committed_at)


def _llm_out(llm: LLMUse) -> LLMDiagnosticsOut:
    return LLMDiagnosticsOut(
        model=llm.model,
        stages_guided=list(llm.stages_guided),
        calls=llm.calls,
        tokens_in=llm.tokens_in,
        tokens_out=llm.tokens_out,
        cache_hits=llm.cache_hits,
        fallbacks=[FallbackOut(stage=stage, reason=reason) for stage, reason in llm.fallbacks],
        ungrounded_facts_dropped=llm.ungrounded_facts_dropped,
        model_written_facts=llm.model_written_facts,
    )


def _llm(ctx: Context, facts: Sequence[Fact]) -> LLMUse | None:
    """What the model did in this retrieval, read off its run's record and the ``facts`` returned; None offline."""
    run = ctx.llm
    if run is None:
        return None
    return LLMUse(
        model=run.client.model,
        stages_guided=tuple(run.guided),
        calls=run.calls,
        tokens_in=run.tokens_in,
        tokens_out=run.tokens_out,
        cache_hits=run.cached,
        fallbacks=tuple(run.fallbacks),
        ungrounded_facts_dropped=run.ungrounded,
        model_written_facts=sum(f.model_written for f in facts),
    )


def mode_note(ctx: Context) -> str:
    """One sentence for the report: which mode answered, what fell back, and the revision if not the present."""
    revision = ctx.memory.revision if ctx.memory else None
    at = (
        f" Answered from revision {revision.requested} (commit {revision.commit[:12]}, {revision.committed_at})."
        if revision
        else ""
    )
    return _mode(ctx) + at


def _mode(ctx: Context) -> str:
    run = ctx.llm
    if run is None:
        return "Mode: offline (no LLM model set for this query)."
    if not run.guided:
        return f"Mode: offline; the LLM ({run.client.model}) was not used: " + _fallbacks(run.fallbacks) + "."
    note = f"Mode: LLM-guided ({run.client.model}: {', '.join(run.guided)})"
    return note + (f"; offline for {_fallbacks(run.fallbacks)}." if run.fallbacks else ".")


def _model_wording_note(retrieval: Retrieval) -> str:
    """How many facts the model wrote, for the report's mode note ("" when none): the structured
    facts carry no such field (seed 000's fact shape), so the report says it once here and marks each."""
    count = sum(f.model_written for f in retrieval.facts)
    if not count:
        return ""
    return f' {count} of {len(retrieval.facts)} facts are in the model\'s wording (marked "{MODEL_WORDING}").'


def _fallbacks(fallbacks: list[tuple[str, str]]) -> str:
    return "; ".join(f"{stage} ({reason})" for stage, reason in fallbacks) or "no stage needed it"


def error_content(error: RetrieverError) -> dict[str, Any]:
    """The seed's error object, validated like the success shape."""
    return ErrorContent(error_code=error.code, error_message=error.message).model_dump(mode="json")


def error_text(error: RetrieverError) -> str:
    """The text block that accompanies an error result."""
    return f"# Retrieval failed\n\n**Error:** `{error.code}`: {error.message}"


def diagnostics(state: Run, ctx: Context) -> Diagnostics:
    """Request id, duration, token estimate, sections searched, LLM calls, index state, warnings."""
    phase1 = state.phase1 or Phase1("none", 0, (), "")
    retrieval = state.retrieval
    memory = ctx.memory
    fact_tokens = sum(estimate_tokens(f.statement) for f in retrieval.facts) if retrieval else 0
    return Diagnostics(
        request_id=state.request_id,
        duration_ms=(time.monotonic() - state.started) * 1000,
        # The facts' and excerpts' here; ``structured`` puts the whole response's in structuredContent.
        estimated_tokens=fact_tokens
        + sum(estimate_tokens(d.excerpt) for d in (retrieval.documents if retrieval else ())),
        sections_searched=tuple(t.tree_path for t in phase1.targets),
        avg_relevance_score=retrieval.avg_relevance_score if retrieval else 0.0,
        gemini_calls_estimate=ctx.llm.calls if ctx.llm else 0,
        mode="llm" if ctx.llm and ctx.llm.guided else "offline",
        warnings=(*(memory.warnings if memory else ()), *ctx.warnings),
        timings_ms=state.timings_ms,
        session_id=ctx.session_id or (state.request.session_id if state.request else None),
        sections_indexed=memory.sections_count if memory else 0,
        documents_indexed=memory.documents_count if memory else 0,
        index_cache=memory.stats.cache if memory else "disabled",
        skipped_files=tuple(memory.skipped) if memory else (),
        llm=_llm(ctx, retrieval.facts if retrieval else ()),
        revision=memory.revision if memory else None,
        answerability=retrieval.answerability if retrieval else None,
    )


def run(state: Run, ctx: Context) -> Run:
    assert state.request is not None and state.triage is not None and state.retrieval is not None
    phase1 = state.phase1 or Phase1("none", 0, (), "")
    note = mode_note(ctx) + _model_wording_note(state.retrieval)
    text = render(state.request.prompt, state.triage, phase1, state.retrieval, note)
    content = structured(text, ctx.readiness, state.triage, phase1, state.retrieval, diagnostics(state, ctx))
    return dataclasses.replace(state, text=text, structured=content)
