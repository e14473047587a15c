"""Stage 4, extract: candidate statements from the targeted sections.

Sentences, list items and table rows ("column: value; …") come from the parser; here a
statement too short to stand alone gets its frame (the parent list item, else the section
heading) so that "4 hours per pay period" reads "Sick leave: 4 hours per pay period".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

from retriever.context import Context, Run
from retriever.memory import Memory
from retriever.models import Section, Unit
from retriever.results import Candidate, Phase1, Target

_SHORT_WORDS = 6
_FRAMED_ITEM_WORDS = 12


def framed(unit: Unit, section: Section) -> str:
    """The unit's text, prefixed by its frame when it is too short to stand alone."""
    words = len(unit.text.split())
    if unit.context and words < _FRAMED_ITEM_WORDS:
        return f"{unit.context.rstrip(' :')}: {unit.text}"
    if words < _SHORT_WORDS and section.heading_path and unit.kind != "row":
        return f"{section.title.rstrip(' :')}: {unit.text}"
    return unit.text


def candidates_of(memory: Memory, target: Target) -> Iterator[Candidate]:
    _, section = memory.section(target.section_id)
    for unit in section.units:
        if any(ch.isalnum() for ch in unit.text):
            yield Candidate(framed(unit, section), target, unit.lines, unit.kind, unit.context)


def extract(memory: Memory, phase1: Phase1, ctx: Context) -> tuple[Candidate, ...]:
    out: list[Candidate] = []
    for target in phase1.targets:
        ctx.check_deadline()
        out.extend(candidates_of(memory, target))
    return tuple(out)


def run(state: Run, ctx: Context) -> Run:
    if state.phase1 is None or ctx.memory is None or not state.phase1.targets:
        return state
    return dataclasses.replace(state, candidates=extract(ctx.memory, state.phase1, ctx))
