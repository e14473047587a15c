"""Whether what the model wrote is supported by the memory text it was given.

Contract: a fact is grounded in a section (``grounded``) when ONE statement of the section (a
sentence or a clause of it) restates it: that statement, with the lead-in it sits under (a line
ending in ":", a table's header row), holds every number of the fact as a whole number, every name
(capitalised word) and role noun of it, and says "not" exactly when the fact does; and that
statement with its neighbours holds at least ``GROUNDED_SHARE`` of the fact's content terms.  A summary is grounded in
the facts it summarises (``summary_problem`` is None) when its numbers, links, addresses and
instruction-like phrases all come from the facts, and no sentence of it has more than
``SUMMARY_NEW_SHARE`` of its content words new.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from retriever.text import analyzer

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
GROUNDED_SHARE = 0.8  # of a fact's content terms that its statement (with its lead-in) must contain
# A statement's negation decides what it says: "Northwind was not renewed" does not ground "… renewed".
_NEGATION = re.compile(r"\b(?:not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n[’']t\b", re.I)
# Who does what: a fact that moves a role between people ("the CEO" for "the CTO") shares every other word.
_ROLES = analyzer.term_set(
    "ceo cto cfo coo cio ciso cpo cmo vp president chair chairman chairwoman founder cofounder director "
    "manager head lead owner chief executive officer"
)
_STATEMENT_END = re.compile(r"(?<=[.!?])\s+")
_BLOCK_START = re.compile(r"^\s*(?:[-*+>#|]|\d+[.)]\s)")
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:but|while|whereas|although|though|however|which|and)\b)", re.I)
_WORD = re.compile(r"[^\W\d_][\w'’-]*")
# Of each sentence of a summary, the share of content terms that may come from neither the facts,
# the question nor _SUMMARY_WORDS.  Per sentence, because an injection or an invention is a sentence
# of its own, while a faithful paraphrase spreads its new words thinly.  Measured with
# scripts/summary_grounding.py: 42 faithful summaries of real retrievals (32 plain, 10 loose
# paraphrases) reach at most 0.43; 16 injected or invented ones at least 0.62.
SUMMARY_NEW_SHARE = 0.5
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")
_MIN_SENTENCE_TERMS = 3  # shorter sentences are judged together with their neighbour
# Words a faithful summary adds about the facts rather than from them ("the facts do not say …").
_SUMMARY_WORDS = analyzer.term_set(
    "fact memory document source record say state mention note specify specific exact detail information give "
    "list name include cover describe answer question unclear directly explicitly however also both together "
    "overall total example yes instead regardless whether available provided based according appear seem "
    "summary otherwise plus still most make get go come take use need"
)
# Links and addresses, including spelled-out ones ("evil dot example").
_ADDRESS = re.compile(
    r"https?://\S+|\bwww\.\S+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\b(?:[a-z0-9-]+\.)+[a-z]{2,24}\b"
    r"|\b[\w-]+\s*(?:\[\s*dot\s*\]|\(\s*dot\s*\)|\s+dot\s+)\s*[a-z]{2,24}\b",
    re.I,
)
# What an injected instruction says: to ignore, to whom, about which secrets, what to click.
_INSTRUCTION = re.compile(
    r"\b(?:ignor|disregard|forget|overrid)\w*"
    r"|\b(?:system|developer|admin)\w*\s+(?:notice|prompt|message|instruction)s?\b"
    r"|\b(?:previous|prior|above|new|hidden)\s+instructions?\b"
    r"|\b(?:the\s+)?(?:ai|model|assistant|agent|llm)s?\s*(?:must|should|needs?\s+to|has\s+to|:)"
    r"|\b(?:to|attention)\s+(?:the\s+)?(?:ai|model|assistant|agent|llm)s?\b"
    r"|\btell\s+(?:the\s+)?users?\b|\byou\s+are\s+now\b"
    r"|\b(?:api|access|secret|private|auth)[\s_-]*(?:keys?|tokens?)\b|\b(?:passwords?|credentials?|tokens?)\b"
    r"|\b(?:paste|click|download|execute|curl)\b",
    re.I,
)


def grounded(statement: str, section_text: str) -> bool:
    """Whether one statement of ``section_text`` supports ``statement`` (see the module's contract).

    One statement, not the section: words gathered across a section ground a fact no line says
    ("Alice Wong is the CEO" from "Alice Wong is the CTO" and "Bob Stone is the CEO")."""
    terms = analyzer.term_set(statement)
    if not terms:
        return False
    key = _key_terms(statement)
    negated = bool(_NEGATION.search(statement))
    return any(_restates(statement, terms, key, negated, candidate) for candidate in _statements(section_text))


def _restates(
    fact: str, terms: frozenset[str], key: tuple[frozenset[str], ...], negated: bool, candidate: _Statement
) -> bool:
    own = candidate.lead_in + "\n" + candidate.text
    if bool(_NEGATION.search(candidate.text)) != negated:
        return False
    present = analyzer.term_set(own)
    if not all(word & present for word in key):
        return False
    return sum(t in present for t in terms) >= GROUNDED_SHARE * len(terms) and grounded_numbers(fact, own)


@dataclass(frozen=True, slots=True)
class _Statement:
    text: str  # a sentence or a clause of one
    lead_in: str  # the line it sits under ("Owners:", a table's header row), or ""


def _statements(section_text: str) -> Iterator[_Statement]:
    """The sentences of the section's blocks (a wrapped paragraph is one block), and their clauses."""
    blocks = _blocks(section_text)
    for i, block in enumerate(blocks):
        lead_in = _lead_in(blocks, i)
        for sentence in _STATEMENT_END.split(block):
            yield _Statement(sentence, lead_in)
            clauses = _CLAUSE.split(sentence)
            if len(clauses) > 1:
                yield from (_Statement(c, lead_in) for c in clauses)


def _blocks(text: str) -> list[str]:
    """Paragraphs, list items and table rows; a line that starts none of them continues the last."""
    blocks: list[str] = []
    joined = True
    for line in text.splitlines():
        if not line.strip():
            joined = False
        elif blocks and joined and not _BLOCK_START.match(line):
            blocks[-1] += " " + line.strip()
        else:
            blocks.append(line.strip())
            joined = True
    return blocks


def _lead_in(blocks: list[str], i: int) -> str:
    """What a list item or table row sits under: the table's header row, else a block ending in ":"."""
    if blocks[i].startswith("|"):
        first = i
        while first > 0 and blocks[first - 1].startswith("|"):
            first -= 1
        return blocks[first] if first < i else ""
    return blocks[i - 1] if i > 0 and blocks[i - 1].rstrip().endswith(":") else ""


def _key_terms(fact: str) -> tuple[frozenset[str], ...]:
    """The terms of each of the fact's words that must come from its own statement: names and role
    nouns (a word is there when one of its terms is: "Acme's" is "acme's" and "acme").

    A name is a word with a capital letter, except a sentence's first word (capitalised by grammar)
    unless it is an acronym or starts a run of capitalised words ("Alice Wong")."""
    words = [(m.group(), m.start()) for m in _WORD.finditer(fact)]
    names = []
    for i, (word, start) in enumerate(words):
        if not any(ch.isupper() for ch in word):
            continue
        initial = not fact[:start].strip() or fact[:start].rstrip()[-1] in ".!?:;"
        following = words[i + 1][0] if i + 1 < len(words) else ""
        if not initial or (word.isupper() and len(word) > 1) or following[:1].isupper():
            names.append(word)
    roles = [w for w, _ in words if analyzer.term_set(w) & _ROLES]
    return tuple(t for t in map(analyzer.term_set, [*names, *roles]) if t)


def summary_problem(summary: str, facts: Sequence[str], question: str) -> str | None:
    """Why ``summary`` cannot stand for ``facts``, or None when it is grounded in them.

    Grounded: every number, link, address and instruction-like phrase in it occurs in the facts, and
    in no sentence do more than ``SUMMARY_NEW_SHARE`` of the content terms come from neither the
    facts, the question nor the words summaries use about facts.  Reasons never quote the summary:
    it is untrusted text.
    """
    source = " ".join(facts)
    if not grounded_numbers(summary, source):
        return "summary states numbers the facts do not"
    if _foreign(_ADDRESS, summary, source):
        return "summary gives a link or address the facts do not"
    if _foreign(_INSTRUCTION, summary, source):
        return "summary gives instructions the facts do not"
    share = summary_new_share(summary, facts, question)
    if share > SUMMARY_NEW_SHARE:
        return f"summary uses words the facts do not ({share:.0%} of a sentence's terms)"
    return None


def summary_new_share(summary: str, facts: Sequence[str], question: str) -> float:
    """The largest share, over the summary's sentences, of content terms found in neither the facts,
    the question nor the words summaries use about facts (0 for a summary without terms)."""
    known = analyzer.term_set(" ".join(facts)) | analyzer.term_set(question) | _SUMMARY_WORDS
    return max((len(terms - known) / len(terms) for terms in _sentence_terms(summary)), default=0.0)


def _sentence_terms(summary: str) -> list[frozenset[str]]:
    """The content terms of each sentence; a sentence with few terms joins the next (or, last, the previous)."""
    groups: list[frozenset[str]] = []
    pending: frozenset[str] = frozenset()
    for sentence in _SENTENCE_END.split(summary):
        pending |= analyzer.term_set(sentence)
        if len(pending) >= _MIN_SENTENCE_TERMS:
            groups.append(pending)
            pending = frozenset()
    if pending and groups:
        groups[-1] |= pending
    elif pending:
        groups.append(pending)
    return groups


_LINK = re.compile(r"https?://|\bwww\.|[\w.+-]+@[\w-]+\.[\w-]", re.I)  # not a bare "name.md": reasons cite files


def instructs(text: str) -> bool:
    """Whether the model's free text (a pick's reason, triage's reasoning) says what an injected instruction
    says, or holds a link or an email address: such text is not shown (the offline reason stands), as such a
    summary is not."""
    return bool(_INSTRUCTION.search(text) or _LINK.search(text))


def _foreign(pattern: re.Pattern[str], summary: str, source: str) -> bool:
    """Whether ``summary`` has a match of ``pattern`` that ``source`` does not contain (ignoring case)."""
    haystack = " ".join(source.lower().split())
    return any(" ".join(m.group().lower().split()) not in haystack for m in pattern.finditer(summary))


def grounded_numbers(text: str, source: str) -> bool:
    """Whether every number of ``text`` is a whole number of ``source``: "10" is not in "100", and
    "1,000" is "1000", "2.50" is "2.5" (a comma before three digits separates thousands, else it is
    a decimal point)."""
    have = _numbers(source)
    return all(n in have for n in _numbers(text))


def _numbers(text: str) -> frozenset[str]:
    return frozenset(_normal_number(n) for n in _NUMBER.findall(text))


def _normal_number(number: str) -> str:
    parts = re.split(r"([.,])", number)
    out = parts[0]
    for sep, digits in zip(parts[1::2], parts[2::2], strict=True):
        out += digits if sep == "," and len(digits) == 3 else "." + digits
    whole, dot, decimals = out.partition(".")
    decimals = decimals.rstrip("0")
    return (whole.lstrip("0") or "0") + ("." + decimals if dot and decimals else "")
