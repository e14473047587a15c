"""Query analysis: terms, user words, weights, and expansion from the memory's acronyms."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import TreeFactory
from hypothesis import given
from hypothesis import strategies as st

from retriever import Retriever, Settings
from retriever.memory.build import add_sections
from retriever.memory.index import Params, SectionIndex
from retriever.memory.memory import Memory
from retriever.pipeline.expansion import EXPANSION_WEIGHT, FRAMING_WEIGHT, RARE_SHARE
from retriever.pipeline.query import (
    PART_CONTEXT,
    analyze,
    best_coverage,
    coverage,
    cyrillic_names,
    defined_thing,
    no_topic,
    weights,
)
from retriever.pipeline.question_parts import is_many_part
from retriever.text import analyzer, thesaurus


def test_terms_are_unique_and_words_map_back_to_what_the_user_typed() -> None:
    query = analyze("Which clients renewed? Clients who renewed early")
    assert query.terms == ("client", "renew", "earli")
    assert [query.word(t) for t in query.terms] == ["clients", "renewed", "early"]


def test_query_naming_an_expansion_brings_in_the_acronym() -> None:
    query = analyze("Which accounts have the highest recurring revenue?", {"mrr": ["monthly recurring revenue"]})
    assert query.extra == ("mrr",)
    assert query.alternates == {"recur": (frozenset({"mrr"}),), "revenu": (frozenset({"mrr"}),)}
    assert query.boosts()["mrr"] == EXPANSION_WEIGHT


def test_query_naming_an_acronym_brings_in_its_expansion() -> None:
    query = analyze("What is our MRR?", {"mrr": ["monthly recurring revenue"]})
    assert query.extra == ("month", "recur", "revenu")
    assert query.alternates == {"mrr": (frozenset({"month", "recur", "revenu"}),)}


def test_one_shared_word_is_not_enough_to_expand() -> None:
    assert analyze("What revenue did we book?", {"mrr": ["monthly recurring revenue"]}).extra == ()


def test_framing_words_weigh_less_and_compounds_are_left_to_their_parts() -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"client": 1}), empty, empty, Counter({"main": 1, "end": 1, "year": 1}))])
    query = analyze("main clients at end-of-year")
    found = weights(query, index)
    assert set(found) == {"main", "client", "end", "year"}
    assert found["main"] == index.term_idf("main") * FRAMING_WEIGHT
    assert found["client"] == index.term_idf("client")


@pytest.mark.parametrize(
    ("text", "counted"),
    [
        ("What changed in Pulse 4.3?", {"chang", "puls", "4.3"}),
        ("Who reported the v2.1 bug?", {"report", "v2.1", "bug"}),
        ("Was 12.5% of the budget spent?", {"12.5", "budget", "spend"}),
        ("What changed in 1.2.3?", {"chang", "1.2.3"}),  # not its shorter form "1.2", which 1.2.0's notes hold
        ("main clients at end-of-year", {"main", "client", "end", "year"}),
        # an ISO date counts, however the question wrote it: the day asked is its rarest term
        # a day in words is asked as ISO writes it only where the memory does (this index is empty)
        ("What was released on 10 November 2026?", {"releas", "10", "novemb", "2026"}),
        ("What was released on 2026-11-10?", {"releas", "2026-11-10", "novemb", "2026", "11", "10"}),
    ],
)
def test_a_dotted_number_counts_whole_and_its_parts_do_not(text: str, counted: set[str]) -> None:
    # "4" and "3" alone are in any text with those digits: 4.2.1's notes "… within 3 days" held all of "4.3".
    assert set(weights(analyze(text), SectionIndex(params=Params()))) == counted


@pytest.mark.parametrize(
    ("text", "framing"),
    [
        ("How long are backups kept?", {"long"}),
        ("How often do coffee chats run, and how far ahead should I book?", {"often", "far"}),
        ("What is the long-term plan for the office?", set()),  # a topic's adjective, not the asking one
    ],
)
def test_the_adjective_after_how_frames_the_question(text: str, framing: set[str]) -> None:
    # "long" had weighed as much as "backups", and the row "Retention: 35 days" read as half an answer.
    query = analyze(text)
    assert set(query.framing) & {"long", "often", "far"} == framing


@pytest.mark.parametrize(
    ("text", "framing"),
    [
        ("What did the team say about recording conventions?", True),
        ("What did the group decide on the remote's colour?", True),
        ("Why did members disagree about the budget?", True),
        ("Which team owns billing?", False),
        ("I'd like to join a different team inside the company.", False),
        ("What is the desk budget for new Design team members?", False),
    ],
)
def test_a_collective_subject_frames_the_question_and_a_topic_team_does_not(text: str, framing: bool) -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"budget": 1}), empty, empty, Counter({"record": 1}))])
    query = analyze(text)
    subject = next(t for t in ("team", "group", "member") if t in query.terms)
    expected = index.term_idf(subject) * (FRAMING_WEIGHT if framing else 1.0)
    assert weights(query, index)[subject] == expected


@pytest.mark.parametrize(
    ("text", "framed"),
    [
        ("What does MRR mean?", {"mean"}),
        ("What does DRI stand for?", {"stand"}),
        ("What is the meaning of ICP?", {"mean"}),
        ("Що означає NRR?", {"означ"}),
        ("What do you mean by the budget", set()),  # not a definition question: "mean" is not its last verb
        ("What is the mean time to recovery?", set()),  # the adjective, not the verb
    ],
)
def test_a_question_asking_what_a_term_means_frames_the_verb_and_leaves_the_term(text: str, framed: set[str]) -> None:
    assert analyze(text).framing == framed


@pytest.mark.parametrize(
    ("text", "framed"),
    [
        ("What changed in Pulse 4.3?", {"chang"}),
        ("What's new since March?", {"new"}),
        ("Що змінилося в релізі 4.3?", {"зміни"}),
        ("How many approvals does an infrastructure change need?", set()),  # the change is the topic
        ("When is the change freeze this winter?", set()),
    ],
)
def test_a_question_asking_what_changed_frames_the_verb(text: str, framed: set[str]) -> None:
    assert analyze(text).framing == framed


def test_coverage_is_the_share_of_weight_present_and_alternates_count() -> None:
    query = analyze("recurring revenue by account", {"mrr": ["monthly recurring revenue"]})
    term_weights = {"recur": 2.0, "revenu": 1.0, "account": 1.0}
    assert coverage(term_weights, {"account"}) == 0.25
    assert coverage(term_weights, {"account", "mrr"}, query) == 1.0
    assert coverage({}, {"x"}) == 0.0


@pytest.mark.parametrize(
    ("text", "many"),
    [
        ("How do I get approval for a paid conference, and how far ahead do I need to ask?", True),
        ("What mental health support is there, both through insurance and free services?", True),
        ("What are the budget limits for a team offsite: per-person budget, hotels and meals?", True),
        ("How do merit increases work and how are salary bands set?", True),
        ("How much sick leave do federal employees earn?", False),
        ("What health and retirement benefits do I get?", False),
        ("DEC-0054", False),
    ],
)
def test_many_part_questions_are_told_from_single_ones(text: str, many: bool) -> None:
    assert is_many_part(text) is many
    assert analyze(text).many_part is many


def test_a_many_part_question_keeps_each_parts_terms_and_a_single_one_keeps_none() -> None:
    query = analyze("What are the budget limits for a team offsite: per-person budget, hotels and meals?")
    assert query.parts == (("budget", "limit", "team", "offsit"), ("per-person", "person", "budget"), ("hotel", "meal"))
    assert analyze("How much sick leave do federal employees earn?").parts == ()


def test_coverage_of_a_many_part_question_is_that_of_its_best_covered_part() -> None:
    query = analyze("Who owns billing, and when is the audit due?")
    term_weights = {"own": 1.0, "bill": 1.0, "audit": 1.0, "due": 1.0}
    assert coverage(term_weights, {"audit", "due"}) == 0.5
    # The part "when is the audit due" is covered in full; the question's other words count PART_CONTEXT.
    assert best_coverage(term_weights, {"audit", "due"}, query) == pytest.approx(2 / (2 + 2 * PART_CONTEXT))
    assert best_coverage(term_weights, {"audit", "due"}, analyze("billing audit")) == 0.5


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("update", ("update",)),
        ("Any updates?", ("updates",)),
        ("status", ("status",)),
        ("can you help me?", ("help",)),
        ("What's new?", ("new",)),
        ("What is the latest?", ("latest",)),
        ("details please", ("details",)),
        ("Статус?", ("статус",)),
        ("Що нового?", ("нового",)),
    ],
)
def test_a_question_whose_words_only_ask_names_no_topic_and_gives_them(question: str, words: tuple[str, ...]) -> None:
    assert no_topic(analyze(question)) == words


@pytest.mark.parametrize(
    "question", ["pto", "status of the billing migration", "help desk hours", "What did the team decide?"]
)
def test_a_question_with_one_topic_word_is_not_no_topic(question: str) -> None:
    assert no_topic(analyze(question)) == ()


def test_a_question_with_no_words_at_all_is_not_no_topic() -> None:
    assert no_topic(analyze("what is it?")) == ()


@pytest.mark.parametrize("word", ["does ", "what ", "mean ", "що "])
def test_a_prompt_of_asking_words_is_read_for_a_definition_question_in_linear_time(word: str) -> None:
    # 8,000 characters of one asking word: a lazy scan from each of them to the sentence's end was quadratic
    prompt = (word * 8000)[:8000] + " What does MRR mean?"
    assert "mean" in analyze(prompt).framing


def test_a_ukrainian_word_stands_for_its_english_translation_the_memory_holds() -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"client": 1, "account": 1}), empty, empty, Counter({"revenu": 1}))])
    query = analyze("Хто наші основні клієнти?", index=index)
    assert query.alternates["клієн"] == (frozenset({"client"}),)  # "customer" is not in this memory
    assert "client" in query.extra
    assert coverage({"клієн": 1.0}, {"client"}, query) == 1.0


def test_an_english_memory_adds_nothing_to_an_english_question() -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"client": 1, "desk": 1}), empty, empty, Counter({"book": 1}))])
    assert analyze("How do I book a desk for a client?", index=index).extra == ()


def test_a_translation_weighs_no_more_than_the_word_it_translates() -> None:
    """"current" is in most pages and frames the question; "поточний", rare, would outweigh it ("main" →
    "головний" had put a Ukrainian rule first for "Who are our main clients?")."""
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    pages = [(empty, Counter({"current": 1, "client": 1}), empty, empty, empty) for _ in range(9)]
    add_sections(index, [*pages, (empty, Counter({"поточ": 1}), empty, empty, empty)])
    query = analyze("current clients", index=index)
    own = index.term_idf("current") * FRAMING_WEIGHT
    assert query.boosts()["поточ"] == pytest.approx(EXPANSION_WEIGHT * own / index.term_idf("поточ"))
    assert query.translated == {"current"}


def test_ukrainian_framing_words_weigh_less_and_each_is_a_stop_word() -> None:
    """"Що ми знаємо про … по кожному з них?" had weighed "знаємо" and "кожному" as its rarest topic words."""
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"пріор": 1}), empty, empty, empty)])
    query = analyze("Що ми знаємо про пріоритети кожного проєкту?")
    found = weights(query, index)
    assert found[next(t for t in query.terms if t.startswith("зна"))] == index.term_idf("знаєм") * FRAMING_WEIGHT
    assert not any(t.startswith("кожн") for t in query.terms)


def _memory_of(*sections: dict[str, int]) -> SectionIndex:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter(words), empty, empty, empty) for words in sections])
    return index


def test_a_word_the_memory_never_uses_stands_for_its_paraphrase_the_memory_holds() -> None:
    index = _memory_of({"extern": 1, "employ": 1}, {"employ": 1, "benefit": 1})
    query = analyze("Can I do freelance work on the side?", index=index)
    assert frozenset({"extern", "employ"}) in query.alternates["freelanc"]
    assert coverage({"freelanc": 1.0}, {"extern", "employ"}, query) == 1.0
    assert query.translated == frozenset()  # a paraphrase is not a translation


def test_a_word_the_memory_uses_brings_no_paraphrase() -> None:
    """Meeting talk's "cost" had brought "price", ranking other talk first."""
    index = _memory_of({"freelanc": 1, "work": 1}, {"extern": 1, "employ": 1})
    assert analyze("Can I do freelance work?", index=index).alternates == {}


def test_a_paraphrase_weighs_no_more_than_the_word_it_stands_for() -> None:
    index = _memory_of(*([{"employ": 1}] * 9), {"extern": 1, "employ": 1}, {"moonlight": 1})
    query = analyze("Is freelance allowed?", index=index)
    own = index.term_idf("freelanc")
    for term in ("extern", "moonlight"):
        assert query.boosts()[term] == pytest.approx(EXPANSION_WEIGHT * min(1.0, own / index.term_idf(term)))


@pytest.fixture
def cowork_table(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(thesaurus, "_table", thesaurus.parse("coworking space, shared workspace\n"))


@pytest.mark.usefixtures("cowork_table")
def test_a_phrase_the_memory_writes_a_word_of_brings_no_paraphrase() -> None:
    lacking = _memory_of({"share": 1, "workspac": 1})
    assert analyze("Do we pay for a coworking space?", index=lacking).alternates["space"] == (
        frozenset({"share", "workspac"}),
    )
    writing = _memory_of({"share": 1, "workspac": 1}, {"cowork": 1, "stipend": 1})
    assert "space" not in analyze("Do we pay for a coworking space?", index=writing).alternates


@pytest.mark.usefixtures("cowork_table")
def test_a_word_one_section_in_a_thousand_holds_is_paraphrased_by_words_the_memory_uses_more() -> None:
    many = [{"share": 1, "workspac": 1}, {"share": 1, "workspac": 1}, *([{"desk": 1}] * 1000)]
    index = _memory_of({"cowork": 1, "space": 1}, *many)
    assert index.live_count * RARE_SHARE >= 1
    assert analyze("a coworking space", index=index).alternates["cowork"] == (frozenset({"share", "workspac"}),)
    fewer = _memory_of({"cowork": 1, "space": 1}, {"share": 1, "workspac": 1}, *([{"desk": 1}] * 1000))
    assert "cowork" not in analyze("a coworking space", index=fewer).alternates  # as rare as the word itself


def test_a_word_the_memory_lacks_stands_for_its_words_of_the_same_beginning() -> None:
    """"subsidized" stems to "subsid", six letters, and "subsidy" to "subsidi": the memory's word is found."""
    index = _memory_of({"subsidi": 1, "transit": 1}, {"employ": 1})
    query = analyze("Are bus fares subsidized?", index=index)
    assert query.alternates["subsid"] == (frozenset({"subsidi"}),)


def test_a_word_shorter_than_the_prefix_brings_no_variant() -> None:
    index = _memory_of({"parkingl": 1})
    assert "park" not in analyze("Is there parking?", index=index).alternates


@pytest.mark.parametrize("asked", ["doctors note", "doctor's note", "doctors' note"])
def test_a_possessive_paraphrase_is_asked_however_the_apostrophe_is_written(asked: str) -> None:
    """The table writes "doctor's note"; it had needed the apostrophe form in the question."""
    index = _memory_of({"medic": 1, "certif": 1}, {"leav": 1})
    query = analyze(f"Do I need a {asked}?", index=index)
    assert query.alternates["note"] == (frozenset({"medic", "certif"}),)


@pytest.mark.parametrize(
    "text",
    [
        "What is shadow traffic?",
        "What are OKRs?",
        "what's an ATO",
        "What does SEV-2 mean?",
        "What does CPD stand for?",
        "Define NRR.",
        "the meaning of follow-up owner?",
        "Що таке shadow traffic?",
        "Що означає NRR?",
        "What is the PRA?",
        "What is New Relic?",
    ],
)
def test_a_question_asking_only_what_a_thing_is_asks_a_definition(text: str) -> None:
    assert defined_thing(text) is not None and analyze(text).defining


@pytest.mark.parametrize(
    ("text", "thing"),
    [
        ("What does SEV-2 mean?", "SEV-2"),
        ("Define NRR.", "NRR"),
        ("The meaning of shadow traffic?", "shadow traffic"),
        ("What is the Loyalty Index?", "Loyalty Index"),
        ("Що таке shadow traffic?", "shadow traffic"),
        ("What does the error budget mean?", "error budget"),
        ("Define the error budget.", "error budget"),
        ("What is the meaning of error budget?", "error budget"),
    ],
)
def test_the_terms_asked_the_meaning_of_are_the_things_alone_not_the_asking_words(text: str, thing: str) -> None:
    assert defined_thing(text) == thing
    assert analyze(text).defining == analyzer.term_set(thing)


@pytest.mark.parametrize(
    "text",
    [
        "What is our total MRR?",
        "What is the status of the segmenter?",
        "What is the hotel limit per night in London?",
        "What are the expense rules for team meals today?",
        "What is it?",
        "What is the deadline?",
        "WHAT IS THE DEADLINE?",
        "What is the PTO policy?",
        "What is Bob's role?",
        "What is due today?",
        "What is happening?",
        "What is Alice doing?",
        "Who owns shadow traffic?",
        "What is shadow traffic, and when does it start?",
        "What is " + "very " * 40 + "long?",
    ],
)
def test_a_question_after_a_fact_or_more_than_a_meaning_asks_no_definition(text: str) -> None:
    assert defined_thing(text) is None and not analyze(text).defining


@pytest.mark.parametrize("verb", ["choose", "chose", "chosen", "pick", "picked"])
def test_a_verb_of_choosing_frames_the_question_and_the_thing_chosen_names_it(verb: str) -> None:
    # "Which stream processor did we choose?": a decision record writes "decided", "Option:", not the asker's verb.
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, empty, empty, empty, Counter({"flink": 1, "choos": 1, "pick": 1}))])
    query = analyze(f"Why was Flink {verb}?")
    found = weights(query, index)
    chosen = next(t for t in query.terms if t != "flink")
    assert found[chosen] == index.term_idf(chosen) * FRAMING_WEIGHT
    assert found["flink"] == index.term_idf("flink")


@given(st.text(max_size=200))
def test_any_text_asks_a_definition_or_not_and_only_a_short_one_can(text: str) -> None:
    assert defined_thing(text) is None or isinstance(defined_thing(text), str)
    assert defined_thing("What is " + text + "x" * 120) is None


@pytest.mark.parametrize(
    "text",
    [
        "What did we decide about the free tier?",
        "Which stream processor did we choose for Riverbed?",
        "What did the design team decide on the case?",
        "Which option did we go with for the Starter price?",
        "What was agreed at the Q4 kickoff?",
        "SOC 2 or ISO 27001 first: what was the decision?",
        "Що вирішили на синку київської команди?",
        "Який процесор обрали для Riverbed?",
        "Didn't we decide to drop Jira?",
        "What'd we decide about Jira?",
        "What did our platform team finally decide about Kafka?",
        "What was the outcome of the vote?",
        "Що затвердили на раді?",
        "Що обрано для Riverbed?",
    ],
)
def test_a_question_after_what_was_decided_or_chosen_is_deciding(text: str) -> None:
    assert analyze(text).deciding


@pytest.mark.parametrize(
    "text",
    [
        "How do we decide who is promoted?",
        "Who approves expenses?",
        "How do I choose a health plan?",
        "What is Flink?",
        "Who decided to retire Pulse Classic?",
        "Хто обрав Flink?",
        "Who makes decisions about hiring?",
        "Why did we choose Flink over Kafka Streams?",
        "Чому обрали Flink?",
        "How are decisions made at Pulse?",
        "How is the on-call engineer chosen?",
        "What decisions are still pending?",
        "What are the decision drivers for Flink?",
        "What's the agreed SLA for Tier 1?",
        "What is the approved travel budget?",
        "When are orders picked up?",
        "What is a decision record?",
        "Як приймаються рішення?",
    ],
)
def test_a_question_about_how_a_process_goes_or_who_decided_is_not_deciding(text: str) -> None:
    assert not analyze(text).deciding


def test_only_a_long_prompts_opening_is_read_for_decision_words() -> None:
    # "did" and word runs repeated: every repeat of the pattern is bounded, and only 400 characters are read
    assert not analyze("did " + "word " * 5000 + "What did we decide?").deciding
    assert analyze("What did we decide? " + "did we " * 3000).deciding


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("Хто така Олена Марченко?", {"олена", "марченко"}),
        ("Олена Марченко — хто це?", {"олена", "марченко"}),  # a sentence's first word, but a name follows it
        ("Дата релізу?", set()),  # every sentence starts with a capital
        ("Чим займається Олена?", {"олена"}),
    ],
)
def test_a_capitalised_cyrillic_word_is_a_name_unless_it_only_opens_a_sentence(text: str, names: set[str]) -> None:
    assert cyrillic_names(text) == names


def test_a_word_the_lexicon_translates_is_not_spelt_as_a_name_and_keeps_its_translations_weight(
    make_tree: TreeFactory,
) -> None:
    # "Дата" had been read as a name, "data" (boost 6.0), and the cap on "date" lifted (0.6 → 3.6).
    tree = {"a.md": "# Data\n\nThe data team.\n", "b.md": "# Releases\n\nThe release date is set.\n"}
    memory = Memory.open(make_tree(tree), Settings.from_env())
    query = analyze("Дата релізу? Дата важлива.", memory.state.acronyms, memory.index)
    assert "data" not in query.bridged and query.bridged["date"] <= EXPANSION_WEIGHT


def test_a_ukrainian_question_naming_a_person_finds_the_english_profile(make_tree: TreeFactory) -> None:
    tree = {
        "people/olena.md": "---\ntitle: Olena Marchenko\n---\n# Olena Marchenko\n\nVP Engineering in Kyiv.\n",
        "meetings/sync.md": "# Синк команди\n\nУчасники: Олена Марченко (веде), Тарас Коваленко.\n",
    }
    retriever = Retriever(make_tree(tree), Settings.from_env())
    assert retriever.retrieve("Хто така Олена Марченко?").facts[0].rel_path == "people/olena.md"


_WHERE = {
    **{f"notes/n{i}.md": f"# Note {i}\n\nThe team met and will work on item {i}.\n" for i in range(8)},
    "policies/remote.md": (
        "# Remote Work\n\n## Where you can work from\n\n| Situation | Rule |\n|---|---|\n"
        "| Your country of residence | Always fine |\n"
        "| Another EU/EEA country, up to 60 days per year | Tell your manager |\n"
    ),
    "clients/directory.md": (
        "# Client Directory\n\n| Client | Country |\n|---|---|\n| Meridian Press | Spain |\n"
        "| Nordlys Media | Norway |\n\nEU clients get an EU-hosted cluster on request.\n"
    ),
}


def test_an_askers_country_finds_what_the_memory_says_of_its_region_and_only_then(make_tree: TreeFactory) -> None:
    retriever = Retriever(make_tree(_WHERE), Settings.from_env())
    spain = [f.statement for f in retriever.retrieve("Can I work from Spain?").facts[:2]]
    assert any(s.startswith("Situation: Another EU/EEA country") for s in spain)  # it had not been among the first 3
    clients = retriever.retrieve("Which clients are in Spain?")  # not the asker's place: "Spain" is only Spain
    assert "Meridian Press" in clients.facts[0].statement


def test_me_alone_does_not_make_a_question_the_askers_own_place() -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    sections = [Counter({"eu": 1, "client": 1}), Counter({"spain": 1})]
    add_sections(index, [(empty, body, empty, empty, empty) for body in sections])
    assert "spain" not in analyze("Show me the clients in Spain", index=index).alternates  # "me" had sufficed
    assert analyze("Can I work from Spain?", index=index).alternates["spain"] == (frozenset({"eu"}),)


def test_in_a_who_question_a_verb_stands_for_the_role_noun_and_elsewhere_it_does_not() -> None:
    index = SectionIndex(params=Params())
    empty: Counter[str] = Counter()
    add_sections(index, [(empty, Counter({"owner": 1, "ana": 1, "laptop": 1}), empty, empty, empty)])
    query = analyze("Who owns the billing API?", index=index)
    assert query.alternates["own"] == (frozenset({"owner"}),) and "owner" in query.extra
    assert "own" not in analyze("Can I use my own laptop?", index=index).alternates  # "own" is no owner here
