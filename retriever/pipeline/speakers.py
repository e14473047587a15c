"""Speakers: a question that names who said something credits that speaker's turns only.

In a transcript every turn starts with its speaker's label ("Grad B: …", "Industrial Designer: …").
A question such as "What did Grad B say about the belief net?" names a speaker, not a topic, yet
the label's words ("grad"; the letter is no term) match every turn of every speaker sharing them,
and "Industrial Designer" matches "design" wherever a designer speaks.  So when the question names
a label that starts at least ``MIN_TURNS`` of the candidate statements, the label's words count only
for the statements that speaker opens (and their context); other turns must earn their rank with
the question's other words.  Labels are read from the statements being scored, so a memory with no
turns is unaffected and nothing is kept at index time.

A named speaker cannot have said it in a meeting they never spoke in: ``silent`` gives the transcripts
(documents whose read statements are nearly all turns) where none of the named speakers opens a turn
among the statements read, and scoring ranks their statements lower ("What did Grad B say about the
belief net?" asked of a memory where another meeting, without a Grad B, says "belief" more often).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from retriever.text import analyzer
from retriever.text.models import Unit

MIN_TURNS = 3  # a label opening fewer candidate statements may be a one-off "Note:" or "Owner:"
# In a transcript or chat every statement read is a turn (99-100% on 350 chat questions); a handbook page whose
# lines open "What:" or "BILLABLE:" reads 10-55% such "turns".
TRANSCRIPT_SHARE = 0.9
TURN_SHARE = 0.5  # of a section's paragraphs that must open with a label for a label to carry into the next sentence
# A speaker label: one to four capitalised words before ": " at the start of a statement (a name's particle may
# stand between them, "Chris d'Entremont", "Ana de la Cruz"); chat exports often put the time of the turn before
# the name ("[1:56 pm] Caroline: …") or after it ("Caroline (1:56 pm): …"), so a short bracketed stamp on either
# side belongs to the label's frame, and a transcript's role or seat after it ("Hon. Anita Anand (Minister of
# Public Services and Procurement): …", "The Chair (Hon. Anthony Rota (Nipissing, Lib.)): …") does too: such turns
# had no speaker at all.
_STAMP = r"[\[(][^\])\n]{1,24}[\])]"
_ROLE = r"\((?:[^()\n]|\([^()\n]{0,80}\)){1,120}\)"
_PARTICLE = r"(?:(?:de|da|das|di|do|dos|du|del|della|der|den|van|von|la|le|bin|ibn|al) )*"
_NAME = r"(?:[a-z]{1,2}['’])?[A-Z][\w.'’-]*"
_LABEL = re.compile(rf"^(?:{_STAMP} ?)?({_NAME}(?: {_PARTICLE}{_NAME}){{0,3}})(?: ?(?:{_STAMP}|{_ROLE}))?: \S")
_WORD = re.compile(r"\w+")


def opener(text: str) -> str | None:
    """The speaker label ``text`` opens with, if any (no title framing)."""
    found = _LABEL.match(text)
    return found.group(1) if found else None


@dataclass(frozen=True, slots=True)
class Turn:
    """Whose turn a unit is: ``speaker`` (None outside any turn), and whether the unit ``continues`` the
    turn of the unit before it, naming no one itself (the parser splits a long turn into sentences)."""

    speaker: str | None = None
    continues: bool = False


def turns(units: Sequence[Unit]) -> list[Turn]:
    """Each unit's turn: the label it opens with, else the label of the turn it continues (a sentence
    of the same paragraph as the sentence before it: the parser splits a long turn into sentences, and
    only the first carries the name).  A turn continues only where labels open two or more and most of the
    section's paragraphs (``TURN_SHARE``): in prose, "Owner: Iryna Bondarenko. Last reviewed at the roadmap review."
    is a field and a sentence, and the sentence had been shown as "Owner: Last reviewed at …"."""
    # A row's first cell and a front-matter field's name ("Reason: …") are labels of a field, not of a speaker.
    labels = [opener(unit.text) if unit.kind not in ("row", "field") else None for unit in units]
    starts = [i for i, u in enumerate(units) if u.kind != "field" and (not i or not _continues(units[i - 1], u))]
    labelled = sum(1 for i in starts if labels[i] is not None)
    spoken = labelled >= 2 and labelled >= TURN_SHARE * len(starts)  # a conversation takes two turns at least
    out: list[Turn] = []
    for i, speaker in enumerate(labels):
        if spoken and speaker is None and i and out[-1].speaker is not None and _continues(units[i - 1], units[i]):
            out.append(Turn(out[-1].speaker, continues=True))
        else:
            out.append(Turn(speaker))
    return out


def _continues(before: Unit, unit: Unit) -> bool:
    # A paragraph's sentences follow on the same or the next line; a blank line starts a new paragraph.
    # A long list item is split into sentences too, but the next item starts on the next line.
    if before.kind == unit.kind == "sentence":
        return unit.lines[0] <= before.lines[1] + 1
    return before.kind == unit.kind == "item" and unit.lines[0] == before.lines[1]


def _words(text: str) -> str:
    return " " + " ".join(_WORD.findall(text.casefold())) + " "


@dataclass(frozen=True, slots=True)
class Speakers:
    """The speakers a question names (``named``) and the index terms of their labels (``terms``)."""

    named: frozenset[str] = frozenset()
    terms: frozenset[str] = frozenset()

    def muted(self, speaker: str | None) -> frozenset[str]:
        """The label terms that do not count for a statement of ``speaker``: all of them unless a named
        speaker says it."""
        if not self.named or speaker in self.named:
            return frozenset()
        return self.terms


def named_speakers(speakers: Iterable[str | None], question: str) -> Speakers:
    """The labels of at least ``MIN_TURNS`` of the statements' ``speakers`` that ``question`` names as whole words."""
    counts = Counter(label for label in speakers if label is not None)
    asked = _words(question)
    named = frozenset(label for label, n in counts.items() if n >= MIN_TURNS and _words(label) in asked)
    return Speakers(named, frozenset(t for label in named for t in analyzer.terms(label)))


def silent(statements: Iterable[tuple[str, str | None]], speakers: Speakers) -> frozenset[str]:
    """Of the documents of ``statements`` ((document, speaker) pairs, as read), the transcripts (at least
    ``TRANSCRIPT_SHARE`` of their statements are turns) in which no speaker of ``speakers.named`` opens a
    turn; none when the question names no one."""
    if not speakers.named:
        return frozenset()
    read: Counter[str] = Counter()
    turns: Counter[str] = Counter()
    heard: set[str] = set()
    for document, speaker in statements:
        read[document] += 1
        turns[document] += speaker is not None
        if speaker in speakers.named:
            heard.add(document)
    return frozenset(d for d, n in read.items() if d not in heard and turns[d] >= TRANSCRIPT_SHARE * n)
