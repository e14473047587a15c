"""Answerability: a calibrated estimate per retrieval that decides coverage_assessment, and its fit script."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from conftest import REPO, TreeFactory
from fixtures import ACME
from hypothesis import given, settings
from hypothesis import strategies as st

from retriever import Retriever
from retriever.pipeline import confidence
from retriever.pipeline.context import Run
from retriever.pipeline.query import analyze
from retriever.pipeline.results import Fact
from retriever.pipeline.speakers import Speakers
from retriever.pipeline.target import choose
from retriever.text import embeddings

# A handbook where "request" and "time" occur together in sections about other things, and the
# paid-time-off page says "PTO" and "days off": the shape of the "How do I request time off?".
HANDBOOK: dict[str, str] = {
    "tools/access_requests.md": "# Application access requests\n\n"
    "Request access to an application with the access request form.\n\n"
    "Every request is reviewed by Tech Ops within one business day; plan for that time.\n",
    "engineering/request_logging.md": "# Request timing\n\n"
    "Each HTTP request records the time it took in the request log.\n\nSlow requests over one second are flagged.\n",
    "security/permission_requests.md": "# Permission requests\n\n"
    "Request a permission set in Entitle; a request expires after a set time.\n",
    "benefits/pto.md": "# Paid time off\n\nWe offer flexible PTO. Record your PTO in Deel and tell your manager "
    "two weeks ahead.\n\n## Public holidays\n\nPublic holidays of your country are days off.\n",
    "handbook/editing.md": "# Editing the handbook\n\nOpen a pull request to change a page; a reviewer merges it.\n",
    "team/engineering.md": "# Engineering\n\nThe engineering team builds the product and runs the on-call rotation.\n",
    "company/values.md": "# Values\n\nWe are customer first, remote first and write things down.\n",
    "company/meeting.md": "# Company meeting\n\nThe company meeting is every other Tuesday at 15:00 UTC on Zoom.\n",
    "benefits/expenses.md": "# Expenses\n\nSubmit expenses in Airbase within 30 days with a receipt.\n",
    "security/laptops.md": "# Laptops\n\nLaptops lock after 10 minutes and use disk encryption.\n",
}


def _fit_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fit_confidence", REPO / "scripts" / "fit_confidence.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_request_time_off_finds_the_pto_page_first(make_tree: TreeFactory) -> None:
    facts = Retriever(make_tree(HANDBOOK)).retrieve("How do I request time off?").structured["retrieval"]["facts"]
    assert "pto.md" in facts[0]["source_path"]  # "off" is a topic word: the miss is gone


def test_request_vacation_finds_the_pto_page_by_its_paraphrase(make_tree: TreeFactory) -> None:
    facts = Retriever(make_tree(HANDBOOK)).retrieve("How do I request vacation?").structured["retrieval"]["facts"]
    assert "pto.md" in facts[0]["source_path"]  # the memory never says "vacation": the thesaurus's "pto" stands for it


def test_a_request_question_that_misses_the_pto_page_is_not_called_comprehensive(make_tree: TreeFactory) -> None:
    result = Retriever(make_tree(HANDBOOK)).retrieve("How do I request a furlough?")
    retrieval = result.structured["retrieval"]
    # The situation of the issue: the question's words find request pages, not the PTO page.
    assert all("pto.md" not in f["source_path"] for f in retrieval["facts"][:3])
    assert retrieval["coverage_assessment"] != "comprehensive"
    assert not retrieval["context_summary"].startswith("The memory covers this well")
    assert result.structured["diagnostics"]["answerability"] < confidence.MODEL.thresholds["comprehensive"]


def test_a_question_the_memory_answers_in_its_own_words_is_comprehensive(make_tree: TreeFactory) -> None:
    result = Retriever(make_tree(HANDBOOK)).retrieve("How do I record PTO in Deel?")
    assert result.structured["retrieval"]["coverage_assessment"] == "comprehensive"
    assert "pto.md" in result.structured["retrieval"]["facts"][0]["source_path"]


def test_a_question_on_a_topic_the_memory_lacks_is_not_answerable(make_tree: TreeFactory) -> None:
    result = Retriever(make_tree(HANDBOOK)).retrieve("Does the company offer pet insurance?")
    assert result.structured["diagnostics"]["answerability"] < 0.2
    assert result.structured["retrieval"]["coverage_assessment"] == "none"


@pytest.mark.parametrize("question", ["request", "time", "update", "status?", "help me", "Статус?"])
def test_a_question_naming_no_topic_is_at_most_limited_however_fully_its_word_is_found(
    make_tree: TreeFactory, question: str
) -> None:
    handbook = {
        **HANDBOOK,
        "handbook/updates.md": "# Updates\n\nPost an update with help from the handbook team; status on Fridays.\n",
        "handbook/статус.md": "# Статус\n\nСтатус проєкту оновлюємо щоп'ятниці.\n",
    }
    structured = Retriever(make_tree(handbook)).retrieve(question).structured
    assert structured["retrieval"]["facts"]  # the word is found ...
    asks_only = question not in ("request", "time")  # ... but a word that only asks leaves the topic unsaid
    assert (structured["diagnostics"]["answerability"] <= confidence.NO_TOPIC_CEILING) is asks_only
    if asks_only:  # a topical word is not held down, and the fit alone says how far it reaches ("time": 0.46)
        assert structured["retrieval"]["coverage_assessment"] == "limited"


def test_a_skipped_prompt_has_no_answerability(make_tree: TreeFactory) -> None:
    structured = Retriever(make_tree(HANDBOOK)).retrieve("thanks!").structured
    assert structured["diagnostics"]["answerability"] is None
    assert structured["retrieval"]["coverage_assessment"] == "none"


@pytest.mark.parametrize(
    ("estimate", "label"),
    [
        (0.95, "comprehensive"),
        (0.8, "comprehensive"),
        (0.79, "partial"),
        (0.5, "partial"),
        (0.3, "limited"),
        (0.2, "limited"),
        (0.19, "none"),
        (0.0, "none"),
    ],
)
def test_coverage_bands_follow_the_model_thresholds(estimate: float, label: str) -> None:
    cuts = {"comprehensive": 0.8, "partial": 0.5, "limited": 0.2}
    assert confidence.coverage(estimate, True, cuts) == label
    assert confidence.coverage(estimate, False, cuts) == "none"


WORDS = sorted({w for text in ACME.values() for w in text.lower().split() if w.isalpha()})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([*WORDS, "zebra", "sabbatical", "DEC-0054", "дякую"]), min_size=1, max_size=8))
def test_every_feature_and_the_estimate_lie_in_zero_to_one(
    tmp_path_factory: pytest.TempPathFactory, words: list[str]
) -> None:
    retriever = _acme(tmp_path_factory)
    result = retriever.retrieve(" ".join(words) + "?")
    values = confidence.features_of(retriever.memory, result.run)
    assert set(values) == {f.name for f in confidence.FEATURES}
    assert all(0.0 <= v <= 1.0 for v in values.values())
    answerability = result.structured["diagnostics"]["answerability"]
    assert answerability is None or 0.0 <= answerability <= 1.0


_ACME: dict[str, Retriever] = {}


def _acme(factory: pytest.TempPathFactory) -> Retriever:
    """One ACME tree shared by the property's examples (building it per example would be slow)."""
    if "acme" not in _ACME:
        root = factory.mktemp("acme")
        for rel, text in ACME.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        _ACME["acme"] = Retriever(root)
    return _ACME["acme"]


def test_write_model_replaces_only_the_model_block(tmp_path: Path) -> None:
    source = REPO / "retriever" / "pipeline" / "confidence.py"
    copy = tmp_path / "confidence.py"
    shutil.copy(source, copy)
    model = confidence.Model(intercept=-1.5, weights={"top_fact": 2.0}, heldout_auc=0.9, heldout_ece=0.05, rows=7)
    _fit_script().write_model(copy, model)
    spec = importlib.util.spec_from_file_location("confidence_copy", copy)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    assert (module.MODEL.intercept, dict(module.MODEL.weights), module.MODEL.rows) == (-1.5, {"top_fact": 2.0}, 7)
    before, after = source.read_text().split("# BEGIN MODEL"), copy.read_text().split("# BEGIN MODEL")
    assert before[0] == after[0] and before[1].split("# END MODEL")[1] == after[1].split("# END MODEL")[1]


def test_a_file_without_a_model_block_is_refused_with_a_reason(tmp_path: Path) -> None:
    empty = tmp_path / "other.py"
    empty.write_text("x = 1\n")
    with pytest.raises(ValueError, match="no MODEL block"):
        _fit_script().write_model(empty, confidence.MODEL)


def test_auc_and_calibration_error_measure_what_they_claim() -> None:
    fit = _fit_script()
    y = np.array([0.0, 0.0, 1.0, 1.0])
    assert fit.auc(np.array([0.1, 0.2, 0.8, 0.9]), y) == 1.0
    assert fit.auc(np.array([0.9, 0.8, 0.2, 0.1]), y) == 0.0
    assert fit.auc(np.array([0.5, 0.5, 0.5, 0.5]), y) == 0.5
    assert fit.ece(np.array([0.05, 0.05, 0.95, 0.95]), y) == pytest.approx(0.05)
    assert fit.ece(np.array([0.9, 0.9, 0.1, 0.1]), y) == pytest.approx(0.9)


def test_the_logistic_fit_separates_and_calibrates_synthetic_data() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(7)
    x = rng.uniform(size=(2000, 2))
    p_true = 1 / (1 + np.exp(-(6 * x[:, 0] - 3)))
    y = (rng.uniform(size=2000) < p_true).astype(float)
    intercept, weights = fit.fit(x[:1000], y[:1000])
    p = 1 / (1 + np.exp(-(intercept + x[1000:] @ weights)))
    assert fit.auc(p, y[1000:]) > 0.8
    assert fit.ece(p, y[1000:]) < 0.06
    assert abs(weights[1]) < 1.0 < weights[0]  # the irrelevant column gets little weight


def test_the_speakers_term_is_fitted_on_top_of_a_fixed_offset() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(11)
    offset = rng.normal(size=3000)
    u = np.where(rng.uniform(size=3000) < 0.1, -rng.uniform(size=3000), 0.0)  # 0 on most rows
    y = (rng.uniform(size=3000) < 1 / (1 + np.exp(-(offset + 3.0 * u)))).astype(float)
    assert 2.0 < fit._offset_fit(offset, u[:, None], y)[0] < 4.0  # the sparse column is not shrunk away


def _examples(fit: ModuleType, words: np.ndarray, speaker: np.ndarray, dialogue: np.ndarray, y: np.ndarray) -> list:
    """Labelled examples whose words' features are ``words`` (one column per feature but the speaker's)."""
    names = [f.name for f in confidence.FEATURES]
    at = names.index(confidence.SPEAKER)
    rows = []
    for w, s, d, label in zip(words, speaker, dialogue, y, strict=True):
        x = [float(v) for v in np.insert(w, at, s)]
        row = {"asked_of": "chat-fit" if d else "handbook", "answerable": bool(label)}
        rows.append(fit.Example(row, "", x, 0.0, bool(d)))
    return rows


def _conversation_labels(rng: np.random.Generator, words: np.ndarray, dialogue: np.ndarray, scale: float) -> np.ndarray:
    """Labels drawn from σ(words logit) outside conversations and σ(scale · (logit − its mean)) in them."""
    logit = 6.0 * words[:, 0] - 3.0
    centre = logit[dialogue].mean()
    logit = np.where(dialogue, scale * (logit - centre), logit)
    return (rng.uniform(size=len(logit)) < 1 / (1 + np.exp(-logit))).astype(float)


def test_the_fit_finds_how_far_the_words_count_in_conversations() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(5)
    words = rng.uniform(size=(4000, len(confidence.FEATURES) - 1))
    dialogue = rng.uniform(size=4000) < 0.4
    y = _conversation_labels(rng, words, dialogue, 0.3)
    examples = _examples(fit, words, np.ones(4000), dialogue, y)
    model = fit.two_stage(examples, np.array([e.x for e in examples]), y)
    assert 0.15 < model.dialogue_scale < 0.45
    assert abs(model.dialogue_shift) < 0.3  # no level of its own in the data: none learned


def test_words_that_point_the_wrong_way_in_conversations_count_for_nothing_there() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(6)
    words = rng.uniform(size=(4000, len(confidence.FEATURES) - 1))
    dialogue = rng.uniform(size=4000) < 0.4
    y = _conversation_labels(rng, words, dialogue, -0.5)
    examples = _examples(fit, words, np.ones(4000), dialogue, y)
    model = fit.two_stage(examples, np.array([e.x for e in examples]), y)
    assert model.dialogue_scale == 0.0
    values = {f.name: 0.5 for f in confidence.FEATURES} | {confidence.SPEAKER: 1.0}
    more = values | {"known_weight": 1.0}  # the one feature the labels were drawn from
    assert model.probability(values, dialogue=True) == pytest.approx(model.probability(more, dialogue=True))
    assert model.probability(values) < model.probability(more)


def test_the_fit_reports_estimates_rounded_as_the_retriever_gives_them() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(7)
    words = rng.uniform(size=(20, len(confidence.FEATURES) - 1))
    examples = _examples(fit, words, np.ones(20), np.zeros(20, dtype=bool), np.ones(20))
    names = [f.name for f in confidence.FEATURES]
    model = confidence.MODEL
    expected = [round(model.probability(dict(zip(names, e.x, strict=True))), confidence.DIGITS) for e in examples]
    assert fit.predict(confidence.MODEL, examples).tolist() == expected


def test_a_conversation_scales_the_words_by_the_dialogue_scale_and_keeps_speaker_and_meaning_whole() -> None:
    model = confidence.Model(
        intercept=-2.0,
        weights={"top_fact": 4.0, confidence.SPEAKER: 3.0, confidence.MEANING: 2.0},
        dialogue_scale=0.5,
        dialogue_centre=1.0,
        dialogue_shift=-0.25,
    )
    for top in (0.25, 1.0):
        words = -2.0 + 4.0 * top + 3.0  # W: the intercept with the speaker's term at 1, and the words
        for speaker, meaning in ((1.0, 0.5), (0.4, 0.5), (1.0, 0.9)):
            values = {"top_fact": top, confidence.SPEAKER: speaker, confidence.MEANING: meaning}
            whole = 3.0 * (speaker - 1.0) + 2.0 * meaning  # the terms a conversation does not scale
            expected = 1.0 - 0.25 + 0.5 * (words - 1.0) + whole  # W̄ + δ + τ·(W − W̄) + speaker + meaning
            assert model.probability(values, dialogue=True) == pytest.approx(1 / (1 + math.exp(-expected)))
            assert model.probability(values) == pytest.approx(1 / (1 + math.exp(-(words + whole))))


def _chat(*turns: str) -> str:
    """A one-session chat between Tom and Maya, one turn per paragraph."""
    return "# Chat\n\n## Session 1 — 8 May 2023\n\n" + "\n\n".join(turns)


POTTERY = (
    "Tom: I've been going to a pottery class on Thursday nights. I made a wonky bowl last week.",
    "Maya: Amazing! I'm starting a life drawing class at the community centre.",
    "Tom: You'll love it. How was the first session?",
    "Maya: Scary. The tutor says I draw like I'm scared of the paper.",
    "Tom: Ha, she sounds great.",
    "Maya: She is.",
)
CHAT = _chat(*POTTERY)


def test_a_question_asking_one_person_of_a_chat_about_the_others_event_is_less_answerable(
    make_tree: TreeFactory,
) -> None:
    retriever = Retriever(make_tree({"chat.md": CHAT}))
    own = retriever.retrieve("What did Tom make at his Thursday pottery class?").structured
    swapped = retriever.retrieve("What did Maya make at her Thursday pottery class?").structured
    statements = [f["statement"] for f in own["retrieval"]["facts"]]
    assert statements[0].startswith("Tom: ") and "Tom: I made a wonky bowl last week." in statements
    run_own, run_swapped = (
        retriever.retrieve(q).run
        for q in (
            "What did Tom make at his Thursday pottery class?",
            "What did Maya make at her Thursday pottery class?",
        )
    )
    assert confidence.features_of(retriever.memory, run_own)["speaker_agreement"] == 1.0
    assert confidence.features_of(retriever.memory, run_swapped)["speaker_agreement"] < 0.5
    assert swapped["diagnostics"]["answerability"] < own["diagnostics"]["answerability"]


def _agreements(make_tree: TreeFactory, chat: str, own: str, swapped: str) -> tuple[Run, float, float]:
    """A chat asked a question of one person's own event and the same question of the other: the first
    retrieval, and each one's ``speaker_agreement``."""
    retriever = Retriever(make_tree({"chat.md": chat}))
    runs = [retriever.retrieve(q).run for q in (own, swapped)]
    agree = [confidence.features_of(retriever.memory, run)["speaker_agreement"] for run in runs]
    return runs[0], agree[0], agree[1]


def test_crying_out_at_the_others_news_does_not_make_it_ones_own(make_tree: TreeFactory) -> None:
    chat = _chat(
        "Tom: Big news, I bought a canoe from a club in Henley for the river trips.",
        "Maya: A canoe! Amazing.",
        "Tom: It leaks a bit, but it floats.",
        "Maya: I'm starting a life drawing class at the community centre.",
        "Tom: You'll love it.",
        "Maya: I hope so.",
    )
    _, own, swapped = _agreements(make_tree, chat, "Where did Tom buy his canoe?", "Where did Maya buy her canoe?")

    assert own == 1.0
    assert swapped < 0.5


def test_the_others_exclamation_at_ones_news_tells_of_ones_own_life(make_tree: TreeFactory) -> None:
    chat = _chat(
        "Ruth: I started at the new clinic on Monday.",
        "Ruth: There is a ginger tom called Biscuit who lives in the office there.",
        "Kwame: A clinic cat!",
        "Kwame: I'm repainting the hall this weekend.",
        "Ruth: Which colour?",
        "Kwame: Sage green.",
    )
    run, own, swapped = _agreements(
        make_tree, chat, "What is the name of Ruth's clinic cat?", "What is the name of Kwame's clinic cat?"
    )

    # The exclamation holds the question's words best, but Kwame said it.
    assert run.retrieval and any(f.statement.endswith("Kwame: A clinic cat!") for f in run.retrieval.facts[:5])
    assert own == 1.0
    assert swapped < 0.5


def test_a_chat_asked_what_it_never_speaks_of_is_less_answerable_than_asked_its_own_events(
    make_tree: TreeFactory,
) -> None:
    chat = _chat(
        *POTTERY,
        "Tom: Work has been busy, I was in the office every day this week.",
        "Maya: Same here, three days in the office and two at home.",
        "Tom: At least the weekend is coming. I'm taking the kids to the coast on Saturday.",
        "Maya: Enjoy it! Send me a photo of the beach.",
    )
    retriever = Retriever(make_tree({"chat.md": chat}))
    policy = retriever.retrieve("How many days a week must staff work from the office?").structured
    own = [
        retriever.retrieve(q).structured["diagnostics"]["answerability"]
        for q in ("What did Tom make at his pottery class?", "Where is Tom taking the kids on Saturday?")
    ]

    assert policy["retrieval"]["facts"]  # its common words ("days", "week", "office") are found
    assert policy["retrieval"]["coverage_assessment"] in ("limited", "none")
    assert policy["diagnostics"]["answerability"] < min(own)


def test_a_chat_of_two_people_is_a_conversation_and_a_page_of_labelled_lines_is_not(make_tree: TreeFactory) -> None:
    page = "# Benefits\n\n" + "\n\n".join(
        [
            "What: dental cover for the family.",
            "How: enrol in the first month.",
            "What: vision cover.",
            "How: claim online.",
            "What: a gym stipend.",
            "How: expense it monthly.",
        ]
        + [f"Benefit {n} covers dental check-ups once a year for every employee." for n in range(12)]
    )
    retriever = Retriever(make_tree({"chat.md": CHAT, "benefits.md": page}))

    assert confidence.in_dialogue(retriever.retrieve("What did Tom make at his pottery class?").run)
    assert not confidence.in_dialogue(retriever.retrieve("What dental cover do we get?").run)


def test_a_meeting_of_many_speakers_reads_no_speaker_agreement(make_tree: TreeFactory) -> None:
    turns = [
        f"{who}: The budget for the remote is {n} euros." for n, who in enumerate(["Grad A", "Grad B", "PhD C"] * 3)
    ]
    retriever = Retriever(make_tree({"meeting.md": "# Meeting\n\n## Turns 0-8\n\n" + "\n\n".join(turns)}))
    run = retriever.retrieve("What did Grad A say about the budget?").run
    assert confidence.features_of(retriever.memory, run)["speaker_agreement"] == 1.0


def test_the_fit_script_refits_from_one_command_and_reports_the_kept_back_half(tmp_path: Path) -> None:
    corpus = tmp_path / "corpora"
    for rel, text in HANDBOOK.items():
        (corpus / "handbook" / rel).parent.mkdir(parents=True, exist_ok=True)
        (corpus / "handbook" / rel).write_text(text, encoding="utf-8")
    questions = [
        ("When is the company meeting?", True),
        ("How do I record PTO in Deel?", True),
        ("When do laptops lock?", True),
        ("Where do I submit expenses?", True),
        ("Does the company offer pet insurance?", False),
        ("Is there a gym?", False),
        ("What is the sabbatical policy?", False),
        ("Who won the hackathon?", False),
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps(
                {
                    "id": f"q{i}",
                    "question": q,
                    "asked_of": "handbook",
                    "answerable": a,
                    "part": "fit" if i % 2 else "heldout",
                }
            )
            + "\n"
            for i, (q, a) in enumerate(questions)
        )
    )
    model_file = tmp_path / "confidence.py"
    shutil.copy(REPO / "retriever" / "pipeline" / "confidence.py", model_file)
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "fit_confidence.py"),
            "--corpus",
            str(corpus),
            "--labels",
            str(labels),
            "--model-file",
            str(model_file),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "## kept-back half: 4 retrievals, 2 answerable" in result.stdout
    assert "AUC" in result.stdout and "ECE" in result.stdout
    assert "rows=8," in model_file.read_text()


FEATURES_SCRIPT = """
import json, sys
from retriever import Retriever
from retriever.pipeline import confidence
from retriever.text import embeddings
retriever = Retriever(sys.argv[1])
out = []
for question in sys.argv[2:]:
    result = retriever.retrieve(question)
    out.append([repr(v) for v in confidence.features_of(retriever.memory, result.run).values()])
print(json.dumps(out))
"""


def test_features_are_the_same_to_the_last_bit_whatever_the_string_hash_seed() -> None:
    questions = [  # several words each, so sums over sets of them could come out in different orders
        "Who owns the billing migration to Stripe and when is it due?",
        "How many sick days do engineers get, and who approves unpaid leave?",
        "What did the platform team decide about on-call rotations and incident reviews?",
    ]
    runs = set()
    for seed in ("0", "1", "2", "3"):
        result = subprocess.run(
            [sys.executable, "-c", FEATURES_SCRIPT, str(REPO / "company_context"), *questions],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONHASHSEED": seed},
            check=True,
        )
        runs.add(result.stdout)
    assert len(runs) == 1


MEANING_TREE = {
    "leave.md": "# Leave\n\n## Holiday allowance\n\nEveryone gets 25 days of paid holiday a year.\n",
    "builds.md": "# Builds\n\n## Cache\n\nThe build cache keeps artefacts for a week, then clears them.\n",
}


def test_a_question_about_what_a_section_says_is_closer_in_meaning_than_one_sharing_only_its_words(
    make_tree: TreeFactory,
) -> None:
    retriever = Retriever(make_tree(MEANING_TREE))
    on_topic, off_topic = (
        confidence.features_of(retriever.memory, retriever.retrieve(q).run)["meaning_match"]
        for q in ("How much vacation time do staff get each year?", "How much wine do staff get each year?")
    )
    assert on_topic > off_topic > 0.0


def test_without_the_embedding_table_meaning_match_is_the_fitted_halfs_mean(
    make_tree: TreeFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embeddings, "_loaded", [None])  # the table could not be read: words alone
    retriever = Retriever(make_tree(MEANING_TREE))
    run = retriever.retrieve("How much holiday do staff get each year?").run
    assert run.retrieval and run.retrieval.facts
    assert confidence.features_of(retriever.memory, run)["meaning_match"] == confidence.MODEL.neutral["meaning_match"]
    assert 0.0 < confidence.MODEL.neutral["meaning_match"] < 1.0


def _turn(statement: str, speaker: str) -> Fact:
    return Fact(statement, 0.5, "m/chat.md", "Chat > Session 1", (1, 1), "chat.md", None, "Chat", 0, speaker=speaker)


def test_speaker_agreement_averages_the_named_persons_share_by_words_and_by_meaning() -> None:
    facts = (
        _turn("Kwame: My eye test is next week, before the operation on my knee.", "Kwame"),
        _turn("Ruth: Mum had her cataract surgery at the Bon Secours.", "Ruth"),
    )
    terms = (frozenset({"eye", "oper"}), frozenset({"mum"}))
    by_words = confidence.Signals(
        {"eye": 1.0, "oper": 1.0, "mum": 1.0}, frozenset(), 5.0, (), (), facts, terms,
        speakers=Speakers(frozenset({"Ruth"}), frozenset({"ruth"})), dialogue=True,
    )
    both = dataclasses.replace(by_words, fact_meaning=(0.4, 0.6))  # Ruth's turn is the closer in meaning

    assert confidence._speaker_agreement(by_words) == pytest.approx(0.5)  # Ruth's turn holds 1/3, Kwame's 2/3
    assert confidence._speaker_agreement(both) == pytest.approx((0.5 + 1.0) / 2)
    swapped = dataclasses.replace(both, speakers=Speakers(frozenset({"Kwame"}), frozenset({"kwame"})))
    assert confidence._speaker_agreement(swapped) == pytest.approx((1.0 + 0.4 / 0.6) / 2)


def test_meaning_is_read_only_between_an_english_question_and_english_sections(make_tree: TreeFactory) -> None:
    """The embedding table is English: a Ukrainian question sat at cosine 0.97 to any Ukrainian page (its pieces
    alike), and an English question at 0.01 to the Ukrainian page answering it."""
    root = make_tree(
        {
            "office.md": "# Правила офісу\n\nМісця бронюються в Slack-боті не пізніше ніж за день.\n",
            "travel.md": "# Travel\n\nHotels in London are capped at 220 euros a night.\n",
        }
    )
    memory = Retriever(root).memory

    def closeness(question: str) -> float | None:
        query = analyze(question, index=memory.index)
        phase1 = choose(memory, query, 10)
        return confidence._closeness(memory, query, phase1.targets)

    assert closeness("Скільки коштує парковка біля офісу?") is None
    assert closeness("How do I book a desk in the office?") is None  # only the Ukrainian page is read
    london = closeness("What is the hotel limit in London?")
    assert london is not None and london > 0.3


def test_a_summary_below_the_first_place_holds_no_facts_words_and_first_it_does() -> None:
    query = analyze("referral bonus interns")
    weights = {t: 1.0 for t in query.terms}
    facts = [
        Fact(s, 0.5, "m/a.md", "A", (1, 1), "a.md", None, "A", 0, field=field)
        for s, field in (("Referral bonus for interns is 500.", True), ("Hiring: referral bonuses, interns.", True))
    ]
    held = confidence._fact_terms(query, weights, facts)
    assert held[0] == frozenset(query.terms) and held[1] == frozenset()


def test_a_transcripts_words_are_read_apart_from_a_pages(make_tree: TreeFactory) -> None:
    meeting = "# Budget meeting\n\n## Turns 1-2\n\nAnna: The travel budget is tight.\n\nBen: We cut travel.\n"
    page = "# Travel budget\n\nThe travel budget is 5,000 euros a year.\n"
    for files, spoken in (({"meeting.md": meeting}, 1.0), ({"page.md": page}, 0.0)):
        retriever = Retriever(make_tree(files))
        run = retriever.retrieve("What is the travel budget?").run
        values = confidence.features_of(retriever.memory, run)
        assert values["spoken"] == spoken
        assert values["spoken_coverage"] == pytest.approx(spoken * values["best_section_coverage"])


def test_a_two_person_chat_leaves_its_level_to_the_dialogue_terms(make_tree: TreeFactory) -> None:
    turns = "".join(
        f"Anna: The travel budget {i} is tight.\n\nBen: We cut travel {i} again.\n\n" for i in range(4)
    )
    retriever = Retriever(make_tree({"chat.md": f"# Chat\n\n## Session 1\n\n{turns}"}))
    run = retriever.retrieve("What is the travel budget?").run
    assert confidence.in_dialogue(run)
    values = confidence.features_of(retriever.memory, run)
    assert values["spoken"] == values["spoken_coverage"] == 0.0
