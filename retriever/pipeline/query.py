"""Query analysis: the query's terms, the user's word for each, and their weights.

Weights are idf values (terms the memory lacks weigh most, so a question about something
the memory never mentions cannot score high), with question-framing words ("main",
"current") down-weighted, and so a question's collective subject ("What did the team say…": the
speakers, not the topic; ``Query.framing``).  Compound terms (``end-of-year``) rank sections, where an exact
match is a strong sign, but leave coverage to their parts: a text that writes "end of
year" answers the question as well as one that hyphenates it.

A many-part question also keeps its parts (``Query.parts``: ``question_parts``): phase 1 reads
the sections that best answer any one part, each part searched in the context of the whole question.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from retriever.memory.index import SectionIndex
from retriever.pipeline import asking, expansion
from retriever.pipeline.deciding import asks_earlier, asks_why, decision_words
from retriever.pipeline.expansion import FRAMING_TERMS, Acronyms, is_compound
from retriever.pipeline.question_parts import question_parts
from retriever.pipeline.signals import EXPANSION_WEIGHT, FRAMING_WEIGHT
from retriever.text import analyzer, dates, lexicon
from retriever.text.stopwords import VAGUE

PART_CONTEXT = 0.3  # for one part of a many-part question, the weight of the question's other words
_DOTTED_NUMBER = re.compile(r"v?\d+(?:\.\d+)+")
_DATES_READ = 2000  # of a prompt read for days written in words
_ISO_DATE_TERM = re.compile(r"\d{4}-\d{2}-\d{2}")
_VAGUE_TERMS = frozenset(t for word in VAGUE for t in analyzer.terms(word))
_CYRILLIC_NAME = re.compile(r"\b[А-ЯІЇЄҐ][а-яіїєґ'’ʼ]+")  # a capitalised Ukrainian word: a name, perhaps
_CAPITALS = re.compile(r"\b[A-ZА-ЯІЇЄҐ]{2,}\b")  # an acronym: "IT", "HR", "ЗСУ"
# A question about the asker's own situation ("Can I work from Spain?", "my trip to Germany"), not about others;
# "me" is not enough: "tell me / show me the clients in Spain" asks about others.
_ASKER = re.compile(r"\b(?:i|i'm|i’m|i'd|i’d|i'll|i’ll|my)\b", re.I)
# A who-question ("Who owns the billing API?"): its verb also stands for the role noun (``expansion.roles``).
_WHO = re.compile(r"^\W*(?:who|whom|whose|хто|кому|чий|чия)\b", re.I)

# A question asking what a term means ("What does MRR mean?", "What does DRI stand for?", "the meaning of ICP",
# "що означає NRR?"): the verb asks for a definition and names no topic; the term is the topic.  Counted in full,
# "mean" matched every row of a glossary table under its "Meaning" column before the row defining MRR.
# Each verb is found first and its asking word looked for back to the sentence's start, so the time stays linear
# (a lazy scan from every "does" or "what" was quadratic in a prompt of them).
_DEFINING_VERB = re.compile(
    r"\b(mean|stand\s+for)\b\s*[?.!]*\s*$|\b(meaning|означає|означають|розшифровується)\b", re.I
)
_DEFINING_ASK = (re.compile(r"\b(?:does|do|did)\b", re.I), re.compile(r"\b(?:what|що)\b", re.I))
_SENTENCE_END = re.compile(r"[?.!]")
_THING = r"([\w'’/&.+-]+(?:\s+[\w'’/&.+-]+){0,3}?)"  # one to four words
_WORDS = re.compile(r"\w+")
_ARTICLE = r"(?:an?\s+|(the)\s+)?"  # "What is the X?" catches "the": a common noun after it asks for a fact
_ANY_ARTICLE = r"()(?:an?\s+|the\s+)?"  # the asking verb says a meaning is wanted, "the" or not
_DEFINITION_QUESTION = re.compile(
    rf"^\W*(?:(?:what(?:'s|’s|\s+is)\s+)?(?:the\s+)?meaning\s+of\s+{_ANY_ARTICLE}{_THING}|"
    rf"what(?:'s|’s|\s+is|\s+are)\s+{_ARTICLE}{_THING}|"
    rf"what\s+(?:does|do)\s+{_ANY_ARTICLE}{_THING}\s+(?:mean|stand\s+for)|define\s+{_ANY_ARTICLE}{_THING}|"
    rf"що\s+(?:таке|означає|означають)\s+(){_THING})\s*[?.!]*\s*$",
    re.I,
)
_DEFINITION_CHARS = 120  # a longer question asks more than what a thing is
# Words that make "What is X?" ask after a fact rather than a meaning: ours, of/in/for something, this one, what
# is going on.  Lower-case only: "New Relic", "US GAAP" and "IT" are terms.
_NOT_A_THING = frozenset(
    "it he she our my your their his her its we you they us them me this that these those of in for on at per by "
    "with to "
    "from about next last current new наш наша наше наші мій моя моє мої твій ваш ваша ваше ваші цей ця це ці "
    "в у на для про happening doing going latest due today tomorrow now wrong left".split()
)


@dataclass(frozen=True, slots=True)
class Query:
    """An analysed query.

    ``terms``: unique terms in order.  ``extra``: terms added from the memory's own acronym
    definitions ("recurring revenue" brings in ``mrr``; "MRR" brings in its expansion).
    ``alternates``: term → sets of terms that, all present, stand for it.
    """

    text: str
    terms: tuple[str, ...]
    words: Mapping[str, str]
    many_part: bool = False  # asks several things at once ("…, and how far ahead must I ask?")
    extra: tuple[str, ...] = ()
    alternates: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
    parts: tuple[tuple[str, ...], ...] = ()  # a many-part question's terms, part by part (``question_parts``)
    framing: frozenset[str] = frozenset()  # this question's own framing terms: its collective subject
    bridged: Mapping[str, float] = field(default_factory=dict)  # an added term's boost (``expansion.bridge_boosts``)
    translated: frozenset[str] = frozenset()  # the query's terms whose translation the memory holds
    language: str = "en"  # "en" or "uk" (``lexicon.language``): what summaries are framed in, meaning read for
    framed: Mapping[str, float] = field(default_factory=dict)  # rare framing words' cuts (``expansion.framing_cuts``)
    defining: frozenset[str] = frozenset()  # the terms of X in "What is X?" (``defined_thing``); empty for others
    deciding: frozenset[str] = frozenset()  # the words asking what was decided or chosen (``decision_words``)
    why: bool = False  # the question asks for a reason (``asks_why``)
    earlier: bool = False  # the question asks what held before (``asks_earlier``): a superseded record answers it

    def word(self, term: str) -> str:
        return self.words.get(term, term)

    def boosts(self) -> dict[str, float]:
        """Term multipliers for ranking: framing words and added terms count less."""
        out = framing_boosts(self)
        out.update({t: EXPANSION_WEIGHT for t in self.extra})
        out.update({t: boost for t, boost in self.bridged.items() if t in out})
        return out


def analyze(text: str, acronyms: Acronyms | None = None, index: SectionIndex | None = None) -> Query:
    """Terms and words of a query text, expanded with the memory's acronym definitions and, given the memory's
    ``index``, with what its words stand for there (``expansion``)."""
    words: dict[str, str] = {}
    for word in analyzer.raw_words(text):
        for term in analyzer.terms(word):
            words.setdefault(term, word)
    # A day written in words is also asked as ISO writes it, where the memory writes it so ("10 November 2026":
    # "2026-11-10"); where no page does, the term would weigh as a word the memory lacks, against pages that write
    # the day in words as the question does.
    days = [d for d in dates.iso_days(text[:_DATES_READ]) if index is not None and index.term_df(d) > 0]
    terms = tuple(dict.fromkeys([*analyzer.terms(text), *days]))
    extra, alternates = expansion.acronym_expansions(terms, acronyms or {})
    bridged: dict[str, float] = {}
    translated: frozenset[str] = frozenset()
    if index is not None:
        asker = _ASKER.search(text[:2000]) is not None
        places = (asker, _WHO.match(text[:200]) is not None)
        translated = _expand_in(index, terms, words, extra, alternates, bridged, cyrillic_names(text), places)
    asked = set(terms)  # a set: a prompt's thousands of terms and their paraphrases made this quadratic
    extra_terms = tuple(dict.fromkeys(t for t in extra if t not in asked))
    parts = question_parts(text)
    framing = asking.asking_terms(text)
    defining = frozenset(analyzer.term_set(defined_thing(text) or ""))
    # "Define X", "the meaning of X": the asking words frame the question, as "mean" does in "What does X mean?"
    framing |= _defining(text) | (frozenset(terms) - defining if defining else frozenset())
    many = len(parts) >= 2
    framed = expansion.framing_cuts(terms, index) if index is not None else {}
    return Query(
        text, terms, words, many, extra_terms, alternates, parts if many else (), framing, bridged, translated,
        lexicon.language(text), framed, defining, decision_words(text), asks_why(text), asks_earlier(text),
    )


def _expand_in(
    index: SectionIndex,
    terms: tuple[str, ...],
    words: Mapping[str, str],
    extra: list[str],
    alternates: dict[str, tuple[frozenset[str], ...]],
    bridged: dict[str, float],
    names: AbstractSet[str] = frozenset(),
    places: tuple[bool, bool] = (False, False),
) -> frozenset[str]:
    """Add to ``extra``, ``alternates`` and ``bridged`` what the terms stand for in this memory: its words of the
    same beginning, translations, the Latin spellings of the Cyrillic ``names`` the question capitalises,
    paraphrases, where the question is about the asker (``places[0]``: "Can I work from Spain?") the regions a
    country it names belongs to, and in a who-question (``places[1]``) the role nouns its verbs stand for ("Who owns
    X?": "Owner: …"); return the terms whose translation or spelling the memory holds."""
    asker, who = places
    roles = expansion.roles(terms, index) if who else {}
    for term, variants in [*expansion.variants(terms, index).items(), *roles.items()]:
        extra.extend(variants)
        alternates[term] = alternates.get(term, ()) + tuple(frozenset({v}) for v in variants)
    lexical = expansion.bridges(terms, words, index)
    # A word the lexicon translates is a word, not a name ("Дата" is "date", not "data").
    spelt = expansion.transliterations(tuple(t for t in terms if t not in lexical), words, names, index)
    translations = expansion.merged(lexical, spelt)
    # A country's region only for the asker's own place: "Which clients are in Spain?" had led with an "EU" line.
    regions = expansion.containing(terms, index) if asker else {}
    found = expansion.merged(translations, expansion.paraphrases(terms, index), regions)
    for term, bridges in found.items():
        extra.extend(t for bridge in bridges for t in sorted(bridge))
        alternates[term] = alternates.get(term, ()) + bridges
        same = spelt.get(term, ())  # a name in Latin letters weighs what the name does; its translations, less
        bridged.update(expansion.bridge_boosts(term, tuple(b for b in bridges if b not in same), index, bridged))
        bridged.update(expansion.bridge_boosts(term, same, index, bridged, same=True))
    return frozenset(translations)


def cyrillic_names(text: str) -> set[str]:
    """The capitalised Cyrillic words of ``text`` that may be names, normalised: not a sentence's first word unless
    a capitalised one follows it ("Олена Марченко"), since every sentence starts so ("Дата…", "Яка…")."""
    found = list(_CYRILLIC_NAME.finditer(text))
    names = set()
    for i, match in enumerate(found):
        before = text[: match.start()].rstrip()
        opens = not before or before[-1] in ".!?:;\n"
        paired = i + 1 < len(found) and text[match.end() : found[i + 1].start()].strip() == ""
        if not opens or paired:
            names.add(analyzer.normalize(match.group()))
    return names


def _defining(text: str) -> set[str]:
    """The terms of a verb asking what something means ("What does MRR mean?", "the meaning of", "що означає"),
    when its asking word ("does", "what", "що") comes before it in the same sentence."""
    found: set[str] = set()
    for match in _DEFINING_VERB.finditer(text):
        which = 0 if match.group(1) else 1
        before = text[: match.start()]
        starts = [m.end() for m in _SENTENCE_END.finditer(before, max(0, len(before) - 400))]
        sentence = before[starts[-1] if starts else max(0, len(before) - 400) :]
        if _DEFINING_ASK[which].search(sentence):
            found.update(analyzer.terms(match.group(which + 1)))
    return found


def defined_thing(text: str) -> str | None:
    """The thing of one to four words a question asks only the meaning of ("shadow traffic" of "What is shadow
    traffic?"; "What are OKRs?", "What does SEV-2 mean?", "Define NRR", "the meaning of X", "Що таке X?"), else
    None: a question after a fact of ours ("What is our total MRR?", "What is the status of the segmenter?",
    "What is Bob's role?"), "What is the" before anything but a name ("What is the deadline?" and "What is the PTO
    policy?" ask for facts; "What is the Loyalty Index?" names a term), or what is going on ("What is
    happening?")."""
    text = text.lower() if text.isupper() else text  # "WHAT IS THE DEADLINE?" names no term
    match = _DEFINITION_QUESTION.match(text) if len(text) <= _DEFINITION_CHARS else None
    if match is None:
        return None
    the, thing = next((m.group(i), m.group(i + 1)) for m in (match,) for i in range(1, 10, 2) if m.group(i + 1))
    words = _WORDS.findall(thing)  # as typed: the analyser's words are lower-cased
    if any(w in _NOT_A_THING for w in words) or re.search(r"['’]s\b", thing):  # "Bob's role" is a fact of ours
        return None
    if the and not all(w[:1].isupper() or w[:1].isdigit() for w in words):  # "the Loyalty Index", not "the PTO policy"
        return None
    return thing.rstrip(".")



def framing_boosts(query: Query) -> dict[str, float]:
    """Down-weights for the query's words that frame the question rather than name its topic."""
    return {t: query.framed.get(t, FRAMING_WEIGHT) for t in query.terms if t in FRAMING_TERMS or t in query.framing}


def no_topic(query: Query) -> tuple[str, ...]:
    """The question's words when none of them names a topic, each only asking ("update", "status?",
    "help me", "що нового?": ``stopwords.VAGUE``), else (): such a question does not say what it is
    about, so whatever it matches cannot be known to answer it.  A word in capitals ("IT help?") is a
    name, so a question holding one names its topic."""
    content = [t for t in query.terms if not is_compound(t)]
    if not content or any(t not in _VAGUE_TERMS for t in content) or _CAPITALS.search(query.text):
        return ()
    return tuple(dict.fromkeys(query.word(t) for t in content))


def weights(query: Query, index: SectionIndex) -> dict[str, float]:
    """Each counted query term's coverage weight (``counted``): its idf, framing words down-weighted."""
    boosts = framing_boosts(query)
    return {t: index.term_idf(t) * boosts.get(t, 1.0) for t in counted(query.terms)}


def counted(terms: Sequence[str]) -> list[str]:
    """The terms coverage counts: the non-compound ones and ISO dates (``_counts``), but a dotted number ("4.3",
    "12.5", "v2.1") whole, in place of its parts: "4" and "3" alone are in any text with those digits ("4.2.1 … 3
    days"), and a section of
    4.3.0's notes holds "4.3" (``analyzer`` indexes a version's shorter forms).  A part that is also a word of its own
    ("4.3 … within 3 days") is not counted either: the terms hold each once."""
    dotted = [t for t in terms if _DOTTED_NUMBER.fullmatch(t)]
    if not dotted:
        return [t for t in terms if _counts(t)]
    # Not the shorter forms of a longer one ("1.2" of "1.2.3": ``analyzer`` adds them), which 1.2.0's notes hold.
    numbers = [t for t in dotted if not any(o.startswith(f"{t}.") for o in dotted)]
    parts = {p for n in numbers for p in analyzer.terms(n) if p != n}
    return [t for t in terms if t in numbers or (_counts(t) and t not in parts)]


def _counts(term: str) -> bool:
    """A word, or a date as ISO writes it ("2026-11-10", as the question wrote it or in words: ``dates``): the day
    asked is the rarest term of "What happened on 10 November 2026?", whose words are in every dated page."""
    return not is_compound(term) or _ISO_DATE_TERM.fullmatch(term) is not None


def part_weights(weights: Mapping[str, float], part: Iterable[str]) -> dict[str, float]:
    """Weights for one part of a question: its own words in full, the question's others muted."""
    own = set(part)
    return {t: w * (1.0 if t in own else PART_CONTEXT) for t, w in weights.items()}


def weight_sets(weights: Mapping[str, float], query: Query) -> list[dict[str, float]]:
    """The weights of the whole question, then of each of its parts (``part_weights``)."""
    return [dict(weights), *(part_weights(weights, part) for part in query.parts)]


def best_coverage(weights: Mapping[str, float], present: set[str], query: Query) -> float:
    """Coverage of the question or, when it has several parts, of the part ``present`` covers best: the best
    ``coverage`` over ``weight_sets``, to the last bit, with the terms looked up once for all the sets."""
    found = present_terms(weights, present, query)
    hits = list(filter(found.__contains__, weights))  # in the weights' order: each sum adds as ``coverage`` does
    best = _share(sum(weights.values()), (weights[t] for t in hits))
    for part, total in zip(query.parts, _part_totals(weights, query.parts), strict=True):
        own = set(part)
        best = max(best, _share(total, (weights[t] * (1.0 if t in own else PART_CONTEXT) for t in hits)))
    return best


def _share(total: float, found: Iterable[float]) -> float:
    """The sum of ``found`` (in the order given) over ``total``; 0 when ``total`` is 0."""
    return sum(found) / total if total else 0.0


def _part_totals(weights: Mapping[str, float], parts: Sequence[Sequence[str]]) -> list[float]:
    """Each part's total weight (``part_weights``), summed in the weights' order as ``coverage`` sums it: a
    copy of the muted weights per part, its own terms' put back (``w * 1.0`` is ``w``), then one sum in C."""
    if not parts:
        return []
    muted = [w * PART_CONTEXT for w in weights.values()]
    position = {t: i for i, t in enumerate(weights)}
    out = []
    for part in parts:
        values = muted.copy()
        for term in position.keys() & set(part):
            values[position[term]] = weights[term]
        out.append(sum(values))
    return out


@dataclass(frozen=True, slots=True)
class Framing:
    """A question's ``weight_sets`` made ready to weigh many statements (``coverages``): their terms and
    totals taken once a question, not once a statement (a question weighs 100-800)."""

    sets: tuple[dict[str, float], ...]
    totals: tuple[float, ...]  # each set's ``sum(weights.values())``, as ``coverage`` sums it
    terms: frozenset[str]
    query: Query
    context_weight: float

    @classmethod
    def of(cls, sets: Sequence[dict[str, float]], query: Query, context_weight: float) -> Framing:
        """``weight_sets`` of ``query`` made ready; a share found only in a statement's context counts
        ``context_weight`` of one found in its words."""
        totals = tuple(sum(w.values()) for w in sets)
        return cls(tuple(sets), totals, frozenset(sets[0]) if sets else frozenset(), query, context_weight)

    def coverages(
        self, said: AbstractSet[str], framing: AbstractSet[str], context: AbstractSet[str]
    ) -> tuple[float, float]:
        """The best, over the sets, of the share of the question's weight found in ``said | framing`` (a
        statement's words and its headings) plus ``context_weight`` of the share found only in ``context``; then
        the same of ``said`` alone; from one lookup of each term.  Each set's found share is summed over the terms
        found alone, in the sets' shared order, so a many-part question's sets cost little beyond their totals and
        every sum adds as it always has."""
        if not self.sets:
            return 0.0, 0.0
        found = present_terms(self.terms, said, self.query)
        framed = present_terms(self.terms - found, said | framing, self.query) if framing else set()
        near = present_terms(self.terms - found, context, self.query) if context else set()
        if not (found or framed or near):  # most statements a question reads hold none of its words
            return 0.0, 0.0
        plain = self._best(found, near)
        return (self._best(found | framed, near - framed) if framed else plain), plain

    def _best(self, found: AbstractSet[str], near: AbstractSet[str]) -> float:
        credit = dict.fromkeys(found, 1.0)
        credit.update(dict.fromkeys(near, self.context_weight))
        hits = list(filter(credit.__contains__, self.sets[0]))
        best = 0.0
        for weights, total in zip(self.sets, self.totals, strict=True):
            if total:
                best = max(best, sum(weights[t] * credit[t] for t in hits) / total)
        return best


def present_terms(terms: Iterable[str], have: AbstractSet[str], query: Query | None) -> set[str]:
    """Those of ``terms`` found in ``have``, directly or through one of their alternates (all of whose
    terms are there): how every coverage counts a query term as present."""
    wanted = set(terms)
    found = wanted & have
    if query is not None and query.alternates:
        alternates = query.alternates
        found.update(t for t in alternates.keys() & (wanted - found) if any(a <= have for a in alternates[t]))
    return found


def coverage(weights: Mapping[str, float], present: set[str], query: Query | None = None) -> float:
    """Share of the query's weight found in ``present`` (0..1), alternates counting as the term."""
    total = sum(weights.values())
    if not total:
        return 0.0
    found = present_terms(weights, present, query)
    return sum(w for t, w in weights.items() if t in found) / total
