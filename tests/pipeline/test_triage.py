"""Stage 2: low-information prompts are skipped; follow-ups are rewritten from session history."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from conftest import COMPANY_CONTEXT, TreeFactory
from fixtures import ACME
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.memory.memory import Memory
from retriever.pipeline.triage import (
    IsPerson,
    content_words,
    is_follow_up,
    is_low_information,
    person_check,
    rewrite,
    triage,
    trimmed,
)

DATA = Path(__file__).parent / "data"


def _lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")]


CHIT_CHAT = _lines("chitchat.txt")
QUESTIONS = _lines("short_questions.txt")
PURE_SMALL_TALK = [line for line in CHIT_CHAT if not content_words(line)]  # no addressed name


@pytest.fixture(scope="module")
def people(tmp_path_factory: pytest.TempPathFactory) -> IsPerson:
    """Names of the bundled memory's people ("Olena", "Taras"), as triage gets them from a memory."""
    return person_check(Memory.open(COMPANY_CONTEXT, Settings(state_dir=tmp_path_factory.mktemp("state"))))


DECORATIONS = ["!", "!!", " 👍", " 🙏🏽", " :)", "...", " 😂😂", " ✅", " ❤️"]


@pytest.mark.parametrize(
    "prompt",
    [
        "hi",
        "Hello there!",
        "thanks!",
        "ok 👍",
        "👍",
        "ok cool, cheers",
        "got it",
        "???",
        "дякую",
        "привіт!",
        "Thank you so much",
    ],
)
def test_chit_chat_is_low_information(prompt: str) -> None:
    assert is_low_information(prompt)
    assert triage(prompt).decision == "skip"
    assert triage(prompt).rewritten_query is None


@pytest.mark.parametrize(
    ("prompt", "searched"),
    [
        ("MRR?", "MRR?"),
        ("DEC-0054", "DEC-0054"),
        ("thanks, and who owns billing?", "and who owns billing?"),
        ("Who is Olena?", "Who is Olena?"),
        ("ok, what is the on-call rotation?", "what is the on-call rotation?"),
        ("Хто відповідає за київський офіс?", "Хто відповідає за київський офіс?"),
        ("olena@brightwave.io", "olena@brightwave.io"),
    ],
)
def test_prompts_with_any_content_word_are_retrieved(prompt: str, searched: str) -> None:
    assert not is_low_information(prompt)
    result = triage(prompt)
    assert result.decision == "retrieve"
    assert result.rewritten_query == searched


@pytest.mark.parametrize(
    ("prompt", "searched"),
    [
        ("hi, who runs sales?", "who runs sales?"),
        ("Hey team! Where is the VPN guide? Thanks!", "Where is the VPN guide?"),
        ("Hi, how are you? Who owns Helix?", "Who owns Helix?"),
        ("привіт, хто відповідає за продажі?", "хто відповідає за продажі?"),
        ("good morning — what is the on-call rota?", "what is the on-call rota?"),
        ("Who runs sales? cheers", "Who runs sales?"),
        ("Who owns Helix, and why?", "Who owns Helix, and why?"),  # no courtesy: "and why?" asks
        ("What's the Good Morning meeting?", "What's the Good Morning meeting?"),  # inside the request: kept
        ("hi-IN speech settings?", "hi-IN speech settings?"),
        ("What changed in Pulse 4.3?", "What changed in Pulse 4.3?"),
    ],
)
def test_the_query_searched_leaves_out_greetings_and_thanks_around_the_request(prompt: str, searched: str) -> None:
    assert trimmed(prompt) == searched
    assert triage(prompt).rewritten_query == searched


def test_a_question_after_a_greeting_stands_alone_though_what_is_searched_starts_with_and() -> None:
    history = ["Who runs the Helix project?"]
    # "and who owns billing?" alone would lean on the session's last prompt
    assert triage("how are you, and who owns billing?", history).rewritten_query == "and who owns billing?"
    leaning = triage("thanks! and who owns it?", history).rewritten_query
    assert leaning == "and who owns it? (context: runs helix project)"


def test_a_greeting_before_a_question_is_not_searched_for() -> None:
    # "hi" had matched the "hi-IN" of an agent's speech settings, which then led the answer
    facts = Retriever(COMPANY_CONTEXT).retrieve("hi, who runs sales?").structured["retrieval"]["facts"]
    assert facts and all("hi-IN" not in f["statement"] for f in facts)


def test_retrieve_reasoning_names_the_content_words() -> None:
    assert triage("Who owns the billing migration?").reasoning == (
        "The prompt asks about company-specific content (owns, billing, migration); searching the memory."
    )


@pytest.mark.parametrize(
    "prompt", ["and who owns it?", "What about its budget?", "who leads that team?", "а хто за це відповідає?"]
)
def test_short_prompts_leaning_on_context_are_follow_ups(prompt: str) -> None:
    assert is_follow_up(prompt)


@pytest.mark.parametrize("prompt", ["Who owns the billing migration project for Northwind?", "DEC-0054"])
def test_self_contained_prompts_are_not_follow_ups(prompt: str) -> None:
    assert not is_follow_up(prompt)


def test_follow_up_is_rewritten_with_the_most_recent_prior_prompt() -> None:
    history = ["What is our leave policy?", "thanks", "Tell me about the billing migration project"]
    result = triage("and who owns it?", history)
    assert result.decision == "retrieve"
    assert result.rewritten_query == "and who owns it? (context: billing migration project)"
    assert "Follow-up" in result.reasoning


def test_follow_up_without_history_is_left_as_is() -> None:
    assert rewrite("and who owns it?", []) is None
    assert triage("and who owns it?").rewritten_query == "and who owns it?"


@pytest.mark.parametrize("prompt", ["How do I do that?", "where is it?", "when can I do that?", "а де це?"])
def test_a_question_of_stop_words_and_a_pronoun_is_a_follow_up_of_the_last_question(prompt: str) -> None:
    result = triage(prompt, ["How do I request PTO?"])
    assert result.decision == "retrieve"
    assert result.rewritten_query == f"{prompt} (context: request pto)"


@pytest.mark.parametrize(
    "prompt", ["How do I do that?", "how's it going?", "how is it going?", "is that all?", "anyone there?"]
)
def test_a_question_with_nothing_to_search_is_skipped_without_history_or_when_it_is_small_talk(prompt: str) -> None:
    assert triage(prompt).decision == "skip"
    if prompt != "How do I do that?":
        assert triage(prompt, ["How do I request PTO?"]).decision == "skip"


@pytest.mark.parametrize(
    ("prompt", "kind"),
    [
        ("thanks!", "greeting, thanks or acknowledgement"),
        ("???", "only punctuation, symbols or emoji"),
        (".", "only punctuation, symbols or emoji"),
        ("a" * 8000, "no word to search for"),
        ("How do I do that?", "no word to search for"),
    ],
)
def test_a_skipped_prompts_reasoning_says_what_kind_of_prompt_it_is(prompt: str, kind: str) -> None:
    # "???" and 8,000 × "a" had been called a greeting, thanks or acknowledgement.
    assert triage(prompt).reasoning == f"Low-information prompt ({kind}): no company context needed."


def test_a_ukrainian_prompts_reasoning_is_written_in_ukrainian_as_seed_001s() -> None:
    assert triage("дякую, корисно").reasoning == (
        "Запит без змісту для пошуку (привітання, подяка чи підтвердження): контекст компанії не потрібен."
    )
    assert triage("Хто наші основні клієнти?").reasoning == (
        "Запит стосується змісту, специфічного для компанії (основні, клієнти); шукаємо в пам'яті."
    )
    assert triage("а хто власник?", ["Що таке Helix?"]).reasoning.startswith("Уточнення до попереднього запиту")


@pytest.mark.parametrize("prompt", ["status?", "any updates?", "Що нового?"])
def test_a_question_whose_words_only_ask_takes_the_sessions_topic(prompt: str) -> None:
    result = triage(prompt, ["What is the Helix EU data residency project?"])
    assert result.rewritten_query == f"{prompt} (context: helix eu data residency project)"
    assert triage(prompt).rewritten_query == prompt  # alone it is asked as it is (and told it names no topic)


@pytest.mark.parametrize(
    "prompt",
    ["Can I ignore this?", "Who can give it a try?", "Where can I have a look at it?", "How do I check it out?"],
)
def test_what_one_will_do_or_pass_over_is_a_question_when_asked(prompt: str) -> None:
    result = triage(prompt, ["We got a security alert about lodash in the billing repo"])
    assert result.decision == "retrieve"
    assert result.rewritten_query == f"{prompt} (context: security alert lodash billing repo)"


@pytest.mark.parametrize("prompt", ["I'll take a look, thanks", "ignore that", "great, I'll check it out"])
def test_what_one_will_do_or_pass_over_is_small_talk_when_said(prompt: str) -> None:
    assert triage(prompt, ["We got a security alert about lodash in the billing repo"]).decision == "skip"


@pytest.mark.parametrize("prompt", ["Did you get that?", "You got this?", "Was that you?", "Is that it?"])
def test_a_question_to_the_assistant_or_a_closing_one_is_not_a_follow_up(prompt: str) -> None:
    assert triage(prompt, ["Who owns the Helix EU renewal?"]).decision == "skip"


def test_only_the_last_three_prior_prompts_are_considered() -> None:
    history = ["billing migration", "hi", "thanks", "ok"]
    assert rewrite("and who owns it?", history) is None


@pytest.mark.parametrize("prompt", ["thanks, that's helpful", "дякую, корисно", "ok cool", "👍🏽", "Thanks Olena!"])
def test_acknowledgements_thanks_and_reactions_in_any_language_are_skipped(prompt: str, people: IsPerson) -> None:
    assert triage(prompt, is_person=people).decision == "skip"


@pytest.mark.parametrize("prompt", ["thanks, Onboarding", "hi Helix", "Thanks Olena!"])
def test_a_capitalised_word_after_thanks_is_a_topic_unless_the_memory_knows_the_person(prompt: str) -> None:
    assert triage(prompt).decision == "retrieve"


@pytest.mark.parametrize("prompt", ["who owns billing?", "PTO policy?", "vpn", "onboarding", "hi, who runs sales?"])
def test_short_questions_and_greeting_plus_question_are_retrieved(prompt: str) -> None:
    assert triage(prompt).decision == "retrieve"


@pytest.mark.parametrize(
    "prompt", ["thanks for your patience", "congrats on the launch!", "sorry for the delay 🙏", "дякую за допомогу"]
)
def test_thanks_or_praise_for_something_is_small_talk_where_its_clause_ends(prompt: str) -> None:
    assert is_low_information(prompt)


@pytest.mark.parametrize(
    ("prompt", "content"),
    [
        ("thanks for the help DEC-0050", ["dec-0050"]),
        ("cheers for that lunch policy", ["lunch", "policy"]),
        ("thanks for that PTO policy?", ["pto", "policy"]),
        ("congrats on the launch, what is next for Helix?", ["next", "helix"]),
        ("good job descriptions template", ["descriptions", "template"]),
        ("quick summary?", ["quick", "summary"]),
    ],
)
def test_what_follows_praise_or_thanks_stays_a_question(prompt: str, content: list[str]) -> None:
    assert content_words(prompt) == content


def test_the_line_sets_are_large_and_varied() -> None:
    assert len(CHIT_CHAT) >= 100 and len(QUESTIONS) >= 100
    for lines in (CHIT_CHAT, QUESTIONS):
        scripts = {unicodedata.name(ch).split()[0] for line in lines for ch in line if ch.isalpha()}
        assert len(scripts) >= 8, scripts  # Latin, Cyrillic, CJK, Hangul, Arabic, Hebrew or Devanagari, …


def test_every_chit_chat_line_is_skipped(people: IsPerson) -> None:
    retrieved = [line for line in CHIT_CHAT if not is_low_information(line, people)]
    assert retrieved == [], f"chit-chat retrieved: {retrieved}"


def test_no_short_question_is_skipped(people: IsPerson) -> None:
    skipped = [line for line in QUESTIONS if is_low_information(line, people)]
    assert skipped == [], f"questions skipped: {skipped}"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(CHIT_CHAT), st.sampled_from(QUESTIONS), st.sampled_from([" ", ", ", "! ", " — "]), st.booleans())
def test_small_talk_around_a_question_leaves_a_question(
    people: IsPerson, chat: str, question: str, glue: str, before: bool
) -> None:
    prompt = f"{chat}{glue}{question}" if before else f"{question}{glue}{chat}"
    assert triage(prompt, is_person=people).decision == "retrieve"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PURE_SMALL_TALK), st.sampled_from(DECORATIONS), st.sampled_from(["upper", "lower", "title"]))
def test_small_talk_stays_small_talk_in_any_case_or_decoration(chat: str, decoration: str, case: str) -> None:
    assert is_low_information(getattr(chat, case)() + decoration)


def test_the_library_skips_thanks_to_a_known_person_and_retrieves_a_capitalised_topic(make_tree: TreeFactory) -> None:
    retriever = Retriever(make_tree(ACME))
    assert retriever.retrieve("Thanks Olena!").structured["triage"]["decision"] == "skip"
    assert retriever.retrieve("thanks, Billing").structured["triage"]["decision"] == "retrieve"


def test_a_question_naming_no_topic_after_a_follow_up_takes_the_topic_the_follow_up_was_asked_with() -> None:
    history = ["What is the Helix EU data residency project?", "and who owns it?"]
    assert rewrite("status?", history) == "status? (context: owns helix eu data residency project)"
    # a question with a topic of its own ends the chain: "status?" is about what was asked last
    assert rewrite("status?", ["Tell me about Riverbed", "What is the Helix project?"]) == (
        "status? (context: helix project)"
    )


@pytest.mark.parametrize("prompt", ["What is IT?", "Who runs IT?", "IT", "Do we hire US citizens?"])
def test_a_stop_word_written_as_an_acronym_is_a_topic_not_a_pronoun(prompt: str) -> None:
    assert triage(prompt).decision == "retrieve"
    assert not is_follow_up(prompt)
    assert triage(prompt, history=["Who owns the billing migration?"]).rewritten_query == prompt


@pytest.mark.parametrize("prompt", ["what is it?", "WHERE IS IT?", "THANK YOU", "Thanks IT!", "lol IT", "ok US"])
def test_the_same_words_in_lower_case_shouted_or_thanked_stay_small_talk(prompt: str) -> None:
    assert triage(prompt).decision == "skip"
