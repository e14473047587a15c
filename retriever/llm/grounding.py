"""Whether what the model wrote is supported by the memory text it was given.

Contract: a fact is grounded in a section (``grounded``) when the section contains at least
``GROUNDED_SHARE`` of its content terms and every one of its numbers.  A summary is grounded in
the facts it summarises (``summary_problem`` is None) when its numbers, links, addresses and
instruction-like phrases all come from the facts, and no sentence of it has more than
``SUMMARY_NEW_SHARE`` of its content words new.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from retriever.text import analyzer

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
GROUNDED_SHARE = 0.8  # of a fact's content terms that its section must contain
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
    """Whether ``section_text`` supports ``statement``: most of its terms, and all its numbers."""
    terms = analyzer.term_set(statement)
    if not terms:
        return False
    present = analyzer.term_set(section_text)
    if sum(t in present for t in terms) < GROUNDED_SHARE * len(terms):
        return False
    return grounded_numbers(statement, section_text)


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


def _foreign(pattern: re.Pattern[str], summary: str, source: str) -> bool:
    """Whether ``summary`` has a match of ``pattern`` that ``source`` does not contain (ignoring case)."""
    haystack = " ".join(source.lower().split())
    return any(" ".join(m.group().lower().split()) not in haystack for m in pattern.finditer(summary))


def grounded_numbers(text: str, source: str) -> bool:
    squashed = source.replace(",", "")
    return all(n.replace(",", "") in squashed for n in _NUMBER.findall(text))
