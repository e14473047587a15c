"""Who tells of whose life in a conversation between two people: the signals answerability reads there.

A two-person chat's unanswerable questions are often one person's event asked of the other ("What did
Maya make at her pottery class?" when Tom took it): every topic word is found, in the other person's
turns.  ``two_people`` says whether the facts come from such a conversation; ``tells`` whether a fact
tells of a named person's life (their own claim, or the other's reaction to it: ``reacts``);
``telling_share`` compares those facts with the best of all by any per-fact value; ``told`` gives the
per-fact value by meaning (the question's cosine with each fact, the two people's names left out).
``confidence`` turns them into its ``speaker_agreement`` feature.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from retriever.memory.memory import Memory
from retriever.pipeline.query import Query
from retriever.pipeline.results import Candidate, Fact
from retriever.pipeline.speakers import MIN_TURNS, TRANSCRIPT_SHARE, Speakers

# A longer exclamation is often one's own news ("I own a food truck!"); on the fitting chats 2-3 words
# caught 9-10 more swapped questions and no answered one; 4 or more cost answered ones on the bundled chats.
REACTION_WORDS = 3


def told(memory: Memory, query: Query, facts: Sequence[Fact], speakers: Speakers) -> tuple[float, ...]:
    """The cosine of the question's meaning with each fact's, the two people's names left out of both (a
    name says who, not what: kept, it would draw every question naming Ruth to Ruth's turns); none
    without the embedding table."""
    names = sorted({*speakers.named, *(f.speaker for f in facts if f.speaker)}, key=len, reverse=True)
    texts = [query.text, *(f.statement for f in facts)]
    if names:
        who = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
        texts = [who.sub(" ", text) for text in texts]
    vectors = memory.index.meaning(texts)
    if not vectors.shape[1] or not vectors[0].any():
        return ()
    return tuple(float(c) for c in vectors[1:] @ vectors[0])


def two_people(candidates: Sequence[Candidate], facts: Sequence[Fact]) -> bool:
    """Whether the best fact comes from a conversation between two people: exactly two speakers take
    at least ``MIN_TURNS`` of the turns read from its document, and at least ``speakers.TRANSCRIPT_SHARE``
    of all the statements read from it (a page of "What:" and "How:" lines is not a conversation)."""
    if not facts:
        return False
    read = _speakers_read(candidates, facts)
    turns = Counter(speaker for speaker in read if speaker)
    two = [n for n in turns.values() if n >= MIN_TURNS]
    return len(two) == 2 and sum(two) >= TRANSCRIPT_SHARE * len(read)


def spoken_share(candidates: Sequence[Candidate], facts: Sequence[Fact]) -> float:
    """The share of the statements read from the best fact's document that are speakers' turns: 1 for a meeting
    transcript or a chat, 0 for a page (0 without facts)."""
    read = _speakers_read(candidates, facts) if facts else []
    return sum(1 for speaker in read if speaker) / len(read) if read else 0.0


def _speakers_read(candidates: Sequence[Candidate], facts: Sequence[Fact]) -> list[str | None]:
    """The speaker of each statement read from the best fact's document (None for one no speaker says).  A
    front-matter field (a summary) is no statement of a conversation."""
    return [c.speaker for c in candidates if c.target.rel_path == facts[0].rel_path and c.kind != "field"]


def telling_share(values: Sequence[float], facts: Sequence[Fact], named: frozenset[str]) -> float:
    """The best of ``values`` (one per first fact) among the facts that tell of the named people's lives,
    over the best of all; 1 when none is positive (nothing to compare)."""
    best = max(values, default=0.0)
    if best <= 0:
        return 1.0
    telling = (v for v, fact in zip(values, facts, strict=False) if tells(fact, named))
    return max(0.0, max(telling, default=0.0)) / best


def tells(fact: Fact, named: frozenset[str]) -> bool:
    """Whether ``fact`` tells of a named person's own life: their own claim, or the other person's
    reaction to it (``reacts``: who asks about an event, or cries out at it, is not who had it, so
    "A clinic cat!" said by one of the two tells of the other's clinic)."""
    if fact.speaker is None:
        return False
    return (fact.speaker in named) != reacts(fact.statement, fact.speaker)


def reacts(statement: str, speaker: str) -> bool:
    """A reaction to the other person's news, not a claim of one's own: a question ("How was Lisbon?")
    or a bare exclamation of at most ``REACTION_WORDS`` words ("Lisbon!", "A piano!").  Who asks about
    an event, or cries out at it, is not who had it."""
    label = f"{speaker}: "  # a short turn is shown after its session's heading and its speaker's name
    at = statement.rfind(label)
    own = (statement[at + len(label) :] if at >= 0 else statement).rstrip(" \"')»”")
    return own.endswith("?") or (own.endswith("!") and len(own.split()) <= REACTION_WORDS)
