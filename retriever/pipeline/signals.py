"""The ranking signals' weights, in one place: how much each kind of evidence counts, and why (measured on the
dev and QMSum questions side by side, as the modules that use them say).

- phase 1 (``evidence``): a section's document's and neighbours' BM25F beside its own, meaning where words leave the
  question's topic uncovered, and a decision record named after the question;
- query analysis (``expansion``, ``query``): framing words ("main", "summarize") and added terms (acronyms,
  expansions, spelling variants, translations) weigh less than the question's own topic words;
- statements (``score``: ``ScoreParams``, ``bonuses``, ``forms``, ``succession``): a statement's own evidence beside
  its section's, its context, its form (the kind of answer asked, a keyed row, a range), a decision's place in its
  record, and a superseded record below its successor.

The BM25F field weights are the index's (``memory.index.Params``): they are fixed when a memory is indexed.
"""

from __future__ import annotations

from dataclasses import dataclass

# -- phase 1 (``evidence``) -------------------------------------------------------------------------------------
DOCUMENT_WEIGHT = 0.5  # a section's document's evidence, beside its own (1)
NEIGHBOUR_WEIGHT = 0.5  # the evidence of the sections next to it in its document
MEANING_WEIGHT = 0.6  # meaning's share when the best sections hold none of the question's words' weight
# The share of the question's topic weight (its words but the asking verb) the document's title, aliases and front
# matter must hold: a decision record or meeting is named after what it decided ("DEC-0052 — Apache Flink for
# Riverbed Ingestion", "Q1 2027 Planning"); a record whose context only mentions the topic decided something else.
DECISION_TITLE_SHARE = 0.4  # the 16 decision questions: 0.49 and up; two asked of the wrong record: 0.21, 0.25

# -- query analysis (``expansion``, ``query``) -------------------------------------------------------------------
FRAMING_WEIGHT = 0.3  # a framing word counts this much of its idf
# ... and never more than that much of the idf of a word in this share of the memory's sections: a framing word
# the memory seldom writes is still only how the question is asked.  "Summarize the discussion about…" had
# weighed "summar" as a rare word, putting first a transcript where someone said "to summarise".
FRAMING_SHARE = 0.05
EXPANSION_WEIGHT = 0.6  # an acronym, expansion or spelling variant added to the query counts this much

# -- statements (``score``, ``bonuses``, ``forms``, ``succession``) ----------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoreParams:
    """The score stage's weights (``score``; its form bonuses: ``bonuses``); tests pass their own."""

    statement_share: float = 1.0  # a statement's own evidence, beside its section's strength (1)
    context_weight: float = 0.5  # a query word found only in a statement's context counts this much
    coverage_length: float = 30.0  # terms; a section this long counts its coverage half
    same_section_decay: float = 0.50
    many_part_decay: float = 0.25  # a many-part question wants breadth: one fact per section first
    long_statement: int = 30  # terms; longer statements match query words by chance more often
    length_penalty: float = 0.3
    meaning_weight: float = 0.5  # a statement's meaning, when words leave all of the question's topic uncovered
    typed_bonus: float = 0.15  # a statement holding the kind of answer asked for ranks this much higher (``expected``)
    key_bonus: float = 0.15  # a table row whose first cell holds all of the question's weight ranks this much higher
    # A statement under headings naming only other versions than the question asks of ("4.2.1" for "Pulse 4.3") keeps
    # this much of its rank: a document's aliases give every section the version's words, and a changelog's other
    # versions say the rest of the question ("What changed…": "a query-planner change in 4.2.0").
    other_version: float = 0.5
    # A statement whose range holds the question's amount ("10–20%" for 15%: ``ranges``), after meaning, which fills
    # the gap of a figure the memory never writes by closeness alone: as strong as a definition's favour.
    range_bonus: float = 1.0
    # A front-matter prose field (a summary, a reason: ``text.field_statements``) speaks of its whole document:
    # where a statement of the body says as much of the question, that one is the more precise answer.
    field_weight: float = 0.9
    definition_bonus: float = 1.0  # "What is X?": others keep 1 / (1 + this) of their rank where one defines X
    # A transcript where no speaker the question names took a turn keeps this much of its statements' rank
    # (``speakers.silent``; 0.3 to 0.9 measured the same).
    silent_speaker: float = 0.5
    # A statement that is only courtesy, assent or filler ("Okay.", "Yeah, yeah.": ``bonuses.says_nothing``) keeps this
    # much of its rank; every statement of a strong block of turns takes the block's strength.
    small_talk: float = 0.5


DEFAULT = ScoreParams()
LLM_BLEND = 0.4  # weight of the model's relevance for the facts it extracted
SUPERSEDED_FACTOR = 0.7  # relevance kept by facts of superseded documents
# A decision's ``own`` (the share of the question its own words hold, at most 1 otherwise): ``own_words.own_first`` puts
# it before its record's other facts, even a status line holding the asking verb ("Decided by: …").
BY_FORM = 2.0
# Where a superseded document's successor is among the statements read, the old one's best statement is
# brought to this share of the successor's best (all its statements scaled alike, keeping their order).
SUCCESSOR_MARGIN = 0.95
# For a question asking what held before, of the read documents one record superseded, those whose best is at least
# this share of the best of them take its place: a record that replaced several ("JSON log lines" and the engine)
# is asked about one of them, and the question's words reach that one.
EARLIER_SHARE = 0.5
