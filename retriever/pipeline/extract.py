"""Stage 4, extract: candidate statements from the targeted sections.

Sentences, list items and table rows ("column: value; …") come from the parser; here a
statement too short to stand alone gets its frame (the parent list item, else the section
heading) so that "4 hours per pay period" reads "Sick leave: 4 hours per pay period".
"""

from __future__ import annotations

import dataclasses
import heapq
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import takewhile
from typing import TYPE_CHECKING, Any

from retriever.memory.memory import Memory
from retriever.pipeline.context import Context, Run
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate, Phase1, Target
from retriever.pipeline.speakers import Turn, named_speakers, turns
from retriever.text import analyzer
from retriever.text.framing import framed
from retriever.text.markup import truncate
from retriever.text.models import Lines, Section, Unit
from retriever.text.sentences import iter_sentences

if TYPE_CHECKING:  # the LLM modules load only when a model is configured: see pipeline.context
    from retriever.llm.guided import LLMRun

_LISTED_ITEMS = 5  # items a lead-in is shown with
_LISTED_CHARS = 160  # of each item's first sentence
# Statements a section is scored in whole up to.  The corpora's longest sections hold ~130 (a glossary, a FAQ, a
# chat session); a log or a transcript pasted under one heading can hold tens of thousands, and each costs
# ~80 µs a question (48,000 under one heading took 4 s).
LONG_SECTION = 400
_START = 5  # letters of a query term that a word of a long section's statement must start with to count
_WORD = re.compile(r"\w+")


def context_of(units: tuple[Unit, ...], i: int) -> str:
    """What frames unit ``i``: its parent item and the statements just before and after it.

    An answer often does not repeat the question's words ("They meet on Fridays." after the
    sentence naming the meeting; a reply in the turn after the question), so its neighbours'
    words count as its context.  A front-matter field (``text.field_statements``) is no neighbour of the body's first
    statement, nor it of the field: they stand apart in the file, and a summary holding the question's words had
    lent them to the preamble line after it ("Period: 2026-01-01 to 2026-11-20.").
    """
    parts = [units[i].context, *(unit.text for unit in _neighbours(units, i))]
    return "\n".join(p for p in parts if p)


def context_terms(units: tuple[Unit, ...], i: int) -> frozenset[str] | None:
    """The terms of ``context_of(units, i)``: its parent item's text analysed, its neighbours' stored
    (``Unit.terms``); None where a neighbour has none stored (the context is then analysed when scored)."""
    found = _neighbours(units, i)
    if any(not unit.terms and unit.text for unit in found):
        return None
    parent = analyzer.term_set(units[i].context) if units[i].context else frozenset()
    return parent.union(*(unit.terms for unit in found))


def _neighbours(units: tuple[Unit, ...], i: int) -> list[Unit]:
    """The statements just before and after unit ``i`` that frame it: fields frame fields, body statements body
    statements (``context_of``)."""
    field = units[i].kind == "field"
    return [units[j] for j in (i - 1, i + 1) if 0 <= j < len(units) and (units[j].kind == "field") == field]


def listed(units: tuple[Unit, ...], i: int) -> tuple[str, int] | None:
    """What a lead-in ("Three accounts … account for 55% of MRR:") introduces: the items of the list that
    starts right after it, each by its first sentence, and the last line they reach; None for any other
    statement.

    A lead-in says that the answer follows, not what it is; shown alone, the fact that ranks first for
    "which accounts…?" ends in a colon.  The items are those of that one list (``Unit.lists``): its
    items' children, second paragraphs and later sentences are passed over, and a list after it (outside
    the quote the lead-in is in, say) is another list.  At most ``_LISTED_ITEMS``, each cut at
    ``_LISTED_CHARS``; the rest are counted."""
    lead = units[i]
    if i + 1 >= len(units):
        return None
    first = units[i + 1]
    nested = len(first.lists) > len(lead.lists) and first.lists[: len(lead.lists)] == lead.lists
    # Past a code block the list is not what the lead-in introduces ("To deploy, run:", a command, a checklist).
    if not (first.opens and nested and lead.introduces(first.lines[0])):
        return None
    own = first.lists[-1]
    inside = takewhile(lambda u: own in u.lists, (units[j] for j in range(i + 1, len(units))))
    items = [u for u in inside if u.opens and u.lists[-1] == own]
    shown = [truncate(_first_sentence(u.text), _LISTED_CHARS, marker="…")[0] for u in items[:_LISTED_ITEMS]]
    more = f"; and {len(items) - _LISTED_ITEMS} more" if len(items) > _LISTED_ITEMS else ""
    last = items[len(shown) - 1].lines[1]
    return "; ".join(item.rstrip(" .;") for item in shown) + more + ".", last


def _introduced(units: tuple[Unit, ...], i: int) -> tuple[str, int] | None:
    """What a lead-in is shown with, and the last line it reaches: its list (``listed``), else the command it
    introduces ("To update the repo, run: `helm repo update`"); None for any other statement."""
    unit = units[i]
    if unit.code:
        return (unit.code if "`" in unit.code else f"`{unit.code}`"), unit.code_end
    return listed(units, i)


def _first_sentence(text: str) -> str:
    return next(iter_sentences(text), (0, text))[1]


def read_units(units: Sequence[Unit], query: Query | None) -> Sequence[int]:
    """The indices, ascending, of a section's statements that are scored: all of them up to ``LONG_SECTION``;
    of a longer section, its opening statement (after the front-matter fields before it, which are kept too) and
    the others, up to ``LONG_SECTION`` in all, holding the most of the question's word beginnings
    (``word_starts``), the earliest first among equals.  So scoring stays bounded
    whatever one file holds (finding the beginnings is a pass over the section's words, not an analysis); the
    statements left out still frame their neighbours."""
    if len(units) <= LONG_SECTION:
        return range(len(units))
    starts = word_starts(query) if query is not None else frozenset()
    lengths = {len(s) for s in starts}
    counts = [len({w[:n] for w in _WORD.findall(u.text.lower()) for n in lengths} & starts) for u in units]
    # The opening statement of the body, and the front-matter fields before it (``text.field_statements``).
    opening = next((i for i, u in enumerate(units) if u.kind != "field"), 0) + 1
    rest = heapq.nlargest(LONG_SECTION - opening, range(opening, len(units)), key=lambda i: (counts[i], -i))
    return [*range(opening), *sorted(rest)]


def word_starts(query: Query) -> frozenset[str]:
    """The first ``_START`` letters (lower-case) of ``query``'s terms, expansions included, and of the words it
    was asked in: a statement's word that begins as one does holds it ("polici" and "policy" share "polic")."""
    found = (*query.terms, *query.extra, *(t for ts in query.alternates.values() for o in ts for t in o))
    return frozenset(t.lower()[:_START] for t in (*found, *query.words.values()) if t)


def candidates_of(memory: Memory, target: Target, query: Query | None = None) -> Iterator[Candidate]:
    """The statements of ``target``'s section (of a long one, those ``read_units`` picks for ``query``)."""
    _, section = memory.section(target.section_id)
    prepared = _prepared(section)
    for i in read_units(section.units, query):
        fields = prepared.fields[i] if prepared.fields[i] is not _UNREAD else prepared.prepare(i)
        if fields is not None:
            statement, lines, kind, context, cells, speaker, shown, vector, terms, context_terms = fields
            yield Candidate(
                statement, target, lines, kind, context, None, cells, speaker, shown, vector, terms, context_terms
            )


_UNREAD = object()  # a statement not prepared yet
# Statements kept prepared, counted by their sections' sizes (~1.1 KB each prepared: ~55 MB at most).  A question
# reads 100-800; a section of more than half of this is prepared for each question that reads it, not kept.
_STATEMENTS = 50_000


@dataclass(slots=True)
class _Prepared:
    """What each candidate of one section holds besides its target: the same for every question, so made once per
    section object (``_prepared``).  ``fields[i]``: statement ``i``'s candidate fields, None for one with no letter
    or digit, ``_UNREAD`` until made."""

    section: Section
    turns: list[Turn]  # each statement's (``speakers.turns``), until every statement is prepared
    fields: list[Any]

    def prepare(self, i: int) -> tuple[Any, ...] | None:
        """Statement ``i``'s candidate fields (in ``Candidate``'s order, its target, and the model's relevance
        left out), kept in ``fields``."""
        section, unit, turn = self.section, self.section.units[i], self.turns[i]
        fields: tuple[Any, ...] | None = None
        if any(ch.isalnum() for ch in unit.text):
            # Scored without the speaker a continued turn is shown with: the name is not its words, and
            # counting it in every sentence of a long turn lowered QMSum's section hit@5 (0.643 -> 0.627).
            shown = framed(unit, section, turn.speaker) if turn.continues else ""
            lines = unit.lines
            if (introduced := _introduced(section.units, i)) is not None:  # scored on its own words only
                lead = (shown or framed(unit, section)).rstrip()
                shown = f"{lead}{'' if lead.endswith(':') else ':'} {introduced[0]}"  # a label ("New") takes a colon
                lines = (lines[0], introduced[1])
            context = context_of(section.units, i)
            statement = framed(unit, section)
            # The vector is of the statement as framed (``text.framing``), taken when the file was indexed; its
            # terms, and its context's, are those stored with the statements (``Unit.terms``) where they are its.
            terms = unit.terms if statement == unit.text else ()
            fields = (statement, lines, unit.kind, context, unit.cells, turn.speaker, shown, unit.vector, terms,
                      context_terms(section.units, i))
        self.fields[i] = fields
        return fields


_by_section: OrderedDict[int, _Prepared] = OrderedDict()
_held = 0  # statements of the sections in ``_by_section``
_lock = threading.Lock()


def _prepared(section: Section) -> _Prepared:
    """The section's statements prepared: kept by the section object's identity, the section held beside them so
    that a new object at a reused address is prepared afresh; the sections read most recently are kept, up to
    ``_STATEMENTS`` statements in all.  A section of ``LONG_SECTION`` statements or fewer is prepared whole; of a
    longer one, what questions read."""
    with _lock:
        held = _by_section.get(id(section))
        if held is not None and held.section is section:
            _by_section.move_to_end(id(section))
            return held
    prepared = _Prepared(section, turns(section.units), [_UNREAD] * len(section.units))
    if len(section.units) <= LONG_SECTION:
        for i in range(len(section.units)):
            prepared.prepare(i)
        prepared.turns = []  # every statement is prepared: the turns are read no more
    if len(prepared.fields) <= _STATEMENTS // 2:
        _keep(prepared)
    return prepared


def _keep(prepared: _Prepared) -> None:
    """Keep ``prepared``, in place of what its section's address held, and let go of the sections read least
    recently while more than ``_STATEMENTS`` statements are kept."""
    global _held
    with _lock:
        old = _by_section.pop(id(prepared.section), None)
        _held += len(prepared.fields) - (len(old.fields) if old is not None else 0)
        _by_section[id(prepared.section)] = prepared
        while _held > _STATEMENTS:
            _held -= len(_by_section.popitem(last=False)[1].fields)


def extract(
    memory: Memory, phase1: Phase1, ctx: Context, question: str = "", query: Query | None = None
) -> tuple[Candidate, ...]:
    """Every statement of the targeted sections (of a long one, those holding most of ``query``'s words:
    ``read_units``), plus the LLM's grounded facts when one is configured."""
    out: list[Candidate] = []
    for target in phase1.targets:
        ctx.check_deadline()
        out.extend(candidates_of(memory, target, query))
    if ctx.llm is not None:
        out.extend(llm_candidates(memory, phase1, ctx.llm, question))
    return tuple(out)


def llm_candidates(memory: Memory, phase1: Phase1, llm: LLMRun, question: str) -> list[Candidate]:
    """Facts the model extracted from the targeted sections, kept only when grounded in them."""
    from retriever.llm.guided import guide_extract
    from retriever.llm.prompts import SectionText

    by_key = {f"S{i}": target for i, target in enumerate(phase1.targets, 1)}
    sections = [SectionText(key, t.tree_path, t.section_text) for key, t in by_key.items()]
    facts = guide_extract(llm, question, sections)
    out = []
    for fact in facts or ():
        target = by_key[fact.section_key]
        out.append(
            Candidate(
                fact.statement, target, _lines_of(memory, target, fact.statement), "llm", llm_relevance=fact.relevance
            )
        )
    return out


def _lines_of(memory: Memory, target: Target, statement: str) -> Lines:
    """The lines of the section's statement that shares most words with ``statement``."""
    _, section = memory.section(target.section_id)
    wanted = analyzer.term_set(statement)
    best = max(section.units, key=lambda u: len(wanted & analyzer.term_set(u.text)), default=None)
    return best.lines if best is not None and wanted & analyzer.term_set(best.text) else section.lines


def run(state: Run, ctx: Context) -> Run:
    if state.phase1 is None or ctx.memory is None or not state.phase1.targets:
        return state
    candidates = extract(ctx.memory, state.phase1, ctx, state.query_text, state.query)
    # Named once here, where the candidates are made: scoring and answerability both read them.
    speakers = named_speakers((c.speaker for c in candidates), state.query.text if state.query else "")
    return dataclasses.replace(state, candidates=candidates, speakers=speakers)
