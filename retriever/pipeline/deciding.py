"""Questions asking what was decided or chosen, and the words by which they ask.

"What did we decide about the free tier?", "Which option did we go with…?", "What was agreed at the Q4 kickoff?",
"Що вирішили на синку?": a section recording the outcome answers such a question (``evidence.decisions``), where a
decision record's options table and status line share more of its words.

Contract: ``decision_words(text)`` is the terms of the decision words of ``text``'s first ``DECIDING_CHARS``
characters, each in a frame that says a choice was made - after "did", "didn't" or "what'd" and a subject, after
"was/were/have" (not "was the agreed SLA"), after "we/they/the team", "the decision on…", "what was the outcome" -
and not in a clause asking who decided, why, or how decisions are made; empty for any other question.  Every
repeat is bounded and only the opening is read, so a prompt of 8,000 characters costs what a short one does.
The verb still counts in full in the query: in a transcript, "decide" marks the moment a group decided (as a
framing word it cost QMSum a question).

``asks_earlier(text)`` is True when the opening asks what held before ("Which engine was originally chosen…?", "What
did we use previously…?", "Що обрали спочатку?"): of a superseded record and its successor, the old one answers it
(``succession``, ``evidence.decisions``).

``asks_why(text)`` is True when the opening asks for a reason ("Why did we choose Flink?", "What was the reason
for…", "Чому відхилили…?"): a record's own ``reason:`` answers it (``forms.favoured``).
"""

from __future__ import annotations

import re

from retriever.text import analyzer

DECIDING_CHARS = 400  # of a question read for its decision words: a long prompt asks more than a decision
_CHOOSING = r"(decide|choose|pick|select|agree|approve|settle|opt|go\s+with|land\s+on)"
_CHOSEN = r"(decided|chosen|selected|picked(?!\s+up)|agreed|approved|settled|opted)"
_SUBJECT = r"(?:\s+[\w'’-]{1,30}){1,4}?"  # "we", "the on-call team", "Miguel's team", "our platform team finally"
_NOT_A_SUBJECT = r"(?!(?:the|a|an|our|their|this|that|its)\b)"  # "was the agreed SLA" names a thing agreed on
_DECIDING = re.compile(
    rf"\b(?:did(?:n['’]?t)?|what['’]d){_SUBJECT}\s+{_CHOOSING}\b|"
    rf"\b(?:was|were|been|got|have|has|had)(?:\s+{_NOT_A_SUBJECT}\w{{1,30}}){{0,3}}?\s+{_CHOSEN}\b|"
    r"\b(?:we|they|team|group|board|committee|leadership|management)(?:\s+\w{1,30})?\s+"
    r"(decided|chose|picked(?!\s+up)|selected|opted|agreed|approved|settled|went\s+with)\b|\b(chose|opted)\b|"
    r"\b(?:the|our|final|any)\s+(decisions?)\s+(?:on|about|to|regarding|for|was|were)\b|"
    r"\b(decisions?)\s+(?:were|was|have\s+been|has\s+been|been)\s+(?:made|taken)\b|"
    r"\bwhat\s+(?:was|were|is|are)\s+(?:the|our)\s+(?:final\s+|key\s+)?(decisions?|outcome)\s*(?:[?.!]|$|"
    r"(?:on|about|of|for|at|in|regarding|to)\b)|"
    r"\b(?:яке|якого|якому)\s+(рішенн\w{0,2})\b|\b(рішенн\w{0,2})\s+(?:щодо|про|стосовно)\b|"
    r"\b(вирішил\w{0,4}|вирішено|обрал\w{0,2}|обрано|вибрал\w{0,2}|вибрано|погодил\w{0,4}|погоджено|"
    r"домовил\w{0,4}|ухвалил\w{0,2}|ухвалено|затвердил\w{0,2}|затверджено|постановил\w{0,2}|прийнял\w{0,2}|"
    r"прийнято)\b",
    re.I,
)
# Who decided ("Who decided to retire Pulse Classic?") asks for people, whom a status line and ``decided_by`` name;
# why, how, or the reason ("Why did we choose Flink?", "How did we decide on Flink?") for the reasons, in a
# record's context and options more than in its decision;
# how a choice is made ("How are decisions made?", "Як приймаються рішення?") for a process.  Read in the clause of
# the decision word, up to it: "Quick question: why did we choose Flink?", "For Riverbed, who chose Flink?".
_ASKS_OTHER = re.compile(
    r"\b(?:who|whom|whose|why|reason|хто|кого|чиє|чия|чий|чому|навіщо|причина)\b|\bhow\s+(?:did|was|were|come)\b", re.I
)
_ASKS_PROCESS = re.compile(
    r"\W{0,8}(?:(?:and|but|so|і|а)\s+)?(?:how\s+(?:is|are|do|does|should|can|will|would)|як\s+\w{1,20}ться)\b", re.I
)
# Where a clause ends: a sentence's end, a colon or semicolon, a comma before a conjunction or a wh-word ("Who leads
# Riverbed, and what did we decide…"); not an aside's commas ("Why, in the end, did we choose Flink?").
_CLAUSE_END = re.compile(r"[.?!:;]|,(?=\s*(?:and|but|or|so|what|which|when|where|і|а|що|яке|які)\b)", re.I)


_WHY = re.compile(
    r"\b(?:why|how\s+come|(?:the|main|what)\s+(?:reasons?|rationale)\s+(?:for|behind|why|was|were|is|are)|"
    r"чому|навіщо|з\s+якої\s+причини|(?:яка|які)\s+причин\w{0,2})\b",
    re.I,
)


# Words that ask what held before, with the asking verb: adverbs ("was originally chosen", "did we use previously",
# "at first") or the decision itself ("the previous decision", "our original choice").  Not an adjective before
# another noun ("instead of the previous Kafka Streams design", "after the earlier load test"): it names a thing.
# Not "replaced" or "superseded": "What replaced Kafka Streams?" asks for the new.
_EARLIER = re.compile(
    r"\b(?:originally|initially|at\s+first|in\s+the\s+beginning|previously|formerly|used\s+to|"
    r"(?:previous|former|original|earlier|first)\s+(?:decision|choice|plan|pick)s?|"
    r"спочатку|початково|раніше|попереднє\s+рішення|попередній\s+вибір)\b",
    re.I,
)
# A question that also asks what holds now ("Which engine do we use now instead of…?", "… or go back to the former
# plan?") asks for the successor.
_NOW = re.compile(
    r"\b(?:now|currently|today|instead|replace[sd]?|replacing|after|any\s*more|back\s+to|revert\w*|final|"
    r"тепер|зараз|замість)\b",
    re.I,
)


def asks_earlier(text: str) -> bool:
    """Whether ``text``'s opening asks what held before (see the module docstring)."""
    opening = text[:DECIDING_CHARS]
    return _EARLIER.search(opening) is not None and _NOW.search(opening) is None


def asks_why(text: str) -> bool:
    """Whether ``text``'s opening asks for a reason (see the module docstring)."""
    return _WHY.search(text[:DECIDING_CHARS]) is not None


def chosen_words(text: str) -> frozenset[str]:
    """The terms of ``text``'s decision words whatever the clause asks ("choose" of "Why did we choose Flink?"): the
    words a record's reason answers by being the reason, as ``decision_words`` are those a decision answers."""
    opening = text[:DECIDING_CHARS]
    return frozenset(t for m in _DECIDING.finditer(opening) for t in analyzer.terms(m.group(m.lastindex or 0)))


def decision_words(text: str) -> frozenset[str]:
    """The terms of ``text``'s decision words (see the module docstring); empty when it asks no decision."""
    opening = text[:DECIDING_CHARS]
    found: set[str] = set()
    for match in _DECIDING.finditer(opening):
        starts = [m.end() for m in _CLAUSE_END.finditer(opening, 0, match.start())]
        clause = opening[starts[-1] if starts else 0 : match.end()]  # up to the decision word, itself included
        if not _ASKS_OTHER.search(clause) and not _ASKS_PROCESS.match(clause):
            found.update(analyzer.terms(match.group(match.lastindex or 0)))
    return frozenset(found)
