"""Answerability: how likely it is that a retrieval's facts answer the question, in 0..1.

Relevance scores say how well each fact matches the query; they do not say whether the memory
answers the question at all (a question whose words all occur, but never together, still gets
facts at 90%).  This module reads a few cheap signals off a finished retrieval and turns them
into one calibrated probability with a tiny logistic model:

    answerability = σ(intercept + Σ weight_i · feature_i)

Contracts:
- ``FEATURES`` is the one registry of signals (name, meaning, function); each is a number in
  0..1 computed from the query, the sections phase 1 chose and the ranked facts, with no
  further index pass (term sets come from the analyser's caches, the question's vector from the
  index's remembered ones, and three sections' cosines from their stored vectors): about 0.1 ms a
  retrieval.  Section score margins, document/section/statement agreement, whether the first facts
  hold the kind of answer asked for ("how much" → a figure), how many of the best document's
  sections hold half the question and the idf of the most specific question word the best sections
  miss were measured too and left out: alone they rank little or not at all (AUC 0.51, 0.57, 0.49,
  0.71, 0.69 on the fitted half) and add nothing to the fit.
- ``MODEL`` holds the fitted coefficients and the coverage thresholds as data.  It is written
  by ``scripts/fit_confidence.py`` from the labelled set ``eval/answerability.jsonl`` and must
  not be edited by hand; refit after any change to ranking or scoring.
- In a two-person conversation (``dialogue.two_people``: two speakers take nearly every statement read from the
  best fact's document) the words' part W of the logit (every term but the speaker's and meaning's)
  becomes W̄ + δ + τ·(W − W̄), with ``MODEL``'s ``dialogue_*`` fields: there an unanswerable question
  is typically asked in the chat's own words (one person's event asked of the other, a detail never
  given), so the words separate little or the wrong way, and the speaker's agreement, meaning and
  the conversations' own level carry most of the estimate; the words keep the share τ the fit gives
  them, for a question the chat never speaks of.
- ``coverage(p, has_facts)`` maps the probability to seed 000's ``coverage_assessment``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from retriever.memory.memory import Memory
from retriever.pipeline.context import Run
from retriever.pipeline.dialogue import spoken_share, telling_share, told, two_people
from retriever.pipeline.evidence import closeness, question_vector
from retriever.pipeline.query import Query, no_topic, present_terms, weights
from retriever.pipeline.results import Candidate, Coverage, Fact, Target
from retriever.pipeline.speakers import Speakers
from retriever.pipeline.target import query_fields
from retriever.text import analyzer, lexicon

AGREE_FACTS = 5  # first facts the statement-level signals look at
SPEAKER = "speaker_agreement"  # the one feature read only in conversations; not part of the words' evidence
# Meaning is not the words' evidence either: a conversation's unanswerable questions use its words, not its topics
# (on the fitting chats it separates at full weight: kept-back chat AUC 0.730 scaled with the words, 0.756 whole).
MEANING = "meaning_match"
READ_SECTIONS = 3  # best sections whose query words are looked at
_OPENING_CHARS = 400  # of a section read to tell its language
# A question whose words only ask ("update", "status?", "help me", "що нового?") names no topic: one common word
# is wholly "covered" by whatever holds it, and the fit, which saw no such question, reads that as an answer
# (0.80-0.83 on the bundled memory).  A rule, not a fitted weight: such an estimate is kept within "limited".
NO_TOPIC_CEILING = 0.35
# An estimate's digits: the rest are the last bits of float sums (where a conversation's words count for
# nothing they cancel out to within them), which would order rows that the model ties.
DIGITS = 4


@dataclass(frozen=True, slots=True)
class Signals:
    """What the features read: the query's term weights and the retrieval's targets and facts."""

    weights: Mapping[str, float]  # query term → idf weight (framing words down-weighted)
    known: frozenset[str]  # query terms some live section contains
    unseen: float  # the idf of a word no section contains: the most a single word can weigh
    targets: Sequence[Target]  # phase 1's sections, best BM25F first
    held: Sequence[frozenset[str]]  # query terms each of the first targets holds
    facts: Sequence[Fact]  # ranked facts, best first
    fact_terms: Sequence[frozenset[str]]  # query terms each of the first facts holds
    closeness: float | None = 0.0  # the question's cosine with the closest first target; None: no table
    fact_meaning: Sequence[float] = ()  # the question's cosine with each first fact, names left out (``dialogue.told``)
    speakers: Speakers = field(default_factory=Speakers)  # the transcript speakers the question names
    dialogue: bool = False  # the best fact comes from a conversation between two people (``dialogue.two_people``)
    spoken: float = 0.0  # share of the best fact's document's statements read that are turns; 0 in a dialogue

    @property
    def total(self) -> float:
        return sum(self.weights.values())

    def mass(self, terms: frozenset[str]) -> float:
        """The query weight of ``terms``, summed in the query's order: a set's order changes with the
        process's string hashing, and a sum's last bits with its order (features must not)."""
        return sum(w for t, w in self.weights.items() if t in terms)

    def share(self, terms: frozenset[str]) -> float:
        return self.mass(terms) / self.total if self.total else 0.0


def _present(query: Query, terms: Iterable[str], have: frozenset[str]) -> frozenset[str]:
    """The query terms found in ``have``, alternates (acronym expansions, variants) counting, in the
    order of ``terms`` (``query.present_terms``)."""
    terms = list(terms)
    found = present_terms(terms, have, query)
    return frozenset(t for t in terms if t in found)


def signals(
    memory: Memory,
    query: Query,
    targets: Sequence[Target],
    facts: Sequence[Fact],
    candidates: Sequence[Candidate],
    speakers: Speakers,
) -> Signals:
    """Collect the signals of one retrieval; section and statement terms come from analyser caches.
    ``speakers`` are the candidates' speakers the question names (``Run.speakers``), read only in a
    two-person conversation."""
    index = memory.index
    term_weights = weights(query, index)
    # A word the memory writes only in the other language is known too (a Ukrainian question of an English page).
    known = frozenset(t for t in term_weights if index.term_df(t) > 0 or t in query.translated)
    ranked = sorted(targets, key=lambda t: -t.score)
    # The query's terms each section holds, from the index's field masks: analysing the sections' text costs
    # as much as they are long (a 2 MB log under one heading took 0.4 s a question).
    read = [t.section_id for t in ranked[:READ_SECTIONS]]
    matched = query_fields(memory, query, read)
    held = [_present(query, term_weights, frozenset().union(*matched[sid].values())) for sid in read]
    fact_terms = _fact_terms(query, term_weights, facts[:AGREE_FACTS])
    dialogue = two_people(candidates, facts)
    named = speakers if dialogue else Speakers()
    nearest = _closeness(memory, query, ranked[:READ_SECTIONS])
    by_meaning = told(memory, query, facts[:AGREE_FACTS], named) if named.named else ()
    spoken = 0.0 if dialogue else spoken_share(candidates, facts)
    return Signals(
        term_weights, known, index.unseen_idf(), ranked, held, facts, fact_terms, nearest, by_meaning, named, dialogue,
        spoken,
    )


def _fact_terms(query: Query, term_weights: Mapping[str, float], facts: Sequence[Fact]) -> list[frozenset[str]]:
    """The query terms each fact holds.  A front-matter summary below the first place lists its document's topics
    ("… hotel limits, per diems, booking"): like a heading, it says what the document is about, not that it
    answers (it had lifted "the referral bonus for interns" 0.22 → 0.41), so its words are no fact's.  First, it
    beat every body statement at ``field_weight``: there it is the answer ("Which stream processor did we choose?")."""
    return [
        frozenset() if i and f.field else _present(query, term_weights, analyzer.term_set(f.statement))
        for i, f in enumerate(facts)
    ]


def _closeness(memory: Memory, query: Query, targets: Sequence[Target]) -> float | None:
    """The largest cosine of the question's meaning vector with the English sections' (the index's, from the
    packaged embedding table); 0 without sections, None without the table, for a question not in English or
    where no section read is in English.  The table is English: a Ukrainian question's pieces sat as close to
    any Ukrainian section (cosine 0.97 for "how much is employee parking?" with a page on desks) as far from
    an English one, and an English question's to a Ukrainian page sat at 0.01 beside its answer."""
    if not targets:
        return 0.0
    if query.language != "en":
        return None
    english = [t.section_id for t in targets if lexicon.language(_opening(memory, t.section_id)) == "en"]
    if not english:
        return None
    vector = question_vector(memory, query)
    if vector is None:
        return None
    return max(closeness(memory, vector, english).values())


def _opening(memory: Memory, section_id: int) -> str:
    """A section's first words: enough to tell its language."""
    doc, section = memory.section(section_id)
    return f"{doc.title} {section.text[:_OPENING_CHARS]}"


def _known_weight(s: Signals) -> float:
    """Share of the query's idf weight on words the memory uses at all (or their translations: ``Query.translated``)."""
    return s.share(s.known)


def _best_section_coverage(s: Signals) -> float:
    """Share of the query's weight found together in the best-covering section read."""
    return max((t.coverage for t in s.targets), default=0.0)


def _matched_mass(s: Signals) -> float:
    """How much evidence the best of the first sections shares with the query, in idf mass.

    The weight of the query words it holds over the weight of one word the memory lacks, capped
    at 1: a question made of common words ("request", "time") matches many sections by chance,
    whatever share of it they cover.
    """
    mass = max(map(s.mass, s.held), default=0.0)
    return min(1.0, mass / s.unseen) if s.unseen else 0.0


def _fact_coverage(s: Signals) -> float:
    """Share of the query's weight the best-covering of the first facts holds by itself."""
    return max((s.share(t) for t in s.fact_terms), default=0.0)


def _top_fact(s: Signals) -> float:
    """The best fact's calibrated relevance."""
    return s.facts[0].relevance_score if s.facts else 0.0


def _fact_concentration(s: Signals) -> float:
    """Share of the first facts that come from the best fact's document."""
    if not s.facts:
        return 0.0
    first = s.facts[:AGREE_FACTS]
    return sum(f.rel_path == first[0].rel_path for f in first) / len(first)


def _meaning_match(s: Signals) -> float:
    """How close in meaning the question is to the closest of the best sections read (their cosine).

    Words say whether the question's terms occur; meaning says whether a section is about what is asked,
    in whatever words: a question asked of the wrong memory, or of a meeting series without the meeting
    it was about, finds its words in sections about something else.  Without the embedding table, the
    fitted half's mean (``Model.neutral``): an estimate that knows less, not one that reads "far".
    """
    return s.closeness if s.closeness is not None else MODEL.neutral.get(MEANING, 0.0)


def _spoken(s: Signals) -> float:
    """How much the best fact's document is a transcript: the share of its statements read that are turns
    (0 in a two-person conversation, whose level and words' share the model's ``dialogue_*`` fields set).

    Words say less in a transcript than on a page: a page names its topic once, where it answers, while the
    meetings of one series use the same words all through, including the meeting the question is about when
    that one is missing.  Alone it ranks little (AUC 0.55 on the fitted half); beside the words it sets their
    level apart for transcripts, so an estimate of 0.8 on a page and in a meeting means the same (kept-back
    calibration error by kind of memory: handbooks 0.142 → 0.094, meetings 0.086 → 0.061)."""
    return s.spoken


def _spoken_coverage(s: Signals) -> float:
    """The best section's coverage in a transcript (``_spoken`` × ``_best_section_coverage``): how far a section
    holding all the question's words tells there, where it tells more on a page."""
    return s.spoken * _best_section_coverage(s)


def _speaker_agreement(s: Signals) -> float:
    """When the question names one of the two people of a conversation ("What did Maya make at her
    pottery class?"): how much of the question the first facts that tell of that person's life hold
    (``dialogue.tells``: their own claims, and the other person's questions and exclamations about them),
    relative to the best first fact; by words and by meaning (the question's cosine, names left out),
    averaged: words miss a paraphrase ("my eye op" for the cataract), meaning a detail.

    A conversation's unanswerable questions are often one person's event asked of the other (Tom took
    the pottery class): every topic word is found, in the other person's turns.  Between two people
    their lives are what they tell; in a meeting of many, a view asked of one is often answered in the
    discussion around them (there the signal measured none: 43 answerable and 33 unanswerable meeting
    questions below 1), so it is read only in a two-person conversation.  1 when the question names
    no one, the facts come from no two-person conversation, or no fact holds any of the question.
    """
    if not s.speakers.named:
        return 1.0
    own = [s.share(terms - s.speakers.terms) for terms in s.fact_terms]  # the names themselves left out
    words = telling_share(own, s.facts, s.speakers.named)
    return (words + telling_share(s.fact_meaning, s.facts, s.speakers.named)) / 2 if s.fact_meaning else words


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    meaning: str
    compute: Callable[[Signals], float]


FEATURES: tuple[Feature, ...] = (
    Feature("known_weight", "query idf weight on words the memory uses", _known_weight),
    Feature("best_section_coverage", "query weight held by the best-covering section", _best_section_coverage),
    Feature("matched_mass", "idf mass of the query words the best section holds, over one unseen word", _matched_mass),
    Feature("fact_coverage", "query weight held by the best-covering first fact", _fact_coverage),
    Feature("top_fact", "best fact's relevance", _top_fact),
    Feature("fact_concentration", "share of the first facts from the best fact's document", _fact_concentration),
    Feature("meaning_match", "the question's meaning cosine with the closest of the best sections", _meaning_match),
    Feature("spoken", "share of the best fact's document's statements read that are speakers' turns", _spoken),
    Feature("spoken_coverage", "the best section's coverage, in a transcript", _spoken_coverage),
    Feature(SPEAKER, "how much the facts telling of the named one's life hold, words and meaning", _speaker_agreement),
)


def features(s: Signals) -> dict[str, float]:
    """Every registered feature of one retrieval, by name."""
    return {f.name: min(1.0, max(0.0, f.compute(s))) for f in FEATURES}


@dataclass(frozen=True, slots=True)
class Model:
    """A fitted logistic model over ``FEATURES`` and the coverage thresholds on its output."""

    intercept: float
    weights: Mapping[str, float]
    thresholds: Mapping[str, float] = field(
        default_factory=lambda: {"comprehensive": 0.8, "partial": 0.5, "limited": 0.2}
    )
    dialogue_scale: float = 1.0  # τ: how far the words' evidence moves an estimate in a two-person conversation
    dialogue_centre: float = 0.0  # W̄: the words' logit of an average conversation row in the labelled set
    dialogue_shift: float = 0.0  # δ: the conversation rows' level, beside the words'
    # A feature's mean on the fitted half, standing in where it cannot be read (meaning without the table).
    neutral: Mapping[str, float] = field(default_factory=dict)
    heldout_auc: float = 0.0  # on the kept-back half of the labelled set, when fitted
    heldout_ece: float = 0.0
    rows: int = 0  # labelled retrievals it was fitted and checked on

    def probability(self, values: Mapping[str, float], dialogue: bool = False) -> float:
        """σ(z), z = intercept + Σ weight · value; in a two-person conversation the words' part W of z
        (every term but the speaker's and meaning's, with the intercept at the speaker's term at 1)
        becomes W̄ + δ + τ·(W − W̄) (see the module docstring)."""
        z = self.intercept + sum(w * values.get(name, 0.0) for name, w in self.weights.items())
        if dialogue:
            speaker = self.weights.get(SPEAKER, 0.0) * (values.get(SPEAKER, 1.0) - 1.0)
            words = z - speaker - self.weights.get(MEANING, 0.0) * values.get(MEANING, 0.0)
            z += (self.dialogue_scale - 1.0) * (words - self.dialogue_centre) + self.dialogue_shift
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


# BEGIN MODEL (written by scripts/fit_confidence.py; refit instead of editing)
MODEL = Model(
    intercept=-13.8808,
    weights={
        "known_weight": 1.1156,
        "best_section_coverage": 2.6589,
        "matched_mass": 1.9008,
        "fact_coverage": 2.1096,
        "top_fact": 2.209,
        "fact_concentration": 1.4932,
        "meaning_match": 4.9664,
        "spoken": 1.9866,
        "spoken_coverage": -1.477,
        "speaker_agreement": 2.9982,
    },
    thresholds={"comprehensive": 0.8, "partial": 0.5, "limited": 0.2},
    dialogue_scale=0.2015,
    dialogue_centre=-2.253,
    dialogue_shift=0.22,
    neutral={"meaning_match": 0.4288},
    heldout_auc=0.851,
    heldout_ece=0.043,
    rows=1398,
)
# END MODEL


def estimate(
    memory: Memory,
    query: Query,
    targets: Sequence[Target],
    facts: Sequence[Fact],
    candidates: Sequence[Candidate],
    speakers: Speakers,
) -> float:
    """The probability that these facts answer the query (0 when nothing was found), from the candidates
    read and the speakers the question names among them (``Run.speakers``)."""
    if not facts:
        return 0.0
    found = signals(memory, query, targets, facts, candidates, speakers)
    estimated = round(MODEL.probability(features(found), found.dialogue), DIGITS)
    return min(estimated, NO_TOPIC_CEILING) if no_topic(query) else estimated


def features_of(memory: Memory, run: Run) -> dict[str, float]:
    """The features of a finished retrieval (for fitting and evaluation scripts)."""
    if run.query is None or run.phase1 is None:
        return {f.name: 0.0 for f in FEATURES}
    facts = run.retrieval.facts if run.retrieval else ()
    return features(signals(memory, run.query, run.phase1.targets, facts, run.candidates, run.speakers))


def in_dialogue(run: Run) -> bool:
    """Whether a finished retrieval's best fact comes from a two-person conversation (for fitting)."""
    return two_people(run.candidates, run.retrieval.facts if run.retrieval else ())


def coverage(answerability: float, has_facts: bool, thresholds: Mapping[str, float] | None = None) -> Coverage:
    """seed 000's ``coverage_assessment`` from the answerability estimate and the model's thresholds."""
    if not has_facts:
        return "none"
    cuts = thresholds if thresholds is not None else MODEL.thresholds
    labels: tuple[Coverage, ...] = ("comprehensive", "partial", "limited")
    for label in labels:
        if answerability >= cuts[label]:
            return label
    return "none"
