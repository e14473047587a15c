"""A question's parts: where it splits (the same as the old lookahead pattern, in linear time), how many
parts are kept (``MAX_PARTS``), and a many-part prompt of the longest length answered in bounded time.

The long inputs here took the old code minutes (a cubic split, parts × terms of scoring); no test times
anything: that they run at all within the suite is the check."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import TreeFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.config import MAX_PROMPT_CHARS
from retriever.pipeline.expansion import FRAMING_TERMS
from retriever.pipeline.query import Framing, Query, analyze, best_coverage, coverage, present_terms, weight_sets
from retriever.pipeline.question_parts import MAX_PARTS, is_many_part, question_parts
from retriever.retriever import Retriever
from retriever.text import analyzer

# The split pattern before it was made linear (its last branch's lookahead, tried at every comma, took
# cubic time): the reference the new split must match, run on short inputs only.
OLD_CLAUSE = re.compile(
    r"\?\s+|[;:]\s+|\bboth\b|,\s+(?=(?:and\s+)?(?:how|what|who|when|where|which|why|is|are|do|does|can)\b)"
    r"|\s+and\s+(?=(?:how|what|who|when|where|which|why)\b)|,\s+(?=[^,]*\band\b[^,]*$)",
    re.I,
)
PIECES = ["and", "AND", "both", "how", "who", "is", "budget", "hotels", "meals", "band", "x"]
PIECES += [",", ", ", " ", "  ", "\n", " \t", "\u00a0", "?", "? ", ";", ": ", "."]


def old_parts(text: str) -> tuple[tuple[str, ...], ...]:
    """``question_parts`` as it was, uncapped."""
    clauses = [c for c in OLD_CLAUSE.split(text) if c and c.strip(" ,.?")]
    parts = (tuple(dict.fromkeys(analyzer.terms(c))) for c in clauses)
    return tuple(p for p in parts if any(t not in FRAMING_TERMS for t in p))


@settings(max_examples=800, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=16))
def test_the_split_is_the_old_patterns_on_words_commas_spaces_and_and(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert question_parts(text) == old_parts(text)[:MAX_PARTS]


def test_a_final_and_list_after_the_last_comma_splits_however_it_is_spaced() -> None:
    for space in (" ", "  ", "\n", "\t\n "):
        text = f"What are the limits for an offsite: per-person budget,{space}hotels{space}and meals?"
        assert question_parts(text) == (("limit", "offsit"), ("per-person", "person", "budget"), ("hotel", "meal"))
    assert question_parts("Who owns billing, and the audit,") == (("own", "bill", "audit"),)  # no "and" after


def test_a_long_whitespace_run_before_and_splits_in_linear_time() -> None:
    # The old pattern's shape of worst case at 16,000 characters: about seven minutes of backtracking.
    text = "Who owns billing," + " " * 8000 + "and " * 2000 + ","
    assert question_parts(text) == (("own", "bill"),)
    assert question_parts(text[:-1] + "hotels") == (("own", "bill"), ("hotel",))


def test_a_question_of_many_parts_keeps_its_first_parts_in_order() -> None:
    topics = ["billing", "hotels", "meals", "laptops", "payroll", "visas", "badges", "parking", "lunch", "desks"]
    text = " ".join(f"Who handles {topic}?" for topic in topics)
    expected = tuple(("handl", analyzer.terms(topic)[0]) for topic in topics[:MAX_PARTS])
    assert question_parts(text) == expected
    query = analyze(text)
    assert query.parts == expected and query.many_part and is_many_part(text)
    assert set(query.terms) >= {analyzer.terms(topic)[0] for topic in topics}  # the whole question keeps every word


def test_the_longest_questions_asked_keep_all_their_parts() -> None:
    text = (
        "How do expense reimbursements work: where do I submit them, who approves them, how long do they take, "
        "and how often should I submit?"
    )
    assert len(question_parts(text)) == 5 < MAX_PARTS
    assert question_parts(text) == old_parts(text)


# Coverage of a many-part question: the same value, to the last bit, as the old sums over every term of every set.
TERMS = ["a", "b", "c", "d", "e", "f", "x", "y"]
term_sets = st.frozensets(st.sampled_from(TERMS))
term_weights = st.dictionaries(st.sampled_from(TERMS[:6]), st.floats(0.0, 9.0, allow_subnormal=False), max_size=6)
question_parts_of_terms = st.lists(st.lists(st.sampled_from(TERMS), min_size=1, max_size=3).map(tuple), max_size=4)


def old_framed(sets: list[dict[str, float]], own: set[str], context: frozenset[str], query: Query, cw: float) -> float:
    """A statement's coverage (``Framing.coverages``) as it was: each set's found share summed over all its terms."""
    terms = set(sets[0])
    credit = dict.fromkeys(present_terms(terms, own, query), 1.0)
    if context:
        credit.update(dict.fromkeys(present_terms(terms - credit.keys(), context, query), cw))
    best = 0.0
    for weights in sets:
        total = sum(weights.values())
        if total:
            best = max(best, sum(w * credit[t] for t, w in weights.items() if t in credit) / total)
    return best


@settings(max_examples=300, deadline=None)
@given(
    term_weights,
    question_parts_of_terms,
    term_sets,
    term_sets,
)
def test_coverage_of_the_parts_is_the_old_sums_to_the_last_bit(
    weights: dict[str, float], parts: list[tuple[str, ...]], own: frozenset[str], context: frozenset[str]
) -> None:
    query = replace(analyze("x"), parts=tuple(parts), alternates={"a": (frozenset({"x", "y"}),)})
    present, sets = set(own), weight_sets(weights, query)
    assert best_coverage(weights, present, query) == max(coverage(w, present, query) for w in sets)
    framed = Framing.of(sets, query, 0.4).coverages(present, frozenset(), context)[0]
    assert framed == old_framed(sets, present, context, query, 0.4)


@settings(max_examples=300, deadline=None)
@given(
    term_weights,
    question_parts_of_terms,
    term_sets,
    term_sets,
    term_sets,
)
def test_a_statements_two_coverages_are_the_old_sums_with_and_without_its_headings_to_the_last_bit(
    weights: dict[str, float],
    parts: list[tuple[str, ...]],
    said: frozenset[str],
    headings: frozenset[str],
    context: frozenset[str],
) -> None:
    query = replace(analyze("x"), parts=tuple(parts), alternates={"a": (frozenset({"x", "y"}),)})
    sets = weight_sets(weights, query)

    framed, own = Framing.of(sets, query, 0.4).coverages(said, headings, context)

    assert framed == old_framed(sets, set(said | headings), context, query, 0.4)
    assert own == old_framed(sets, set(said), context, query, 0.4)


def _topics(count: int) -> list[str]:
    return [f"k{chr(97 + i % 26)}{chr(97 + i // 26 % 26)}{chr(97 + i // 676)}" for i in range(count)]


def _many_part_prompt(words: list[str]) -> str:
    """As many "word? " parts as fit in the longest prompt allowed."""
    prompt = ""
    for word in words:
        if len(prompt) + len(word) + 2 > MAX_PROMPT_CHARS:
            break
        prompt += word + "? "
    return prompt


def _many_topics_tree(make_tree: TreeFactory, words: list[str]) -> Path:
    return make_tree({f"d{d}.md": f"# Doc {d}\n\n" + " ".join(words[d * 50 : (d + 1) * 50]) + ".\n" for d in range(30)})


def test_a_prompt_of_a_thousand_parts_is_answered_from_its_first_parts(make_tree: TreeFactory) -> None:
    # 1,333 parts and as many terms, each in the memory: the old code searched and scored every part over
    # every term (a minute and more); now MAX_PARTS parts are.
    words = _topics(1500)
    retriever = Retriever(_many_topics_tree(make_tree, words))
    prompt = _many_part_prompt(words)
    assert prompt.count("?") > 1000 and len(prompt) <= MAX_PROMPT_CHARS
    assert analyze(prompt).parts == tuple((w,) for w in words[:MAX_PARTS])
    facts = retriever.retrieve(prompt).facts
    assert "d0.md" in {f.rel_path for f in facts}  # the file holding the parts searched one by one


def test_a_prompt_shaped_for_the_old_splits_backtracking_is_answered(make_tree: TreeFactory) -> None:
    retriever = Retriever(make_tree({"billing.md": "# Billing\n\nFinance owns billing.\n"}))
    half = (MAX_PROMPT_CHARS - 20) // 2
    prompt = "Who owns billing," + " " * half + "and " * (half // 4) + ","
    assert len(prompt) <= MAX_PROMPT_CHARS
    assert [f.statement for f in retriever.retrieve(prompt).facts][:1] == ["Finance owns billing."]


def test_a_comparison_asks_about_each_thing_it_compares() -> None:
    assert question_parts("How did Kafka Streams and Flink compare in the load tests?") == (
        ("kafka", "stream"),
        ("flink", "compar", "load", "test"),
    )
    assert question_parts("How does the Junior role differ from the Standard role?") == (
        ("junior", "role", "differ"),
        ("standard", "role"),
    )
    assert question_parts("Who owns billing and payroll?") == (("own", "bill", "payrol"),)  # no comparison


@pytest.mark.parametrize(
    ("question", "parts"),
    [
        ("How does Riverbed compare to Pulse Classic?", (("riverb", "compar"), ("puls", "classic"))),
        ("How does the Growth plan compare with Starter?", (("growth", "plan", "compar"), ("starter",))),
        ("How is Flink different from Kafka Streams?", (("flink", "differ"), ("kafka", "stream"))),
        ("Is Growth more expensive than Starter?", (("growth", "expens", "starter"),)),  # no comparison word
        ("What changed from the Growth plan to the Starter plan?", (("chang", "growth", "plan", "starter"),)),
    ],
)
def test_a_comparison_to_with_or_different_from_a_thing_asks_about_each(question: str, parts: tuple[str, ...]) -> None:
    assert question_parts(question) == parts


def test_a_long_comparison_splits_once_in_linear_time() -> None:
    text = "compare alpha and " + "beta and " * 4000 + "gamma"
    assert question_parts(text) == (("compar", "alpha"), ("beta", "gamma"))


def test_a_part_with_a_pronoun_holds_the_names_of_the_part_before_it() -> None:
    assert question_parts("What is Harbourline's MRR and when does its contract renew?") == (
        ("harbourline's", "harbourlin", "mrr"),
        ("contract", "renew", "harbourlin", "mrr"),
    )
    assert question_parts("Who signed off the Q1 2027 hiring plan and what does it cost?")[1] == ("cost", "q1", "2027")


def test_a_part_without_a_pronoun_or_after_a_part_naming_nothing_holds_only_its_own_words() -> None:
    assert question_parts("Who owns Riverbed and when does the audit start?")[1] == ("audit", "start")
    assert question_parts("Who handles term extensions and who approves them?")[1] == ("approv",)


def test_it_in_capitals_names_the_it_team_and_points_back_at_nothing() -> None:
    assert question_parts("Who leads Riverbed and who runs IT?") == (("lead", "riverb"), ("run", "it"))


def test_a_clause_of_a_pronoun_and_asking_words_alone_is_no_part_of_borrowed_names() -> None:
    assert question_parts("Who owns Helix and what about it?") == (("own", "helix"),)
    assert not is_many_part("When did we move to Flink and why did we do it?")
