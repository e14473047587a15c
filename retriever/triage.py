"""Stage 2, triage: skip low-information prompts, rewrite follow-ups with the session's history.

Offline rules, deterministic:
- A prompt is low-information when none of its words carries content: only greetings,
  thanks, acknowledgements, stop words, punctuation or emoji ("hi", "thanks!", "ok 👍").
- A follow-up ("and who owns it?") has few content words and a pronoun or a leading
  conjunction; with a session history it is rewritten into a self-contained query by
  prefixing the content words of the most recent prior prompt (of the last 3).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from retriever import analyzer
from retriever.context import Context, Run
from retriever.guided import guide_triage
from retriever.query import analyze
from retriever.results import Triage
from retriever.stopwords import WORDS as STOP_WORDS

HISTORY_FOR_TRIAGE = 3

CHIT_CHAT = frozenset(
    """
hi hello hey hiya howdy yo greetings morning afternoon evening night good day thanks thank thx ty tysm
cheers ok okay k kk cool great nice awesome perfect fine alright right sure yes yeah yep yup no nope nah
bye goodbye cya later lol haha hehe wow got it gotcha understood noted done welcome sorry np there all
much lot lots appreciate appreciated everyone folks guys team super sounds excellent brilliant amazing
привіт вітаю добрий день ранок вечір дякую дяка дякс спасибі ок окей добре гаразд зрозуміло ясно так ні
бувай па круто супер чудово клас дуже будь ласка
""".split()
)

_PRONOUNS = frozenset(
    "it its they them their this that these those he she him her his hers there "
    "це цей ця ці той ті він вона вони його її їх там".split()
)
_LEADS = ("and", "also", "і", "а", "та", "також")


def is_low_information(prompt: str) -> bool:
    """True when no word of the prompt carries content."""
    words = analyzer.raw_words(prompt)
    return all(w in CHIT_CHAT or w in STOP_WORDS for w in words)


def _content_words(prompt: str) -> list[str]:
    return [w for w in analyzer.raw_words(prompt) if w not in STOP_WORDS and w not in CHIT_CHAT]


def is_follow_up(prompt: str) -> bool:
    """Short prompts that lean on an earlier one: a pronoun or leading "and", few content words."""
    words = analyzer.raw_words(prompt)
    if not words or len(_content_words(prompt)) > 3:
        return False
    leads = words[0] in _LEADS or words[:2] in (["what", "about"], ["how", "about"], ["а", "як"])
    return leads or any(w in _PRONOUNS for w in words)


def rewrite(prompt: str, history: Sequence[str]) -> str | None:
    """A self-contained query for a follow-up, or None when no rewrite is needed."""
    recent = [p for p in history[-HISTORY_FOR_TRIAGE:] if not is_low_information(p)]
    if not recent or not is_follow_up(prompt):
        return None
    topic = " ".join(_content_words(recent[-1]))
    return f"{prompt.rstrip()} (context: {topic})" if topic else None


def triage(prompt: str, history: Sequence[str] = ()) -> Triage:
    """The routing decision for one prompt."""
    if is_low_information(prompt):
        return Triage(
            decision="skip",
            reasoning="Low-information prompt (greeting, thanks or acknowledgement): no company context needed.",
            rewritten_query=None,
        )
    rewritten = rewrite(prompt, history)
    if rewritten:
        return Triage(
            decision="retrieve",
            reasoning="Follow-up to an earlier prompt in this session; rewritten to stand on its own.",
            rewritten_query=rewritten,
        )
    words = ", ".join(dict.fromkeys(_content_words(prompt)[:6]))
    return Triage(
        decision="retrieve",
        reasoning=f"The prompt asks about company-specific content ({words}); searching the memory.",
        rewritten_query=prompt,
    )


def run(state: Run, ctx: Context) -> Run:
    assert state.request is not None
    result = triage(state.request.prompt, ctx.history)
    if ctx.llm is not None and result.decision == "retrieve":
        guided = guide_triage(ctx.llm, state.request.prompt, ctx.history[-HISTORY_FOR_TRIAGE:])
        if guided is not None:
            result = Triage("retrieve", guided.reasoning.strip() or result.reasoning, guided.rewritten_query.strip())
    memory = ctx.memory
    query = analyze(
        result.rewritten_query or state.request.prompt,
        memory.state.acronyms if memory else None,
        memory.index if memory else None,
    )
    return dataclasses.replace(state, triage=result, query=query)
