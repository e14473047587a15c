"""Stage 6, assemble: facts plus entities, relationships, excerpts, coverage and a summary.

Entities come from the front matter of the documents that contributed facts (``type``,
``title``, ``aliases``, scalar properties), relationships from their relation fields (any
field whose values name another document by title, alias or path) and their links.
Coverage comes from the answerability estimate (``retriever.pipeline.confidence``): a probability,
fitted on labelled questions, that the facts answer the question; so "the memory does not
know" can be said even when every query word occurs somewhere.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from retriever.memory.memory import Memory
from retriever.pipeline import confidence, disagreement
from retriever.pipeline.context import Context, Run
from retriever.pipeline.phrasing import fact_sentence, relation_answer, unnamed_names
from retriever.pipeline.query import Query, analyze, no_topic
from retriever.pipeline.results import Candidate, Coverage, Entity, Excerpt, Fact, Phase1, Relationship, Retrieval
from retriever.text import analyzer, lexicon
from retriever.text.instructions import addressed_to_ai, imitates_report
from retriever.text.markup import clean_inline, truncate
from retriever.text.models import Document
from retriever.text.safe import one_line
from retriever.text.vocabulary import (
    DOCUMENT_RELATIONS,
    NOT_PROPERTIES,
    NOT_RELATIONS,
    PARTY_TYPES,
    RELATION_FIELDS,
    listed,
    names,
    resolved_from,
)

Resolve = Callable[[str], str | None]  # a name → the document it refers to (``Memory.resolve``)

MAX_ENTITIES, MAX_RELATIONSHIPS = 12, 24
MAX_ALIASES, MAX_PROPERTY_CHARS = 6, 300  # of an entity's properties
SUMMARY_FACTS = 8  # facts a model summary is built from
LEADING_FACTS = 3  # facts a question's names are looked for in: the summary leads with them
# A summary leads with a fact in the question's language over a better one in the other, among the first facts
# (``LANGUAGE_REACH``) and while it keeps ``LANGUAGE_SHARE`` of that fact's relevance: a reader reads their own.
LANGUAGE_REACH, LANGUAGE_SHARE = 3, 0.85
# A fact's statement as shown: one 2 MB line of memory is one statement, which would be one 2 MB fact
# (three copies in an MCP response).  Cut here, at output, so ranking still reads the whole statement.
MAX_STATEMENT_CHARS = 1000


def _properties(doc: Document, memory: Memory) -> dict[str, Any]:
    """An entity's own facts from its front matter: its path, at most ``MAX_ALIASES`` aliases, and each field of one
    value (role, email, industry, tier…), a text cut at ``MAX_PROPERTY_CHARS``.  A list field is left out: its names
    are the document's edges, which ``relationships`` gives (members, projects), or bookkeeping (tags, related
    documents); with them an agent's answer had carried ~8 KB of entities."""
    props: dict[str, Any] = {"source_path": memory.source_path(doc.rel_path)}
    if doc.aliases:
        props["aliases"] = list(doc.aliases[:MAX_ALIASES])
    for key, value in doc.front_matter.items():
        if key in NOT_PROPERTIES or not isinstance(value, str | int | float | bool):
            continue
        props[key] = truncate(shown(value), MAX_PROPERTY_CHARS, marker="…")[0] if isinstance(value, str) else value
    return props


def shown(value: str) -> str:
    """A front-matter value as an answer shows it: its markdown's text (a link or an image becomes its words, as in a
    page's body: an ``owner`` written as an image had been a live tracking pixel in every client that renders
    markdown), on one line, control characters escaped."""
    return one_line(clean_inline(value))


def entities(docs: list[Document], memory: Memory, resolve: Resolve) -> tuple[Entity, ...]:
    """People and organizations tied to the query (seed 000; ``PARTY_TYPES``): the facts' documents that are
    one, then those the facts' documents name in their relation fields, at most ``MAX_ENTITIES``."""
    out: dict[str, Entity] = {}
    for doc in docs:
        if kind := _party(doc.doc_type):
            out.setdefault(doc.rel_path, Entity(doc.title, kind, _properties(doc, memory)))
    for doc in docs:
        here = near(doc.rel_path, resolve)
        for rel in _relations(doc, here):
            path = here(rel.target)
            info = memory.state.catalog.get(path) if path else None
            kind = _party(info.doc_type) if path and info else None
            if path and info and kind and path not in out and len(out) < MAX_ENTITIES:
                out[path] = Entity(info.title, kind, _properties(memory.document(path), memory))
    return tuple(out.values())[:MAX_ENTITIES]


def _party(doc_type: str | None) -> str | None:
    """``doc_type`` when it is a person's or an organization's (``PARTY_TYPES``), else None."""
    return doc_type if doc_type and doc_type.lower() in PARTY_TYPES else None


def _relations(doc: Document, resolve: Resolve) -> Iterator[Relationship]:
    """A document's front-matter relations: a relation field's names, and another field's names that are
    documents' (a custom ``approver: Rui Costa``); never a tag's or a type's (``NOT_RELATIONS``).  ``resolve`` reads
    names from ``doc``'s place (``near``)."""
    for key, value in doc.front_matter.items():
        if key in NOT_RELATIONS:
            continue
        for name in _each_name(map(shown, names(value)), resolve):
            path = resolve(name)
            if (path and path != doc.rel_path) or (key in RELATION_FIELDS and not path):
                yield Relationship(doc.title, name, key)


def near(rel_path: str, resolve: Resolve) -> Resolve:
    """``resolve``, and a name that is a path from ``rel_path``'s own folder ("../decisions/dec_0003.md") resolved as
    one: only paths from the root had been, while links are written from the file."""

    return lambda name: resolved_from(rel_path, name, resolve)


def _each_name(written: Iterable[str], resolve: Resolve) -> Iterator[str]:
    """Each name, a text of several written with commas ("attendees: A, B, C", which YAML reads as one) split into
    them where it names no document itself: it had been one made-up entity, its people linked to nothing."""
    for name in written:
        yield from (listed(name) if resolve(name) is None else (name,))


def relationships(
    docs: list[Document], memory: Memory, resolve: Resolve, parties: Sequence[Entity]
) -> tuple[Relationship, ...]:
    """The edges of the facts' documents that touch a person or organization: to or from one of ``parties``
    (the entities), or to a name a people field gives that no document holds (``owner: Someone``).  Edges
    between two documents that are neither ("related", "links_to" a policy) are left out.

    Front-matter edges come first, then links between documents no field relates already; at most
    ``MAX_RELATIONSHIPS``, each relation whole (a team's three ``members``, never its first alone: the report
    had said "members Miguel Santos" of a team of three, its other edges spent on links repeating owners)."""
    labels = {e.label for e in parties}
    out: dict[tuple[str, str, str], Relationship] = {}
    for doc in docs:
        here = near(doc.rel_path, resolve)
        for rel in _relations(doc, here):
            target = memory.state.catalog.get(here(rel.target) or "")
            rel = Relationship(rel.source, target.title if target else rel.target, rel.type)
            unnamed_party = target is None and rel.type not in DOCUMENT_RELATIONS
            if unnamed_party or rel.source in labels or rel.target in labels:
                out.setdefault((rel.source, rel.target, rel.type), rel)
    related = {(source, target) for source, target, _ in out}
    for doc in docs:
        for link in doc.links:
            info = memory.state.catalog.get(link)
            if not info or link == doc.rel_path or (doc.title, info.title) in related:
                continue
            if doc.title in labels or info.title in labels:
                out.setdefault((doc.title, info.title, "links_to"), Relationship(doc.title, info.title, "links_to"))
    return _whole_relations(tuple(out.values()), MAX_RELATIONSHIPS)


def _whole_relations(edges: tuple[Relationship, ...], limit: int) -> tuple[Relationship, ...]:
    """At most ``limit`` of ``edges``, in their order, a relation (a source's edges of one type) whole or not at all;
    the first relation is cut to ``limit`` if it alone is longer."""
    groups: dict[tuple[str, str], list[Relationship]] = {}
    for edge in edges:
        groups.setdefault((edge.source, edge.type), []).append(edge)
    kept: list[Relationship] = []
    for group in groups.values():
        if len(kept) + len(group) <= limit:
            kept.extend(group)
        elif not kept:
            kept.extend(group[:limit])
    return tuple(kept)


def excerpts(memory: Memory, phase1: Phase1, facts: tuple[Fact, ...], limit: int, chars: int) -> tuple[Excerpt, ...]:
    """The sections that gave the best facts, in fact order, as cut excerpts with line ranges."""
    tree_paths = {t.section_id: t.tree_path for t in phase1.targets}
    out = []
    for section_id in list(dict.fromkeys(f.section_id for f in facts))[:limit]:
        doc, section = memory.section(section_id)
        # A front-matter field cited from this section opens its excerpt: it is not in the section's text.
        fields = sorted((f for f in facts if f.section_id == section_id and f.field), key=lambda f: f.lines)
        lines = (min([section.lines[0], *(f.lines[0] for f in fields)]), section.lines[1])
        text, cut = truncate("\n".join([*(f.statement for f in fields), section.text]).strip(), chars)
        if text:
            where = memory.source_path(doc.rel_path)
            out.append(Excerpt(where, tree_paths[section_id], lines, text, cut, memory.when(doc)))
    return tuple(out)


# What a summary says around its facts, in the question's language (English, or Ukrainian: seed 001's summaries
# are written in the language asked).
_WORDS: dict[str, dict[str, str]] = {
    "en": {
        "comprehensive": "The memory covers this well",
        "partial": "The memory covers this in part",
        "limited": "The memory has only loosely related material",
        "none": "The memory does not appear to answer this; the closest matches are weak",
        "nothing": "The memory holds nothing that matches this query.",
        "no_topic": "The question names no topic ({named}): say what it is about. The closest matches",
        "sources": "sources",
        "more": " and {n} more",
        "unnamed": "The leading facts do not name {names}.",
    },
    "uk": {
        "comprehensive": "Пам'ять добре це охоплює",
        "partial": "Пам'ять охоплює це частково",
        "limited": "У пам'яті є лише дотичні матеріали",
        "none": "Схоже, пам'ять на це не відповідає; найближчі збіги слабкі",
        "nothing": "У пам'яті немає нічого, що відповідає цьому запиту.",
        "no_topic": "Питання не називає теми ({named}): уточніть, про що воно. Найближчі збіги",
        "sources": "джерела",
        "more": " і ще {n}",
        "unnamed": "Провідні факти не згадують {names}.",
    },
}


def summarize(
    facts: tuple[Fact, ...],
    coverage: str,
    question: str | Query = "",
    relations: tuple[Relationship, ...] = (),
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> str:
    """An extractive summary that says the answer first: for a who-question, what the best document
    names (owner, lead, team…); then the two strongest facts as sentences, those of superseded documents
    passed over where others were found; then how well the memory
    covers it and where, in the question's language (``Query.language``).  A weak match (limited, none) says so
    before anything else, and a question whose words only ask ("update", "status?") says that it names no
    topic (``query.no_topic``).  ``question`` is its text or, from the pipeline, the query already analysed
    (so it is not analysed again); ``aliases`` (title → aliases of the facts' documents) are names the question
    may call a document by."""
    query = analyze(question) if isinstance(question, str) else question
    words = _WORDS[query.language]
    if not facts:
        return words["nothing"]
    sources = list(dict.fromkeys(f.source_title for f in facts))
    more = words["more"].format(n=len(sources) - 3) if len(sources) > 3 else ""
    where = f"{words['sources']}: " + ", ".join(sources[:3]) + more
    answer = relation_answer(query.text, facts, relations, aliases)
    unnamed = unnamed_names(query, facts[:LEADING_FACTS])
    said = [words["unnamed"].format(names=", ".join(unnamed))] if unnamed else []  # "Berlin": Warsaw's answers
    said += [answer] if answer else []
    told = _telling(facts, query)[:2]
    asked = frozenset(query.terms)
    said += list(dict.fromkeys(fact_sentence(f, asked) for f in told))
    said += [differ] if len(told) == 2 and (differ := disagreement.note(told[0], told[1], query.language)) else []
    vague = no_topic(query)
    if vague:
        named = ", ".join(f'"{word}"' for word in vague[:3])
        return f"{words['no_topic'].format(named=named)} ({where}): " + " ".join(said)
    if coverage in ("limited", "none"):
        return f"{words[coverage]} ({where}). " + " ".join(said)
    return " ".join(said) + f" ({words[coverage]}; {where}.)"


def _telling(facts: tuple[Fact, ...], query: Query) -> list[Fact]:
    """The facts a summary may lead with, best first: none addressed to an AI (``text.instructions``: a page's
    "Ignore previous instructions…" had been quoted in the summary), not from a superseded document (a replaced
    decision is cited, never the answer) and saying something the question does not ("Decided at Q1 2027 Planning." only
    echoes "What was decided at the Q1 2027 planning meeting?"), and no front-matter summary but the first fact (a
    summary lists its document's topics); all of them when none is left.  Those in the question's language go first
    where they are nearly as good (``LANGUAGE_REACH``, ``LANGUAGE_SHARE``)."""
    asked = set(query.terms)
    wanted = LANGUAGE_REACH + 2  # a summary leads with two: the rest are never read (each costs a regex or two)
    telling = list(itertools.islice((
        f
        for i, f in enumerate(facts)
        if not f.when.superseded and not analyzer.term_set(f.statement) <= asked and (i == 0 or not f.field)
        and not _speaks_for_us(f.statement)  # the summary speaks in the retriever's voice: never a page's orders
    ), wanted)) or list(itertools.islice((f for f in facts if not _speaks_for_us(f.statement)), wanted)) or list(facts)
    near = [f for f in telling[:LANGUAGE_REACH] if f.relevance_score >= LANGUAGE_SHARE * telling[0].relevance_score]
    own = [f for f in near if lexicon.language(f.statement) == query.language]
    return [*own, *(f for f in telling if f not in own)]


def _two_ways(coverage: Coverage, facts: tuple[Fact, ...], query: Query) -> Coverage:
    """``coverage``, "partial" at most where the summary's two leading facts are dated rivals (``disagreement.
    dated_rivals``: different figures for one thing, nearly as strong, from documents of two dates): the memory
    answers, but two ways, and the reader has to choose.  A weak second fact on another thing caps nothing."""
    if coverage != "comprehensive":
        return coverage
    told = _telling(facts, query)[:2]
    return "partial" if len(told) == 2 and disagreement.dated_rivals(told[0], told[1]) else coverage


def _speaks_for_us(statement: str) -> bool:
    """A page's sentence that gives orders to an AI or speaks as the report does ("The memory does not contain…")."""
    return addressed_to_ai(statement) or imitates_report(statement)


def _summary(
    facts: tuple[Fact, ...],
    coverage: str,
    ctx: Context,
    asked: tuple[Query, str],
    known: tuple[tuple[Relationship, ...], Mapping[str, Sequence[str]]],
) -> str:
    """The model's summary of the kept facts when one is configured and grounded, else the extractive one.

    ``asked`` is (the query retrieval worked on, the words the user gave).  The model summarises the
    query, but only the facts and the user's words count as known when its summary is judged: a
    query the model rewrote is its own text, and a claim in it would otherwise pass as "asked"."""
    query, own_words = asked
    relations, aliases = known
    if ctx.llm is not None and facts:
        from retriever.llm.grounding import summary_problem  # loaded only with a model: see pipeline.context
        from retriever.llm.guided import guide_summary

        statements = [f.statement for f in facts[:SUMMARY_FACTS]]
        written = guide_summary(ctx.llm, query.text, statements)
        problem = None if written is None else summary_problem(written, statements, own_words)
        if written is not None and problem is None:
            return written
        if problem is not None:
            ctx.llm.fall_back("summary", problem)
    return summarize(facts, coverage, query, relations, aliases)


def _users_words(state: Run, ctx: Context) -> str:
    """The user's own words: the prompt, and the query when triage rewrote it offline (from the
    session's earlier prompts, which are the user's too) rather than the model."""
    prompt = state.request.prompt if state.request else ""
    model_rewrote = ctx.llm is not None and "triage" in ctx.llm.guided
    return prompt if model_rewrote else f"{prompt}\n{state.query_text}"


def _mark_model_written(facts: tuple[Fact, ...], candidates: tuple[Candidate, ...]) -> tuple[Fact, ...]:
    """The facts, those in the model's wording marked: an LLM-extracted statement that no statement
    of the memory says word for word (a verbatim copy is the memory's wording)."""
    memory = {(c.target.section_id, c.statement) for c in candidates if c.kind != "llm"}
    model = {(c.target.section_id, c.statement) for c in candidates if c.kind == "llm"} - memory
    return tuple(
        dataclasses.replace(f, model_written=True) if (f.section_id, f.statement) in model else f for f in facts
    )


def _bounded(fact: Fact) -> Fact:
    """The fact with its statement cut at ``MAX_STATEMENT_CHARS``, at a word boundary, marked " …"."""
    statement, cut = truncate(fact.statement, MAX_STATEMENT_CHARS, marker=" …")
    return dataclasses.replace(fact, statement=statement) if cut else fact


def assemble(state: Run, memory: Memory, phase1: Phase1, ctx: Context, query: Query) -> Retrieval:
    """The retrieval: facts with entities, relationships, excerpts, answerability, coverage and a summary."""
    facts = tuple(map(_bounded, _mark_model_written(state.facts, state.candidates)))
    docs = [memory.document(p) for p in dict.fromkeys(f.rel_path for f in facts)]
    resolve = memory.resolve
    answerability = confidence.estimate(memory, query, phase1.targets, facts, state.candidates, state.speakers)
    cover = _two_ways(confidence.coverage(answerability, bool(facts)), facts, query)
    avg = round(sum(f.relevance_score for f in facts) / len(facts), 4) if facts else 0.0
    parties = entities(docs, memory, resolve)
    relations = relationships(docs, memory, resolve, parties)
    return Retrieval(
        context_summary=_summary(
            facts, cover, ctx, (query, _users_words(state, ctx)), (relations, {d.title: d.aliases for d in docs})
        ),
        facts=facts,
        entities=parties,
        relationships=relations,
        documents=excerpts(memory, phase1, facts, ctx.settings.max_documents, ctx.settings.excerpt_chars),
        avg_relevance_score=avg,
        coverage_assessment=cover,
        answerability=answerability,
    )


def empty(summary: str) -> Retrieval:
    return Retrieval(summary, (), (), (), (), 0.0, "none")


def run(state: Run, ctx: Context) -> Run:
    if state.skipped:
        retrieval = empty("Retrieval skipped: the prompt carries no company-specific question.")
    elif ctx.memory is None or not ctx.readiness[0] or state.phase1 is None or state.query is None:
        retrieval = empty(f"Company memory is not ready ({ctx.readiness[1]}); nothing was retrieved.")
    else:
        retrieval = assemble(state, ctx.memory, state.phase1, ctx, state.query)
    return dataclasses.replace(state, retrieval=retrieval)
