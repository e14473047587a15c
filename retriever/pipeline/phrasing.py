"""Facts and relations as sentences a person reads: the extractive summary and the report's relations.

Contract:
- ``fact_sentence(fact, asked)``: a statement as a sentence.  A table row reads as its first value
  followed by the other columns ("Send the DPA annex — owner Hannah Clarke, due 2026-11-27."),
  never as a "column: value; column: value" dump; in a row-labelled matrix (``bonuses.row_labelled``) the columns
  whose names hold ``asked`` terms come first ("List price / month — growth €3,900, starter €990, …" for the
  Growth plan's price); a line of fields ("Status: accepted · Date: …") reads as
  its document's title followed by them ("DEC-0049 — status accepted, date 2026-04-15.").
- ``relation_lines(facts, entities, relationships)``: for the documents the facts came from,
  best first, who and what their front matter names (owner, lead, team, client, …), one line each.
- ``relation_answer(question, …)``: the first of those lines as a sentence, when the question asks
  who (or names a relation: owner, lead, team, client…) and either names one of the document's relations
  or asks who is responsible (owns, leads, runs, approves, whom to contact…); else None.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from retriever.pipeline.bonuses import row_labelled
from retriever.pipeline.query import Query
from retriever.pipeline.results import Entity, Fact, Relationship
from retriever.text import analyzer, vocabulary
from retriever.text.markup import INDEX_NAMES, truncate
from retriever.text.stopwords import WORDS as STOP_WORDS

# Edges every document has or that say nothing about who or what it belongs to.
_GENERIC = frozenset({"related", "links_to", "tags", "aliases", "parent", *vocabulary.SUPERSESSION_KEYS})
_WHO = re.compile(r"^\W*(?:who|whom|whose|хто|кого|кому|чий|чия|чиє|чиї)\b", re.I)
# Words that ask for a relation even without "who": "the owner of…", "which team runs…".
_RELATION_WORDS = re.compile(
    r"\b(?:own|owns|owner|owned|lead|leads|led|responsible|team|client|manager|sponsor)\b", re.I
)
# Words that ask who is responsible for something, so a document's owner or lead answers them even when
# the question names no relation ("Who should I contact about…", "Хто веде…"). A who-question without
# them or a named relation ("Who are our main clients?") asks about something else.
# Not approving or deciding: a policy's owner keeps the page and approves none of its trips ("Who approves a
# conference trip?" is the manager), and a decision's deciders are its own field.
_RESPONSIBLE = re.compile(
    r"\b(?:own\w*|lead\w*|led|run|runs|running|manag\w*|responsible|charge|contact\w*|ask|"
    r"sponsor\w*|maintain\w*|handl\w*|вед\w*|керу\w*|власник\w*|відповіда\w*|звернутися)\b",
    re.I,
)
# "own" that owns nothing: "out of my own pocket", "on our own".
_OWN_ADJECTIVE = re.compile(r"\b(?:my|our|your|their|his|her|its)\s+own\b", re.I)
_EMPTY_CELLS = frozenset({"", "-", "–", "—", "n/a", "N/A"})
MAX_RELATION_LINES = 4
MAX_EDGES = 6
_SENTENCE_CHARS = 240


# A line of fields ("Status: accepted · Date: 2026-04-15 · Decided by: Ana Ferreira"): each a short capitalised
# name, a colon and a value, two or more joined by middle dots.
_FIELD = re.compile(r"([A-ZА-ЯІЇЄҐ][\w &/()'-]{0,30}):\s+(\S.*)")
_FIELD_SEPARATOR = " · "


def fact_sentence(fact: Fact, asked: frozenset[str] = frozenset()) -> str:
    """The fact as one readable sentence, cut at ``_SENTENCE_CHARS``: a table row or a line of fields reads as
    "subject — name value, …", a line of fields taking its document's title for the subject it lacks
    ("Status: accepted · Date: …" alone never says what was accepted); a matrix row names the columns ``asked``
    (the question's terms) first, so the cut never takes the one asked about."""
    fields = _fields(fact.statement) if len(fact.cells) <= 1 else None
    if fields:
        text = _row_sentence([("", fact.source_title), *fields])
    else:
        text = _row_sentence(_asked_first(fact.cells, asked)) if len(fact.cells) > 1 else fact.statement
    text, _ = truncate(" ".join(text.split()), _SENTENCE_CHARS, marker="…")
    return text if text.endswith((".", "!", "?", "…")) else text.rstrip(" :;,") + "."


def _asked_first(cells: Sequence[tuple[str, str]], asked: frozenset[str]) -> Sequence[tuple[str, str]]:
    """A matrix row's cells with the columns whose names hold an ``asked`` term first, the rest in their order."""
    if not asked or not row_labelled(tuple(cells)):
        return cells
    rest = sorted(cells[1:], key=lambda cell: asked.isdisjoint(analyzer.term_set(cell[0])))  # stable: asked first
    return [cells[0], *rest]


def _fields(statement: str) -> list[tuple[str, str]] | None:
    """The (name, value) pairs of a line of fields, or None when the statement is not one."""
    parts = statement.rstrip(".").split(_FIELD_SEPARATOR)
    matches = [_FIELD.fullmatch(part.strip()) for part in parts]
    if len(parts) < 2 or not all(matches):
        return None
    return [(m.group(1), m.group(2)) for m in matches if m]


def _row_sentence(cells: Sequence[tuple[str, str]]) -> str:
    """"Step: Send X; Owner: Hannah; Due: 2026-11-27" → "Send X — owner Hannah, due 2026-11-27"."""
    (_, subject), rest = cells[0], cells[1:]
    said = [(name, value) for name, value in rest if value.strip() not in _EMPTY_CELLS]  # "status —" says nothing
    sep = "; " if any(", " in value for _, value in said) else ", "  # "email, 8 business hours" stays one cell's
    details = sep.join(f"{_column(name)} {value}" if name else value for name, value in said)
    return f"{subject} — {details}" if details else subject


def _column(name: str) -> str:
    # "Owner" reads as "owner" inside a sentence; "MRR", "AWS spend (EUR)" and "iOS" stay as written.
    return name[:1].lower() + name[1:] if name[:1].isupper() and name[1:2].islower() else name


def _edge_label(kind: str) -> str:
    return kind.replace("_", " ").replace("follow up", "follow-up")


def _names_asked(kind: str, asked: set[str]) -> bool:
    """Whether a relation's name shares a word stem with the question ("owns" ~ "owner")."""
    return any(part[:3] in asked for part in kind.casefold().split("_") if len(part) >= 3)


def _is_index(rel_path: str) -> bool:
    return rel_path.rsplit("/", 1)[-1].casefold() in INDEX_NAMES


def _names_document(title: str, question: str, aliases: Sequence[str] = ()) -> bool:
    """Whether ``question`` holds every word of a document's title ("Who does Kateryna Melnyk…"), words of three
    letters or more, or every word of one of its aliases ("Who owns Helix?" names Helix Health Systems by its alias
    Helix; "ch-helix-1" needs its "ch" and "1" too).  A title of only short words names nothing."""
    long_words, all_words = _words(question, 3), _words(question, 1)
    named = _words(title, 3)
    return bool(named and named <= long_words) or any(_words(a, 1) <= all_words for a in aliases if _words(a, 3))


def _words(text: str, least: int) -> set[str]:
    return set(re.findall(rf"\w{{{least},}}", text.casefold()))


def _row_answers(facts: Sequence[Fact], question: str, source: str) -> bool:
    """Whether one of the best facts is a table row that answers the relation asked itself: a column names it
    ("Budget owner" for "who owns that line?") and its cells hold topic words of the question that the
    document's title does not ("cloud infrastructure" in "Budget 2027").  The document's own owner answered
    that question, and the row, a sentence later, named someone else."""
    relation = {w.casefold()[:3] for w in _RESPONSIBLE.findall(question) + _RELATION_WORDS.findall(question)}
    topic = analyzer.term_set(question) - analyzer.term_set(source) - analyzer.term_set(" ".join(relation))
    for fact in facts[:3]:
        columns = {w[:3] for name, _ in fact.cells[1:] for w in re.findall(r"\w{3,}", name.casefold())}
        if columns & relation and topic & analyzer.term_set(" ".join(value for _, value in fact.cells)):
            return True
    return False


def _named_with_relation(
    facts: Sequence[Fact],
    relationships: Sequence[Relationship],
    question: str,
    asked: set[str],
    aliases: Mapping[str, Sequence[str]],
) -> str | None:
    """The first fact's document that the question names by title or alias and asks a relation of, by the
    relation's name ("Who does Kateryna Melnyk report to?" → her page's ``reports_to``) or as who is responsible
    ("Who runs sales?" → the Revenue Team, alias "sales", and its lead), wherever its facts rank: the question says
    which document it is about, and the best fact may come from another that only mentions it."""
    responsible = bool(_RESPONSIBLE.search(question))
    for source in dict.fromkeys(f.source_title for f in facts):
        edges = [r for r in relationships if r.source == source and r.type not in _GENERIC]
        if edges and _names_document(source, question, aliases.get(source, ())) and _asks_of(edges, asked, responsible):
            return source
    return None


def _asks_of(edges: Sequence[Relationship], asked: set[str], responsible: bool) -> list[Relationship]:
    """The edges that answer a question: all of them when it says the name of one, else, when it asks who is
    responsible, the responsible ones (owner, lead, manager…); else none."""
    if any(_names_asked(r.type, asked) for r in edges):
        return list(edges)
    return [r for r in edges if _RESPONSIBLE.search(r.type.replace("_", " "))] if responsible else []


def _only_names(question: str, source: str, aliases: Sequence[str]) -> bool:
    """Whether the question asks nothing but who or what the document is ("Who is Olena Marchenko?"): it names the
    document (``_names_document``), and every word of three letters or more is a stop word or a word of its title
    or an alias.  "Who is HR?" names no document that only mentions HR, nor does "Who is it?" any."""
    if not _names_document(source, question, aliases):
        return False
    named = _words(source, 3).union(*(_words(a, 3) for a in aliases))
    return all(w in STOP_WORDS or w in named for w in _words(question, 3))


def _grouped(edges: Sequence[Relationship], between: str = ", ") -> str:
    """"owner Taras Kovalenko, attendees Olena Marchenko and Hannah Clarke": each relation's label once, in the
    edges' order, at most ``MAX_EDGES`` names in all."""
    targets: dict[str, dict[str, None]] = {}
    for r in edges:
        if sum(map(len, targets.values())) < MAX_EDGES or r.target in targets.get(_edge_label(r.type), {}):
            targets.setdefault(_edge_label(r.type), {})[r.target] = None
    return between.join(f"{label} {_listed(list(names))}" for label, names in targets.items())


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def relation_lines(
    facts: Sequence[Fact], entities: Sequence[Entity], relationships: Sequence[Relationship]
) -> list[str]:
    """"**Helix EU Data Residency** (project): lead Andriy Lysenko; client Helix Health Systems", best first, then
    the entities no line names ("Also named: **Helix Health Systems** (client), …"): the people and organizations the
    answer is tied to, which a section of that name must show."""
    kinds = {e.label: e.type for e in entities}
    edges: dict[str, list[Relationship]] = {}
    for rel in relationships:
        if rel.type not in _GENERIC and rel.target != rel.source:
            edges.setdefault(rel.source, []).append(rel)
    order = [*dict.fromkeys(f.source_title for f in facts), *edges]
    sources = [source for source in dict.fromkeys(order) if edges.get(source)][:MAX_RELATION_LINES]
    lines = [f"**{s}**{f' ({kinds[s]})' if s in kinds else ''}: {_grouped(edges[s], '; ')}" for s in sources]
    # The names the lines show, exactly: "Ana" is not shown by "Ana Lima".
    shown = {*sources, *(rel.target for source in sources for rel in edges[source])}
    unnamed = [f"**{e.label}** ({e.type})" for e in entities if e.label not in shown]
    return lines + ([f"Also named: {', '.join(unnamed)}"] if unnamed else [])


def relation_answer(
    question: str,
    facts: Sequence[Fact],
    relationships: Sequence[Relationship],
    aliases: Mapping[str, Sequence[str]] | None = None,
) -> str | None:
    """The best fact's document and what it names, as a sentence, for a question that asks who or which.
    ``aliases`` maps a document's title to its aliases, by which a question may name it too."""
    aliases = aliases or {}
    question = _OWN_ADJECTIVE.sub(" ", question)
    if not facts or not (_WHO.search(question) or _RELATION_WORDS.search(question)):
        return None
    words = re.findall(r"\w{3,}", question.casefold())
    asked = {w[:3] for w in words}
    named_doc = _named_with_relation(facts, relationships, question, asked, aliases)
    source = named_doc or facts[0].source_title
    if _row_answers(facts, question, source):
        return None
    source_aliases = aliases.get(source, ())
    if named_doc is None and _is_index(facts[0].rel_path) and not _names_document(source, question, source_aliases):
        return None  # a folder's index lists things: its owner keeps the list, and owns none of what it lists
    edges = [r for r in relationships if r.source == source and r.type not in _GENERIC and r.target != source]
    if not _only_names(question, source, source_aliases):
        # Unless the question asks who or what the document is ("Who is Olena Marchenko?"), only a relation it
        # names or a responsibility answers it: "Who are our main clients?" is not the report's owner, "who is
        # responsible for…" not a meeting's attendees, and "Who approves travel to Ukraine?" not the travel
        # policy's owner, though "travel" names that policy.
        edges = _asks_of(edges, asked, bool(_RESPONSIBLE.search(question)))
    if not edges:
        return None
    # The relation the question names first: "who owns…" puts owner and follow-up owner before lead.
    edges.sort(key=lambda r: (not _names_asked(r.type, asked), r.type.count("_")))
    return f"{source}: {_grouped(edges)}."


# A name in a question: a capitalised word that does not open a sentence ("Berlin", "Kraków", "Helix").
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)(?<!\w)[A-Z][\w'’-]*")


def unnamed_names(query: Query, facts: Sequence[Fact]) -> list[str]:
    """The names ``query`` asks about (``_NAME``; at most the first eight) that none of the ``facts`` holds in its
    statement, its document's title, its section's headings or its speaker, by their terms or what stands for them
    (``Query.alternates``): "What did we decide about opening a Berlin office?" was answered with the Warsaw decision,
    and the summary did not say that they do not speak of Berlin."""
    names = list(dict.fromkeys(m.group() for m in _NAME.finditer(query.text[:2000])))[:8]
    if not names or not facts:
        return []
    texts = (f"{f.statement} {f.source_title} {f.tree_path} {f.speaker or ''}" for f in facts)
    held = set().union(*(analyzer.term_set(text) for text in texts))
    out = []
    for name in names:
        terms = analyzer.term_set(name)
        options = [terms, *(alt for t in terms for alt in query.alternates.get(t, ()))]
        if terms and not any(option <= held for option in options if option):
            out.append(name)
    return out
