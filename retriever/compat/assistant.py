"""Assistant memory for seed 002's ``get_memory``: business profile, conversation recaps, agent decisions.

The memory lives in the tree by convention (see ``company_context/assistant/README.md``):
- ``type: business_profile``: the one confirmed profile (``business:`` names it); each list
  item under its headings (Company, Customers, Brand voice, Rules) is one profile fact;
- ``type: agent``: an agent, found by ``agent_id``, else ``title``, else one of its ``aliases`` (any
  case); a name two agents answer to at the same rank names neither;
- ``type: episode``: a recap of an earlier assistant conversation, with ``agent`` and ``date``;
- ``type: decision_ledger``: a table ``Date | Proposal | Status | Reason`` of one ``agent``'s
  accepted and rejected proposals; each row is a decision.

Dates are ``YYYY-MM-DD`` or unknown (""): a ledger's "yesterday" or "TBD" would otherwise sort above every
real date, as the most recent entry.

Contract: ``get_memory(memory, agent, query)`` returns seed 002's output: ``text`` (what was
found, grouped by source and agent, most relevant first; empty when the memory holds nothing
for the agent), the counts ``facts``, ``episodes`` and ``decisions``, and ``floor`` (nothing
matched the query, so the most recent entries came back instead); ``InvalidArguments`` when ``agent``
names several agents.
"""

from __future__ import annotations

import datetime
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from retriever.errors import InvalidArguments
from retriever.memory.build import SegmentBuilder
from retriever.memory.index import Params, SectionIndex
from retriever.memory.memory import Memory
from retriever.memory.provenance import credible
from retriever.text import analyzer
from retriever.text.models import Document
from retriever.text.safe import single_line

RECENT = 10  # recaps and decisions returned without a query
MATCHED = 20  # entries returned for a query at most
# Okapi BM25's usual k1 and b, on the body field alone (one group): plain BM25 over entries.
_ENTRY_PARAMS = Params(
    k1=1.5, weights=(0, 0, 0, 0, 1.0), b=(0, 0, 0, 0, 0.75), groups=(0, 0, 0, 0, 0), group_weights=(1.0,)
)


@dataclass(frozen=True, slots=True)
class Agent:
    name: str
    agent_id: str | None
    business: str | None
    aliases: frozenset[str]  # case-folded
    slug: str = ""  # the file's name without its suffix, case-folded ("dashboard"): how a folder's README lists it

    @property
    def label(self) -> str:
        return f"{self.name} ({self.agent_id})" if self.agent_id else self.name


# How a name finds its agent, strongest first: an agent's own id or title wins over another's alias.
_RANKS: tuple[Callable[[Agent], frozenset[str]], ...] = (
    lambda a: frozenset([a.agent_id.casefold()] if a.agent_id else []),
    lambda a: frozenset([a.name.casefold()]),
    lambda a: a.aliases,
    lambda a: frozenset([a.slug] if a.slug else []),
)


@dataclass(frozen=True, slots=True)
class Entry:
    kind: str  # "fact" | "episode" | "decision"
    agent: str | None  # None: business-wide (profile facts)
    date: str  # ISO date, "" when unknown
    heading: str  # profile section, recap title, or decision status
    text: str
    source: str  # source path
    business: str | None = None  # a profile fact's business


@dataclass(frozen=True, slots=True)
class Profile:
    business: str
    date: str  # when it was confirmed, "" when unknown


@dataclass(frozen=True, slots=True)
class AssistantMemory:
    profiles: tuple[Profile, ...]  # one per business_profile document, in path order
    agents: tuple[Agent, ...]
    entries: tuple[Entry, ...]

    @property
    def business(self) -> str | None:
        """The business, when the memory holds one profile (with several, each agent's own: ``profile_of``)."""
        profile = self.profile_of(None)
        return profile.business if profile else None

    def profile_of(self, business: str | None) -> Profile | None:
        """The profile of ``business`` (any case); with no business named, the one profile if there is one."""
        if business is None:
            return self.profiles[0] if len(self.profiles) == 1 else None
        return next((p for p in self.profiles if p.business.casefold() == business.casefold()), None)


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def iso_date(value: object) -> str:
    """``value`` as ``YYYY-MM-DD`` when it is a date or text that starts with a real one (a time after it
    is dropped); else "" (unknown)."""
    if isinstance(value, datetime.date):  # a datetime is a date too
        return value.isoformat()[:10]
    text = str(value).strip()[:10] if isinstance(value, str) else ""
    if not _ISO_DATE.fullmatch(text):
        return ""
    try:
        return datetime.date.fromisoformat(text).isoformat()
    except ValueError:  # 2026-02-30
        return ""


def _date(doc: Document, *keys: str) -> str:
    """The first of ``keys`` in the front matter that holds a date (``iso_date``), else ""."""
    return next((found for key in keys if (found := iso_date(doc.front_matter.get(key)))), "")


def _documents(memory: Memory, doc_type: str) -> Iterator[Document]:
    for path, info in sorted(memory.state.catalog.items()):
        if info.doc_type == doc_type:
            yield memory.document(path)


def load(memory: Memory) -> AssistantMemory:
    """The assistant memory as the tree holds it now."""
    agents = tuple(_agent(doc) for doc in _documents(memory, "agent"))
    entries: list[Entry] = []
    profiles: list[Profile] = []
    for doc in _documents(memory, "business_profile"):
        profiles.append(
            Profile(str(doc.front_matter.get("business") or doc.title), _date(doc, "confirmed", "updated", "date"))
        )
        entries += _profile_facts(doc, memory, profiles[-1])
    for doc in _documents(memory, "episode"):
        text = " ".join(s.text for s in doc.sections if s.text).strip()
        entries.append(
            Entry(
                "episode",
                _str(doc, "agent"),
                _date(doc, "date", "created"),
                doc.title,
                text,
                memory.source_path(doc.rel_path),
            )
        )
    for doc in _documents(memory, "decision_ledger"):
        entries += _decisions(doc, memory)
    return AssistantMemory(tuple(profiles), agents, tuple(entries))


def _str(doc: Document, key: str) -> str | None:
    value = doc.front_matter.get(key)
    return str(value).strip() if isinstance(value, str | int) and str(value).strip() else None


def _agent(doc: Document) -> Agent:
    aliases = frozenset(n.casefold() for n in doc.aliases if n)
    slug = doc.rel_path.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold()
    return Agent(doc.title, _str(doc, "agent_id"), _str(doc, "business"), aliases, slug)


def _profile_facts(doc: Document, memory: Memory, profile: Profile) -> Iterator[Entry]:
    for section in doc.sections:
        for unit in section.units:
            if unit.kind == "item":
                source = memory.source_path(doc.rel_path)
                yield Entry("fact", None, profile.date, section.title, unit.text, source, profile.business)


def _decisions(doc: Document, memory: Memory) -> Iterator[Entry]:
    agent = _str(doc, "agent")
    for section in doc.sections:
        for unit in section.units:
            cells = {k.casefold(): v for k, v in unit.cells}
            if unit.kind == "row" and cells.get("proposal"):
                status = cells.get("status", "").casefold()
                reason = cells.get("reason", "")
                text = f"{cells['proposal']} ({status})" + (f": {reason}" if reason else "")
                yield Entry(
                    "decision", agent, iso_date(cells.get("date", "")), status, text, memory.source_path(doc.rel_path)
                )


# -- the tool ------------------------------------------------------------------------------------


def find_agent(assistant: AssistantMemory, name: str) -> Agent | None:
    """The agent ``name`` names (``_RANKS``), None when none does; ``InvalidArguments`` when the strongest
    rank it matches at holds several agents."""
    key = name.strip().casefold()
    for names in _RANKS:
        found = [a for a in assistant.agents if key in names(a)]
        if len(found) > 1:
            labels = ", ".join(a.label for a in found)
            raise InvalidArguments(
                f"{name.strip()[:80]!r} names {len(found)} agents: {labels}; pass one's title or agent_id"
            )
        if found:
            return found[0]
    return None


def _owner(assistant: AssistantMemory, name: str | None) -> Agent | None:
    """The agent an entry's ``agent`` field names; None for none, or for a name several agents share."""
    try:
        return find_agent(assistant, name) if name else None
    except InvalidArguments:
        return None


def _for_agent(assistant: AssistantMemory, agent: Agent | None) -> list[Entry]:
    if agent is None:
        return list(assistant.entries)
    # A profile describes one business: it applies to an agent of that business, or to an agent of none
    # named when the memory holds that one profile only (with several, whose would it be?).
    profile = assistant.profile_of(agent.business)
    return [
        e
        for e in assistant.entries
        if (e.agent is None and profile is not None and e.business == profile.business)
        or (e.agent is not None and _owner(assistant, e.agent) is agent)
    ]


def _recent(entries: list[Entry]) -> list[Entry]:
    facts = [e for e in entries if e.kind == "fact"]
    dated = sorted((e for e in entries if e.kind != "fact"), key=lambda e: credible(e.date), reverse=True)
    return (
        facts + [e for e in dated if e.kind == "episode"][:RECENT] + [e for e in dated if e.kind == "decision"][:RECENT]
    )


def _matching(entries: list[Entry], query: str) -> list[Entry]:
    """Entries sharing a word with the query, by BM25 (the index's own scoring), the newest first among equals."""
    terms = list(dict.fromkeys(analyzer.terms(query)))
    if not terms or not entries:
        return []
    corpus = [Counter(analyzer.cached_terms(f"{e.heading} {e.text} {e.agent or ''}")) for e in entries]
    scores = _bm25(corpus, terms)
    wanted = set(terms)
    hits = [(float(s), e) for s, e, doc in zip(scores, entries, corpus, strict=True) if wanted & doc.keys()]
    hits.sort(key=lambda pair: credible(pair[1].date), reverse=True)  # among equals, the newest first
    hits.sort(key=lambda pair: -pair[0])
    return [e for _, e in hits[:MATCHED]]


def _bm25(corpus: list[Counter[str]], terms: list[str]) -> list[float]:
    """Plain BM25 of each entry for ``terms``: a throwaway section index whose only field is the entry's text."""
    index = SectionIndex(params=_ENTRY_PARAMS)
    builder = SegmentBuilder(index)
    empty: Counter[str] = Counter()
    for counts in corpus:
        builder.add((empty, empty, empty, empty, counts))  # the body field, in ``fields.FIELDS`` order
    builder.finish(fix_avglen=True)
    return [float(s) for s in index.scores(terms)]


def get_memory(memory: Memory, agent: str | None = None, query: str | None = None) -> dict[str, Any]:
    """Seed 002's output for the given filters (both optional)."""
    assistant = load(memory)
    chosen = find_agent(assistant, agent) if agent else None
    if agent and chosen is None:  # which agents there are, so that the caller can ask again (an extra field)
        known = {"known_agents": [a.label for a in assistant.agents]}
        return {**_output(assistant, [], floor=False, agent=agent, matched_agent=False), **known}
    pool = _for_agent(assistant, chosen)
    found, floor = (_matching(pool, query), False) if query and query.strip() else (_recent(pool), False)
    if query and query.strip() and not found and pool:
        found, floor = _recent(pool), True
    # The result names the profile that applies, else the memory's one profile (so a caller sees whose it is).
    business = (assistant.profile_of(chosen.business) if chosen else None) or assistant.profile_of(None)
    return _output(
        assistant, found, floor=floor, agent=chosen.name if chosen else None, matched_agent=True, profile=business
    )


def _output(
    assistant: AssistantMemory,
    found: list[Entry],
    *,
    floor: bool,
    agent: str | None,
    matched_agent: bool,
    profile: Profile | None = None,
) -> dict[str, Any]:
    return {
        "text": render(assistant, found),
        "facts": sum(e.kind == "fact" for e in found),
        "episodes": sum(e.kind == "episode" for e in found),
        "decisions": sum(e.kind == "decision" for e in found),
        "floor": floor,
        "business": profile.business if profile else None,
        "agent": agent,
        "agent_found": matched_agent,
    }


def render(assistant: AssistantMemory, found: list[Entry]) -> str:
    """Entries grouped by source and agent, groups in the order of their best entry."""
    groups: dict[tuple[str, str | None], list[Entry]] = {}
    for entry in found:  # a profile's facts group by business, the rest by agent
        groups.setdefault((entry.kind, entry.business if entry.kind == "fact" else entry.agent), []).append(entry)
    blocks = []
    for (kind, agent), entries in groups.items():
        name = single_line(agent) if agent else ""
        if kind == "fact":
            profile = assistant.profile_of(agent)
            head = f"BUSINESS PROFILE: {name or 'unnamed business'}"
            head += f" (confirmed {single_line(str(profile.date))})" if profile and profile.date else ""
            lines = [f"- {single_line(e.heading)}: {single_line(e.text)}" for e in entries]
        elif kind == "episode":
            head = f"RECAPS: {name or 'unknown agent'}"
            lines = [
                f"- {single_line(e.date or 'undated')} · {single_line(e.heading)}: {_short(e.text)}" for e in entries
            ]
        else:
            head = f"DECISIONS: {name or 'unknown agent'}"
            lines = [f"- {single_line(e.date or 'undated')} · {single_line(e.text)}" for e in entries]
        # Each value on one line: a ``business`` holding line breaks had forged a ``DECISIONS:`` block of its own.
        blocks.append("\n".join([head, *lines]))
    return "\n\n".join(blocks)


def _short(text: str, limit: int = 600) -> str:
    text = single_line(text)
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
