"""scripts/eval.py: both question files by default, beside two plain baselines; clear errors, no tracebacks."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from fixtures import ACME

DEV = [
    {
        "id": "acme-001",
        "corpus": "acme",
        "kind": "lookup",
        "question": "How many sick days do employees earn?",
        "gold": [{"path": "policies/leave.md", "heading": "Sick leave", "answer": "10 per year"}],
    },
    {"id": "acme-002", "corpus": "acme", "kind": "absent", "question": "Is there a company gym?", "gold": []},
    {"id": "acme-003", "corpus": "acme", "kind": "lowinfo", "question": "thanks!", "gold": []},
]
QMSUM = [
    {
        "id": "acme-q-001",
        "corpus": "acme",
        "kind": "lookup",
        "question": "What was decided in DEC-0054?",
        "gold": [{"path": "decisions/dec_0054.md", "heading": None, "answer": "the decision"}],
    }
]


def _shared(tmp_path: Path) -> Path:
    """A ``shared`` folder laid out as the real one: corpora/<name>/… and eval/*.jsonl."""
    shared = tmp_path / "shared"
    for rel, text in ACME.items():
        path = shared / "corpora" / "acme" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (shared / "eval").mkdir()
    for name, rows in (("dev_queries.jsonl", DEV), ("qmsum_queries.jsonl", QMSUM)):
        (shared / "eval" / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return shared


def _eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # the script's scratch folders stay in the test's folder
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "eval.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )


def test_without_queries_both_question_files_run_beside_both_baselines(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    result = _eval(tmp_path, "--corpus", str(shared / "corpora"))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "## dev_queries.jsonl: 3 questions, same run" in out
    assert "## qmsum_queries.jsonl: 1 questions, same run" in out
    assert "| metric | retriever (offline) | rank-bm25 over sections | rank-bm25 over files |" in out
    assert "## All question files" in out
    # The retriever skips chit-chat and does not call the absent question comprehensive; the baselines cannot.
    assert "| absent_not_comprehensive | 1.000 | 0.000 | 0.000 |" in out
    assert "| lowinfo_skipped | 1.000 | 0.000 | 0.000 |" in out
    assert "| answerable_auc |" in out  # one answerable and one unanswerable question: every system is rated
    # The bundled chats' questions run too, and again with each chat as a memory of its own.
    assert "## conversation_queries.jsonl: 102 questions, same run" in out
    assert "## conversation_queries.jsonl, one chat a memory: 102 questions, same run" in out
    assert "## long_conversation_queries.jsonl, one chat a memory: 88 questions, same run" in out


def test_queries_option_runs_only_the_files_given(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    only = shared / "eval" / "qmsum_queries.jsonl"
    result = _eval(tmp_path, "--corpus", str(shared / "corpora"), "--queries", str(only))
    assert result.returncode == 0, result.stderr
    assert "qmsum_queries.jsonl: 1 questions" in result.stdout
    assert "dev_queries.jsonl" not in result.stdout


def test_missing_shared_folder_exits_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    result = _eval(tmp_path, "--corpus", str(tmp_path / "no-shared" / "corpora"))
    assert result.returncode == 2
    assert "error: no corpora at" in result.stderr and "--corpus" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_malformed_question_file_is_named_without_a_traceback(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n", encoding="utf-8")
    result = _eval(tmp_path, "--corpus", str(shared / "corpora"), "--queries", str(broken))
    assert result.returncode == 2
    assert f"error: {broken} is not a question file" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_held_out_handbook_questions_run_when_a_handbook_is_under_the_corpus(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    (shared / "corpora" / "acme").rename(shared / "corpora" / "reg-handbook")
    result = _eval(tmp_path, "--corpus", str(shared / "corpora"))
    assert result.returncode == 0, result.stderr
    assert "## handbook_heldout_queries.jsonl: 30 questions, same run" in result.stdout


def test_one_corpus_folder_finds_the_question_files_beside_its_parent(tmp_path: Path) -> None:
    shared = _shared(tmp_path)
    result = _eval(tmp_path, "--corpus", str(shared / "corpora" / "acme"))
    assert result.returncode == 0, result.stderr
    assert "## dev_queries.jsonl: 3 questions, same run" in result.stdout
    assert "handbook_heldout_queries" not in result.stdout


@pytest.mark.parametrize(("name", "count"), [("handbook_heldout_queries.jsonl", 90), ("definition_queries.jsonl", 12)])
def test_every_held_out_gold_section_is_a_heading_of_its_handbook(name: str, count: int) -> None:
    corpora = REPO.parent / "shared" / "corpora"
    if not corpora.is_dir():
        pytest.skip("../shared/corpora is not beside this clone")
    rows = [json.loads(line) for line in (REPO / "eval" / name).open(encoding="utf-8")]
    assert len(rows) == count and len({r["id"] for r in rows}) == count
    for row in rows:
        assert (row["kind"] == "absent") == (not row["gold"]), row["id"]
        for gold in row["gold"]:
            text = (corpora / row["corpus"] / gold["path"]).read_text(encoding="utf-8")
            headings = {line.lstrip("#").strip() for line in text.splitlines() if line.startswith("#")}
            assert gold["heading"] is None or gold["heading"] in headings, (row["id"], gold["heading"])


def test_every_decision_question_names_a_decision_section_of_the_bundled_memory() -> None:
    rows = [json.loads(line) for line in (REPO / "eval" / "decision_queries.jsonl").open(encoding="utf-8")]
    assert len(rows) == 16 and len({r["id"] for r in rows}) == 16
    for row in rows:
        for gold in row["gold"]:
            text = (REPO / "company_context" / gold["path"]).read_text(encoding="utf-8")
            assert f"\n## {gold['heading']}\n" in text, (row["id"], gold["heading"])


@pytest.mark.parametrize(
    ("questions", "folder", "count"),
    [
        ("conversation_queries.jsonl", "conversations", 102),
        ("long_conversation_queries.jsonl", "conversations", 88),
        ("chats-for-fitting/questions.jsonl", "chats-for-fitting", 430),
    ],
)
def test_every_chat_gold_section_is_a_session_of_its_chat(questions: str, folder: str, count: int) -> None:
    rows = [json.loads(line) for line in (REPO / "eval" / questions).open(encoding="utf-8")]
    assert len(rows) == count and len({r["id"] for r in rows}) == count
    for row in rows:
        assert (row["kind"] == "absent") == (not row["gold"]), row["id"]
        for gold in row["gold"]:
            text = (REPO / "eval" / folder / row["corpus"] / gold["path"]).read_text(encoding="utf-8")
            assert f"\n## {gold['heading']}\n" in text, (row["id"], gold["heading"])


def _script() -> object:
    spec = importlib.util.spec_from_file_location("eval_script", REPO / "scripts" / "eval.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_answerable_auc_is_the_chance_an_answerable_question_outscores_an_unanswerable_one() -> None:
    script: Any = _script()
    kinds = ["lookup", "temporal", "absent", "absent", "lowinfo"]
    queries = [{"kind": kind, "gold": []} for kind in kinds]
    confidence = [0.9, 0.4, 0.5, 0.1, 1.0]  # 0.9 beats both; 0.4 beats one: 3 wins of 4 pairs (lowinfo ignored)
    answers = [script.Answer([], False, "partial", 0.0, 1.0, answerability=c) for c in confidence]
    assert script.answerable_auc(queries, answers) == 0.75
    top_scores = [script.Answer([], False, "partial", c, 1.0) for c in (0.3, 0.3, 0.3, 0.1, 0.0)]
    assert script.answerable_auc(queries, top_scores) == 0.75  # without answerability, the top score; ties half
    assert script.answerable_auc(queries[:2], answers[:2]) is None


def test_answerable_auc_with_a_note_counts_only_the_unanswerable_questions_that_carry_it() -> None:
    script: Any = _script()
    queries = [
        {"kind": "lookup", "gold": []},
        {"kind": "absent", "gold": [], "note": "speaker swapped"},
        {"kind": "absent", "gold": []},
    ]
    answers = [script.Answer([], False, "partial", 0.0, 1.0, answerability=c) for c in (0.5, 0.2, 0.9)]
    assert script.answerable_auc(queries, answers) == 0.5
    assert script.answerable_auc(queries, answers, script.SWAPPED) == 1.0
    assert script.score(queries, answers)["all"]["answerable_auc_swapped"] == 1.0
    assert "answerable_auc_swapped" not in script.score(queries[::2], answers[::2])["all"]


def test_a_chat_question_is_asked_of_its_gold_file_or_the_chat_its_id_names() -> None:
    script: Any = _script()
    answerable = {"id": "conv-maya-and-tom-001", "gold": [{"path": "maya-and-tom.md", "heading": "Session 3"}]}
    assert script.chat_file(answerable) == "maya-and-tom.md"
    assert script.chat_file({"id": "conv-priya-and-lena-020", "gold": []}) == "priya-and-lena.md"
    chat_files = (("conversation_queries.jsonl", "chat-logs"), ("long_conversation_queries.jsonl", "long-chats"))
    for questions, folder in chat_files:
        rows = [json.loads(line) for line in (REPO / "eval" / questions).open(encoding="utf-8")]
        chats = {path.name for path in (REPO / "eval" / "conversations" / folder).glob("*.md")}
        assert {script.chat_file(row) for row in rows} == chats


def test_turn_lines_number_each_turn_of_a_block_from_its_heading(tmp_path: Path) -> None:
    _script()  # puts scripts/ on the path
    systems: Any = importlib.import_module("eval_systems")
    meeting = tmp_path / "m.md"
    meeting.write_text(
        "---\ntitle: M\n---\n\nTranscript, 5 turns.\n\n## Turns 0-1\n\nA: Hi.\n\nB: Yes.\n\n## Turns 2-4\n\nA: x\n\n"
        "B: y\n\nA: z\n\n## Notes\n\nnot a turn\n",
        encoding="utf-8",
    )
    assert systems.turn_lines(meeting) == {9: 0, 11: 1, 15: 2, 17: 3, 19: 4}


def test_turn_hits_count_a_fact_whose_turn_lies_in_a_relevant_span_and_skip_systems_that_cannot_say() -> None:
    script: Any = _script()
    queries = [
        {"kind": "lookup", "gold": [{"path": "m.md", "heading": "Turns 0-9"}], "relevant_text_span": [["3", "5"]]},
    ] * 2
    answers = [
        script.Answer([("m.md", "Turns 0-9")] * 3, False, "partial", 0.5, 1.0, turns=[2, None, 4]),
        script.Answer([("m.md", "Turns 0-9")] * 3, False, "partial", 0.5, 1.0, turns=[5, 9, 1]),
    ]
    metrics = script.score(queries, answers)["all"]
    assert (metrics["turn_hit@1"], metrics["turn_hit@3"]) == (0.5, 1.0)
    bm25 = [script.Answer([("m.md", "Turns 0-9")], False, "comprehensive", 1.0, 1.0)] * 2
    assert "turn_hit@1" not in script.score(queries, bm25)["all"]
