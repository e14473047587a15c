"""The tokeniser shared by index and query: stems, stop words, identifiers, scripts."""

from __future__ import annotations

import subprocess
import sys
import time
from collections import Counter

import pytest
import snowballstemmer
from conftest import REPO
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever.text import analyzer
from retriever.text.analyzer import normalize, raw_words, stem, terms
from retriever.text.inflections import BASE_FORMS
from retriever.text.stopwords import FRAMING, WORDS


def test_approval_and_approve_meet_on_one_stem() -> None:
    assert terms("approval") == ["approv"]
    assert terms("approve") == ["approv"]
    assert terms("approved approvals approving") == ["approv", "approv", "approv"]


def test_irregular_past_forms_meet_their_base_form() -> None:
    assert terms("Where did Kwame meet Morven?") == ["kwame", "meet", "morven"]
    assert terms("someone I met at the wall") == ["meet", "wall"]
    assert terms("I bought a canoe; we ran; she has flown") == terms("buy a canoe; we run; she has fly")


def test_ambiguous_forms_and_forms_of_framing_verbs_keep_their_own_stem() -> None:
    assert terms("left side, felt hat, saw blade") == ["left", "side", "felt", "hat", "saw", "blade"]
    assert "give" not in terms("she gave it")  # "give me…" frames a question: its forms join nothing
    assert set(BASE_FORMS.values()).isdisjoint(FRAMING | WORDS)


def test_english_stop_words_are_dropped() -> None:
    assert terms("What is the plan for the launch?") == ["plan", "launch"]


def test_ukrainian_stop_words_are_dropped() -> None:
    assert terms("Що це за план для клієнтів?") == ["план", "клієн"]
    assert terms("Які акаунти мають найвищий дохід?") == terms("акаунти найвищий дохід")  # "have", as in English


def test_contractions_that_are_stop_words_are_dropped() -> None:
    assert terms("don't stop") == ["stop"]


def test_identifiers_like_dec_0054_are_kept_whole_and_split() -> None:
    assert terms("Decision DEC-0054 was made") == ["decis", "dec-0054", "dec", "0054", "made"]


def test_a_trailing_full_stop_does_not_stick_to_an_identifier() -> None:
    assert terms("See DEC-0054.") == ["see", "dec-0054", "dec", "0054"]


def test_versions_like_v4_2_1_are_kept_whole_with_their_shorter_forms_and_split() -> None:
    assert terms("release v4.2.1") == ["releas", "v4.2.1", "v4.2", "v4", "2", "1"]
    assert terms("4.3.0 notes") == ["4.3.0", "4.3", "4", "3", "0", "note"]  # "What changed in 4.3?" finds 4.3.0
    assert terms("Python 3.11") == ["python", "3.11", "3", "11"]  # two parts: already its shortest form


def test_a_long_dotted_number_gets_no_shorter_forms_in_time_linear_in_it() -> None:
    # every prefix of a token of thousands of parts had been a term: 60 KB took 22 s and 3.6 GB to index
    long = ".".join(["1"] * 30_000)
    started = time.monotonic()
    found = terms(long)
    assert time.monotonic() - started < 2 and long in found and len(found) == 30_001
    assert terms("1.2.3.4.5") == ["1.2.3.4.5", "1", "2", "3", "4", "5"]


def test_emails_are_kept_whole_and_split_into_stemmed_parts() -> None:
    assert terms("mail olena@brightwave.io now") == [
        "mail",
        "olena@brightwave.io",
        "olena",
        "brightwav",
        "io",
    ]


def test_snake_case_names_are_kept_whole_and_split() -> None:
    assert terms("snake_case") == ["snake_case", "snake", "case"]
    assert terms("set follow_up_date") == ["set", "follow_up_date", "follow", "date"]


def test_single_latin_letters_inside_identifiers_are_not_terms() -> None:
    assert terms("401(k)") == ["401"]
    assert terms("A/B test") == ["a/b", "test"]


def test_inflected_ukrainian_forms_of_a_noun_meet() -> None:
    assert terms("клієнтів клієнтами клієнти") == ["клієн", "клієн", "клієн"]


def test_ukrainian_apostrophe_forms_meet_whichever_apostrophe_is_typed() -> None:
    expected = ["пам'я"]
    assert terms("пам'ять") == expected  # ASCII apostrophe
    assert terms("пам’яті") == expected  # U+2019 right single quotation mark
    assert terms("памʼять") == expected  # U+02BC modifier letter apostrophe


def test_upper_case_ukrainian_is_stemmed_like_lower_case() -> None:
    assert terms("КЛІЄНТАМИ") == terms("клієнтами") == ["клієн"]


def test_cjk_runs_become_overlapping_bigrams() -> None:
    assert terms("東京都の会議") == ["東京", "京都", "都の", "の会", "会議"]


def test_a_single_cjk_character_stays_one_term() -> None:
    assert terms("会") == ["会"]


def test_korean_words_become_bigrams() -> None:
    assert terms("데이터 보호") == ["데이", "이터", "보호"]


def test_latin_words_inside_cjk_text_stay_findable() -> None:
    # Suspected bug: "使用API接口" is one \w+ token, so the whole token is cut into bigrams
    # ("用a", "ap", "pi", "i接") and a query for "API" (term "api") can never match it.
    found = terms("使用API接口")
    assert "api" in found
    assert "使用" in found
    assert "接口" in found


def test_full_width_query_terms_match_ascii_document_terms() -> None:
    assert terms("ＤＥＣ-0054") == terms("dec-0054") == ["dec-0054", "dec", "0054"]


def test_stem_leaves_words_of_other_scripts_unchanged() -> None:
    assert stem("approval") == "approv"
    assert stem("клієнтами") == "клієн"
    assert stem("东京") == "东京"
    assert stem("v4") == "v4"


def test_raw_words_keep_stop_words_and_identifiers_in_order() -> None:
    assert raw_words("What is the plan for DEC-0054?") == ["what", "is", "the", "plan", "for", "dec-0054"]


def test_raw_words_lower_case_ukrainian_without_stemming() -> None:
    assert raw_words("Хто відповідає за продажі?") == ["хто", "відповідає", "за", "продажі"]


def test_normalize_casefolds_and_applies_nfkc() -> None:
    assert normalize("Ｆｕｌｌ Straße ﬁle ＡＢＣ") == "full strasse file abc"


def test_normalize_makes_typographic_apostrophes_plain() -> None:
    assert normalize("O’Brien памʼять") == "o'brien пам'ять"


_REFERENCE = snowballstemmer.stemmer("english")  # what the analyzer's stemmer must agree with


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz'", min_size=1, max_size=20))
def test_the_english_stemmer_loaded_alone_stems_as_snowballstemmer_does(word: str) -> None:
    assert analyzer._english.stemWord(word) == _REFERENCE.stemWord(word)


def test_the_english_stemmer_is_loaded_without_the_other_languages() -> None:
    code = (
        "import sys\nfrom retriever.text import analyzer\n"
        "print(analyzer.stem('approvals'), sorted(m for m in sys.modules if m.startswith('snowballstemmer')))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split(" ", 1) == ["approv", "[]\n"]


# terms' fast paths (the word pattern alone without "@", apostrophes replaced only when present,
# the token loop in C) must give exactly the terms of the plain form below.

_OLD_APOSTROPHES = str.maketrans({"’": "'", "ʼ": "'", "`": "'"})
_ANALYZER_PIECES = [
    *" \n\t.,;:!?-/_'’ʼ`@+#()",
    "olena@brightwave.io",
    "a.b@c-d.org",
    "DEC-0054",
    "v4.2.1",
    "follow_up",
    "don't",
    "don`t",
    "O`Neil",
    "O’Brien",
    "памʼять",
    "Київ",
    "使用API接口",
    "ﬁle",
    "Straße",
    "ＡＢＣ",
    "approvals",
    "the",
    "401(k)",
]
_ANALYZER_TEXT = st.lists(st.sampled_from(_ANALYZER_PIECES) | st.text(max_size=3), max_size=40).map("".join)


def _reference_terms(text: str) -> list[str]:
    import unicodedata

    out: list[str] = []
    for token in analyzer._TOKEN.findall(unicodedata.normalize("NFKC", text).casefold().translate(_OLD_APOSTROPHES)):
        out.extend(analyzer._expand(token))
    return out


@settings(max_examples=200, deadline=None)
@given(text=_ANALYZER_TEXT)
def test_terms_fast_paths_give_the_terms_of_the_plain_tokeniser(text: str) -> None:
    assert terms(text) == _reference_terms(text)
    assert list(analyzer.term_counts(text).items()) == list(Counter(_reference_terms(text)).items())


def test_off_is_a_topic_word_in_time_off() -> None:
    assert analyzer.terms("How do I request time off?") == ["request", "time", "off"]


_EMAILISH = st.text(alphabet=st.sampled_from([*"ab1_.+-@'/ x", "’", "ʼ", "é", "Ж", "\n"]), max_size=30)


@settings(max_examples=1000, deadline=None)
@given(_EMAILISH)
def test_tokens_are_what_the_token_pattern_finds(text: str) -> None:
    # ``_TOKEN`` is the specification; ``_tokens`` finds the same in linear time.
    assert analyzer._tokens(text) == analyzer._TOKEN.findall(text)


@pytest.mark.parametrize(
    ("run", "words"),
    [("a+", ["a"] * 100_000), (".", []), ("-", []), ("+", []), ("a.+", ["a"] * 66_666)],
)
def test_an_email_after_a_long_run_of_local_part_characters_is_found_in_linear_time(run: str, words: list[str]) -> None:
    # The email pattern retried the run at every start: "a+" * 40,000 took 11 s, so 200,000 would take minutes.
    text = run * (200_000 // len(run)) + " x@y.io and olena@brightwave.io"
    assert raw_words(text) == [*words, "x@y.io", "and", "olena@brightwave.io"]
    assert terms(text)[-5:] == ["io", "olena@brightwave.io", "olena", "brightwav", "io"]


def test_a_word_running_into_an_email_leaves_it_the_rest_of_its_local_part() -> None:
    assert raw_words("path/user+tag@x.io") == ["path/user", "+tag@x.io"]
    assert raw_words("a/b@x.io c@d.e") == ["a/b", "x.io", "c@d.e"]
    assert raw_words("a@b.c+d@e.f") == ["a@b.c", "+d@e.f"]


def test_invisible_marks_inside_a_word_leave_it_whole_and_a_zero_width_space_separates() -> None:
    assert analyzer.terms("he\u00adlix") == analyzer.terms("helix")  # a soft hyphen had split it: "he", "lix"
    assert analyzer.terms("Bill\u200ding \u202emigration\u202c") == analyzer.terms("billing migration")
    assert analyzer.terms("zero\u200bwidth") == analyzer.terms("zero width")


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("on-call", ["on-call"]),
        ("штаб-квартира", ["штаб-квартира"]),
        ("moonlighting", ["moonlight"]),
        ("the", []),
        ("doctor's", ["doctor"]),
        ("пам'ять", analyzer.terms("пам'ять")),
    ],
)
def test_a_table_word_is_its_compound_or_its_stem_never_a_part(word: str, expected: list[str]) -> None:
    assert analyzer.head_terms(word) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("What is IT?", ["it"]),
        ("Head of IT Infrastructure", ["head", "infrastructur", "it"]),
        ("IT-led rollout", ["it-led", "led", "rollout", "it"]),
        ("US citizens and the US Government", ["citizen", "govern", "us", "us"]),
        ("## IT", ["it"]),
        ("IT's budget and IT’s laptops", ["budget", "laptop", "it", "it"]),
        ("NOTE: IT approves laptops", ["note", "approv", "laptop", "it"]),
        ("DONE. US staff are paid", ["done", "staff", "pay", "us"]),
        ("SYSTEM: VPN; OWNER: IT", ["system", "vpn", "owner", "it"]),  # a row in capitals is no shouting
    ],
)
def test_it_and_us_written_as_acronyms_among_ordinary_words_are_terms(text: str, expected: list[str]) -> None:
    assert terms(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        *("HOW IT WORKS", "I LOVE IT", "IT WORKS", "please THANK US", "what is it?", "USB", "IT'S GREAT"),
        *("WHERE IS IT?", "WHERE ARE WE? US.", "WHO DID THIS? IT. NOT ME!", "QUESTION: IS IT? ANSWER: IT."),
    ],
)
def test_a_stop_word_shouted_or_in_lower_case_is_no_term(text: str) -> None:
    assert "it" not in terms(text) and "us" not in terms(text)


@given(st.text(max_size=200))
@settings(max_examples=300)
def test_lower_case_text_never_holds_an_acronym_term(text: str) -> None:
    found = terms(text.lower())
    assert "it" not in found and "us" not in found


def test_a_texts_acronyms_are_read_up_to_a_bound() -> None:
    assert terms("Ask IT about it. " * 5_000).count("it") == analyzer._ACRONYMS_READ


def test_a_number_with_thousands_separators_is_one_term_as_a_question_may_write_it() -> None:
    assert terms("Discounts start at 1,500 seats; Datadog costs €58,800") == [
        *("discount", "start", "1500", "seat", "datadog", "cost", "58800")
    ]
    assert terms("1,000,000 users") == terms("1000000 users")
    assert terms("rooms 1,2,3 and 2019,2020") == ["room", "1", "2", "3", "2019", "2020"]  # no thousands: a list
    assert terms("0,001 BTC") == ["0", "001", "btc"]  # a decimal comma


def test_an_iso_dates_month_is_also_its_name_so_june_2026_meets_2026_06_30() -> None:
    assert terms("| 2026-06-30 | 187,050 |") == ["2026-06-30", "june", "2026", "06", "30", "187050"]
    assert "novemb" in terms("released 2025-11") and set(terms("June 2026")) <= set(terms("2026-06-30"))
    assert terms("build 2026-13-01") == ["build", "2026-13-01", "2026", "13", "01"]  # no month 13
