"""Within a document, the facts that say the question in their own words come first.

Part of the score stage (``score.run`` calls it last, before calibration).  Contract: ``own_first(ranked,
headed)`` reorders each document's facts among the places they already hold, so which documents rank where never
changes: a decision record's decision first (``BY_FORM``), then the facts whose own words (or their
neighbours') hold some of the question, then those only their headings tie to it, rank order otherwise.
``heading_shares`` says which sections' own headings hold the question as a fact's words would.
"""

from __future__ import annotations

from collections.abc import Mapping

from retriever.memory.fields import title_text
from retriever.memory.memory import Memory
from retriever.pipeline.query import Query, weights
from retriever.pipeline.results import Scored
from retriever.pipeline.signals import BY_FORM
from retriever.text import analyzer


def own_first(ranked: list[Scored], headed: Mapping[int, float] | None = None) -> list[Scored]:
    """Within each document, its facts whose own words (or their neighbours') hold some of the question come
    before those that only its headings tie to it, in the places the document's facts already hold.  A
    preamble line ("Period: 2026-01-01 to 2026-11-20.") under a title that is the question ranked above the
    row holding the answer; documents keep their places, so which documents rank where is unchanged.  A section
    whose own heading holds as much of the question as any of the document's facts does by its own words
    (``headed``: ``heading_shares``, "Risks" of "Project Riverbed") holds it for each of its statements.  A
    decision record's decision (``forms.favour``) comes before all of them."""
    slots: dict[str, list[int]] = {}
    for i, s in enumerate(ranked):
        slots.setdefault(s.candidate.target.rel_path, []).append(i)
    out = list(ranked)
    heads = headed or {}
    for places in slots.values():
        facts = [ranked[i] for i in places]
        most = max(s.own for s in facts)
        # A decision (``BY_FORM``) first, then what holds the question; stable: rank order otherwise.
        facts.sort(
            key=lambda s: (
                s.own < BY_FORM,
                s.own <= 0 and not 0 < most <= heads.get(s.candidate.target.section_id, 0.0),
            )
        )
        for i, fact in zip(places, facts, strict=True):
            out[i] = fact
    return out


def heading_shares(memory: Memory, query: Query, ranked: list[Scored]) -> dict[int, float]:
    """For the sections of ``ranked`` whose own heading holds words of the question that neither the document's
    title nor the headings above it hold ("Risks" under "Project Riverbed", for "What are the risks for Project
    Riverbed?"), the share of the question's weight those words hold.  A preamble has none, nor a section under a
    page's one top-level heading (the title as the page writes it, "# Q3 plan: risks and budget"); a page whose
    sections are all top-level headings ("# Milestones", "# Risks") is read as any other."""
    whole = weights(query, memory.index)
    total = sum(whole.values())
    out = {}
    tops: dict[str, int] = {}  # a document's top-level headings
    for sid in {s.candidate.target.section_id for s in ranked}:
        doc, section = memory.section(sid)
        if doc.rel_path not in tops:
            tops[doc.rel_path] = sum(1 for other in doc.sections if other.level == 1)
        titled = section.level == 1 and tops[doc.rel_path] == 1
        if total and section.level > 0 and not titled and section.heading_path:
            above = analyzer.term_set(" ".join([title_text(doc), *section.heading_path[:-1]]))
            words = analyzer.term_set(section.heading_path[-1]) - above
            if share := sum(w for t, w in whole.items() if t in words) / total:
                out[sid] = share
    return out
