"""The words by which a question asks, not what it asks about: framing words found by their place in the question.

"What did **the team** say about…", "What **changed** in Pulse 4.3?", "How **long** are backups kept?": the word is
the question's subject, its verb of change or the adjective after "how", and names no topic there, where the same
word elsewhere does ("Which team owns billing?", "a query-planner change", "the long-term plan").  Contract:
``asking_terms(text)`` is the terms of such words in ``text`` (``analyzer.terms``), which ``query.analyze`` counts as
framing words (``signals.FRAMING_WEIGHT`` of their weight).  Each pattern is bounded and reads the text once.
"""

from __future__ import annotations

import re

from retriever.text import analyzer

_READ = 2000  # of a prompt read for the adjective after "how"
# The people a question asks about as a whole, as the subject of its verb ("What did the team say about…",
# "What did the group decide…"): they are the speakers, not the topic. Elsewhere ("Which team owns billing?")
# the word is a topic word.
_COLLECTIVE = re.compile(
    r"\b(?:did|do|does|were|was|would|had|have|has)\s+(?:the\s+|all\s+the\s+)?"
    r"(team|group|members|people|participants|everyone|everybody)\b",
    re.I,
)
# "How long are backups kept?", "How often do coffee chats happen?": the adjective asks for an amount (``expected``)
# and names no topic; a row answering it ("Retention: 35 days") does not write it.  Counted in full, "long" had
# weighed as much as "backups", and the right row read as answering half the question ("none", 0.03).
_HOW_ASKED = re.compile(
    r"\bhow\s+(long|often|far|old|big|large|soon|quickly|fast|early|late|frequently|tall|wide|high)\b", re.I
)
# "What changed in Pulse 4.3?", "What's new since March?", "що змінилося в…": the verb asks for the changes and
# names no topic.  A release note lists its changes without the word ("New: Insights Copilot"), so counted in
# full "changed" ranked 4.2.1's "a query-planner change" above every item of 4.3.0.
_CHANGE_ASKED = re.compile(
    r"^\W*(?:what|which\s+things?)(?:'s|’s|\s+is|\s+are|\s+has|\s+have|\s+had|\s+was|\s+were)?\s+"
    r"(changed|new|different)\s+(?:in|since|about|with|for|between|after)\b"
    r"|^\W*що\s+(змінилося|змінилось|змінилися|нового)\s+(?:в|у|з|після|від)\b",
    re.I,
)


def asking_terms(text: str) -> frozenset[str]:
    """The terms of the words by which ``text`` asks (see the module's contract)."""
    found = frozenset(t for m in _COLLECTIVE.finditer(text) for t in analyzer.terms(m.group(1)))
    found |= frozenset(t for m in _CHANGE_ASKED.finditer(text) for t in analyzer.terms(m.group(1) or m.group(2)))
    return found | frozenset(t for m in _HOW_ASKED.finditer(text[:_READ]) for t in analyzer.terms(m.group(1)))
