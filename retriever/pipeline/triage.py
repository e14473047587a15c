"""Stage 2, triage: skip low-information prompts, rewrite follow-ups with the session's history.

Offline rules, deterministic:
- A prompt is low-information when nothing is left once small talk is taken out: emoji,
  punctuation and text faces; courtesy and reaction phrases and words of many languages
  (``retriever.text.courtesy``: greetings, thanks, acknowledgements, reactions, laughter,
  farewells, fillers), with stretched spellings ("thaaanks") folded; stop words; and whom
  it is addressed to: a group ("hey team") or a person the memory knows ("thanks Olena!").
  Any other word is content, so a greeting plus a question ("hi, who runs sales?") is a
  question, and so is a bare topic ("vpn").  The query searched (``rewritten_query``) is the prompt
  without the clauses of small talk before and after its request ("who runs sales?").
- A follow-up ("and who owns it?") has few content words and a pronoun or a leading
  conjunction; with a session history it is rewritten into a self-contained query by
  prefixing the content words of the most recent prior prompt (of the last 3).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Sequence

from retriever.memory.memory import Memory
from retriever.pipeline.context import Context, Run
from retriever.pipeline.query import analyze, no_topic
from retriever.pipeline.results import Triage
from retriever.text import analyzer, courtesy, lexicon
from retriever.text.stopwords import WORDS as STOP_WORDS

# The offline reasoning, in the prompt's language (``_tongue``): what was decided, and why.
_REASONS = {
    "en": {
        "follow_up": "Follow-up to an earlier prompt in this session; rewritten to stand on its own.",
        "skip": "Low-information prompt ({kind}): no company context needed.",
        "retrieve": "The prompt asks about company-specific content ({words}); searching the memory.",
        "courtesy": "greeting, thanks or acknowledgement",
        "symbols": "only punctuation, symbols or emoji",
        "no_topic": "no word to search for",
    },
    "uk": {
        "follow_up": "Уточнення до попереднього запиту в цій сесії; переписано, щоб запит був зрозумілий без нього.",
        "skip": "Запит без змісту для пошуку ({kind}): контекст компанії не потрібен.",
        "retrieve": "Запит стосується змісту, специфічного для компанії ({words}); шукаємо в пам'яті.",
        "courtesy": "привітання, подяка чи підтвердження",
        "symbols": "лише розділові знаки, символи чи емодзі",
        "no_topic": "немає слів для пошуку",
    },
}

HISTORY_FOR_TRIAGE = 3

_EMOTICONS = re.compile(courtesy.EMOTICONS)
_PRAISE = re.compile(courtesy.PRAISE)
_LAUGHTER = re.compile("|".join(courtesy.LAUGHTER))


def _any_of(phrases: frozenset[str]) -> re.Pattern[str]:
    """Any of ``phrases`` on word bounds, the longest first ("thank you so much" before "thank you")."""
    longest_first = sorted(phrases, key=len, reverse=True)
    return re.compile(r"(?<!\w)(?:" + "|".join(map(re.escape, longest_first)) + r")(?!\w)")


_PHRASES = _any_of(courtesy.PHRASES)
_INTENTS = _any_of(courtesy.INTENTS)
_UNSPACED = re.compile("|".join(re.escape(p) for p in sorted(courtesy.UNSPACED, key=len, reverse=True)))
_UNSPACED_SCRIPT = re.compile(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_STRETCH = re.compile(r"(\w)\1{2,}")
_NAME = re.compile(r"[A-ZА-ЯІЇЄҐ][a-zа-яіїєґ']+")
_SMALL_TALK = courtesy.WORDS | courtesy.ABBREVIATIONS | courtesy.FUNCTION_WORDS | STOP_WORDS
IsPerson = Callable[[str], bool]
NAME_PROMPT_WORDS = 4  # "thanks a lot Olena!" at most: longer prompts with a name in them ask something

_PRONOUNS = frozenset(
    "it its they them their this that these those he she him her his hers there "
    "це цей ця ці той ті він вона вони його її їх там".split()
)
_LEADS = ("and", "also", "і", "а", "та", "також")
_SECOND_PERSON = frozenset("you u ya ye yourself ти ви тебе вас тобі вам".split())
# The pronouns that point back at a topic; "there" does not ("anyone there?" calls for someone).
_REFERRING = _PRONOUNS - {"there", "там"}


@functools.lru_cache(maxsize=65_536)  # terms repeat across statements and questions; the test costs ~2 µs
def small_talk_term(term: str) -> bool:
    """True for an index term (``analyzer``) that may be a word of small talk: the stem of a courtesy word, or one
    ``_small_talk`` takes (laughter, a stretched spelling).  A statement with any other term asks or says something:
    ``is_low_information`` need not read it (scoring asks of every short statement: ``bonuses.says_nothing``)."""
    return term in _small_talk_terms() or _small_talk(term)


@functools.cache
def _small_talk_terms() -> frozenset[str]:
    # The words of small-talk phrases too ("good point", "of course", "fair enough"): a statement of them is small
    # talk, and its terms must let ``is_low_information`` read it.
    phrases = " ".join(word for phrase in courtesy.PHRASES for word in phrase.split())
    return analyzer.term_set(" ".join(sorted(_SMALL_TALK)) + " " + phrases)


def _small_talk(word: str) -> bool:
    """True for a word that carries no request: courtesy, reaction, laughter, a stop word or a lone letter."""
    if word in _SMALL_TALK or _LAUGHTER.fullmatch(word):
        return True
    if len(word) == 1 and word.isascii():
        return True
    folded = {_STRETCH.sub(r"\1\1", word), _STRETCH.sub(r"\1", word)}  # "thaaanks", "cooool", "okkk"
    if folded != {word}:
        return any(_small_talk(w) for w in folded - {word})
    return bool(_UNSPACED_SCRIPT.match(word)) and all(ch in courtesy.PARTICLES for ch in word)


def _words(text: str) -> list[str]:
    """Words of any script: letters and digits with their combining marks (Devanagari, Thai, Arabic
    vowel signs), inner apostrophes and hyphens kept ("y'all", "uh-huh")."""
    kept = "".join(c if c.isalnum() or unicodedata.category(c)[0] == "M" or c in "'-" else " " for c in text)
    # A mark with no letter before it (an emoji's variation selector) is not a word.
    return [w.strip("'-") for w in kept.split() if any(c.isalnum() for c in w)]


def content_words(prompt: str) -> list[str]:
    """The prompt's words that ask for something, lower-cased, in order (small talk removed)."""
    text = _EMOTICONS.sub(" ", prompt)
    text = _PHRASES.sub(" ", _PRAISE.sub(" ", analyzer.normalize(text)))
    if "?" not in prompt:  # "Can I ignore this?" asks about the topic; "I'll ignore this, thanks" does not
        text = _INTENTS.sub(" ", text)
    text = _UNSPACED.sub(" ", text)
    acronyms = analyzer.capital_acronyms(prompt)  # "What is IT?": a stop word written as an acronym is the topic
    return [w for w in _words(text) if not _small_talk(w) or _taken(w, acronyms)]


def _taken(word: str, acronyms: list[str]) -> bool:
    """Whether ``word`` is one of ``acronyms``, which then loses that occurrence (each counts once)."""
    if word in acronyms:
        acronyms.remove(word)
        return True
    return False


def _pronouns(prompt: str, words: list[str]) -> list[str]:
    """The pronouns among ``words`` (the prompt's), less the ones the prompt writes as acronyms ("IT", "US")."""
    acronyms = analyzer.capital_acronyms(prompt)
    return [w for w in words if w in _PRONOUNS and not _taken(w, acronyms)]


def _addressed(prompt: str, content: list[str], is_person: IsPerson | None) -> bool:
    """True when the one content word names who the small talk is for: a group ("well done team") or
    a person the memory knows, right after a courtesy word ("thanks Olena!", "hi, Taras")."""
    text = analyzer.normalize(prompt)
    words = _words(text)
    if len(content) != 1 or "?" in prompt or len(words) > NAME_PROMPT_WORDS:
        return False
    if not _courteous(text, words):
        return False
    if content[0] in courtesy.ADDRESSEES or content[0] in analyzer.capital_acronyms(prompt):  # "thanks IT!"
        return True
    # A capitalised word could as well be a topic ("thanks, Onboarding"): only a known person is addressed.
    tokens = list(re.finditer(r"\w+", prompt))
    return is_person is not None and any(
        _NAME.fullmatch(b.group())
        and analyzer.normalize(b.group()) == content[0]
        and analyzer.normalize(a.group()) in courtesy.WORDS
        and not prompt[a.end() : b.start()].strip(" ,")
        and is_person(b.group())
        for a, b in itertools.pairwise(tokens)
    )


def is_low_information(prompt: str, is_person: IsPerson | None = None) -> bool:
    """True when nothing is left of the prompt once small talk, emoji and punctuation are removed.

    ``is_person`` (a name → whether the memory holds a person of that name) lets "thanks Olena!"
    count as small talk; without it a name is content.
    """
    content = content_words(prompt)
    return not content or _addressed(prompt, content, is_person)


def is_follow_up(prompt: str) -> bool:
    """Short prompts that lean on an earlier one: a pronoun or leading "and", few content words."""
    words = analyzer.raw_words(prompt)
    if not words or len(content_words(prompt)) > 3:
        return False
    leads = words[0] in _LEADS or words[:2] in (["what", "about"], ["how", "about"], ["а", "як"])
    return leads or bool(_pronouns(prompt, words))


def _bare_question(prompt: str) -> bool:
    """A question of stop words and a pronoun only ("How do I do that?", "Where is it?"): no small talk, and
    nothing of its own to search for, so it can only be about what the session asked before."""
    text = analyzer.normalize(prompt)
    words = _words(text)
    addressed = any(w in _SECOND_PERSON for w in words)  # "did you get that?" asks the assistant, not the memory
    referring = any(w in _REFERRING for w in _pronouns(prompt, words))
    return "?" in prompt and not _courteous(text, words) and not addressed and referring


def _courteous(text: str, words: list[str]) -> bool:
    """Whether the normalised ``text`` (its ``words``) holds a courtesy phrase or word."""
    return bool(_PHRASES.search(text)) or any(w in courtesy.WORDS or w in courtesy.ABBREVIATIONS for w in words)


# A clause of a prompt: text up to and including its run of clause-ending marks (or the end).
_CLAUSE = re.compile(r"[^,!.;:?\n\u2013\u2014]*(?:[,!.;:?\n\u2013\u2014]+|$)")


def trimmed(prompt: str, is_person: IsPerson | None = None) -> str:
    """``prompt`` without the greetings, thanks and sign-offs before and after its request, the text searched:
    "hi, who runs sales?" → "who runs sales?" ("hi" would match "hi-IN").  Only whole clauses of small talk that
    hold a courtesy word or phrase go: "Who owns Helix, and why?" keeps its "and why?"; a prompt of small talk
    alone comes back whole."""
    clauses = [c for c in _CLAUSE.findall(prompt) if c]
    start, end = 0, len(clauses)
    while start < end and _polite(clauses[start], is_person):
        start += 1
    while end > start and _polite(clauses[end - 1], is_person):
        end -= 1
    return "".join(clauses[start:end]).strip() or prompt


def _polite(clause: str, is_person: IsPerson | None) -> bool:
    text = analyzer.normalize(clause)
    return _courteous(text, _words(text)) and is_low_information(clause, is_person)


def rewrite(prompt: str, history: Sequence[str]) -> str | None:
    """A self-contained query for a follow-up, or None when no rewrite is needed.  A prompt whose words
    only ask ("status?", "any updates?": ``query.no_topic``) is a follow-up too: in a session, its topic
    is the one asked about last."""
    recent = [p for p in history[-HISTORY_FOR_TRIAGE:] if not is_low_information(p)]
    if not recent or not _leans(prompt):
        return None
    topic = " ".join(_topic(recent))
    return f"{prompt.rstrip()} (context: {topic})" if topic else None


def _leans(prompt: str) -> bool:
    """Whether ``prompt`` leans on an earlier one: a follow-up, or a question whose words only ask."""
    return is_follow_up(prompt) or bool(no_topic(analyze(prompt)))


def _topic(recent: Sequence[str]) -> list[str]:
    """The words the last of ``recent`` was searched with: its own content words and, where it leaned on an
    earlier prompt itself, that one's topic too ("status?" after "and who owns it?" after the Helix question
    is about Helix, not about "owns")."""
    words: list[str] = []
    for back, prompt in enumerate(reversed(recent)):
        words += content_words(prompt)
        if back == len(recent) - 1 or not _leans(prompt):
            break
    return list(dict.fromkeys(words))


def triage(prompt: str, history: Sequence[str] = (), is_person: IsPerson | None = None) -> Triage:
    """The routing decision for one prompt."""
    small_talk = is_low_information(prompt, is_person)
    searched = prompt if small_talk else trimmed(prompt, is_person)
    # A question of stop words and a pronoun is small talk, unless the session gives it a topic.  Whether it leans
    # on an earlier prompt is read from the whole prompt: "how are you, and who owns billing?" stands alone,
    # though what is searched, "and who owns billing?", would lean.
    leans = (not small_talk or _bare_question(prompt)) and rewrite(prompt, history) is not None
    rewritten = rewrite(searched, history) if leans else None
    if rewritten:
        return Triage(decision="retrieve", reasoning=_REASONS[_tongue(prompt)]["follow_up"], rewritten_query=rewritten)
    if small_talk:
        reasons = _REASONS[_tongue(prompt)]
        reasoning = reasons["skip"].format(kind=reasons[_small_talk_kind(prompt)])
        return Triage(decision="skip", reasoning=reasoning, rewritten_query=None)
    words = ", ".join(dict.fromkeys(content_words(prompt)[:6]))
    reasoning = _REASONS[_tongue(prompt)]["retrieve"].format(words=words)
    return Triage(decision="retrieve", reasoning=reasoning, rewritten_query=searched)


def _small_talk_kind(prompt: str) -> str:
    """What a skipped prompt is (a key of ``_REASONS``), as its reasoning says: "." or "👍" holds no word, "aaaa" no
    word to search for; the rest greets, thanks or acknowledges (it had said so of "???" too)."""
    text = analyzer.normalize(prompt)
    words = _words(text)
    if not words:
        return "symbols"
    if _courteous(text, words) or any(w in _SECOND_PERSON for w in words):
        return "courtesy"
    return "no_topic"


def _tongue(prompt: str) -> str:
    """The language a prompt's reasoning is written in: its own (seed 001 reasons in Ukrainian)."""
    return lexicon.language(prompt)


def person_check(memory: Memory) -> IsPerson:
    """Whether a name is the title or an alias of a ``type: person`` document of ``memory``."""

    def is_person(name: str) -> bool:
        path = memory.resolve(name)
        info = memory.state.catalog.get(path) if path else None
        return info is not None and info.doc_type == "person"

    return is_person


def _attributed(reasoning: str) -> str:
    """The model's reasoning as one bounded line said to be the model's ("the model: …"), or "" when it
    gave none.  It goes into the report's **Reasoning:** line and ``triage.reasoning`` as data: it can
    neither start a line of its own (a heading, a cited fact) nor grow the report, and reasoning that reads as an
    injected instruction or names an address is not shown (``grounding.instructs``)."""
    from retriever.llm.grounding import instructs  # loaded only with a model: see pipeline.context
    from retriever.llm.prompts import model_text

    said = model_text(reasoning)
    return f"the model: {said}" if said and not instructs(said) else ""


def run(state: Run, ctx: Context) -> Run:
    assert state.request is not None
    result = triage(state.request.prompt, ctx.history, person_check(ctx.memory) if ctx.memory else None)
    if ctx.llm is not None and result.decision == "retrieve":
        from retriever.llm.guided import guide_triage  # loaded only with a model: see pipeline.context

        guided = guide_triage(ctx.llm, state.request.prompt, ctx.history[-HISTORY_FOR_TRIAGE:])
        if guided is not None:
            result = Triage(
                "retrieve", _attributed(guided.reasoning) or result.reasoning, guided.rewritten_query.strip()
            )
    memory = ctx.memory
    query = analyze(
        result.rewritten_query or state.request.prompt,
        memory.state.acronyms if memory else None,
        memory.index if memory else None,
    )
    return dataclasses.replace(state, triage=result, query=query)
